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


# tests/data holds fixtures and the script that generated them (it needs the reference package mcgrad,
# which is not a dependency): never collect it, not even for doctests.
collect_ignore_glob = ["data/*"]
