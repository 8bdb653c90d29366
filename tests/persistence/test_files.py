"""Model files: exact round trip, and clear errors for corrupt, foreign or tampered files."""

import hashlib
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import mcal
from mcal import (
    BetaCalibration,
    CalibrationWarning,
    HistogramBinning,
    IsotonicCalibration,
    PlattScaling,
    TemperatureScaling,
)
from mcal._registry import METHODS, get_method

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
    assert doc["format"] == "mcal-model" and doc["schema_version"] == 2
    assert len(doc["content_sha256"]) == 64 and not doc["content_sha256"].strip("0123456789abcdef")
    assert doc["model"]["class"] == "PlattScaling"


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d.update(format="something-else"), "not an mcal model file"),
        (lambda d: d.update(schema_version=99), "schema_version 99; this mcal reads schema_version 2"),
        (lambda d: d.update(schema_version=True), "schema_version True"),  # equal to 1, but not a version
        (lambda d: d.update(schema_version=2.0), "schema_version 2.0"),
        (lambda d: d["model"].update({"class": "Popen"}), "registered mcal calibrator"),
        (lambda d: d["model"]["params"].update(evil=1), "unknown parameters"),
        (lambda d: d["model"]["state"].pop("y_thresholds_"), "lacks fitted attributes"),
        (lambda d: d["model"]["state"]["X_thresholds_"]["__ndarray__"].reverse(), "increasing"),
        (lambda d: d["model"]["state"]["y_thresholds_"].update(shape=[3]), "matching shape"),
        (lambda d: d["model"]["state"]["y_thresholds_"].update(dtype="object"), "dtype"),
        (lambda d: d["model"]["state"]["y_thresholds_"].update(dtype="str"), r"y_thresholds_' must hold strings"),
        (
            lambda d: d["model"].update({"class": "HistogramBinning", "params": {"n_bins": -3}, "state": None}),
            "invalid parameters for HistogramBinning: n_bins must be a positive integer; got -3",
        ),
    ],
)
def test_tampered_model_file_is_rejected(tmp_path, miscalibrated, rewrite_model, mutate, match):
    # the file is given the digest of its edited content: these are the checks behind the digest
    p, y = miscalibrated
    path = mcal.save(IsotonicCalibration().fit(p, y), tmp_path / "m.json")
    rewrite_model(path, mutate)
    with pytest.raises(ValueError, match=match):
        mcal.load(path)


def test_non_json_file_is_rejected(tmp_path):
    path = tmp_path / "m.json"
    path.write_bytes(b"\x80\x04\x95 pickle bytes")
    with pytest.raises(ValueError, match="not valid JSON"):
        mcal.load(path)


