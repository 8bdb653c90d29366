"""How the tests compare floating-point results so that the suite passes on any machine (issue #31).

The rule, applied to every test in ``tests/``:

* **Bit for bit** (``np.testing.assert_array_equal``) only where the computation is exact by construction or is
  the same arithmetic on the same bits in one process: integer and boolean work, copies, encoders, the same call
  twice (a seeded fit, LightGBM with ``deterministic=True`` and fixed threads), a save -> load or pickle round trip
  (floats are written with ``repr`` or as safetensors and read back bit for bit, and run the same code), numpy's
  element-wise functions of the same inputs, and tree traversals of the same trees (one row or a batch).
* **Within ``RTOL``** (``assert_close_across_machines``) wherever the expected numbers were computed by another
  run, possibly on another machine (the model-file fixtures in ``tests/data/``, numbers copied from an earlier
  run), or the two sides take different routes through torch, BLAS, LightGBM's training or numpy's reductions
  (another histogram layout, thread count, block size, batch shape or CPU kernel). Those libraries pick their
  kernels by CPU (AVX-512, AVX2, SSE; ``ATEN_CPU_CAPABILITY``, ``OPENBLAS_CORETYPE``, numpy's SIMD dispatch) and
  thread count, and the order of their sums follows: a model file of 0aec9a9 predicted 4.3e-16 (relative) away
  from its stored predictions on a second machine, and the fixtures of tests/data/ up to 2.6e-15 away under
  simulated older CPUs (``ATEN_CPU_CAPABILITY=default``, ``NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL"``,
  ``OPENBLAS_CORETYPE=Sandybridge``).

``RTOL`` is 1e-12: about 400 times the largest of those differences, and over 100,000 times smaller than the
smallest change of behaviour a test looks for (a refused model file: 4.7e-7).
"""

import numpy as np

#: Relative tolerance for floating-point results compared across machines or computing routes.
RTOL = 1e-12


def assert_close_across_machines(actual, desired, *, err_msg=""):
    """Assert ``actual`` equals ``desired`` to ``RTOL`` (relative; zeros and NaNs must match exactly, shapes too).

    For results of torch, BLAS, LightGBM or numpy reductions computed on another machine or by another route; see
    this module's docstring for when a test compares bit for bit instead.
    """
    actual, desired = np.asarray(actual), np.asarray(desired)
    assert actual.shape == desired.shape, f"shapes differ: {actual.shape} != {desired.shape}. {err_msg}"
    np.testing.assert_allclose(actual, desired, rtol=RTOL, atol=0, equal_nan=True, err_msg=err_msg)
