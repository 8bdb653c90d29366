"""MCGrad's training controls: an external validation set, the early-stopping metric, the time budget, and the
choice of the rounds that they make."""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._constraints import Interval
from mcal._validation import (
    check_both_classes,
    check_choice,
    check_consistent,
    check_sample_weight,
    check_y_prob,
    check_y_real,
    check_y_true,
    warn,
)
from mcal.mcgrad._splits import check_split_weights
from mcal.mcgrad.engine import Engine, Part, Rescaling, RoundPath, Stopping, boost_rounds

#: The named early-stopping metrics; a callable is the third kind.
METRICS = ("log_loss", "mce")

#: The rule of ``max_time`` (``_parameter_constraints``).
MAX_TIME = [None, Interval(numbers.Real, 0, None, closed="neither", rule="a positive number of seconds or None")]
#: The clock of ``max_time`` (a module attribute, so that tests can make time pass).
clock = time.monotonic


def check_metric_param(name: str, metric: Any) -> None:
    """The rule of ``early_stopping_metric``: ``"log_loss"``, ``"mce"`` or a callable.

    Raises
    ------
    TypeError
        If it is neither a str nor a callable.
    ValueError
        If it is an unknown name.
    """
    if callable(metric):
        return
    if not isinstance(metric, str):
        raise TypeError(
            f"{name} must be 'log_loss', 'mce' or a callable; got {metric!r} of type {type(metric).__name__}"
        )
    check_choice(name, metric, METRICS)


def is_log_loss(metric: Any) -> bool:
    """Whether ``early_stopping_metric`` is the log loss (the criterion every engine computes)."""
    return isinstance(metric, str) and metric == "log_loss"


def out_of_time(max_time: float | None, start: float) -> Callable[[], bool] | None:
    """``out_of_time() -> bool``: whether ``max_time`` seconds have passed since ``start`` (None without a limit)."""
    if max_time is None:
        return None
    return lambda: clock() - start >= max_time


def check_eval_set(model: Any, eval_set: Any, X: Any, encoder: Any) -> tuple[Any, Any, Any, Any]:
    """Split and check ``eval_set = (y_prob_val, y_val, X_val[, sample_weight_val])`` for ``model``'s fit on ``X``.

    Returns the scores, labels and weights as float64 arrays and ``X_val`` as given.

    Raises
    ------
    TypeError
        If ``eval_set`` is not a tuple or list, or an entry is of the wrong type.
    ValueError
        If it does not hold 3 or 4 entries, ``X_val`` is None where ``X`` is not (or the reverse), or an entry is
        invalid as the matching argument of ``fit`` (named ``y_prob_val``, ``y_val``, ``X_val``,
        ``sample_weight_val``).
    """
    rule = "a tuple (y_prob_val, y_val, X_val) or (y_prob_val, y_val, X_val, sample_weight_val)"
    if not isinstance(eval_set, (tuple, list)):
        raise TypeError(f"eval_set must be {rule}; got {type(eval_set).__name__}")
    if len(eval_set) not in (3, 4):
        raise ValueError(f"eval_set must be {rule}; got {len(eval_set)} entries")
    y_prob, y, X_val = eval_set[:3]
    if model.outcome == "regression":
        p, yy = check_y_real(y_prob, "y_prob_val"), check_y_real(y, "y_val")
    else:
        p, yy = check_y_prob(y_prob, "y_prob_val"), check_y_true(y, "y_val", allow_soft=model.accepts_soft_labels)
    check_consistent(y_prob_val=p, y_val=yy)
    w = check_sample_weight(eval_set[3] if len(eval_set) == 4 else None, p.shape[0], "sample_weight_val")
    if (X_val is None) != (X is None):
        raise ValueError(
            f"eval_set's X_val must be {'None, as X is' if X is None else 'given, as X is'}; "
            f"got {'None' if X_val is None else type(X_val).__name__}"
        )
    if X_val is not None:
        X_val = model._check_X(X_val, p.shape[0], fitting=False)
        encoder.check_columns(X_val)
    if model.outcome == "classification":
        check_both_classes(yy, w, "y_val")
    return p, yy, X_val, w


def validation_score(
    metric: Any, loss: Any, y: NDArray[np.float64], w: NDArray[np.float64], X: Any, *, categorical_features: Any,
    outcome: str,
) -> Callable[[list[Part]], float] | None:  # fmt: skip
    """The stopping criterion of ``early_stopping_metric`` on the validation rows, or None for the log loss.

    ``y``, ``w`` and ``X`` (user's features, or None) are the validation rows in the order of the validation
    parts' concatenated ``F``. ``"mce"`` generates the segments of ``X`` once (:func:`mcal.segments.generate_segments`
    at its defaults) and scores :func:`mcal.metrics.mce`'s ``mce_sigma`` on them; without ``X`` it warns and scores
    the one segment of all validation rows (ECCE / sigma); a callable is called as ``metric(y, prediction, X, w)``.

    Raises (from the returned function)
    ------
    ValueError
        If the callable returns something that is not a finite real number.
    """
    if is_log_loss(metric):
        return None
    if callable(metric):
        fn = metric
    else:
        from mcal.metrics import mce
        from mcal.segments import generate_segments

        segments = None if X is None else generate_segments(X, categorical_features=categorical_features)
        if X is None:
            warn("early_stopping_metric='mce' needs the features X to form segments; got X=None, so early "
                 "stopping scores ECCE / sigma of all validation rows as one segment instead")  # fmt: skip

        def fn(y_true, y_prob, X, sample_weight):
            return mce(y_true, y_prob, segments=segments, sample_weight=sample_weight, outcome=outcome).mce_sigma

    def score(valid: list[Part]) -> float:
        prediction = loss.inverse_link(np.concatenate([part.F for part in valid]))
        value = fn(y, prediction, X, w)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"early_stopping_metric must return a real number; got {type(value).__name__}")
        if not np.isfinite(value):
            raise ValueError(f"early_stopping_metric must return a finite number; got {value!r}")
        return float(value)

    return score


