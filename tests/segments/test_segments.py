"""Tests of mcal.segments: generated and prespecified segments."""

import datetime
import json
import re

import numpy as np
import pandas as pd
import pytest

from mcal import CalibrationWarning
from mcal.segments import Segments, concat, from_labels, from_masks, generate_segments


@pytest.fixture
def table(rng):
    n = 400
    return pd.DataFrame(
        {
            "job": rng.choice(["admin", "tech", "services", "retired"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "married": rng.choice([True, False], n),
            "age": rng.normal(40, 10, n).round(1),
            "kids": rng.integers(0, 3, n).astype(float),
        }
    )


def test_hand_table_gives_expected_descriptions_and_sizes():
    X = pd.DataFrame({"job": ["a", "a", "b", "b", "c"], "age": [20, 30, 40, 50, 60]})
    segs = generate_segments(X, max_depth=2, min_samples_per_segment=2)
    # age has 5 distinct values > 3: tertile edges 20, 33.33, 46.67, 60 (linear interpolation).
    assert segs.descriptions == [
        "all", "job=a", "job=b",
        "age <= 33.3333", "age > 46.6667",
        "job=a & age <= 33.3333",
    ]  # fmt: skip
    assert segs.sizes.tolist() == [5, 2, 2, 2, 2, 2]
    assert segs.depths.tolist() == [0, 1, 1, 1, 1, 2]
    assert segs.indices(5).tolist() == [0, 1]


def test_every_generated_segment_holds_exactly_the_rows_its_conditions_select(table):
    segs = generate_segments(table, max_depth=2, max_n_segments=None)
    masks = segs.to_masks()
    assert masks.shape == (len(table), segs.n_segments)
    assert np.array_equal(masks.sum(axis=0), segs.sizes)
    job_b = segs.descriptions.index("job=tech & married=True")
    expected = (table["job"] == "tech") & table["married"]
    assert np.array_equal(segs.mask(job_b), expected.to_numpy())


def test_categorical_keeps_most_frequent_values_and_collapses_the_rest(table):
    segs = generate_segments(table[["job"]], max_depth=1, max_values_per_feature=3)
    assert segs.descriptions == ["all", "job=admin", "job=tech", "job not in {admin, tech}"]
    assert segs.sizes[3] == table["job"].isin(["services", "retired"]).sum()


def test_frequency_ties_are_broken_by_value_text_not_row_order():
    X = pd.DataFrame({"c": ["z", "y", "x", "z", "y", "x", "w"]})
    first = generate_segments(X, max_depth=1, min_samples_per_segment=1).descriptions
    shuffled = generate_segments(X.iloc[::-1], max_depth=1, min_samples_per_segment=1).descriptions
    assert first == shuffled == ["all", "c=x", "c=y", "c not in {x, y}"]


def test_numerical_bins_match_pandas_quantile_cut(table):
    segs = generate_segments(table[["age"]], max_depth=1, min_samples_per_segment=1)
    edges = table["age"].quantile(np.linspace(0, 1, 4))
    expected = pd.cut(table["age"], bins=edges, labels=False, include_lowest=True, duplicates="drop")
    for code in range(3):
        assert np.array_equal(segs.mask(1 + code), (expected == code).to_numpy())


def test_few_distinct_numbers_are_levels_of_their_own(table):
    segs = generate_segments(table[["kids"]], max_depth=1)
    assert segs.descriptions == ["all", "kids=0", "kids=1", "kids=2"]


def test_missing_values_form_their_own_level_outside_the_value_budget():
    X = pd.DataFrame({"c": ["a", "b", "c", None, "a", None], "x": [1.0, np.nan, 3.0, 4.0, 5.0, 6.0]})
    segs = generate_segments(X, max_depth=1, min_samples_per_segment=1)
    assert "c is missing" in segs.descriptions and "x is missing" in segs.descriptions
    # three values kept (no "other"), missing extra
    assert {"c=a", "c=b", "c=c"} <= set(segs.descriptions)
    assert segs.sizes[segs.descriptions.index("c is missing")] == 2


def test_single_level_features_are_skipped_with_a_warning():
    X = pd.DataFrame({"const": ["k"] * 6, "empty": [np.nan] * 6, "c": list("aabbcc")})
    with pytest.warns(CalibrationWarning) as record:
        segs = generate_segments(X, max_depth=2, min_samples_per_segment=1)
    messages = sorted(str(w.message) for w in record)
    assert len(messages) == 2 and "'const' has a single level" in messages[0] and "'empty'" in messages[1]
    assert segs.descriptions == ["all", "c=a", "c=b", "c=c"]


def test_all_missing_features_leave_only_the_whole_table():
    X = pd.DataFrame({"a": [np.nan] * 4, "b": [None] * 4})
    with pytest.warns(CalibrationWarning):
        segs = generate_segments(X)
    assert segs.descriptions == ["all"] and segs.sizes.tolist() == [4]


def test_small_segments_are_dropped_but_the_whole_table_is_kept():
    X = pd.DataFrame({"c": list("aaab")})
    segs = generate_segments(X, min_samples_per_segment=3)
    assert segs.descriptions == ["all", "c=a"]
    tiny = generate_segments(X, min_samples_per_segment=10)
    assert tiny.descriptions == ["all"]


def test_cap_keeps_shallow_depths_whole_and_sets_capped(table):
    full = generate_segments(table, max_n_segments=None)
    n_shallow = int(np.sum(full.depths <= 1))
    capped = generate_segments(table, max_n_segments=n_shallow + 5)
    assert capped.n_segments == n_shallow + 5 and capped.capped and not full.capped
    assert np.sum(capped.depths <= 1) == n_shallow
    assert set(capped.descriptions) <= set(full.descriptions)


def test_cap_does_not_favour_the_first_listed_features(rng):
    X = pd.DataFrame(rng.integers(0, 2, (300, 6)), columns=[f"f{j}" for j in range(6)])
    # depth 1 has 12 segments; 20 more keep 5 of the 15 pairs (4 segments each)
    kept_first, kept_last = 0, 0
    for seed in range(60):
        segs = generate_segments(X, max_depth=2, max_n_segments=33, random_state=seed)
        kept_first += any(d.startswith("f0=") and "& f1=" in d for d in segs.descriptions)
        kept_last += any(d.startswith("f4=") and "& f5=" in d for d in segs.descriptions)
    # each pair is kept with probability 1/3; listing-order truncation would give 60 and 0
    assert 8 <= kept_first <= 32 and 8 <= kept_last <= 32


def test_same_random_state_gives_the_same_segments(table):
    a = generate_segments(table, max_n_segments=40, random_state=3)
    b = generate_segments(table, max_n_segments=40, random_state=3)
    assert a.descriptions == b.descriptions


def test_max_depth_none_uses_every_feature(table):
    segs = generate_segments(table[["job", "married", "kids"]], max_depth=None, max_n_segments=None)
    assert segs.depths.max() == 3


def test_categorical_features_can_be_declared_by_name_index_or_mask(table):
    by_name = generate_segments(table, max_depth=1, categorical_features=["job", "married", "kids"])
    by_index = generate_segments(table, max_depth=1, categorical_features=[0, 1, 3])
    by_mask = generate_segments(table, max_depth=1, categorical_features=[True, True, False, True])
    assert by_name.descriptions == by_index.descriptions == by_mask.descriptions
    assert "kids=0.0" in by_name.descriptions


def test_arrays_get_positional_feature_names():
    segs = generate_segments(np.array([[0, 1], [0, 2], [1, 1], [1, 2]]), max_depth=1, min_samples_per_segment=1)
    assert segs.descriptions == ["all", "x0=0", "x0=1", "x1=1", "x1=2"]


def test_dataframe_and_array_give_the_same_segments(table):
    num = table[["age", "kids"]]
    a = generate_segments(num, max_depth=2)
    b = generate_segments(num.to_numpy(), max_depth=2)
    assert a.descriptions == [d.replace("x0", "age").replace("x1", "kids") for d in b.descriptions]


def test_segment_sums_equal_the_mask_products(table, rng):
    segs = concat(generate_segments(table, max_depth=2), from_masks(rng.random((len(table), 3)) < 0.3))
    values = rng.normal(size=len(table))
    assert np.allclose(segs.segment_sums(values), segs.to_masks().T.astype(float) @ values)


def test_from_masks_keeps_rows_and_names():
    masks = pd.DataFrame({"young": [True, False, True], "old": [0, 1, 0]})
    segs = from_masks(masks)
    assert segs.descriptions == ["young", "old"]
    assert segs.indices(0).tolist() == [0, 2] and segs.sizes.tolist() == [2, 1]
    assert from_masks(np.array([False, True])).descriptions == ["segment 0"]


def test_from_masks_allows_an_empty_segment():
    segs = from_masks(np.array([[True, False], [True, False]]))
    assert segs.sizes.tolist() == [2, 0] and segs.indices(1).size == 0


@pytest.mark.parametrize(
    ("masks", "names", "match"),
    [
        (np.zeros((0, 2), dtype=bool), None, "non-empty"),
        (np.array([[0, 2], [1, 0]]), None, "boolean or 0/1"),
        (np.array([[True, None]], dtype=object), None, "missing"),
        (np.array([["a", "b"]]), None, "boolean or 0/1"),
        (np.ones((2, 2), dtype=bool), ["only one"], "one entry per mask"),
        (np.ones((2, 2, 2), dtype=bool), None, "shape"),
    ],
)
def test_from_masks_rejects_bad_masks(masks, names, match):
    with pytest.raises(ValueError, match=match):
        from_masks(masks, names=names)


def test_from_labels_gives_one_segment_per_label_most_frequent_first():
    segs = from_labels(pd.Series(["x", "y", None, "y", "z"], name="country"))
    assert segs.descriptions == ["country=y", "country=x", "country=z", "country is missing"]
    assert segs.sizes.tolist() == [2, 1, 1, 1]


def test_label_column_with_one_value_is_the_whole_table():
    segs = from_labels(["only"] * 4)
    assert segs.descriptions == ["group=only"] and segs.indices(0).tolist() == [0, 1, 2, 3]


def test_from_labels_rejects_empty_input():
    with pytest.raises(ValueError, match="labels must not be empty"):
        from_labels([])


def test_concat_keeps_order_and_checks_rows():
    a, b = from_labels(["p", "q"]), from_masks([True, True], names=["both"])
    assert concat(a, b).descriptions == ["group=p", "group=q", "both"]
    with pytest.raises(ValueError, match="share n_samples"):
        concat(a, from_masks([True, False, True]))
    with pytest.raises(TypeError, match="concat takes Segments"):
        concat(a, np.ones(2))
    with pytest.raises(ValueError, match="at least one"):
        concat()


def test_dict_round_trip_through_json_rebuilds_the_same_segments(table, rng):
    segs = concat(generate_segments(table, max_n_segments=50), from_masks(rng.random((len(table), 2)) < 0.5))
    state = json.loads(json.dumps(segs.to_dict()))
    back = Segments.from_dict(state, X=table)
    assert back.descriptions == segs.descriptions and back.capped == segs.capped
    assert np.array_equal(back.to_masks(), segs.to_masks())


def test_from_dict_rejects_malformed_state(table):
    good = generate_segments(table[["job"]], max_depth=1).to_dict()
    with pytest.raises(ValueError, match="X must be given"):
        Segments.from_dict(good)
    with pytest.raises(ValueError, match="state must be a dict"):
        Segments.from_dict({"parts": []})
    bad = json.loads(json.dumps(good))
    bad["parts"][0]["segments"].append([[0, 99]])
    with pytest.raises(ValueError, match="conditions"):
        Segments.from_dict(bad, X=table)
    with pytest.raises(ValueError, match="feature column 'job'"):
        Segments.from_dict(good, X=table[["age"]])
    masks = from_masks([True, False]).to_dict()
    masks["parts"][0]["indices"] = [5]
    with pytest.raises(ValueError, match="in-range indices"):
        Segments.from_dict(masks)


def test_apply_evaluates_the_same_definitions_on_new_rows(table):
    segs = generate_segments(table, max_depth=2, max_n_segments=None)
    new = pd.DataFrame({"job": ["admin", "pilot"], "married": [True, False], "age": [20.0, 90.0], "kids": [1.0, 7.0]})
    applied = segs.apply(new)
    assert applied.descriptions == segs.descriptions and applied.n_samples == 2
    members = {d for k, d in enumerate(applied.descriptions) if 1 in applied.indices(k)}
    # an unseen job falls in the collapsed "other" level; an unseen count matches no kids level
    assert "job not in {admin, tech}" in members and not any(d.startswith("kids=") for d in members)
    with pytest.raises(ValueError, match="generated from features"):
        from_masks([True, False]).apply(new)


def test_indices_rejects_a_bad_segment_number(table):
    segs = generate_segments(table[["job"]], max_depth=1)
    for bad, error in ((-1, ValueError), (segs.n_segments, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="segment must be an integer"):
            segs.indices(bad)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_depth": -1}, "max_depth must be an integer >= 0"),
        ({"max_values_per_feature": 1}, "max_values_per_feature must be an integer >= 2"),
        ({"min_samples_per_segment": 0}, "min_samples_per_segment must be an integer >= 1"),
        ({"max_n_segments": 0}, "max_n_segments must be an integer >= 1"),
        ({"categorical_features": "auto"}, "categorical_features must be 'from_dtype'"),
        ({"categorical_features": ["nope"]}, r"names must be columns of X; got unknown \[.nope.\]"),
        ({"categorical_features": [7]}, r"categorical_features indices must lie in \[0, 3\]; got \[7\]"),
        ({"categorical_features": [True]}, "categorical_features as a mask must have length 4"),
        ({"categorical_features": None}, "must be numeric to be a numerical feature"),
    ],
)
def test_generate_segments_rejects_bad_parameters(table, kwargs, match):
    with pytest.raises(ValueError, match=match):
        generate_segments(table, **kwargs)


def test_generate_segments_rejects_a_count_of_the_wrong_type_with_a_type_error(table):
    with pytest.raises(TypeError, match="max_depth must be an integer >= 0 or None; got 2.0 of type float"):
        generate_segments(table, max_depth=2.0)


def test_generate_segments_rejects_bad_tables():
    with pytest.raises(ValueError, match="X must be 2-D"):
        generate_segments(np.arange(3.0))
    with pytest.raises(ValueError, match="at least one row"):
        generate_segments(pd.DataFrame({"a": []}))
    with pytest.raises(ValueError, match="infinite"):
        generate_segments(pd.DataFrame({"a": [1.0, np.inf, 2.0]}))
    with pytest.raises(TypeError, match="X must be a 2-D"):
        generate_segments(None)


def test_column_names_with_the_same_text_are_rejected(rng):
    # 0 and "0" would both be the feature "0": descriptions could not tell them apart and apply() would read the
    # first column for both
    X = pd.DataFrame({0: rng.integers(0, 2, 40), "0": rng.integers(0, 3, 40)})
    with pytest.raises(ValueError, match=r"X column names must be distinct as text; got repeated \['0'\]"):
        generate_segments(X)


def test_categorical_values_with_the_same_text_are_one_level_that_apply_finds():
    X = pd.DataFrame({"a": np.array([1, "1", "2", None] * 5, dtype=object)})
    segs = generate_segments(X, min_samples_per_segment=1)
    assert segs.descriptions == ["all", "a=1", "a=2", "a is missing"]
    assert segs.sizes.tolist() == [20, 10, 5, 5]
    assert segs.apply(X).sizes.tolist() == [20, 10, 5, 5]


def test_complex_numerical_column_is_rejected():
    with pytest.raises(TypeError, match="X column 'z' must hold real numbers; got dtype complex128"):
        generate_segments(pd.DataFrame({"z": np.arange(20) + 1j}))


@pytest.mark.parametrize(
    ("column", "hint"),
    [
        (pd.date_range("2024-01-01", periods=20, freq="D"), "(X['t'] - X['t'].min()).dt.days"),
        (pd.date_range("2024-01-01", periods=20, freq="D", tz="UTC"), "(X['t'] - X['t'].min()).dt.days"),
        (pd.to_timedelta(np.arange(20), unit="h"), "X['t'].dt.total_seconds()"),
    ],
    ids=["datetime", "datetime-tz", "timedelta"],
)
def test_datetime_and_timedelta_columns_are_refused_with_a_conversion_hint(column, hint):
    # they were categories by text: segments "t not in {2024-01-01 00:00:00, 2024-01-02 00:00:00}"
    with pytest.raises(TypeError, match=re.escape(f"X column 't' must be converted to numbers (e.g. {hint})")):
        generate_segments(pd.DataFrame({"t": column}), max_depth=1)


def test_datetime_column_declared_categorical_makes_one_level_per_date():
    X = pd.DataFrame({"t": pd.to_datetime(["2024-01-01", "2024-01-02"] * 10)})
    segs = generate_segments(X, min_samples_per_segment=1, categorical_features=["t"])
    assert segs.descriptions == ["all", "t=2024-01-01 00:00:00", "t=2024-01-02 00:00:00"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("n_samples", [1]), ("parts", [3]), ("parts", [{"kind": "generated", "features": 5, "segments": []}])],
    ids=["n_samples-list", "part-not-a-dict", "features-not-a-list"],
)
def test_from_dict_of_a_malformed_state_is_a_value_error(key, value):
    X = pd.DataFrame({"a": list("xyz") * 20})
    state = generate_segments(X, max_depth=1, min_samples_per_segment=5).to_dict()
    state[key] = value
    with pytest.raises(ValueError, match=r"state must be a dict from Segments.to_dict\(\); got a malformed one"):
        Segments.from_dict(state, X)


