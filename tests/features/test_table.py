"""X as a polars or pyarrow table: every reader of X (mcal._features) gives what it gives for the same pandas frame."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.exceptions import NotFittedError

import mcal
from mcal import AdaCalib, CalibratedClassifier, MCGrad, MCNet, NeuCalib, PerFieldCalibrator, PlattScaling
from mcal._features.encoder import FeatureEncoder
from mcal._features.table import as_frame, column_kind
from mcal.metrics import mce
from mcal.segments import generate_segments

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 600
    X = pd.DataFrame(
        {
            "city": rng.choice(["north", "south", "east"], n),
            "age": rng.normal(40.0, 12.0, n),
            "visits": rng.integers(0, 5, n),
        }
    )
    shift = X["city"].map({"north": 0.8, "south": -0.6, "east": 0.0}).to_numpy()
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < expit(np.log(p / (1 - p)) + shift)).astype(float)
    return p, y, X


def _tables(X):
    dd = pytest.importorskip("dask.dataframe")
    return {
        "polars": pl.from_pandas(X),
        "pyarrow": pa.Table.from_pandas(X, preserve_index=False),
        # collected (computed) first, as the eager frames they describe
        "polars-lazy": pl.from_pandas(X).lazy(),
        "dask": dd.from_pandas(X, npartitions=3),
        "pyarrow-batch": pa.RecordBatch.from_pandas(X, preserve_index=False),
    }


#: Tables that are not eager frames narwhals reads: lazy ones, and pyarrow's RecordBatch.
COLLECTED = ["polars-lazy", "dask", "pyarrow-batch"]


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_as_frame_keeps_names_and_categories(kind):
    X = pd.DataFrame({"c": pd.Categorical(["a", "b", "a"]), "s": ["u", "v", None], "x": [1.5, 2.0, np.nan]})
    frame = as_frame(_tables(X)[kind])
    assert list(frame.columns) == ["c", "s", "x"]
    assert [column_kind(frame[c]) for c in frame.columns] == ["categorical", "categorical", "numerical"]
    np.testing.assert_array_equal(frame["x"].to_numpy(), X["x"].to_numpy())


def test_an_object_column_of_numbers_has_one_kind_for_the_encoder_and_the_segments():
    # Parquet decimals reach pandas as objects: numerical for MCGrad's encoder and for generated segments alike
    X = pd.DataFrame({"price": pd.Series([1.5, 2.5, 3.5, 4.5, 5.5, 6.5] * 10, dtype=object)})
    assert FeatureEncoder().fit(X).categorical_ == [False]
    segments = generate_segments(X, max_values_per_feature=2, max_depth=1)
    descriptions = segments.descriptions
    assert any("<=" in d for d in descriptions), descriptions  # binned as numbers, not levels of text


@pytest.mark.parametrize("kind", ["polars", "pyarrow", *COLLECTED])
def test_mcgrad_on_a_table_predicts_as_on_pandas_and_keeps_the_names(data, kind):
    p, y, X = data
    params = dict(n_estimators=5, max_rounds=3, early_stopping=None, random_state=0, n_jobs=1)
    reference = MCGrad(**params).fit(p, y, X=X)
    model = MCGrad(**params).fit(p, y, X=_tables(X)[kind])
    assert model.feature_names_in_ == ["city", "age", "visits"]
    assert model.feature_columns() == ["city", "age", "visits"]
    assert model.encoder_.categories_ == reference.encoder_.categories_
    np.testing.assert_array_equal(model.predict(p, X=_tables(X)[kind]), reference.predict(p, X=X))
    np.testing.assert_array_equal(model.predict(p, X=X), reference.predict(p, X=X))


FIELD_MODELS = {
    "NeuCalib": lambda: NeuCalib(field="city", max_iter=30, random_state=0),
    "AdaCalib": lambda: AdaCalib(field="city", max_iter=30, random_state=0),
    "PerFieldCalibrator": lambda: PerFieldCalibrator(field="city", calibrator=PlattScaling()),
    "MCNet": lambda: MCNet(
        field="city",
        n_bins=4,
        hidden_sizes=(8,),
        embedding_dim=2,
        n_nodes=10,
        max_epochs=2,
        batch_size=256,
        random_state=0,
    ),
}


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
@pytest.mark.parametrize("name", sorted(FIELD_MODELS))
def test_field_aware_calibrators_read_a_field_by_name_from_a_table(data, name, kind):
    p, y, X = data
    _check_field_model(name, p, y, X, _tables(X)[kind])


@pytest.mark.parametrize("kind", COLLECTED)
def test_a_lazy_table_or_record_batch_is_read_as_its_rows(data, kind):
    p, y, X = data
    _check_field_model("PerFieldCalibrator", p, y, X, _tables(X)[kind])


def _check_field_model(name, p, y, X, table):
    reference = FIELD_MODELS[name]().fit(p, y, X=X)
    model = FIELD_MODELS[name]().fit(p, y, X=table)
    assert model.feature_columns() == ["city"]
    np.testing.assert_allclose(model.predict(p, X=table), reference.predict(p, X=X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["polars", "pyarrow", *COLLECTED])
@pytest.mark.parametrize("calibrator", ["platt", "mcgrad"])
def test_calibrated_classifier_passes_a_table_to_a_column_transformer_by_name(data, kind, calibrator):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    _, y, X = data

    def build():
        columns = ColumnTransformer([("city", OneHotEncoder(), ["city"]), ("num", StandardScaler(), ["age", "visits"])])
        cal = PlattScaling() if calibrator == "platt" else MCGrad(n_estimators=3, max_rounds=2, early_stopping=None,
                                                                   random_state=0, n_jobs=1)  # fmt: skip
        return CalibratedClassifier(make_pipeline(columns, LogisticRegression()), cal, random_state=0)

    reference = build().fit(X, y)
    model = build().fit(_tables(X)[kind], y)
    assert list(model.feature_names_in_) == ["city", "age", "visits"]
    np.testing.assert_allclose(model.predict_proba(_tables(X)[kind]), reference.predict_proba(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["polars", "pyarrow", *COLLECTED])
def test_mce_and_segments_of_a_table_equal_those_of_pandas(data, kind):
    p, y, X = data
    reference = mce(y, p, X=X, sample_weight=np.linspace(0.5, 1.5, y.size))
    result = mce(y, p, X=_tables(X)[kind], sample_weight=np.linspace(0.5, 1.5, y.size))
    assert result.mce_sigma == reference.mce_sigma
    pd.testing.assert_frame_equal(result.table, reference.table)
    segments = generate_segments(_tables(X)[kind])
    expected = generate_segments(X)
    assert segments.to_dict() == expected.to_dict()
    np.testing.assert_array_equal(segments.apply(_tables(X)[kind]).to_masks(), expected.to_masks())


@pytest.mark.parametrize("kind", ["polars", "pyarrow", "polars-lazy"])
@pytest.mark.slow
def test_report_of_a_table_equals_that_of_pandas(data, kind, tmp_path):
    from mcal.report import make_report

    p, y, X = data
    pages = []
    for name, table in (("pandas", X), (kind, _tables(X)[kind])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = make_report(y, {"model": p}, path=tmp_path / f"{name}.html", X=table, n_worst_segments=3)
        page = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "<time>", out.read_text(encoding="utf-8"))
        pages.append(re.sub(r'src="data:image/svg\+xml;base64,[^"]*"', "<svg>", page))  # matplotlib's ids vary
    assert "worst segments" in pages[0].lower()
    assert pages[0] == pages[1]


def test_feature_columns_of_every_family():
    rng = np.random.default_rng(0)
    p, y = rng.uniform(0.1, 0.9, 200), rng.integers(0, 2, 200).astype(float)
    X = pd.DataFrame({"g": rng.integers(0, 2, 200).astype(bool), "x": rng.normal(size=200)})
    assert PlattScaling().fit(p, y).feature_columns() == []
    assert MCGrad(n_estimators=2, max_rounds=1, early_stopping=None).fit(p, y).feature_columns() == []
    assert MCGrad(n_estimators=2, max_rounds=1, early_stopping=None).fit(p, y, X=X.to_numpy()).feature_columns() is None
    assert mcal.HKRR().fit(p, y, X=X[["g"]]).feature_columns() == ["g"]
    assert mcal.DFMC(n_estimators=2).fit(p, y, X=X).feature_columns() == ["g", "x"]
    assert NeuCalib(field=0, max_iter=5).fit(p, y, X=X.to_numpy()).feature_columns() is None
    with pytest.raises(NotFittedError):
        PlattScaling().feature_columns()
