"""tune_mcgrad: a light search of MCGrad's booster parameters by successive halving on held-out rows."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mcal._features.table import take_rows
from mcal._validation import (
    check_consistent,
    check_int,
    check_positive_int,
    check_random_state_param,
    check_real,
    check_sample_weight,
    check_y_prob,
    check_y_true,
)
from mcal.mcgrad._estimator import MCGrad
from mcal.mcgrad._splits import split_rows


def default_search_space() -> dict[str, Any]:
    """The default ``param_distributions`` of :func:`~mcal.tune_mcgrad`.

    The booster parameters and ranges of the reference's ``tune_mcgrad_params`` (mcgrad 0.1.5,
    ``default_parameter_configurations``; ``num_leaves`` and ``lambda_l2`` under MCGrad's names).

    Returns
    -------
    space : dict of str to scipy distribution
        Parameter name to distribution, for scikit-learn's ``ParameterSampler``.
    """
    from scipy.stats import loguniform, randint, uniform

    return {
        "learning_rate": loguniform(0.002, 0.2),
        "min_child_samples": randint(5, 202),
        "max_leaves": randint(2, 45),
        "n_estimators": randint(10, 501),
        "l2_regularization": uniform(0.0, 100.0),
        "min_gain_to_split": uniform(0.0, 0.2),
        "max_depth": randint(2, 16),
        "min_sum_hessian_in_leaf": loguniform(1e-3, 1200.0),
    }


@dataclass(frozen=True)
class TuningResult:
    """What :func:`~mcal.tune_mcgrad` found.

    Attributes
    ----------
    model : MCGrad
        Fitted on all rows with ``best_params`` (and the fixed ``mcgrad_params``).
    best_params : dict
        The candidate with the lowest held-out log loss on the last rung.
    trials : DataFrame of shape (n_fits, n_params + 6)
        One row per candidate and rung: ``candidate``, ``rung``, ``n_rows`` (training rows used), the parameters,
        ``log_loss`` (weighted, on the held-out rows), ``n_rounds`` and ``fit_s`` (seconds).
    """

    model: MCGrad
    best_params: dict[str, Any]
    trials: pd.DataFrame


def tune_mcgrad(
    y_prob: ArrayLike, y: ArrayLike, *, X: Any = None, sample_weight: ArrayLike | None = None, n_trials: int = 16,
    param_distributions: dict[str, Any] | None = None, mcgrad_params: dict[str, Any] | None = None,
    validation_fraction: float = 0.2, factor: int = 3, random_state: int | None = None,
) -> TuningResult:  # fmt: skip
    """Tune MCGrad's booster parameters by successive halving over training rows, scored on held-out rows.

    A stratified ``validation_fraction`` of the rows is held out for scoring and never trained on. Candidate 0 is
    MCGrad's defaults; the others are drawn from ``param_distributions`` (scikit-learn's ``ParameterSampler``).
    Every candidate is fitted on ``n / factor**R`` of the training rows (``R`` rungs, so that the first rung has
    at least 1,000 rows or all of them), scored by the weighted held-out log loss, and the best ``1/factor`` go on
    to a rung with ``factor`` times more rows, up to all training rows (successive halving, Jamieson and
    Talwalkar 2016). Each fit chooses its rounds by its own early stopping within its training rows. The best
    candidate of the last rung is refitted on all rows.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples,)
        Uncalibrated probabilities in [0, 1].
    y : array-like of shape (n_samples,)
        Labels, 0/1 or bool.
    X : DataFrame or array-like of shape (n_samples, n_features), default=None
        Features.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights, for the fits and the held-out log loss.
    n_trials : int >= 1, default=16
        Candidates, MCGrad's defaults included.
    param_distributions : dict or None, default=None
        MCGrad parameter names to lists or scipy distributions; None uses :func:`~mcal.mcgrad.default_search_space` (the
        parameters and ranges of ``mcgrad``'s ``tune_mcgrad_params``).
    mcgrad_params : dict or None, default=None
        Parameters of every fit that are not searched (e.g. ``{"n_jobs": 1}``).
    validation_fraction : float in (0, 1), default=0.2
        Share of rows held out for scoring.
    factor : int >= 2, default=3
        Growth of the rows and cut of the candidates from rung to rung.
    random_state : int or None, default=None
        Seeds the held-out split, the candidates, the row subsamples and every MCGrad fit.

    Returns
    -------
    result : TuningResult
        The fitted model, the best parameters and the table of trials.

    Raises
    ------
    ValueError
        On invalid inputs (as :meth:`MCGrad.fit`), an out-of-range ``n_trials``, ``validation_fraction`` or
        ``factor``, a parameter in ``mcgrad_params`` that is also searched, or an invalid candidate (named by
        MCGrad).
    TypeError
        If an argument is of the wrong type.

    References
    ----------
    .. [1] K. Jamieson and A. Talwalkar, "Non-stochastic best arm identification and hyperparameter
       optimization", AISTATS 2016. arXiv:1502.07943.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 4000)})
    >>> y = rng.random(4000) < np.where(X["group"] == "a", 0.2, 0.8)
    >>> result = tune_mcgrad(np.full(4000, 0.5), y, X=X, n_trials=3, mcgrad_params={"n_jobs": 1}, random_state=0)
    >>> sorted(result.trials["rung"].unique().tolist())
    [0, 1]
    """
    from sklearn.model_selection import ParameterSampler

    p, yy, w = _check_inputs(y_prob, y, sample_weight, n_trials, validation_fraction, factor, random_state)
    space = default_search_space() if param_distributions is None else param_distributions
    fixed = dict(mcgrad_params or {})
    both = sorted(set(fixed) & set(space))
    if both:
        raise ValueError(f"mcgrad_params must not set the searched parameters; got {both}")
    rng = np.random.default_rng(random_state)
    seed = int(rng.integers(2**31 - 1))
    ((train, held),) = split_rows(yy, "holdout", float(validation_fraction), 2, seed)
    drawn = list(ParameterSampler(space, n_trials - 1, random_state=seed)) if n_trials > 1 else []
    defaults = MCGrad().get_params()
    candidates = [{k: defaults[k] for k in space}] + [{k: _plain(v) for k, v in c.items()} for c in drawn]
    n_rungs = max(0, min(math.ceil(math.log(len(candidates), factor)), int(math.log(train.size / 1000, factor))))
    alive, rows = list(range(len(candidates))), []
    for rung in range(n_rungs + 1):
        n = train.size if rung == n_rungs else train.size // factor ** (n_rungs - rung)
        subset = np.sort(rng.choice(train, size=n, replace=False)) if n < train.size else train
        losses = {}
        for c in alive:
            rows.append(_trial(candidates[c], fixed, c, rung, subset, held, p, yy, w, X, random_state))
            losses[c] = rows[-1]["log_loss"]
        alive = sorted(alive, key=losses.__getitem__)[: max(1, math.ceil(len(alive) / factor))]
    best = candidates[alive[0]]
    model = MCGrad(**fixed, **best, random_state=random_state).fit(p, yy, X=X, sample_weight=w)
    return TuningResult(model=model, best_params=best, trials=pd.DataFrame(rows))


def _trial(params, fixed, candidate, rung, rows, held, p, y, w, X, random_state) -> dict[str, Any]:
    """Fit one candidate on ``rows`` and score it on ``held``: a row of the trials table."""
    from mcal.metrics import log_loss

    start = time.perf_counter()
    model = MCGrad(**fixed, **params, random_state=random_state)
    model.fit(p[rows], y[rows], X=None if X is None else take_rows(X, rows), sample_weight=w[rows])
    seconds = time.perf_counter() - start
    loss = log_loss(y[held], model.predict(p[held], X=None if X is None else take_rows(X, held)), sample_weight=w[held])
    return {"candidate": candidate, "rung": rung, "n_rows": rows.size, **params, "log_loss": loss,
            "n_rounds": model.n_rounds_, "fit_s": seconds}  # fmt: skip


def _plain(value: Any) -> Any:
    """A sampled value as a Python scalar: integers stay integers (MCGrad refuses ``2.0`` for an int)."""
    return value.item() if isinstance(value, np.generic) else value


def _check_inputs(y_prob, y, sample_weight, n_trials, validation_fraction, factor, random_state) -> tuple:
    check_positive_int("n_trials", n_trials)
    check_int("factor", factor, "an integer >= 2", lambda v: v >= 2)
    check_real("validation_fraction", validation_fraction, "a number in (0, 1)", lambda v: 0.0 < v < 1.0)
    check_random_state_param(random_state)
    p, yy = check_y_prob(y_prob), check_y_true(y, "y")
    check_consistent(y_prob=p, y=yy)
    return p, yy, check_sample_weight(sample_weight, p.shape[0])
