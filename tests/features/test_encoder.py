"""Tests of the tabular feature encoder shared by the feature-aware calibrators."""

import datetime
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from mcal import CalibrationWarning
from mcal._features.encoder import FeatureEncoder


@pytest.fixture
def frame():
    return pd.DataFrame(
        {
            "cat": pd.Categorical(["a", "b", None, "a"]),
            "text": ["x", "y", "x", None],
            "flag": [True, False, True, True],
            "nullable_flag": pd.array([True, None, False, True], dtype="boolean"),
            "num": [1.5, 2.0, np.nan, 4.0],
            "count": [1, 2, 3, 4],
            "nullable_int": pd.array([1, None, 3, 4], dtype="Int64"),
        }
    )


def test_from_dtype_makes_category_string_and_bool_columns_categorical(frame):
    enc = FeatureEncoder().fit(frame)
    assert enc.categorical_ == [True, True, True, True, False, False, False]
    assert enc.feature_names_in_ == list(frame.columns)


def test_codes_are_positions_in_the_sorted_vocabulary_and_missing_is_nan(frame):
    enc = FeatureEncoder().fit(frame)
    assert enc.categories_[:3] == [["a", "b"], ["x", "y"], ["False", "True"]]
    out = enc.transform(frame)
    expected = np.array(
        [
            [0, 0, 1, 1, 1.5, 1, 1],
            [1, 1, 0, np.nan, 2.0, 2, np.nan],
            [np.nan, 0, 1, 0, np.nan, 3, 3],
            [0, np.nan, 1, 1, 4.0, 4, 4],
        ]
    )
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == np.float64 and out.flags.f_contiguous


def test_extra_columns_are_allocated_after_the_features(frame):
    out = FeatureEncoder().fit(frame).transform(frame, n_extra_columns=1)
    assert out.shape == (4, frame.shape[1] + 1)


def test_integer_levels_match_floats_with_missing_values_at_predict():
    enc = FeatureEncoder(categorical_features=["code"]).fit(pd.DataFrame({"code": [3, 1, 2]}))
    out = enc.transform(pd.DataFrame({"code": [1.0, np.nan, 3.0]}))
    np.testing.assert_array_equal(out[:, 0], [0.0, np.nan, 2.0])


def test_unseen_levels_become_missing_with_one_warning_that_counts_them():
    enc = FeatureEncoder().fit(pd.DataFrame({"a": ["x", "y"], "b": ["u", "v"]}))
    X = pd.DataFrame({"a": ["z", "z", "x", None], "b": ["w", "u", "u", "u"]})
    with pytest.warns(CalibrationWarning, match=r"X has 2 categorical value\(s\) unseen") as record:
        out = enc.transform(X)
    assert len(record) == 1
    message = str(record[0].message)
    assert "column 'a': 1 value(s) in 2 row(s), e.g. 'z'" in message and "column 'b': 1 value(s) in 1 row(s)" in message
    np.testing.assert_array_equal(out, [[np.nan, np.nan], [np.nan, 0], [0, 0], [np.nan, 0]])


