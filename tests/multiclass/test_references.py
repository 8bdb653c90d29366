"""Agreement of mcal.multiclass with independent implementations, where they install.

``dirichletcal`` (Kull et al.'s Dirichlet calibration) and ``netcal`` (temperature scaling, ECE) are not test
dependencies (they did not install beside this project's pinned ones), so each test skips with the reason where
they are missing; scikit-learn's temperature scaling is compared in tests/classifier/test_multiclass.py, and
torchmetrics' top-label ECE in tests/metrics/test_multiclass.py.
"""

import importlib.util

import numpy as np
import pytest
from scipy.special import softmax

from mcal.metrics import classwise_ece, top_label_ece
from mcal.multiclass import DirichletCalibration, MatrixScaling, MulticlassTemperatureScaling


def _require(module: str):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install {module}); the comparison with it is skipped")
    return pytest.importorskip(module, reason=f"{module} is installed but does not import here")


@pytest.fixture
def scores():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(3000, 4)) * 2.0
    y = np.array([rng.choice(4, p=row) for row in softmax(z / 1.7, axis=1)])  # the scores are over-confident
    return softmax(z, axis=1), y


def test_dirichlet_calibration_agrees_with_dirichletcal_without_regularization(scores):
    dirichletcal = _require("dirichletcal")
    p, y = scores
    theirs = dirichletcal.FullDirichletCalibrator(reg_lambda=0.0, reg_mu=None).fit(p, y).predict_proba(p)
    ours = DirichletCalibration(reg_off_diagonal=0.0, reg_intercept=0.0).fit(p, y).predict(p)
    np.testing.assert_allclose(ours, theirs, atol=2e-3)


def test_matrix_scaling_of_log_probabilities_agrees_with_dirichletcal(scores):
    dirichletcal = _require("dirichletcal")
    p, y = scores
    theirs = dirichletcal.FullDirichletCalibrator(reg_lambda=0.0, reg_mu=None).fit(p, y).predict_proba(p)
    ours = MatrixScaling(reg_off_diagonal=0.0, reg_intercept=0.0).fit(np.log(p), y).predict(np.log(p))
    np.testing.assert_allclose(ours, theirs, atol=2e-3)


def test_temperature_scaling_agrees_with_netcal(scores):
    _require("netcal")
    from netcal.scaling import TemperatureScaling

    p, y = scores
    theirs = TemperatureScaling().fit(p, y).transform(p)
    ours = MulticlassTemperatureScaling().fit(p, y).predict(p)
    np.testing.assert_allclose(ours, theirs, atol=2e-3)


def test_top_label_and_classwise_ece_agree_with_netcal(scores):
    _require("netcal")
    from netcal.metrics import ECE

    p, y = scores
    assert top_label_ece(y, p, n_bins=15) == pytest.approx(ECE(bins=15).measure(p, y), abs=1e-6)
    theirs = np.mean([ECE(bins=15).measure(p[:, j], (y == j).astype(int)) for j in range(p.shape[1])])
    assert classwise_ece(y, p, n_bins=15) == pytest.approx(theirs, abs=1e-6)
