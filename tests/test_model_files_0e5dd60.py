"""Multiclass model files written by mcal at commit 0e5dd60, before MulticlassMCGrad's state gained input_factor_.

The files, their inputs and their predictions at 0e5dd60 are in tests/data/model_files_0e5dd60/, with the script that
wrote them. The scaling and one-vs-rest calibrators predict the same floats (to ``across_machines.RTOL``, as results
computed on another machine); MulticlassMCGrad's rounds of that commit read logits that were not re-centred after each
round, so its files are refused with an error naming the change.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from across_machines import assert_close_across_machines

import mcal

HERE = Path(__file__).resolve().parent / "data" / "model_files_0e5dd60"


@pytest.fixture(scope="module")
def data():
    with np.load(HERE / "inputs.npz", allow_pickle=False) as inputs, np.load(HERE / "predictions.npz") as predictions:
        return dict(inputs), dict(predictions)


@pytest.mark.parametrize("name", ["temperature", "dirichlet", "ovr_platt"])
def test_scaling_and_one_vs_rest_files_of_0e5dd60_predict_identically(name, data):
    inputs, predictions = data
    assert_close_across_machines(mcal.load(HERE / f"{name}.json").predict(inputs["p"]), predictions[name])


def test_multiclass_mcgrad_file_without_input_factor_is_refused_naming_the_state_and_schema():
    assert json.loads((HERE / "mcgrad.json").read_text())["schema_version"] == 2  # the version mcal writes today
    with pytest.raises(ValueError, match=r"state\.input_factor_ is missing: this MulticlassMCGrad model file \(schema "
                       r"version 2\) was written by an mcal from before .* fit the model again"):  # fmt: skip
        mcal.load(HERE / "mcgrad.json")


def test_the_refused_file_would_predict_otherwise_with_an_input_factor_of_one(data):
    # why the file is refused rather than read with the old default 1.0: today's rounds re-centre the logits
    from mcal.multiclass import MulticlassMCGrad

    inputs, predictions = data
    doc = json.loads((HERE / "mcgrad.json").read_text())
    model = MulticlassMCGrad.from_dict({**doc["model"], "state": {**doc["model"]["state"], "input_factor_": 1.0}})
    gap = np.abs(model.predict(inputs["p"], X=inputs["X"]) - predictions["mcgrad"]).max()
    assert 1e-5 < gap < 0.05