def test_missing_values_alone_raise_no_warning():
    enc = FeatureEncoder().fit(pd.DataFrame({"a": ["x", "y"]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = enc.transform(pd.DataFrame({"a": [None, "y"]}))
    np.testing.assert_array_equal(out[:, 0], [np.nan, 1.0])


@pytest.mark.parametrize("spec", [[0, 2], np.array([True, False, True]), ["code", "city"]])
def test_declared_indices_mask_and_names_give_the_same_encoding(spec):
    X = pd.DataFrame({"code": [7, 5, 7], "x": [0.1, 0.2, 0.3], "city": ["b", "a", "b"]})
    enc = FeatureEncoder(categorical_features=spec).fit(X)
    assert enc.categorical_ == [True, False, True]
    np.testing.assert_array_equal(enc.transform(X), [[1, 0.1, 1], [0, 0.2, 0], [1, 0.3, 1]])


def test_numeric_array_under_from_dtype_is_all_numerical():
    X = np.array([[1, 2.5], [3, 4.0]])
    enc = FeatureEncoder().fit(X)
    assert enc.categorical_ == [False, False] and enc.feature_names_in_ is None
    np.testing.assert_array_equal(enc.transform(X), X)


def test_object_array_columns_are_categorical_only_when_they_hold_non_numbers():
    X = np.array([["a", 1.5], ["b", None]], dtype=object)
    enc = FeatureEncoder().fit(X)
    assert enc.categorical_ == [True, False]
    np.testing.assert_array_equal(enc.transform(X), [[0, 1.5], [1, np.nan]])


@pytest.mark.parametrize(
    "spec, match",
    [
        ([5], r"indices must lie in \[0, 1\]"),
        ([-1], r"indices must lie in \[0, 1\]"),
        (np.array([True]), "mask must have length 2"),
        (["nope"], "names must be columns of X"),
        ([0, 0], "must not repeat a column"),
        ("all", "must be 'from_dtype', None"),
        # these reached Python errors ("unhashable type: 'list'", "'int' object is not iterable", "unknown ['0']")
        ([[0]], r"a 1-D array of column indices, a boolean mask or column names; got \[\[0\]\]"),
        ([0, "num"], r"not a mix of indices and names; got \[0, 'num'\]"),
    ],
)
def test_bad_categorical_features_raise(spec, match):
    with pytest.raises(ValueError, match=match):
        FeatureEncoder(categorical_features=spec).fit(pd.DataFrame({"a": [1, 2], "b": [3, 4]}))


@pytest.mark.parametrize(
    "spec, match",
    [
        # a single number, and values that are neither indices, bools nor names, were a ValueError
        (3, r"must be 'from_dtype', None, or a 1-D array .*; got 3 of type int"),
        (np.array(0), r"a 1-D array .*; got array\(0\) of type ndarray"),
        ([0.5], "must hold column indices, a boolean mask or column names; got 0.5 of type float"),
    ],
)
def test_categorical_features_of_a_bad_type_raise_type_error(spec, match):
    with pytest.raises(TypeError, match=match):
        FeatureEncoder(categorical_features=spec).fit(pd.DataFrame({"a": [1, 2], "b": [3, 4]}))


def test_names_for_an_array_without_names_raise():
    with pytest.raises(ValueError, match="need X to be a DataFrame"):
        FeatureEncoder(categorical_features=["a"]).fit(np.zeros((2, 2)))


def test_undeclared_string_column_raises_naming_it():
    with pytest.raises(ValueError, match="X column 'city' must be numeric"):
        FeatureEncoder(categorical_features=None).fit(pd.DataFrame({"city": ["a", "b"]}))


def test_infinite_numeric_value_raises():
    with pytest.raises(ValueError, match="must not hold infinite values; got 1"):
        FeatureEncoder().fit(pd.DataFrame({"x": [1.0, np.inf]}))


DAYS = [datetime.datetime(2024, 1, d) for d in (1, 2, 3)] * 12  # past the few-rows path (36 rows)
TEMPORAL = {
    "datetime64": (pd.Series(DAYS), "(X['t'] - X['t'].min()).dt.days", "datetime64"),
    "timedelta64": (pd.Series(pd.to_timedelta([1, 2, 3] * 12, unit="h")), "X['t'].dt.total_seconds()", "timedelta64"),
    "datetime-objects": (pd.Series(DAYS, dtype=object),
                         "(pd.to_datetime(X['t']) - pd.to_datetime(X['t']).min()).dt.days",
                         "object holding datetime values"),
    "date-objects": (pd.Series([d.date() for d in DAYS], dtype=object),
                     "(pd.to_datetime(X['t']) - pd.to_datetime(X['t']).min()).dt.days", "object holding date values"),
    "timestamp-objects": (pd.Series([pd.Timestamp(d, tz="UTC") for d in DAYS], dtype=object),
                          "(pd.to_datetime(X['t']) - pd.to_datetime(X['t']).min()).dt.days",
                          "object holding datetime values"),
    "timedelta-objects": (pd.Series([datetime.timedelta(hours=h) for h in [1, 2, 3] * 12], dtype=object),
                          "pd.to_timedelta(X['t']).dt.total_seconds()", "object holding timedelta values"),
}  # fmt: skip


@pytest.mark.parametrize("declared", ["from_dtype", None], ids=["from-dtype", "numerical"])
@pytest.mark.parametrize("name", list(TEMPORAL))
def test_dates_and_durations_are_refused_unless_declared_categorical(name, declared):
    # objects holding dates were categories by text, one per timestamp; datetime64 was refused even where declared
    column, hint, got = TEMPORAL[name]
    message = (
        f"X column 't' must be converted to numbers (e.g. {hint}) or declared in categorical_features; got dtype {got}"
    )
    with pytest.raises(TypeError, match=re.escape(message)):
        FeatureEncoder(categorical_features=declared).fit(pd.DataFrame({"t": column}))


@pytest.mark.parametrize("name", list(TEMPORAL))
def test_a_date_column_declared_categorical_has_one_level_per_value_on_many_and_few_rows(name):
    X = pd.DataFrame({"t": TEMPORAL[name][0]})
    enc = FeatureEncoder(categorical_features=["t"]).fit(X)
    assert len(enc.categories_[0]) == 3
    many = enc.transform(X)[:, 0]
    np.testing.assert_array_equal(many, enc.transform(X.iloc[:6])[:, 0].tolist() * 6)
    assert sorted(set(many.tolist())) == [0.0, 1.0, 2.0]


def test_a_datetime64_array_declared_categorical_has_the_levels_of_the_same_dataframe_column():
    # numpy's tolist() gives datetime64[ns] values as integers: the few-rows path would miss every level
    column = TEMPORAL["datetime64"][0].astype("datetime64[ns]")
    by_name = FeatureEncoder(categorical_features=["t"]).fit(pd.DataFrame({"t": column}))
    by_index = FeatureEncoder(categorical_features=[0]).fit(column.to_numpy()[:, None])
    assert by_index.categories_ == by_name.categories_
    np.testing.assert_array_equal(by_index.transform(column.to_numpy()[:3, None])[:, 0], [0.0, 1.0, 2.0])


@pytest.mark.parametrize("name", list(TEMPORAL))
def test_segments_and_the_feature_encoding_refuse_a_date_column_with_one_message(name):
    from mcal.segments import generate_segments

    X = pd.DataFrame({"t": TEMPORAL[name][0]})
    with pytest.raises(TypeError) as encoded:
        FeatureEncoder().fit(X)
    with pytest.raises(TypeError) as segmented:
        generate_segments(X)
    assert str(encoded.value) == str(segmented.value)


def test_an_arrow_dictionary_column_is_categorical_with_the_levels_of_its_values():
    # pandas reads a category column from Parquet with dtype_backend="pyarrow" as an Arrow dictionary; fit refused
    # it ("must be ... category") although predict encoded it
    pa = pytest.importorskip("pyarrow")
    values = ["b", "a", None, "c", "a"] * 10  # past the few-rows path
    column = pd.array(values, dtype=pd.ArrowDtype(pa.dictionary(pa.int8(), pa.string())))
    enc = FeatureEncoder().fit(pd.DataFrame({"d": column}))
    assert enc.categorical_ == [True] and enc.categories_ == [["a", "b", "c"]]
    np.testing.assert_array_equal(enc.transform(pd.DataFrame({"d": column}))[:5, 0], [1, 0, np.nan, 2, 0])


def test_an_arrow_null_column_is_numerical_and_missing_as_an_all_none_object_column():
    pa = pytest.importorskip("pyarrow")
    X = pd.DataFrame({"z": pd.array([None] * 3, dtype=pd.ArrowDtype(pa.null()))})
    enc = FeatureEncoder().fit(X)
    assert enc.categorical_ == FeatureEncoder().fit(pd.DataFrame({"z": [None] * 3})).categorical_ == [False]
    assert np.isnan(enc.transform(X)).all()


@pytest.mark.parametrize("dtype", [object, complex])
def test_a_column_of_complex_numbers_raises_type_error(dtype):
    # in an object column they became a categorical of their printed values, "(1+2j)"
    with pytest.raises(
        TypeError,
        match=r"X column 'c' must be numeric, bool, string or category; got dtype "
        r"(object holding complex values|complex128)$",
    ):
        FeatureEncoder().fit(pd.DataFrame({"c": pd.Series([1 + 2j, 3 + 0j], dtype=dtype)}))


def test_mixed_and_duplicate_column_names_raise():
    with pytest.raises(TypeError, match="all strings or none"):
        FeatureEncoder().fit(pd.DataFrame([[1, 2]], columns=["a", 0]))
    with pytest.raises(ValueError, match=r"unique; got duplicates \['a'\]"):
        FeatureEncoder().fit(pd.DataFrame([[1, 2]], columns=["a", "a"]))


@pytest.mark.parametrize("X", [np.zeros(3), None, "abc"])
def test_non_2d_input_raises(X):
    with pytest.raises((ValueError, TypeError), match="X must be"):
        FeatureEncoder().fit(X)


@pytest.mark.parametrize(
    "columns, match",
    [
        (["a"], r"missing \['b'\]"),
        (["a", "b", "c"], r"unexpected \['c'\]"),
        (["b", "a"], "in another order"),
    ],
)
def test_columns_must_match_those_seen_at_fit(columns, match):
    enc = FeatureEncoder().fit(pd.DataFrame({"a": [1.0], "b": [2.0]}))
    with pytest.raises(ValueError, match=match):
        enc.transform(pd.DataFrame({c: [1.0] for c in columns}))


def test_array_for_a_dataframe_fit_and_the_reverse_raise():
    with pytest.raises(ValueError, match="must be a DataFrame with the columns seen at fit"):
        FeatureEncoder().fit(pd.DataFrame({"a": [1.0]})).transform(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="must not have column names"):
        FeatureEncoder().fit(np.zeros((1, 1))).transform(pd.DataFrame({"a": [1.0]}))
    with pytest.raises(ValueError, match=r"must have 1 column\(s\), as at fit; got 2"):
        FeatureEncoder().fit(np.zeros((1, 1))).transform(np.zeros((1, 2)))


def test_a_numerical_column_that_turns_to_text_at_predict_raises():
    enc = FeatureEncoder().fit(pd.DataFrame({"x": [1.0, 2.0]}))
    with pytest.raises(ValueError, match="X column 'x' must be numeric"):
        enc.transform(pd.DataFrame({"x": ["high", "low"]}))


def test_json_round_trip_gives_the_same_encoding(frame):
    enc = FeatureEncoder().fit(frame)
    back = FeatureEncoder.from_dict(json.loads(json.dumps(enc.to_dict())))
    np.testing.assert_array_equal(back.transform(frame), enc.transform(frame))
    assert back.feature_names_in_ == enc.feature_names_in_ and back.categorical_ == enc.categorical_


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d.pop("categories"), "must be a dict with keys"),
        (lambda d: d.update(n_features=-1), "n_features' must be a non-negative int"),
        (lambda d: d.update(feature_names=["a", "a"]), "feature_names' must be null or 2 unique strings"),
        (lambda d: d.update(categorical=[True]), "categorical' must be a list of 2 booleans"),
        (lambda d: d.update(categories=[["b", "a"], None]), r"categories\[0\]' must be a sorted list"),
        (lambda d: d.update(categories=[["a"], ["x"]]), r"categories\[1\]' must be null"),
        (lambda d: d.update(categories=[["a"]]), "categories' must be a list of 2 entries"),
    ],
)
def test_from_dict_rejects_malformed_state(change, match):
    data = FeatureEncoder().fit(pd.DataFrame({"a": ["a", "b"], "x": [1.0, 2.0]})).to_dict()
    change(data)
    with pytest.raises(ValueError, match=match):
        FeatureEncoder.from_dict(data)


