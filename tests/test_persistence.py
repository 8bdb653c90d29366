"""Model files: exact round trip, and clear errors for corrupt, foreign or tampered files."""

import json

import numpy as np
import pytest

import mcal
from mcal import BetaCalibration, HistogramBinning, IsotonicCalibration, PlattScaling, TemperatureScaling

ALL = [PlattScaling, TemperatureScaling, BetaCalibration, IsotonicCalibration, HistogramBinning]
GRID = np.linspace(0, 1, 1001)


@pytest.mark.parametrize("cls", ALL)
def test_save_load_reproduces_predictions_exactly(cls, miscalibrated, tmp_path):
    p, y = miscalibrated
    cal = cls().fit(p, y)
    path = mcal.save(cal, tmp_path / "m.json")
    loaded = mcal.load(path)
    assert type(loaded) is cls
    np.testing.assert_array_equal(loaded.predict(GRID), cal.predict(GRID))


def test_parameters_and_metadata_round_trip(tmp_path, miscalibrated):
    p, y = miscalibrated
    mcal.save(HistogramBinning(n_bins=7).fit(p, y), tmp_path / "m.json", metadata={"score_col": "p"})
    model, meta = mcal.load(tmp_path / "m.json", return_metadata=True)
    assert model.n_bins == 7 and meta == {"score_col": "p"}


def test_unfitted_model_round_trips_unfitted(tmp_path):
    mcal.save(HistogramBinning(n_bins=5), tmp_path / "m.json")
    loaded = mcal.load(tmp_path / "m.json")
    assert loaded.n_bins == 5 and not loaded.__sklearn_is_fitted__()


def test_model_file_is_versioned_json(tmp_path, miscalibrated):
    p, y = miscalibrated
    mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["format"] == "mcal-model" and doc["schema_version"] == 1
    assert doc["model"]["class"] == "PlattScaling"


def _saved(tmp_path, miscalibrated):
    p, y = miscalibrated
    path = mcal.save(IsotonicCalibration().fit(p, y), tmp_path / "m.json")
    return path, json.loads(path.read_text())


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d.update(format="something-else"), "not an mcal model file"),
        (lambda d: d.update(schema_version=99), "schema_version"),
        (lambda d: d["model"].update({"class": "Popen"}), "registered mcal calibrator"),
        (lambda d: d["model"]["params"].update(evil=1), "unknown parameters"),
        (lambda d: d["model"]["state"].pop("y_thresholds_"), "lacks fitted attributes"),
        (lambda d: d["model"]["state"]["X_thresholds_"]["__ndarray__"].reverse(), "increasing"),
        (lambda d: d["model"]["state"]["y_thresholds_"].update(shape=[3]), "matching shape"),
        (lambda d: d["model"]["state"]["y_thresholds_"].update(dtype="object"), "dtype"),
        (lambda d: d["model"]["state"]["y_thresholds_"].update(dtype="str"), r"y_thresholds_' must hold strings"),
        (lambda d: d["model"].update({"class": "HistogramBinning", "params": {"n_bins": -3}, "state": None}),
         "invalid parameters for HistogramBinning: n_bins must be a positive integer; got -3"),
    ],
)
def test_tampered_model_file_is_rejected(tmp_path, miscalibrated, mutate, match):
    path, doc = _saved(tmp_path, miscalibrated)
    mutate(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=match):
        mcal.load(path)


def test_non_json_file_is_rejected(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b"\x80\x04\x95 pickle bytes")
    with pytest.raises(ValueError, match="not valid JSON"):
        mcal.load(path)


def test_json_nested_too_deeply_for_the_parser_is_rejected_as_a_value_error(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("[" * 100_000 + "]" * 100_000)  # json.loads raised RecursionError
    with pytest.raises(ValueError, match=r"m.json must hold JSON nested no deeper than .*; got JSON nested too deeply"):
        mcal.load(path)


def test_json_nested_too_deeply_to_decode_is_rejected_as_a_value_error(tmp_path, miscalibrated):
    p, y = miscalibrated
    path = mcal.save(HistogramBinning(n_bins=5).fit(p, y), tmp_path / "m.json")
    doc = json.loads(path.read_text())
    nested = 5
    for _ in range(700):  # parsed by json.loads, but deeper than the parameter decoder could recurse
        nested = [nested]
    doc["model"]["params"]["n_bins"] = nested
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="model data must be nested no deeper than .*; got data nested too deeply"):
        mcal.load(path)