def choose_rounds(
    model: Any, engine: Engine, whole: Part, splits: Any, *,
    score: Any, eval_part: Part | None, start: float | None, refit: bool = True,
) -> tuple[RoundPath | None, RoundPath]:  # fmt: skip
    """Run the rounds of ``model`` (an MCGrad) as its early-stopping controls say: the validation path and the
    rounds kept.

    On an external ``eval_part``, the rounds fitted once on ``whole`` and cut at the best round (all of them with
    ``early_stopping=None``); on the parts of ``splits()``, the rounds that early stopping chooses, refitted on
    ``whole`` (with ``refit=False`` not refitted: ``final`` then holds only their number, ``best_round``); without
    validation, ``max_rounds`` rounds on ``whole``. Warns when ``max_time`` ran out, or early stopping chose
    ``max_rounds``. The other arguments are those of ``MCGrad._fit_rounds``.

    Returns
    -------
    path : RoundPath or None
        The rounds on the validation rows (their losses and scores), or None without validation.
    final : RoundPath
        The rounds kept (``best_round`` of them).

    Raises
    ------
    ValueError
        If ``score`` is None (the engine's log loss) while ``early_stopping_metric`` is not the log loss.
    """
    validating = eval_part is not None or (model.early_stopping is not None and model.max_rounds > 0)
    if validating and score is None and not is_log_loss(model.early_stopping_metric):
        raise ValueError(
            f"early_stopping_metric must be 'log_loss' for {type(model).__name__}; got {model.early_stopping_metric!r}"
        )
    start = clock() if start is None else start
    timer = out_of_time(model.max_time, start)
    rescaling = Rescaling(rescale=bool(model.rescale), rescale_input=bool(model.rescale and model.rescale_input))
    rounds = partial(boost_rounds, engine, rescaling=rescaling, show_progress=model.progress)
    stopping = Stopping(int(model.max_rounds), int(model.patience), score, float(model.min_gain_se), timer)
    path = None
    if eval_part is not None:
        if model.early_stopping is None:  # every round is kept: no round ends the pass but the last (or the clock)
            stopping = replace(stopping, patience=int(model.max_rounds))
        path = rounds([whole], [eval_part], stopping, keep=True, desc="MCGrad rounds")
        n_rounds = path.best_round if model.early_stopping is not None else len(path.boosters)
        final = RoundPath(boosters=path.boosters[:n_rounds], factors=path.factors[:n_rounds],
                          input_factor=path.input_factor if n_rounds else 1.0, best_round=n_rounds)  # fmt: skip
    elif validating:
        train, valid = splits()
        check_split_weights(engine, train, valid, model.random_state)
        # the pass's share of max_time leaves the rest to the refit; without a refit here, the pass has it all
        pass_timer = None if model.max_time is None else pass_budget(model, start) if refit else timer
        path = rounds(train, valid, replace(stopping, out_of_time=pass_timer), desc="MCGrad early stopping")
        del train, valid
        final = rounds([whole], None, Stopping(path.best_round, out_of_time=timer), desc="MCGrad refit") if refit else (
            RoundPath(best_round=path.best_round))  # fmt: skip
    else:
        final = rounds([whole], None, Stopping(int(model.max_rounds), out_of_time=timer), desc="MCGrad rounds")
    _warn_stopped(model, path, final)
    return path, final


def pass_share(model: Any) -> float:
    """The share of ``max_time`` left after the split that the early-stopping pass of ``model`` may spend: the
    rows it fits per round (``1 - validation_fraction`` of the rows for a holdout, ``n_folds - 1`` times the rows
    for k-fold) over those of the pass and of the refit on all rows together, so that the refit of as many rounds
    fits in the rest (a round's time grows with its rows)."""
    fitted = model.n_folds - 1.0 if model.early_stopping == "kfold" else 1.0 - model.validation_fraction
    return fitted / (fitted + 1.0)


def pass_budget(model: Any, start: float) -> Callable[[], bool]:
    """``out_of_time()`` of the early-stopping pass: true once :func:`pass_share` of the seconds of ``max_time``
    left now (from ``start``) have passed."""
    now = clock()
    budget = max(start + model.max_time - now, 0.0) * pass_share(model)
    return lambda: clock() - now >= budget


def _warn_stopped(model: Any, path: RoundPath | None, final: RoundPath) -> None:
    """Warn that ``max_time`` ran out (in the early-stopping pass, the refit or the only pass), or that early
    stopping chose ``max_rounds``."""
    refit_cut = path is not None and final.timed_out
    if (path or final).timed_out or refit_cut:
        fitted = len(path.losses) - 1 if path is not None else len(final.boosters)
        where = "" if path is None else " of early stopping"
        cut = f", and the refit on all rows after {len(final.boosters)}" if refit_cut else ""
        why = ", the number best on the validation rows" if path is not None and not refit_cut else ""
        none = " (a model of 0 rounds returns the input scores unchanged)" if final.best_round == 0 else ""
        warn(f"max_time={model.max_time} s ran out after {fitted} round(s){where}{cut}; "
             f"kept {final.best_round} round(s){why}{none}")  # fmt: skip
    elif path is not None and path.best_round == model.max_rounds and model.early_stopping is not None:
        warn(f"early stopping chose max_rounds={model.max_rounds} rounds; a larger max_rounds may fit better")