def test_a_few_rows_encode_as_they_do_inside_a_large_batch():
    # Up to 32 rows are factorized in plain Python, larger inputs by pandas: both must agree.
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame(
        {
            "text": rng.choice(["a", "b", "c", None], n),
            "code": rng.choice([1.0, 2.0, 3.0, np.nan], n),
            "mixed": pd.Series(rng.choice(["x", 7, 2.5, None], n), dtype=object),
        }
    )
    enc = FeatureEncoder(categorical_features=[0, 1, 2]).fit(X.iloc[:150])
    X_new = X.copy()
    X_new.loc[::7, "text"] = "unseen"
    with pytest.warns(CalibrationWarning):
        batch = enc.transform(X_new)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        rows = np.vstack([enc.transform(X_new.iloc[i : i + 1]) for i in range(n)])
    np.testing.assert_array_equal(rows, batch)


def test_integer_columns_take_a_lookup_that_agrees_with_hashing_and_names_only_unseen_values_present():
    # Integer codes spanning fewer than 2**16 values are encoded by a lookup table; wider spans by pandas.
    rng = np.random.default_rng(3)
    fit_values = rng.choice([-2, 0, 5, 9], 300)
    new_values = np.concatenate([rng.choice([-2, 0, 5, 9, 7], 300), [10**12]])  # 7 and 10**12 unseen
    enc = FeatureEncoder(categorical_features=[0]).fit(pd.DataFrame({"c": fit_values}))
    expected = np.array([{-2: 0.0, 0: 1.0, 5: 2.0, 9: 3.0}.get(v, np.nan) for v in new_values])
    with pytest.warns(CalibrationWarning) as record:
        wide = enc.transform(pd.DataFrame({"c": new_values}))  # span 10**12: hashed
    with pytest.warns(CalibrationWarning) as narrow_record:
        narrow = enc.transform(pd.DataFrame({"c": new_values[:-1]}))  # span 11: lookup
    np.testing.assert_array_equal(wide[:, 0], expected)
    np.testing.assert_array_equal(narrow[:, 0], expected[:-1])
    n_seven = int((new_values == 7).sum())
    assert f"column 'c': 1 value(s) in {n_seven} row(s), e.g. '7')" in str(narrow_record[0].message)  # not 6 or 8
    assert f"in {n_seven + 1} row(s)" in str(record[0].message)


