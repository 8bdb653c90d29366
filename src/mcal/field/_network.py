"""The shared base of the torch field-aware baselines (NeuCalib, AdaCalib) and its training helpers.

Parameters live in a ``torch.nn.ParameterDict`` (the fitted ``module_``), are trained in float64 with Adam on
the whole calibration set (deterministic, so a row of weight k and k copies of it give the same fit, unless
the copies move a field value or an AdaCalib candidate across ``min_samples_per_field`` or ``min_samples_per_bin``,
which count rows of positive weight), and are stored as safetensors through :meth:`BaseCalibrator._get_tensors`. Torch is imported inside the functions.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from mcal._base import BaseCalibrator
from mcal._constraints import NON_NEGATIVE, POSITIVE_INT, Interval
from mcal._features.field_inputs import feature_matrix, named_columns
from mcal._features.field_slots import FieldSlots, check_columns_param
from mcal._optional import import_optional
from mcal._persistence.state import Array, Number
from mcal._torch import balance_penalty, torch_threads
from mcal._validation import logit
from mcal.field._per_field import FIELD_CONSTRAINTS, FIELD_STATE


def make_parameters(init: dict[str, NDArray[np.float64]]) -> Any:
    """A ``torch.nn.ParameterDict`` of float64 parameters with the given initial values."""
    torch = import_optional("torch")
    return torch.nn.ParameterDict(
        {k: torch.nn.Parameter(torch.as_tensor(np.asarray(v, dtype=np.float64)).clone()) for k, v in init.items()}
    )


def weighted_bce(logits: Any, y: Any, w: Any) -> Any:
    """Weighted mean binary cross-entropy of ``sigmoid(logits)`` against labels ``y`` (torch tensors)."""
    torch = import_optional("torch")
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none")
    return (w * loss).sum() / w.sum()


#: With a held-out criterion, it is evaluated every this many Adam steps ...
_CHECK_EVERY = 10
#: ... and training stops after this many evaluations without improvement.
_PATIENCE = 5


def train_full_batch(
    module: Any,
    loss_fn: Callable[[], Any],
    *,
    learning_rate: float,
    max_iter: int,
    held_out: Callable[[], Any] | None = None,
) -> None:
    """Run up to ``max_iter`` Adam steps on ``loss_fn()`` over ``module``'s parameters.

    With ``held_out`` (the held-out loss), it is evaluated at the start and every ``_CHECK_EVERY`` steps;
    training stops after ``_PATIENCE`` evaluations without improvement and ``module`` keeps the parameters
    of the best evaluation (the starting point included), so the held-out loss never ends above the start's.

    Raises
    ------
    ValueError
        If the loss becomes non-finite (a diverging fit, most likely from too high a ``learning_rate``), naming
        the learning rate and the step.
    """
    torch = import_optional("torch")
    optimizer = torch.optim.Adam(module.parameters(), lr=float(learning_rate))
    best, best_state, stale = float("inf"), None, 0
    for step in range(int(max_iter) + 1):
        if held_out is not None and step % _CHECK_EVERY == 0:
            with torch.no_grad():
                value = float(held_out())
            if value < best:
                best, best_state, stale = value, {k: v.detach().clone() for k, v in module.state_dict().items()}, 0
            else:
                stale += 1
                if stale >= _PATIENCE:
                    break
        if step == int(max_iter):
            break
        optimizer.zero_grad()
        loss = loss_fn()
        if not torch.isfinite(loss):
            raise ValueError(
                f"learning_rate must be low enough for the training loss to stay finite; got {learning_rate!r}, with "
                f"which the loss became {loss.item()} at step {step} (lower learning_rate)"
            )
        loss.backward()
        optimizer.step()
    if best_state is not None:
        module.load_state_dict(best_state)


def tensors_of(module: Any) -> dict[str, NDArray[np.float64]]:
    """The module's parameters as float64 numpy arrays (for safetensors)."""
    return {k: v.detach().cpu().numpy().astype(np.float64) for k, v in module.state_dict().items()}


def restore_parameters(cls_name: str, tensors: dict[str, NDArray], shapes: dict[str, tuple[int, ...]]) -> Any:
    """Rebuild a ParameterDict from stored tensors, checking names, shapes, dtypes and finiteness.

    Raises
    ------
    ValueError
        If a tensor is missing, extra, of the wrong shape, not float64 or not finite.
    """
    if set(tensors) != set(shapes):
        raise ValueError(f"{cls_name} weights must be exactly {sorted(shapes)}; got {sorted(tensors)}")
    for name, shape in shapes.items():
        arr = np.asarray(tensors[name])
        if arr.shape != tuple(shape):
            raise ValueError(f"{cls_name} weight {name!r} must have shape {tuple(shape)}; got {arr.shape}")
        if arr.dtype != np.float64:
            raise ValueError(f"{cls_name} weight {name!r} must be float64, as mcal.save writes it; got {arr.dtype}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{cls_name} weight {name!r} must be finite")
    return make_parameters({k: tensors[k] for k in shapes})