def test_integer_past_pythons_digit_limit_is_rejected_naming_the_file(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"format": ' + "9" * 5000 + "}")  # json.loads raised a ValueError that named no file
    with pytest.raises(ValueError, match=r"m\.json is not an mcal model file: it is not valid JSON"):
        mcal.load(path)


def test_json_nested_too_deeply_for_the_parser_is_rejected_as_a_value_error(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("[" * 100_000 + "]" * 100_000)  # json.loads raised RecursionError
    with pytest.raises(ValueError, match=r"m.json must hold JSON nested no deeper than .*; got JSON nested too deeply"):
        mcal.load(path)


def test_json_nested_too_deeply_to_decode_is_rejected_as_a_value_error(tmp_path, miscalibrated, rewrite_model):
    p, y = miscalibrated
    path = mcal.save(HistogramBinning(n_bins=5).fit(p, y), tmp_path / "m.json")
    # parsed by json.loads, but deeper than the parameter decoder could recurse
    rewrite_model(path, lambda doc: doc["model"]["params"].update(n_bins=_nested(700, 5)))
    with pytest.raises(ValueError, match="model data must be nested no deeper than .*; got data nested too deeply"):
        mcal.load(path)


def _nested(depth, value=1):
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
    with pytest.raises(
        ValueError,
        match=r"model data must be nested no deeper than Python's recursion limit \(\d+\) "
        "lets mcal decode, as to_dict writes it; got data nested too deeply",
    ):
        cls.from_dict(data)


@pytest.mark.parametrize("path", [None, 3, b"m.json"])
def test_a_path_that_is_not_a_str_or_path_like_is_a_type_error_naming_path(tmp_path, miscalibrated, path):
    match = f"path must be a str or path-like object naming a file; got {type(path).__name__}"
    with pytest.raises(TypeError, match=match):
        mcal.load(path)
    p, y = miscalibrated
    with pytest.raises(TypeError, match=match):
        mcal.save(PlattScaling().fit(p, y), path)


def test_state_of_wrong_type_is_rejected(tmp_path, miscalibrated, rewrite_model):
    p, y = miscalibrated
    path = mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json")
    rewrite_model(path, lambda doc: doc["model"]["state"].update(slope_="__import__('os')"))
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
    with pytest.raises(
        IsADirectoryError, match="path must be a file, not a folder; got .*dir.json', which is a folder"
    ):
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
        np.linspace(0.1, 0.9, 40), np.tile([0, 1], 20), X=np.linspace(0, 1, 40).reshape(-1, 1)
    )
    cal.set_params(max_rounds=-1)
    with pytest.raises(
        ValueError,
        match="MCGrad holds an invalid parameter, which a model file cannot load: "
        "max_rounds must be an integer >= 0; got -1",
    ):
        mcal.save(cal, tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize(
    "model",
    [PlattScaling(), IsotonicCalibration(), mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=1)],
    ids=["platt", "isotonic", "mcgrad"],
)
def test_state_entries_the_class_does_not_write_are_rejected(miscalibrated, model):
    # a Platt file carrying an isotonic 'thresholds_x_' (or any stray entry) is not the file mcal wrote
    p, y = miscalibrated
    data = model.fit(p, y).to_dict()
    type(model).from_dict(json.loads(json.dumps(data)))  # the file as written loads
    data["state"]["coef_"] = [1.0]
    with pytest.raises(ValueError, match=r"'state' has entries that \w+ does not write: \['coef_'\]"):
        type(model).from_dict(data)


@pytest.mark.parametrize(
    "make",
    [
        lambda: mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=1),
        lambda: mcal.HKRR(random_state=0),
        lambda: mcal.DFMC(n_estimators=3, n_jobs=1, random_state=0),
    ],
    ids=["mcgrad", "hkrr", "dfmc"],
)
def test_declared_extra_state_keys_are_the_keys_to_dict_writes(miscalibrated, make):
    # loading refuses state entries outside _state_attrs and _extra_state_keys, so the declaration must match
    p, y = miscalibrated
    X = (np.arange(p.size) % 3 == 0)[:, None]
    model = make().fit(p, y, X=X)
    assert set(model._extra_state()) == set(type(model)._extra_state_keys)
    assert set(model.to_dict()["state"]) == set(model._state_attrs) | set(model._extra_state_keys)


def test_only_classes_with_extra_state_declare_its_keys():
    from mcal._base import BaseCalibrator

    for name in METHODS:
        cls = get_method(name)
        overrides = cls._extra_state is not BaseCalibrator._extra_state
        assert bool(cls._extra_state_keys) == overrides, name


# -- the content digest --------------------------------------------------------------------------------------------