def test_masks_of_segments_from_constant_columns_only_are_the_all_rows_segment():
    # every column dropped: only the segment of all rows, whose part holds no code array to count rows from
    X = pd.DataFrame({"a": np.ones(30), "b": ["k"] * 30})
    with pytest.warns(CalibrationWarning, match="single level"):
        segs = generate_segments(X)
    masks = segs.to_masks()
    assert masks.shape == (30, 1) and masks.all()


@pytest.mark.parametrize(
    "values",
    [[datetime.datetime(2024, 1, d) for d in (1, 2)], [datetime.date(2024, 1, d) for d in (1, 2)],
     [pd.Timestamp(2024, 1, d) for d in (1, 2)]],
    ids=["datetime", "date", "timestamp"],
)  # fmt: skip
def test_object_columns_of_dates_are_refused_as_datetime64_columns_are(values):
    # they were categories by text, one segment per timestamp
    X = pd.DataFrame({"t": pd.Series(values * 10, dtype=object)})
    hint = "(pd.to_datetime(X['t']) - pd.to_datetime(X['t']).min()).dt.days"
    with pytest.raises(TypeError, match=re.escape(f"X column 't' must be converted to numbers (e.g. {hint})")):
        generate_segments(X, max_depth=1)
    with pytest.raises(TypeError, match=re.escape("X column 'x0' must be converted to numbers")):
        generate_segments(X.to_numpy(), max_depth=1)  # an object array, column by column
    segs = generate_segments(X, min_samples_per_segment=1, categorical_features=["t"])
    assert segs.descriptions == ["all", *(f"t={v}" for v in values)]
