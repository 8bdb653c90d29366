"""A missing field value is a field value of its own, wherever fields are used: the field vocabulary, the
field-aware calibrators (NeuCalib, AdaCalib, PerFieldCalibrator, MCNet), the field metrics, the command line and
the report.

The main property: a missing value behaves exactly as a value of its own that sorts after every other value, so
each result equals the result on the same data with the missing values replaced by such a value (``"~missing"``:
"~" sorts after digits and letters).
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from mcal import AdaCalib, CalibrationWarning, MCNet, NeuCalib, PerFieldCalibrator, PlattScaling, load, save
from mcal._features.fields import UNSEEN, FieldVocabulary, field_value_label
from mcal.cli import main
from mcal.metrics import f_rce, field_pcoc

#: A present value that takes the missing level's place in the vocabulary (sorted last).
STAND_IN = "~missing"


def field_data(n=3000, seed=0):
    """Scores whose calibration differs per field value, with a third of the field missing: the missing rows are
    the most over-confident, so a calibrator that pools them with the others fits them worse."""
    rng = np.random.default_rng(seed)
    field = rng.choice(np.array(["a", "b", None], dtype=object), n)
    s = rng.normal(-0.5, 1.5, n)
    shift = np.where(pd.isna(field), 1.2, np.where(field == "a", -0.4, 0.3))
    y = (rng.random(n) < expit(0.6 * s + shift)).astype(float)
    return expit(s), y, pd.DataFrame({"f": field})


def stand_in(X):
    return X.assign(f=X["f"].fillna(STAND_IN))


# -- the vocabulary -----------------------------------------------------------------------------------------------
def test_vocabulary_lists_the_missing_level_last_and_maps_every_kind_of_missing_value_to_it():
    column = np.array(["b", None, "a", np.nan, pd.NA, "b"], dtype=object)
    vocabulary = FieldVocabulary.fit(column)
    assert vocabulary.to_list() == ["a", "b", None]
    np.testing.assert_array_equal(vocabulary.transform(column), [1, 2, 0, 2, 2, 1])


def test_a_missing_value_unseen_at_fit_is_an_unseen_value_with_one_warning():
    vocabulary = FieldVocabulary.fit(np.array(["a", "b"], dtype=object))
    with pytest.warns(
        CalibrationWarning, match=r"3 row\(s\) with 2 value\(s\) unseen at fit time \(e\.g\. 'c', missing\);"
    ):
        codes = vocabulary.transform(np.array(["a", None, np.nan, "c"], dtype=object), "f")
    np.testing.assert_array_equal(codes, [0, UNSEEN, UNSEEN, UNSEEN])


def test_integer_codes_read_as_floats_because_of_a_missing_value_are_the_same_field_values():
    # review of issue 32: a CSV's integer-coded field with an empty cell is read as floats ("1.0"), the same codes
    # without one as integers ("1"): every value was unseen at predict time
    vocabulary = FieldVocabulary.fit(np.array([1.0, 2.0, np.nan, 10.0]))
    assert vocabulary.to_list() == ["1", "10", "2", None]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        codes = vocabulary.transform(np.array([2, 1, 10]))
        np.testing.assert_array_equal(codes, [2, 0, 1])
        # a vocabulary saved before, with the floats' text, reads the integers too
        np.testing.assert_array_equal(
            FieldVocabulary(["1.0", "10.0", "2.0"]).transform(np.array([2, 1, 10])), [2, 0, 1]
        )


def test_the_missing_level_is_labelled_as_segments_label_it():
    from mcal.segments import generate_segments

    segments = generate_segments(pd.DataFrame({"f": ["a", None, "a", None]}), max_depth=1, min_samples_per_segment=1)
    assert field_value_label(None, "f") in segments.descriptions
    assert field_value_label("a", "f") == "a"


# -- the field-aware calibrators --------------------------------------------------------------------------------
def _make(name):
    return {
        "per-field": lambda: PerFieldCalibrator(PlattScaling(), field="f"),
        "neucalib": lambda: NeuCalib(field="f", max_iter=60, random_state=0),
        "adacalib": lambda: AdaCalib(field="f", max_iter=60, random_state=0),
        "mcnet": lambda: MCNet(
            field="f", n_bins=4, hidden_sizes=(8,), embedding_dim=4, n_nodes=10, max_epochs=2, random_state=0
        ),
    }[name]()


FAMILIES = ["per-field", "neucalib", "adacalib", "mcnet"]


@pytest.fixture
def one_thread():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("family", FAMILIES)
def test_missing_field_values_fit_and_predict_as_a_value_of_their_own(family, one_thread):
    p, y, X = field_data()
    cal = _make(family).fit(p, y, X=X)
    reference = _make(family).fit(p, y, X=stand_in(X))
    assert cal.field_values_ == ["a", "b", None] and reference.field_values_ == ["a", "b", STAND_IN]
    np.testing.assert_allclose(cal.predict(p, X=X), reference.predict(p, X=stand_in(X)), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_missing_level_is_saved_as_null_and_predicts_the_same_after_loading(family, one_thread, tmp_path):
    p, y, X = field_data(n=1500)
    cal = _make(family).fit(p, y, X=X)
    path = save(cal, tmp_path / "model.json")
    assert json.loads(path.read_text())["model"]["state"]["field_values_"][-1] is None
    np.testing.assert_allclose(load(path).predict(p, X=X), cal.predict(p, X=X), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_missing_value_unseen_at_fit_predicts_as_any_unseen_value(family, one_thread):
    p, y, X = field_data(n=1500)
    seen = X["f"].notna().to_numpy()
    cal = _make(family).fit(p[seen], y[seen], X=X[seen])
    rows = pd.DataFrame({"f": np.array([None] * 5 + ["never seen"] * 5, dtype=object)})
    with pytest.warns(CalibrationWarning, match="unseen at fit time"):
        out = cal.predict(np.tile(p[:5], 2), X=rows)
    np.testing.assert_allclose(out[:5], out[5:], rtol=1e-12)


def test_per_field_calibrator_gives_the_missing_level_its_own_calibrator():
    p, y, X = field_data()
    cal = PerFieldCalibrator(PlattScaling(), field="f").fit(p, y, X=X)
    missing = X["f"].isna().to_numpy()
    own = PlattScaling().fit(p[missing], y[missing])
    assert cal.field_slots_.tolist() == [0, 1, 2]
    np.testing.assert_allclose(cal.predict(p[missing], X=X[missing]), own.predict(p[missing]), rtol=1e-12)


def test_model_files_without_a_missing_level_still_load(tmp_path):
    p, y, X = field_data(n=1500)
    complete = stand_in(X).replace(STAND_IN, "b")
    path = save(PerFieldCalibrator(PlattScaling(), field="f").fit(p, y, X=complete), tmp_path / "m.json")
    cal = load(path)
    assert cal.field_values_ == ["a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cal.predict(p, X=complete)


@pytest.mark.parametrize("values", [["a", None, "b"], [None, None], ["b", "a", None], [None, "a"]])
def test_a_malformed_field_vocabulary_is_refused_on_load(values):
    p, y, X = field_data(n=1500)
    data = PerFieldCalibrator(PlattScaling(), field="f").fit(p, y, X=X).to_dict()
    data["state"]["field_values_"] = values
    with pytest.raises(ValueError, match="field_values_ must be a sorted list of distinct strings, then null"):
        PerFieldCalibrator.from_dict(data)


# -- the field metrics ------------------------------------------------------------------------------------------
def test_field_metrics_count_missing_values_as_one_field_value():
    p, y, X = field_data()
    missing, present = f_rce(y, p, field=X["f"]), f_rce(y, p, field=stand_in(X)["f"])
    assert missing == pytest.approx(present, rel=1e-12)
    per_field = field_pcoc(y, p, field=X["f"].to_numpy()).per_field
    rows = X["f"].isna().to_numpy()
    assert pd.isna(per_field.index[-1])
    assert per_field.iloc[-1] == pytest.approx(p[rows].sum() / y[rows].sum(), rel=1e-12)
    np.testing.assert_allclose(per_field.to_numpy(), field_pcoc(y, p, field=stand_in(X)["f"]).per_field.to_numpy())


# -- the command line and the report ----------------------------------------------------------------------------
@pytest.fixture
def csv_with_missing_field(tmp_path):
    p, y, X = field_data(n=2000)
    path = tmp_path / "data.csv"
    pd.DataFrame({"p": p, "y": y.astype(int), "f": X["f"]}).to_csv(path, index=False)  # missing: empty cells
    return path, p, y, X


def test_cli_fits_and_predicts_a_field_with_missing_values(csv_with_missing_field, tmp_path):
    path, p, y, X = csv_with_missing_field
    model, out = tmp_path / "model.json", tmp_path / "out.csv"
    base = ["--score-col", "p", "--label-col", "y", "--field", "f", "--method", "per-field-isotonic"]
    assert main(["fit", str(path), *base, "-o", str(model)]) == 0
    assert main(["predict", str(model), str(path), "-o", str(out)]) == 0
    expected = PerFieldCalibrator(field="f").fit(p, y, X=X).predict(p, X=X)
    np.testing.assert_allclose(pd.read_csv(out)["p_calibrated"], expected, rtol=1e-12)
    assert load(model).field_values_ == ["a", "b", None]


def test_cli_evaluate_and_report_read_missing_field_values_as_a_field_value(csv_with_missing_field, tmp_path, capsys):
    path, p, y, X = csv_with_missing_field
    assert main(["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--field", "f", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metrics"]["p"]["f_rce"] == pytest.approx(f_rce(y, p, field=stand_in(X)["f"]), rel=1e-9)
    html = tmp_path / "report.html"
    assert main(["report", str(path), "--score-col", "p", "--label-col", "y", "--field", "f", "-o", str(html)]) == 0
    fields = html.read_text().split('<section id="fields">')[1]
    assert "<td>f is missing</td>" in fields and "(3 values)" in html.read_text()