def _canonical(doc):
    """The canonical serialization the digest is defined on, written out here rather than taken from mcal."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("utf-8")


def _content(path):
    doc = json.loads(path.read_text())
    return doc.pop("content_sha256"), doc


def _predict(model, p, X):
    return model.predict(p) if X is None else model.predict(p, X=X)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_registered_method_round_trips_with_a_digest_of_its_canonical_content(tmp_path, name, fit_registered):
    model, p, X = fit_registered(name)
    path = mcal.save(model, tmp_path / "m.json")
    digest, content = _content(path)
    canonical = _canonical(content)
    assert hashlib.sha256(canonical).hexdigest() == digest
    assert _canonical(json.loads(canonical)) == canonical  # parsing the canonical form gives it back, byte for byte
    np.testing.assert_array_equal(_predict(mcal.load(path), p, X), _predict(model, p, X))


@pytest.fixture(scope="module")
def small_mcgrad(small_data, fit_registered):
    model, p, X = fit_registered("mcgrad")
    model.set_params(max_rounds=3).fit(p, small_data[1], X=X)
    assert model.n_rounds_ == 3 and len(set(model.to_dict()["state"]["boosters"])) == 3
    return model


def _edit_keeping_the_digest(path, edit):
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def _mismatch(path, recorded):
    return (
        rf"{path.name}: the content does not match its SHA-256 digest \(the file is corrupt or was edited\): "
        rf"expected {recorded[:16]}\.\.\., got [0-9a-f]{{16}}\.\.\.$"
    )


def _caught_by_the_digest_alone(path, edit, rewrite_model):
    """Check that ``edit`` makes the file fail its digest, and that, given a new digest, it passes every other check
    (so the digest is what catches it); return the model loaded from the re-digested file."""
    original = path.read_text()
    _edit_keeping_the_digest(path, edit)
    with pytest.raises(ValueError, match=_mismatch(path, json.loads(original)["content_sha256"])):
        mcal.load(path)
    path.write_text(original)
    rewrite_model(path, edit)
    return mcal.load(path)


def _flip_a_leaf_digit(doc):
    lines = doc["model"]["state"]["boosters"][0].split("\n")
    row = next(i for i, line in enumerate(lines) if line.startswith("leaf_value="))
    position = next(i for i, c in enumerate(lines[row]) if c.isdigit())
    digit = lines[row][position]
    lines[row] = lines[row][:position] + str((int(digit) + 1) % 10) + lines[row][position + 1 :]
    doc["model"]["state"]["boosters"][0] = "\n".join(lines)


def _swap_the_first_two_rounds(doc):
    boosters = doc["model"]["state"]["boosters"]
    boosters[0], boosters[1] = boosters[1], boosters[0]


@pytest.mark.parametrize("edit", [_flip_a_leaf_digit, _swap_the_first_two_rounds], ids=["leaf-digit", "swapped-rounds"])
def test_an_mcgrad_file_with_one_leaf_digit_changed_or_two_rounds_swapped_fails_its_digest(
    tmp_path, small_mcgrad, rewrite_model, edit, small_data
):
    path = mcal.save(small_mcgrad, tmp_path / "m.json")
    edited = _caught_by_the_digest_alone(path, edit, rewrite_model)
    p, _, field = small_data
    X = pd.DataFrame({"f": pd.Categorical(field)})
    assert not np.array_equal(edited.predict(p, X=X), small_mcgrad.predict(p, X=X))


def _next_float(value):
    return float(np.nextafter(value, np.inf))


@pytest.mark.parametrize(
    "cls, edit",
    [
        (
            lambda: IsotonicCalibration(extremes="empirical"),  # no end block tied to its neighbour by the cap
            lambda s: s["y_thresholds_"]["__ndarray__"].__setitem__(
                1, _next_float(s["y_thresholds_"]["__ndarray__"][1])
            ),
        ),
        (PlattScaling, lambda s: s.update(slope_=_next_float(s["slope_"]))),
    ],
    ids=["isotonic", "platt"],
)
def test_a_calibration_map_with_one_float_changed_in_its_last_bit_fails_its_digest(
    tmp_path, miscalibrated, rewrite_model, cls, edit
):
    p, y = miscalibrated
    model = cls().fit(p, y)
    path = mcal.save(model, tmp_path / "m.json")
    edited = _caught_by_the_digest_alone(path, lambda doc: edit(doc["model"]["state"]), rewrite_model)
    points = np.concatenate([GRID, getattr(model, "X_thresholds_", [])])  # isotonic: where the edited value is
    assert not np.array_equal(edited.predict(points), model.predict(points))


def test_the_digest_ignores_layout_but_not_values(tmp_path, miscalibrated):
    # canonical form: indentation, key order and the spelling of a number do not change it
    p, y = miscalibrated
    path = mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json", metadata={"scale": 0.125})
    doc = json.loads(path.read_text())
    text = json.dumps(dict(reversed(doc.items())), indent=3)
    path.write_text(text.replace('"scale": 0.125', '"scale": 1.25E-1'))
    assert mcal.load(path, return_metadata=True)[1] == {"scale": 0.125}
    path.write_text(text.replace('"scale": 0.125', '"scale": 0.126'))
    with pytest.raises(ValueError, match="content does not match its SHA-256 digest"):
        mcal.load(path)


def test_a_file_resaved_by_an_editor_with_crlf_line_ends_and_a_byte_order_mark_loads(tmp_path, miscalibrated):
    # Windows Notepad writes UTF-8 with a BOM and CRLF: neither is content; json.loads refused the BOM
    p, y = miscalibrated
    model = PlattScaling().fit(p, y)
    path = mcal.save(model, tmp_path / "m.json")
    text = json.dumps(json.loads(path.read_text()), indent=2).replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert mcal.load(path).slope_ == model.slope_


def test_extreme_floats_and_non_string_keys_round_trip_exactly_under_the_digest(tmp_path):
    # the digest is taken on the content as load parses it: a float must read back as the same bits
    floats = [1e-300, -0.0, 5e-324, -1e-320, 2.225073858507201e-308, 1.7976931348623157e308, 0.1, 1 / 3, 1e16]
    cal = PlattScaling().fit([0.2, 0.8, 0.3, 0.6], [0, 1, 0, 1])
    cal.slope_, cal.intercept_ = 5e-324, -0.0
    path = mcal.save(cal, tmp_path / "m.json", metadata={"floats": floats, "big": 2**64 + 1, 1: "integer key"})
    loaded, meta = mcal.load(path, return_metadata=True)
    assert [x.hex() for x in meta["floats"]] == [x.hex() for x in floats]
    assert meta["big"] == 2**64 + 1 and meta["1"] == "integer key"
    assert loaded.slope_ == 5e-324 and math.copysign(1.0, loaded.intercept_) == -1.0


@pytest.mark.parametrize(
    "make", [lambda: PlattScaling().fit([0.2, 0.8, 0.3, 0.6], [0, 1, 0, 1]), None], ids=["platt", "mcgrad"]
)
def test_the_same_model_saved_twice_has_the_same_digest(tmp_path, small_mcgrad, make):
    model = small_mcgrad if make is None else make()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = mcal.save(model, tmp_path / "a" / "m.json"), mcal.save(model, tmp_path / "b" / "m.json")
    assert _content(first)[0] == _content(second)[0]
    assert first.read_bytes() == second.read_bytes()


def test_a_version_1_file_loads_with_a_warning_that_its_content_cannot_be_checked(
    tmp_path, miscalibrated, rewrite_model
):
    # a file as mcal wrote it before the digest: this save minus the digest, with schema_version 1
    p, y = miscalibrated
    model = IsotonicCalibration().fit(p, y)
    path = mcal.save(model, tmp_path / "old.json")
    rewrite_model(path, lambda doc: doc.update(schema_version=1), digest=False)
    assert "content_sha256" not in json.loads(path.read_text())
    with pytest.warns(
        CalibrationWarning,
        match=r"old.json is a schema-version-1 model file, which has no digest: "
        r"mcal cannot check that its content is not corrupt or edited",
    ):
        loaded = mcal.load(path)
    np.testing.assert_array_equal(loaded.predict(GRID), model.predict(GRID))
    mcal.save(loaded, path)  # saving it again upgrades it
    assert json.loads(path.read_text())["schema_version"] == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcal.load(path)


def test_a_version_1_file_still_gets_the_structural_checks(tmp_path, miscalibrated, rewrite_model):
    p, y = miscalibrated
    path = mcal.save(IsotonicCalibration().fit(p, y), tmp_path / "old.json")
    rewrite_model(
        path, lambda doc: (doc.update(schema_version=1), doc["model"].update({"class": "Popen"})), digest=False
    )
    with pytest.warns(CalibrationWarning), pytest.raises(ValueError, match="registered mcal calibrator"):
        mcal.load(path)


@pytest.mark.parametrize(
    "value, got",
    [
        (None, "None"),
        ("abc", "'abc'"),
        (5, "5"),
        ("A" * 64, "'A{64}'"),
        ("0" * 63 + "g", "'0{63}g'"),
        ("f" * 200, "'f{79}$"),
    ],
)
def test_a_version_2_file_without_a_well_formed_digest_is_rejected(tmp_path, miscalibrated, value, got):
    p, y = miscalibrated
    path = mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json")
    _edit_keeping_the_digest(
        path, lambda doc: doc.update(content_sha256=value) if value is not None else doc.pop("content_sha256")
    )
    with pytest.raises(
        ValueError,
        match=r"m.json: 'content_sha256' must be the 64 lowercase hex digits of the "
        rf"SHA-256 of the file's content, as mcal.save writes it; got {got}",
    ):
        mcal.load(path)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_number_in_a_version_2_file_is_rejected_as_corrupt(tmp_path, miscalibrated, literal):
    # json.loads accepts these (1e400 reads as inf); mcal.save never writes one
    p, y = miscalibrated
    path = mcal.save(PlattScaling().fit(p, y), tmp_path / "m.json", metadata={"x": 0.5})
    path.write_text(path.read_text().replace('"x":0.5', f'"x":{literal}'))
    with pytest.raises(ValueError, match=r"m.json is corrupt or was edited: it holds a number that is not finite"):
        mcal.load(path)


def test_non_ascii_and_unpaired_surrogate_strings_round_trip_under_the_digest(tmp_path):
    # the canonical form escapes every non-ASCII character, so a lone surrogate (valid JSON) encodes too
    text = {"accents": "café ✓ 日本", "surrogate": "\ud800", "control": "a\tb\x00"}
    path = mcal.save(PlattScaling().fit([0.2, 0.8, 0.3, 0.6], [0, 1, 0, 1]), tmp_path / "m.json", metadata=text)
    assert mcal.load(path, return_metadata=True)[1] == text
