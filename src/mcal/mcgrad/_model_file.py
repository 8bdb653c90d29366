"""What an MCGrad model file holds beyond its parameters and arrays: LightGBM text, the encoder, their checks."""

from __future__ import annotations

from typing import Any

import numpy as np

from mcal._constraints import NON_NEGATIVE_INT
from mcal._features.encoder import FeatureEncoder
from mcal._lightgbm import booster_from_text
from mcal._persistence.codec import decode_value, encode_value
from mcal._persistence.state import Array, Number


def model_state(model: Any) -> dict[str, Any]:
    """The fitted state beyond ``_state_attrs``: LightGBM text of each round, the encoder, the metric's values."""
    return {
        "boosters": [b.model_to_string() for b in model.boosters_],
        "encoder": model.encoder_.to_dict(),
        "validation_scores": encode_value(model.validation_scores_),
        "input_factor": model.input_factor_,
    }


def restore_model_state(model: Any, state: dict[str, Any]) -> None:
    """Set the boosters, encoder and metric values of ``model`` from a model file's state.

    Raises
    ------
    ValueError
        If the boosters are not LightGBM model strings, or as the encoder and LightGBM text checks.
    """
    texts = state.get("boosters")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise ValueError("model data field state.boosters must be a list of LightGBM model strings")
    model.encoder_ = FeatureEncoder.from_dict(state.get("encoder"))
    # Files written before early_stopping_metric existed stopped on the log loss: their scores are the losses.
    scores = state.get("validation_scores")
    model.validation_scores_ = model.validation_losses_ if scores is None else decode_value(
        scores, "state.validation_scores")  # fmt: skip
    # Files written before rescale_input existed start from the input itself.
    model.input_factor_ = state.get("input_factor", 1.0)
    model._single_row = model._compiled = None
    kinds = [*model.encoder_.categorical_, False]  # the score column is numerical
    model.boosters_ = [
        booster_from_text(text, f"state.boosters[{i}]", model._loss().model_objective, kinds)
        for i, text in enumerate(texts)
    ]
    model._set_feature_attrs()


#: The rule of each fitted attribute of an MCGrad model file (:mod:`mcal._persistence.state`); how the fields relate
#: (a factor per round, the features of each round, the loss's bounds on the factors) is :func:`check_model_state`'s.
STATE_CONSTRAINTS: dict[str, Any] = {
    "n_rounds_": NON_NEGATIVE_INT,
    "rescale_factors_": Array("f", "floats"),
    "validation_losses_": Array("f", "floats", values=Number(0)),
    "feature_importances_": Array("f", "floats", values=Number(0)),
}


def check_model_state(model: Any) -> None:
    """Raise ``ValueError`` naming the fields if the restored state of ``model``, each field meeting its rule in
    :data:`STATE_CONSTRAINTS`, is inconsistent."""
    T = model.n_rounds_
    d = model.encoder_.n_features_in_
    if len(model.boosters_) != T:
        raise ValueError(f"model data field state.boosters must hold n_rounds_={T} models; got {len(model.boosters_)}")
    for i, booster in enumerate(model.boosters_):
        if booster.num_feature() != d + 1:
            raise ValueError(
                f"model data field state.boosters[{i}] must use {d + 1} features (the encoder's {d} and the "
                f"score); got {booster.num_feature()}"
            )
    lo, hi = model._loss().theta_bounds
    factor = model.input_factor_
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not lo <= factor <= hi:
        raise ValueError(f"model data field state.input_factor must be a number in [{lo}, {hi}]; got {factor!r}")
    factors, losses = model.rescale_factors_, model.validation_losses_
    if factors.shape != (T,) or np.any((factors < lo) | (factors > hi)):
        raise ValueError(f"model data field state.rescale_factors_ must hold n_rounds_={T} values in [{lo}, {hi}]")
    if 0 < losses.size <= T:
        raise ValueError(f"model data field state.validation_losses_ must hold none or more than n_rounds_={T} values")
    if model.feature_importances_.shape != (d + 1,):
        raise ValueError(f"model data field state.feature_importances_ must have shape ({d + 1},) (the features and "
                         "the score)")  # fmt: skip
    scores = model.validation_scores_
    if not isinstance(scores, np.ndarray) or scores.dtype.kind != "f" or scores.shape != losses.shape:
        raise ValueError(
            "model data field state.validation_scores must be a float array of the shape of state.validation_losses_"
        )