def test_encoding_is_the_same_without_the_pandas_column_helper(frame, monkeypatch):
    # _columns reads DataFrame columns through pandas' private _iter_column_arrays (about 30x faster than
    # public column access on a one-row frame); without it, the public fallback must give the same codes.
    enc = FeatureEncoder().fit(frame)
    fast = enc.transform(frame)
    monkeypatch.delattr(pd.DataFrame, "_iter_column_arrays")
    np.testing.assert_array_equal(enc.transform(frame), fast)


def test_a_category_dtype_with_the_same_levels_in_another_order_encodes_by_value():
    # pandas calls the two unordered dtypes equal; the cached level map of the first must not serve the second
    enc = FeatureEncoder().fit(pd.DataFrame({"g": pd.Categorical(["a", "b", "c"], categories=["a", "b", "c"])}))
    first = enc.transform(pd.DataFrame({"g": pd.Categorical(["c", "a"], categories=["a", "b", "c"])}))
    reordered = enc.transform(pd.DataFrame({"g": pd.Categorical(["c", "a"], categories=["c", "b", "a"])}))
    np.testing.assert_array_equal(first[:, 0], [2.0, 0.0])
    np.testing.assert_array_equal(reordered[:, 0], [2.0, 0.0])


@pytest.mark.parametrize("dtype, values", [(np.int8, [-100, 0, 60, 100]), (np.int16, [-20000, 0, 9, 20000])])
def test_small_integer_codes_spanning_past_their_dtype_keep_their_levels(dtype, values):
    # max - min does not fit the dtype: the lookup subtracted in the column's dtype and wrapped around
    column = np.tile(np.array(values, dtype=dtype), 20)  # more rows than the plain-Python path for a few rows
    enc = FeatureEncoder(categorical_features=[0]).fit(column.reshape(-1, 1))
    wide = FeatureEncoder(categorical_features=[0]).fit(column.astype(np.int64).reshape(-1, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)  # no value is "unseen"
        codes = enc.transform(column.reshape(-1, 1))[:, 0]
    np.testing.assert_array_equal(codes, wide.transform(column.astype(np.int64).reshape(-1, 1))[:, 0])
    assert sorted(codes[:4]) == [0.0, 1.0, 2.0, 3.0]  # four levels, none missing


def test_an_object_column_mixing_true_and_1_keeps_them_apart_in_any_batch_size():
    # pandas hashes True, 1 and 1.0 as one value, so a large batch merged the levels the few-row path kept apart
    column = np.array([True, 1, "b", 1.0, False] * 10, dtype=object).reshape(-1, 1)
    enc = FeatureEncoder(categorical_features=[0]).fit(column)
    assert enc.categories_[0] == ["1", "False", "True", "b"]
    batch = enc.transform(column)[:, 0]
    np.testing.assert_array_equal(batch[:5], [2.0, 0.0, 3.0, 0.0, 1.0])
    np.testing.assert_array_equal([enc.transform(column[i : i + 1])[0, 0] for i in range(5)], batch[:5])


def test_non_string_column_labels_must_be_the_positions_in_order():
    # they are not checked between fit and predict: X[[1, 0]] of a frame with labels 0, 1 predicted on swapped columns
    X = pd.DataFrame(np.arange(8.0).reshape(4, 2))  # labels 0, 1
    enc = FeatureEncoder().fit(X)
    np.testing.assert_array_equal(enc.transform(X), X.to_numpy())
    with pytest.raises(
        ValueError, match=r"names must be strings, or the positions 0, 1, ... in order .*; got \[1, 0\]"
    ):
        enc.transform(X[[1, 0]])
    with pytest.raises(ValueError, match=r"got \[5, 7\]"):
        FeatureEncoder().fit(X.set_axis([5, 7], axis=1))


def test_rows_given_as_lists_keep_their_numeric_columns_numeric():
    # numpy turns [["a", 1.5], ...] into strings; the number column became a categorical of its printed values
    rows = [["a", 1.5], ["b", 2.0], ["a", np.nan]]
    enc = FeatureEncoder().fit(rows)
    assert enc.categorical_ == [True, False]
    np.testing.assert_array_equal(enc.transform(rows)[:, 1], [1.5, 2.0, np.nan])


def test_decimal_levels_encode_alike_in_a_batch_and_a_few_rows():
    # pandas hashes Decimal("3.0") and Decimal("3") as one value; the few-row path keyed them "3.0" and "3"
    from decimal import Decimal

    column = np.array([Decimal("3.0"), Decimal("3"), Decimal("1.5")] * 20, dtype=object).reshape(-1, 1)
    enc = FeatureEncoder(categorical_features=[0]).fit(column)
    assert enc.categories_[0] == ["1.5", "3"]
    batch = enc.transform(column)[:, 0]
    np.testing.assert_array_equal(batch[:3], [1.0, 1.0, 0.0])
    np.testing.assert_array_equal([enc.transform(column[i : i + 1])[0, 0] for i in range(3)], batch[:3])


def test_a_category_dtype_equal_to_the_cached_one_but_of_other_level_types_is_not_reused():
    # pandas calls ordered [True, False] equal to ordered [1, 0]; the int batch took the bool batch's codes
    enc = FeatureEncoder().fit(pd.DataFrame({"g": pd.Categorical([True, False])}))
    enc.transform(pd.DataFrame({"g": pd.Categorical([True, False], categories=[True, False], ordered=True)}))
    with pytest.warns(CalibrationWarning, match="2 categorical value.s. unseen at fit"):  # 1 and 0 are not levels
        ints = enc.transform(pd.DataFrame({"g": pd.Categorical([1, 0], categories=[1, 0], ordered=True)}))
    np.testing.assert_array_equal(ints[:, 0], [np.nan, np.nan])


def test_an_unpickled_encoder_compares_a_category_dtype_once_then_reuses_its_level_map(monkeypatch):
    # the unpickled cache held a copy of the fit's dtype, never the caller's object, so every one-row transform
    # compared the levels again (one-row MCGrad predicts about 30% slower after pickling than after mcal.load)
    import pickle

    import mcal._features.encoder as features

    X = pd.DataFrame({"g": pd.Categorical(["a", "b", "c"] * 4)})
    fitted = FeatureEncoder().fit(X)
    fitted.transform(X)  # as MCGrad.fit does: the cache now holds X's dtype
    enc = pickle.loads(pickle.dumps(fitted))
    calls = []
    original = features._same_levels
    monkeypatch.setattr(features, "_same_levels", lambda a, b: calls.append((a, b)) or original(a, b))
    row = X.iloc[:1]
    codes = [enc.transform(row)[0, 0] for _ in range(5)]
    assert codes == [0.0] * 5
    assert len(calls) == 1


def test_levels_of_a_category_dtype_that_no_row_holds_are_not_in_the_vocabulary():
    column = pd.Categorical(["b", "a", "b"], categories=["a", "b", "c"])
    enc = FeatureEncoder().fit(pd.DataFrame({"g": column}))
    assert enc.categories_ == [["a", "b"]]
    with pytest.warns(CalibrationWarning, match="1 categorical value"):
        out = enc.transform(pd.DataFrame({"g": pd.Categorical(["c", "a"], categories=["a", "b", "c"])}))
    np.testing.assert_array_equal(out[:, 0], [np.nan, 0.0])


def test_missing_values_of_a_long_categorical_column_are_nan_without_an_unseen_warning():
    # above the plain-Python size, object columns go through pandas.factorize, whose code -1 marks missing
    values = np.array(["a", "b", None] * 20, dtype=object)
    enc = FeatureEncoder().fit(pd.DataFrame({"g": values}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = enc.transform(pd.DataFrame({"g": values}))
    np.testing.assert_array_equal(out[:3, 0], [0.0, 1.0, np.nan])


# -- one reading of categorical_features for the encoder (MCGrad, DFMC, HKRR columns) and generated segments -----

_TWO_COLUMNS = pd.DataFrame({"a": np.arange(12) % 6, "b": np.linspace(0.0, 1.0, 12)})

BAD_SPECS = [
    # (spec, error, message): each was read otherwise by the segments' own parser (a scalar as [5], a 2-D array
    # flattened, a float as the name "0.5", [0, "a"] and [0, 0] accepted, True beside an index as the name 'True')
    (
        1,
        TypeError,
        "must be 'from_dtype', None, or a 1-D array of column indices, a boolean mask or column names; "
        "got 1 of type int",
    ),
    (np.int64(0), TypeError, "(0) of type int64"),
    (np.array(1), TypeError, "got array(1) of type ndarray"),
    ({"a": True}, TypeError, "got {'a': True} of type dict"),
    (
        [0.5],
        TypeError,
        "categorical_features must hold column indices, a boolean mask or column names; got 0.5 of type float",
    ),
    ("auto", ValueError, "categorical_features must be 'from_dtype', None, or a 1-D array"),
    ([[0, 1]], ValueError, "column names; got [[0, 1]]"),
    (np.array([[True, False]]), ValueError, "column names; got array([[ True, False]])"),
    ([[0], [0, 1]], ValueError, "column names; got [[0], [0, 1]]"),
    ([0, "a"], ValueError, "not a mix of indices and names; got [0, 'a']"),
    ([True, 0], ValueError, "not a mix of indices and bools; got [True, 0]"),
    ([2], ValueError, "categorical_features indices must lie in [0, 1]; got [2]"),
    ([-1, 0], ValueError, "categorical_features indices must lie in [0, 1]; got [-1]"),
    (["nope"], ValueError, "categorical_features names must be columns of X; got unknown ['nope']"),
    ([True], ValueError, "categorical_features as a mask must have length 2 (n_features); got 1"),
    ([0, 0], ValueError, "categorical_features must not repeat a column; got [0, 0]"),
    (("a", "a"), ValueError, "categorical_features must not repeat a column; got ['a', 'a']"),
]


def _segment_error(spec):
    from mcal.segments import generate_segments

    with pytest.raises(Exception) as info:
        generate_segments(_TWO_COLUMNS, max_depth=1, categorical_features=spec)
    return info


@pytest.mark.parametrize("spec, error, message", BAD_SPECS, ids=lambda v: None if isinstance(v, str) else repr(v))
def test_a_bad_categorical_features_gets_the_same_error_from_the_encoder_and_from_generated_segments(
    spec, error, message
):
    with pytest.raises(Exception) as by_encoder:
        FeatureEncoder(categorical_features=spec).fit(_TWO_COLUMNS)
    by_segments = _segment_error(spec)
    assert by_encoder.type is error and message in str(by_encoder.value)
    assert by_segments.type is error and str(by_segments.value) == str(by_encoder.value)


@pytest.mark.parametrize("spec", [1, [0, "a"], [2], ["nope"], [True]], ids=repr)
def test_mcgrad_hkrr_and_dfmc_generated_groups_refuse_a_bad_categorical_features_as_generated_segments_do(spec):
    pytest.importorskip("lightgbm")
    from mcal import DFMC, HKRR, MCGrad

    rng = np.random.default_rng(0)
    p, y = rng.uniform(0.1, 0.9, 12), rng.integers(0, 2, 12).astype(float)
    expected = _segment_error(spec)
    calibrators = [MCGrad(categorical_features=spec, n_jobs=1),
                   HKRR(groups="generated", segment_params={"categorical_features": spec}),
                   DFMC(groups="generated", segment_params={"categorical_features": spec}, n_jobs=1)]  # fmt: skip
    for calibrator in calibrators:
        with pytest.raises(expected.type) as info:
            calibrator.fit(p, y, X=_TWO_COLUMNS)
        assert str(info.value) == str(expected.value), type(calibrator).__name__


@pytest.mark.parametrize(
    "spec",
    [["a"], ("a",), {"a"}, frozenset({0}), pd.Index(["a"]), pd.Series(["a"], index=[7]), np.array(["a"]),
     np.array(["a"], dtype=object), np.array([0]), np.array([0], dtype=object), pd.Index([0]),
     np.array([True, False]), [np.True_, np.False_]],
    ids=["list", "tuple", "set", "frozenset-of-index", "index", "series", "str-array", "object-array",
         "int-array", "object-int-array", "int-index", "bool-array", "numpy-bools"],
)  # fmt: skip
def test_each_form_of_categorical_features_declares_the_same_column_for_the_encoder_and_for_segments(spec):
    from mcal.segments import generate_segments

    assert FeatureEncoder(categorical_features=spec).fit(_TWO_COLUMNS).categorical_ == [True, False]
    segs = generate_segments(_TWO_COLUMNS, max_depth=1, min_samples_per_segment=1, categorical_features=spec)
    # 6 distinct values of a, over max_values_per_feature=3: two kept categories and "other", not quantile bins
    assert [d for d in segs.descriptions if d.startswith(("a=", "a "))] == ["a=0", "a=1", "a not in {0, 1}"]


def test_an_empty_categorical_features_declares_no_column_for_the_encoder_and_for_segments():
    from mcal.segments import generate_segments

    assert FeatureEncoder(categorical_features=[]).fit(_TWO_COLUMNS).categorical_ == [False, False]
    segs = generate_segments(
        _TWO_COLUMNS, max_depth=1, min_samples_per_segment=1, categorical_features=np.array([], dtype=int)
    )
    assert "a <= 1.66667" in segs.descriptions


def test_segments_match_names_to_string_column_labels_only():
    # a DataFrame's non-string labels, and an array's columns (described x0, x1, ...), are declared by position:
    # "0" named the column labelled 0 by its text, and "x0" an array's first column
    from mcal.segments import generate_segments

    by_int = _TWO_COLUMNS.set_axis([0, 1], axis=1)
    unnamed = "categorical_features names need X to be a DataFrame with string column names; got names ['0']"
    for X, spec in ((by_int, ["0"]), (by_int.to_numpy(), ["x0"])):
        with pytest.raises(ValueError, match=re.escape(unnamed.replace("'0'", repr(spec[0])))):
            generate_segments(X, max_depth=1, categorical_features=spec)
    mixed = _TWO_COLUMNS.set_axis([0, "b"], axis=1)
    with pytest.raises(ValueError, match=re.escape("got unknown ['0'] (string column names: ['b'])")):
        generate_segments(mixed, max_depth=1, categorical_features=["0"])
    for X, first in ((by_int, "0"), (by_int.to_numpy(), "x0"), (mixed, "0")):
        segs = generate_segments(X, max_depth=1, min_samples_per_segment=1, categorical_features=[0])
        # the categorical column has an "other" level; the numerical b is cut into bins
        assert [d.split(" not in ")[0] for d in segs.descriptions if " not in " in d] == [first]


@pytest.mark.parametrize("n_rows", [4, 400])  # the few-row path of online predicts, and the batch path
def test_unseen_categories_are_counted_as_distinct_values_and_named(n_rows):
    # issue 32: "16 categorical value(s) unseen" counted the rows, not the values
    enc = FeatureEncoder().fit(pd.DataFrame({"job": ["admin", "tech"] * 10}))
    jobs = np.resize(["chef", "admin", "pilot", "chef"], n_rows)
    with pytest.warns(CalibrationWarning) as record:
        enc.transform(pd.DataFrame({"job": jobs}))
    (message,) = [str(w.message) for w in record]
    n_new = int(np.isin(jobs, ["chef", "pilot"]).sum())
    assert message.startswith(f"X has 2 categorical value(s) unseen at fit (column 'job': 2 value(s) in {n_new:,} ")
    assert "'chef'" in message and "'pilot'" in message and "treated as missing" in message