def _nested(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("where", ["params", "state"])
def test_from_dict_of_data_nested_too_deeply_is_a_value_error(where):
    cls = mcal.MCGrad if where == "params" else PlattScaling
    data = cls().to_dict() if where == "params" else PlattScaling().fit([0.2, 0.8, 0.3, 0.6], [0, 1, 0, 1]).to_dict()
    if where == "params":  # a lightgbm_params value nested 100k lists deep
        data["params"]["lightgbm_params"] = {"learning_rate": _nested(100_000)}
    else:
        data["state"]["slope_"] = _nested(100_000)
    with pytest.raises(ValueError, match=r"model data must be nested no deeper than Python's recursion limit \(\d+\) "
                                         "lets mcal decode, as to_dict writes it; got data nested too deeply"):
        cls.from_dict(data)


@pytest.mark.parametrize("path", [None, 3, b"m.json"])
def test_a_path_that_is_not_a_str_or_path_like_is_a_type_error_naming_path(tmp_path, miscalibrated, path):
    match = f"path must be a str or path-like object naming a file; got {type(path).__name__}"
    with pytest.raises(TypeError, match=match):
        mcal.load(path)
    p, y = miscalibrated
    with pytest.raises(TypeError, match=match):
        mcal.save(PlattScaling().fit(p, y), path)


def test_state_of_wrong_type_is_rejected(tmp_path, miscalibrated):
    p, y = miscalibrated
    path = mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json")
    doc = json.loads(path.read_text())
    doc["model"]["state"]["slope_"] = "__import__('os')"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="finite number"):
        mcal.load(path)


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="model file .*absent.json' does not exist"):
        mcal.load(tmp_path / "absent.json")


def test_saving_into_a_missing_folder_names_the_path_and_writes_nothing(tmp_path, miscalibrated):
    p, y = miscalibrated
    with pytest.raises(FileNotFoundError, match="path must be a file in an existing folder; got .*nope/m.json'"):
        mcal.save(PlattScaling().fit(p, y), tmp_path / "nope" / "m.json")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(IsADirectoryError, match="path must be a file, not a folder; got .*dir.json', which is a folder"):
        mcal.save(PlattScaling().fit(p, y), tmp_path / "dir.json")
    assert [x.name for x in tmp_path.iterdir()] == ["dir.json"]


def test_saving_a_foreign_object_raises_and_writes_nothing(tmp_path):
    with pytest.raises(TypeError, match="mcal calibrator"):
        mcal.save(object(), tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_failed_save_leaves_no_file(tmp_path, miscalibrated):
    p, y = miscalibrated
    cal = PlattScaling().fit(p, y)
    cal.slope_ = object()  # not serializable
    with pytest.raises(TypeError):
        mcal.save(cal, tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_written_files_get_the_usual_permissions(tmp_path, miscalibrated):
    import os
    import stat

    p, y = miscalibrated
    path = mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_a_parameter_made_invalid_after_fit_is_refused_at_save_and_nothing_is_written(tmp_path):
    # the file was written, and load refused it
    cal = mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=1, min_child_samples=2).fit(
        np.linspace(0.1, 0.9, 40), np.tile([0, 1], 20), X=np.linspace(0, 1, 40).reshape(-1, 1))
    cal.set_params(max_rounds=-1)
    with pytest.raises(ValueError, match="MCGrad holds an invalid parameter, which a model file cannot load: "
                                         "max_rounds must be an integer >= 0; got -1"):
        mcal.save(cal, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("model", [PlattScaling(), IsotonicCalibration(), mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=1)],
                         ids=["platt", "isotonic", "mcgrad"])
def test_state_entries_the_class_does_not_write_are_rejected(miscalibrated, model):
    # a Platt file carrying an isotonic 'thresholds_x_' (or any stray entry) is not the file mcal wrote
    p, y = miscalibrated
    data = model.fit(p, y).to_dict()
    type(model).from_dict(json.loads(json.dumps(data)))  # the file as written loads
    data["state"]["coef_"] = [1.0]
    with pytest.raises(ValueError, match=r"'state' has entries that \w+ does not write: \['coef_'\]"):
        type(model).from_dict(data)


@pytest.mark.parametrize("make", [lambda: mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=1),
                                  lambda: mcal.HKRR(random_state=0),
                                  lambda: mcal.DFMC(n_estimators=3, n_jobs=1, random_state=0)],
                         ids=["mcgrad", "hkrr", "dfmc"])
def test_declared_extra_state_keys_are_the_keys_to_dict_writes(miscalibrated, make):
    # loading refuses state entries outside _state_attrs and _extra_state_keys, so the declaration must match
    p, y = miscalibrated
    X = (np.arange(p.size) % 3 == 0)[:, None]
    model = make().fit(p, y, X=X)
    assert set(model._extra_state()) == set(type(model)._extra_state_keys)
    assert set(model.to_dict()["state"]) == set(model._state_attrs) | set(model._extra_state_keys)


def test_only_classes_with_extra_state_declare_its_keys():
    from mcal._base import BaseCalibrator
    from mcal._registry import METHODS, get_method

    for name in METHODS:
        cls = get_method(name)
        overrides = cls._extra_state is not BaseCalibrator._extra_state
        assert bool(cls._extra_state_keys) == overrides, name
