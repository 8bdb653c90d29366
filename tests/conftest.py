import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def miscalibrated(rng):
    """20k over-confident scores: the true probability is expit(0.5 * logit(p) + 0.3)."""
    from scipy.special import expit, logit

    p = rng.uniform(0.001, 0.999, 20_000)
    y = (rng.uniform(size=p.size) < expit(0.5 * logit(p) + 0.3)).astype(float)
    return p, y
