"""The learning curve of a fitted MCGrad: validation log loss and early-stopping metric after each round."""

from __future__ import annotations

from typing import Any

import numpy as np

from mcal._shared.text import plain_text
from mcal.plotting._common import axes_or_new


def plot_learning_curve(model: Any, *, ax: Any = None) -> Any:
    """Draw a fitted MCGrad's validation log loss after each round, and its early-stopping metric when it differs.

    Round 0 is the input scores; a dashed vertical line marks the rounds kept (``n_rounds_``). The metric of
    ``early_stopping_metric`` other than the log loss goes on a second y axis (``ax.twinx()``), in orange.

    Parameters
    ----------
    model : MCGrad
        Fitted with validation (early stopping, or an ``eval_set``): it has ``validation_losses_``,
        ``validation_scores_`` and ``n_rounds_``.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.

    Returns
    -------
    ax : matplotlib Axes
        The axes of the log loss.

    Raises
    ------
    ValueError
        If ``model`` has no validation values (fitted with ``early_stopping=None`` and no ``eval_set``, or
        ``max_rounds=0``), or is not fitted.
    """
    losses = np.asarray(getattr(model, "validation_losses_", np.zeros(0)))
    if losses.size == 0:
        if hasattr(model, "validation_losses_"):
            state = "with none"
        else:  # MCGrad and DaskMCGrad have max_rounds: then unfitted; any other model is not one
            state = "not fitted" if hasattr(model, "max_rounds") else "(not an MCGrad)"
        raise ValueError(
            "model must be a fitted MCGrad with validation values (early stopping or an eval_set); got "
            f"{type(model).__name__} {state}"
        )
    scores = np.asarray(getattr(model, "validation_scores_", losses))
    ax = axes_or_new(ax)
    rounds = np.arange(losses.size)
    ax.plot(rounds, losses, marker="o", label="validation log loss")
    ax.axvline(model.n_rounds_, color="grey", linestyle="--", label=f"rounds kept ({model.n_rounds_})")
    ax.set_xlabel("round")
    ax.set_ylabel("validation log loss")
    if not np.array_equal(scores, losses):
        metric = getattr(model, "early_stopping_metric", "metric")
        name = metric if isinstance(metric, str) else getattr(metric, "__name__", "metric")
        twin = ax.twinx()
        twin.plot(rounds, scores, marker="s", color="tab:orange", label=f"validation {name}")
        twin.set_ylabel(plain_text(f"validation {name}"))
        twin.legend(loc="upper center")
    ax.legend(loc="upper right")
    return ax