def mlp(params: Any, prefix: str, x: Any) -> Any:
    """A one-hidden-layer ReLU perceptron ``W2 relu(W1 x + b1) + b2`` with scalar output, shape (n,)."""
    torch = import_optional("torch")
    hidden = torch.relu(x @ params[f"{prefix}_w1"].T + params[f"{prefix}_b1"])
    return hidden @ params[f"{prefix}_w2"] + params[f"{prefix}_b2"]


def mlp_init(prefix: str, n_in: int, n_hidden: int, rng: np.random.Generator) -> dict[str, NDArray[np.float64]]:
    """Initial weights of :func:`mlp`: uniform first layer (PyTorch's default scale), zero output layer.

    The zero output layer makes the network output 0 at the start, so calibrators start from the identity.
    """
    bound = 1.0 / np.sqrt(n_in)
    return {
        f"{prefix}_w1": rng.uniform(-bound, bound, (n_hidden, n_in)),
        f"{prefix}_b1": rng.uniform(-bound, bound, n_hidden),
        f"{prefix}_w2": np.zeros(n_hidden),
        f"{prefix}_b2": np.zeros(()),
    }


def mlp_shapes(prefix: str, n_in: int, n_hidden: int) -> dict[str, tuple[int, ...]]:
    """Shapes of the :func:`mlp` weights."""
    return {
        f"{prefix}_w1": (n_hidden, n_in),
        f"{prefix}_b1": (n_hidden,),
        f"{prefix}_w2": (n_hidden,),
        f"{prefix}_b2": (),
    }


#: The default held-out fraction for early stopping when an auxiliary perceptron reads features.
_AUXILIARY_VALIDATION_FRACTION = 0.2


#: The rules of a positive integer and of a penalty weight.


#: The rules of the arrays of fitted state, by dtype kind (any shape: ``_validate_state`` relates the shapes).
FLOATS, INTEGERS, BOOLEANS = (
    Array("f", "floats", ndim=None),
    Array("i", "integers", ndim=None),
    Array("b", "booleans", ndim=None),
)


