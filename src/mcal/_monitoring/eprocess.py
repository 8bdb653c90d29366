"""An e-process for the calibration of a stream of binary forecasts: a mixture of likelihood-ratio martingales.

Under the null hypothesis every row's label is a draw with the probability the model gave it,
:math:`P(y_t = 1 \\mid p_t, \\text{past}) = p_t`. Against it, each alternative :math:`j` of a fixed grid recalibrates
the score on the logit scale (Cox 1958), :math:`q_j(p) = \\operatorname{expit}(a_j + b_j \\operatorname{logit} p)`, and
bets the likelihood ratio :math:`q_j(p_t)^{y_t} (1 - q_j(p_t))^{1 - y_t} / (p_t^{y_t} (1 - p_t)^{1 - y_t})`, whose
conditional mean under the null is exactly 1 (Henzi and Ziegel 2022). The product of a row's ratios over time is a
test martingale, and so is a mixture of such products (Robbins' method of mixtures; Howard et al. 2021), also when
the wealth is moved between the alternatives at window ends by a rule that looks only at the past (fixed share,
Herbster and Warmuth 1998): by Ville's inequality, the probability that it ever reaches :math:`1/\\alpha` is at most
:math:`\\alpha`, however often it is looked at (Ramdas et al. 2023).

Within a window the bets are fixed, so the product over a window is the exponential of a sum over its rows in any
order: a window is summarised by one sum per alternative, which is what lets ``mcal.dask`` reduce windows anywhere.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_expit, logsumexp

#: The alternatives: a logit shift a (base-rate drift) or a logit slope b = exp(c) (over- and under-confidence),
#: each on a geometric grid of magnitudes from 0.02 to 2.56 (slopes to 1.28), both signs. A drift of size d lies
#: within a factor sqrt(2) of a grid point, where the log-wealth grows at least 0.8 times as fast as under the best
#: constant bet (to second order).
_SHIFTS = 0.02 * 2.0 ** np.arange(8)
_LOG_SLOPES = 0.02 * 2.0 ** np.arange(7)
INTERCEPTS = np.concatenate([-_SHIFTS, _SHIFTS, np.zeros(2 * _LOG_SLOPES.size)])
SLOPES = np.concatenate([np.ones(2 * _SHIFTS.size), np.exp(-_LOG_SLOPES), np.exp(_LOG_SLOPES)])
#: Number of alternatives; each gets the prior weight 1 / N_ALTERNATIVES.
N_ALTERNATIVES = INTERCEPTS.size
#: Fraction of the wealth spread evenly over the alternatives before each window (fixed share).
SHARE = 0.01
#: Rows per block of the (rows x alternatives) evaluation, to bound memory.
_BLOCK = 1 << 15


def log_likelihood_ratios(
    y: NDArray[np.float64], p: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Sum over rows of ``w * log LR_j`` for every alternative ``j``: one window's contribution to the log-wealth.

    Inputs are clean float64 arrays of shape (n_samples,); returns shape (N_ALTERNATIVES,). Rows with a score of
    exactly 0 or 1 are not bet on (every alternative keeps them, ``q_j = p``) and add 0.
    """
    inside = (p > 0.0) & (p < 1.0)
    y, p, w = y[inside], p[inside], w[inside]
    lp = np.log(p) - np.log1p(-p)
    negatives = w * (1.0 - y)
    # log (1 - q) / (1 - p) = log q / p - (z - logit p), as log expit(-z) = log expit(z) - z: one log_expit per cell,
    # and the negatives' correction sum_i v_i (a_j + (b_j - 1) logit p_i) in closed form
    total = -(INTERCEPTS * negatives.sum() + (SLOPES - 1.0) * (negatives @ lp))
    for start in range(0, p.size, _BLOCK):
        rows = slice(start, start + _BLOCK)
        z = INTERCEPTS[None, :] + SLOPES[None, :] * lp[rows, None]
        total += w[rows] @ (log_expit(z) - log_expit(lp[rows])[:, None])  # log q_j / p, for every row
    return total


def log_evalues(window_sums: NDArray[np.float64], share: float = SHARE) -> NDArray[np.float64]:
    """The natural log of the e-process at the end of each window, from per-window sums of shape
    (n_windows, N_ALTERNATIVES).

    The wealth starts as 1 / N_ALTERNATIVES on each alternative; before each window, a fraction ``share`` of the
    total is spread evenly over the alternatives (fixed share, Herbster and Warmuth 1998), then each alternative's
    wealth is multiplied by its likelihood ratio over the window, ``exp(S_j)``. The rebalancing uses only past
    windows, so the total stays a test martingale; it lets an alternative that becomes true late recover from its
    losses before, at a cost of at most ``log(1 / share)`` nats per change plus ``share`` per window.
    """
    log_w = np.full(N_ALTERNATIVES, -np.log(N_ALTERNATIVES))
    out = np.empty(window_sums.shape[0])
    keep, spread = np.log1p(-share), np.log(share) - np.log(N_ALTERNATIVES)
    for k, sums in enumerate(window_sums):
        log_w = np.logaddexp(keep + log_w, spread + logsumexp(log_w)) + sums
        out[k] = logsumexp(log_w)
    return out