class FieldNetwork(BaseCalibrator):
    """Shared fit/predict of the torch field-aware calibrators.

    Subclasses build their fixed structure from the data (``_build``), their initial parameters
    (``_init``, ``_shapes``), per-row inputs (``_rows``, given the standardised auxiliary features of
    ``_row_features``) and the calibrated logit (``_logits``).
    The loss is the weighted log loss of every row under its own slot plus that of every row under the
    fallback slot, so the fallback is a calibration function fitted on all rows, plus ``alpha`` times the
    field-balance penalty of the MCNet paper (eq. 11-12) on the rows' own-slot predictions, over every field
    value seen at fit time (rare ones included), plus ``auxiliary_l2`` times the squared weights of the
    auxiliary perceptron when it reads features, plus the subclass's ``_penalty``.
    """

    uses_features: ClassVar[bool] = True
    requires_features: ClassVar[bool] = True  # the field column
    _state_constraints: ClassVar[dict[str, Any]] = {
        **FIELD_STATE,
        "auxiliary_mean_": FLOATS,
        "auxiliary_scale_": Array("f", "floats", values=Number(0, strict=True)),
    }

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **FIELD_CONSTRAINTS,
        "learning_rate": Interval(numbers.Real, 0, None, closed="neither", rule="a positive finite number"),
        "max_iter": POSITIVE_INT,
        "hidden_dim": POSITIVE_INT,
        "alpha": NON_NEGATIVE,
        "auxiliary_l2": NON_NEGATIVE,
        "validation_fraction": [None, Interval(numbers.Real, 0, 1, closed="left", rule="None or a number in [0, 1)")],
        "n_threads": [None, POSITIVE_INT],
        "random_state": "random_state",
        "auxiliary_features": check_columns_param,
    }

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        with torch_threads(import_optional("torch"), self.n_threads):
            self._fit_network(y_prob, y, sample_weight, X)

    def _fit_network(self, y_prob, y, sample_weight, X) -> None:
        torch = import_optional("torch")
        slots, row_slots = FieldSlots.fit(X, self.field, sample_weight, int(self.min_samples_per_field))
        self.field_values_ = slots.vocabulary.to_list()
        self.field_slots_ = slots.slot_of_value
        s = logit(y_prob)
        self._build(s, y, sample_weight, row_slots, slots.n_slots)
        features = self._row_features(X, sample_weight, fitting=True)
        rng = np.random.default_rng(self.random_state)
        module = make_parameters(self._init(rng))
        own = self._rows(s, row_slots, features)
        fallback = self._rows(s, np.full_like(row_slots, slots.n_slots), features)
        held = self._held_out_rows(sample_weight, rng)
        yt = torch.from_numpy(y.copy())  # a copy: y may be the caller's read-only or reversed array
        wt, wv = (
            torch.as_tensor(np.where(held, 0.0, sample_weight)),
            torch.as_tensor(np.where(held, sample_weight, 0.0)),
        )
        alpha = float(self.alpha)
        codes = torch.as_tensor(slots.codes)

        def data_loss(w, own_logits):
            """Weighted log loss of the rows under their own slots plus under the fallback slot."""
            return weighted_bce(own_logits, yt, w) + weighted_bce(self._logits(module, fallback), yt, w)

        def loss():
            own_logits = self._logits(module, own)
            value = data_loss(wt, own_logits) + self._penalty(module) + self._auxiliary_penalty(module)
            if alpha > 0:
                value = value + alpha * balance_penalty(
                    torch, torch.sigmoid(own_logits), yt, wt, codes, len(self.field_values_)
                )
            return value

        train_full_batch(
            module,
            loss,
            learning_rate=self.learning_rate,
            max_iter=self.max_iter,
            held_out=(lambda: data_loss(wv, self._logits(module, own))) if held.any() else None,
        )
        self.module_ = module

    def _held_out_rows(self, sample_weight: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.bool_]:
        """Rows held out for early stopping: ``validation_fraction`` of the rows (None: 0.2 with auxiliary features).

        Raises
        ------
        ValueError
            If the held-out rows or the training rows would have no positive weight.
        """
        fraction = self.validation_fraction
        if fraction is None:
            fraction = _AUXILIARY_VALIDATION_FRACTION if self.auxiliary_features is not None else 0.0
        n = sample_weight.shape[0]
        held = np.zeros(n, dtype=bool)
        if fraction == 0:
            return held
        held[rng.permutation(n)[: round(float(fraction) * n)]] = True
        if not (sample_weight[held].sum() > 0 and sample_weight[~held].sum() > 0):
            raise ValueError(
                f"validation_fraction={fraction} must leave rows of positive weight on both sides of the split; "
                f"got {int(held.sum())} held-out row(s) of {n} (use validation_fraction=0 or more data)"
            )
        return held

    def _feature_columns(self) -> list[Any] | None:
        """The auxiliary features and the field, by name."""
        return named_columns(self.field, self.auxiliary_features)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        torch = import_optional("torch")
        slots = FieldSlots(self.field_values_, self.field_slots_)
        features = self._row_features(X, np.ones_like(y_prob), fitting=False)
        rows = self._rows(logit(y_prob), slots.transform(X, self.field, y_prob.shape[0]), features)
        with torch.no_grad(), torch_threads(torch, self.n_threads):
            return expit(self._logits(self.module_, rows).numpy())

    def _check_X(self, X, n_samples, *, fitting):
        if X is None:
            raise ValueError(f"X must hold the field column {self.field!r} for {type(self).__name__}; got None")
        return super()._check_X(X, n_samples, fitting=fitting)

    def _n_slots(self) -> int:
        return int(np.max(self.field_slots_, initial=-1)) + 1

    def _penalty(self, module):
        return 0.0

    def _auxiliary_penalty(self, module):
        """``auxiliary_l2`` times the squared weights of the auxiliary perceptron, when it reads features."""
        if self.auxiliary_features is None or self.auxiliary_l2 == 0:
            return 0.0
        return float(self.auxiliary_l2) * ((module["aux_w1"] ** 2).sum() + (module["aux_w2"] ** 2).sum())

    def _n_auxiliary(self) -> int:
        return 0 if self.auxiliary_features is None else len(self.auxiliary_features)

    def _row_features(self, X: Any, sample_weight: NDArray[np.float64], *, fitting: bool) -> NDArray | None:
        """The auxiliary features, standardised with their weighted mean and standard deviation at fit (or None)."""
        if self.auxiliary_features is None:
            if fitting:
                self.auxiliary_mean_ = self.auxiliary_scale_ = np.zeros(0)
            return None
        values = feature_matrix(X, list(self.auxiliary_features), sample_weight.shape[0])
        if fitting:
            self.auxiliary_mean_ = np.average(values, axis=0, weights=sample_weight)
            std = np.sqrt(np.average((values - self.auxiliary_mean_) ** 2, axis=0, weights=sample_weight))
            self.auxiliary_scale_ = np.where(std > 0, std, 1.0)
        return (values - self.auxiliary_mean_) / self.auxiliary_scale_

    def _get_tensors(self) -> dict[str, NDArray]:
        return tensors_of(self.module_)

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        FieldSlots.validate(self.field_values_, self.field_slots_)
        self.module_ = restore_parameters(type(self).__name__, tensors, self._shapes())

    def __getstate__(self) -> dict[str, Any]:
        """Pickled state holding arrays only: ``module_`` as a dict of float64 arrays."""
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns the instance's own dict
        if "module_" in state:
            state["module_"] = tensors_of(state["module_"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("module_"), dict):
            state = {**state, "module_": make_parameters(state["module_"])}
        super().__setstate__(state)

    def _validate_state(self) -> None:
        FieldSlots.validate(self.field_values_, self.field_slots_)
        mean, scale = self.auxiliary_mean_, self.auxiliary_scale_
        if mean.shape != (self._n_auxiliary(),) or scale.shape != mean.shape:
            raise ValueError("model data fields state.auxiliary_* must hold one mean and one scale per feature")
