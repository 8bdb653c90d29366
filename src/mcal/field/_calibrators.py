"""Field-aware calibration networks of the MCNet paper's baselines: NeuCalib and AdaCalib.

A *field* is one categorical context column (country, ad source) held in ``X``; ``field=`` names it.
Every method here gives a field value its own calibration only when it has at least
``min_samples_per_field`` rows at fit time; rarer values and values unseen at fit time use a global
calibration function fitted on all rows (the fallback slot of :mod:`mcal._features.field_slots`). NeuCalib and
AdaCalib are trained with PyTorch (the ``mcnet`` extra), full batch, in float64.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from mcal._binning import assign_bins, equal_frequency_edges, weighted_quantiles
from mcal._constraints import Interval
from mcal._optional import import_optional
from mcal._validation import check_positive_ints, logit
from mcal.field._network import (
    BOOLEANS,
    FLOATS,
    INTEGERS,
    NON_NEGATIVE,
    POSITIVE_INT,
    FieldNetwork,
    mlp,
    mlp_init,
    mlp_shapes,
)
from mcal.parametric import fit_logistic_map

#: ``softplus(x + _SOFTPLUS_ONE) == 1`` at ``x = 0``: slopes start at 1, so the networks start at the identity.
_SOFTPLUS_ONE = float(np.log(np.expm1(1.0)))


class NeuCalib(FieldNetwork):
    """Neural calibration (NeuCalib): a piecewise-linear map of the logit plus a field-aware shift.

    Parameters
    ----------
    field : str or int, default=None
        The field column of ``X`` (name, or index for an array). Required.
    n_knots : int >= 2, default=20
        Number of knots of the univariate map, at the weighted quantiles ``k / (n_knots - 1)``,
        ``k = 0..n_knots - 1``, of the calibration logits (20, the MCNet paper's setting for every binning
        method); tied quantiles merge, so fewer knots can result.
    embedding_dim : int >= 1, default=8
        Size of the learned field embedding.
    hidden_dim : int >= 1, default=32
        Hidden units of the auxiliary two-layer perceptron.
    auxiliary_features : sequence of str or int, default=None
        Numeric columns of ``X`` fed to the auxiliary perceptron beside the field embedding (standardised with
        their weighted mean and standard deviation at fit).
    auxiliary_l2 : float >= 0, default=0.01
        L2 penalty on the auxiliary perceptron's weights, applied when ``auxiliary_features`` are given (why:
        ``docs/defaults/field.rst``).
    monotonic_penalty : float >= 0, default=1.0
        Weight of the order-preserving penalty ``sum_k max(0, v_k - v_{k+1})`` on the knot values.
    alpha : float >= 0, default=0.0
        Weight of the field-balance penalty (MCNet paper eq. 11-12: the standard deviation over field values
        of each value's share of the weighted prediction error), as in the MCNet paper's Table 3, which adds it
        to every calibrator it trains; 0 switches it off (Pan et al.'s original loss).
    validation_fraction : float in [0, 1) or None, default=None
        Fraction of the rows held out (at random, from ``random_state``) for early stopping: the held-out log
        loss is checked every 10 Adam steps, training stops after 5 checks without improvement, and the best
        parameters are kept (the starting point included). None means 0.2 with ``auxiliary_features`` and 0
        (every row trains, ``max_iter`` steps, as in the paper) without them.
    learning_rate : float > 0, default=0.01
        Adam step size (full batch).
    max_iter : int >= 1, default=500
        Adam steps.
    min_samples_per_field : int >= 1, default=100
        Field values with fewer rows (of positive weight) at fit time, and unseen values, use the fallback.
    n_threads : int >= 1 or None, default=1
        Torch intra-op threads while fitting and predicting (restored afterwards); ``None`` keeps torch's
        setting; raise it for millions of rows (why 1: ``docs/defaults/field.rst``).
    random_state : int >= 0 or None, default=None
        Seeds the initial weights.

    Attributes
    ----------
    field_values_ : list of str, then None
        Field values seen at fit time, sorted, then None for the missing level if a value was missing.
    field_slots_ : ndarray of shape (n_values,)
        Slot of each value; -1 means the fallback slot.
    knots_ : ndarray of shape (n_fitted_knots,)
        Knot positions, logit units: the calibration logits' quantiles, from the smallest to the largest.
    auxiliary_mean_, auxiliary_scale_ : ndarray of shape (n_auxiliary_features,)
        Standardisation of the auxiliary features (empty without them).
    module_ : torch.nn.ParameterDict
        ``knot_values`` (calibrated logit at each knot), ``embedding`` (one row per field slot), the
        auxiliary perceptron ``aux_*``, and ``fallback_knot_values``, the univariate map of the fallback.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), a ``validation_fraction`` that leaves
        one side of the split without positive weight, a ``learning_rate`` with which the training loss stops
        being finite, ``X=None`` or an ``X`` without the field column or an auxiliary column, or invalid
        scores, labels, weights or features (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`); from
        :meth:`predict`: ``X=None`` or an ``X`` without those columns. Missing field values are a field value
        of their own; unseen field values (a missing one too, when none was missing at fit time) are not an
        error: they use the fallback, with a warning.
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters; ``field`` is required), or an input
        is not array-like.
    ImportError
        From :meth:`fit`: torch is not installed (``pip install "mcal[mcnet]"``).

    Notes
    -----
    Pan et al. (2020), section 4: the calibrated logit is :math:`f(s) + g(h_c, x)`, where ``f`` interpolates
    the learned knot values linearly (extended linearly beyond the end knots; the MCNet paper's eq. 6 with the
    knot values :math:`a_k` as learnable parameters, section 4.1 there) and ``g`` is a perceptron on
    the embedding :math:`h_c` of the field value and the auxiliary features ``x``. The knots are placed as
    the MCNet paper describes the hybrid methods ("they first obtain multiple bins similarly as the
    binning-based methods"): at equal-weight quantiles of the calibration logits, from the smallest to the
    largest. The knot values start at the Platt map of the calibration rows (weighted log loss, slope >= 0);
    why these knots and this start: ``docs/defaults/field.rst``. The paper feeds ``g`` the
    base model's embeddings; mcal sees only columns, so the field embedding is learned here. Trained on the
    weighted log loss plus the order-preserving penalty, which encourages, but does not guarantee, an
    increasing ``f``; ``g`` does not depend on the score, so the map is monotone in the score exactly when
    ``f`` is. Rare and unseen field values have no embedding (``g`` sees zeros, and without auxiliary
    features there is no ``g`` term) and their own piecewise-linear map, trained on all rows (so it does not
    distort ``f``). Weighted, full-batch training: weight k is equivalent to k copies of a row, unless the copies
    lift a field value to ``min_samples_per_field``, which counts rows of positive weight.

    References
    ----------
    .. [1] Pan, Ao, Tang, Lu, Liu, Xiao and He, "Field-aware Calibration: A Simple and Empirically Strong
       Method for Reliable Probabilistic Predictions", WWW 2020, doi:10.1145/3366423.3380154,
       arXiv:1905.10713.
    .. [2] Dai et al., MCNet, WWW 2025, arXiv:2503.00334, section 4.1 (eq. 6) and Appendix B.2.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"country": rng.choice(["de", "fr"], 400)})
    >>> p = rng.uniform(0.05, 0.95, 400)
    >>> y = rng.random(400) < np.where(X["country"] == "de", p ** 2, p)
    >>> cal = NeuCalib(field="country", max_iter=50, random_state=0).fit(p, y, X=X)
    >>> cal.predict(p[:3], X=X[:3]).shape
    (3,)
    """

    _state_attrs: ClassVar[tuple[str, ...]] = (
        "field_values_",
        "field_slots_",
        "knots_",
        "auxiliary_mean_",
        "auxiliary_scale_",
    )
    _state_constraints: ClassVar[dict[str, Any]] = {**FieldNetwork._state_constraints, "knots_": FLOATS}
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **FieldNetwork._parameter_constraints,
        "embedding_dim": POSITIVE_INT,
        "n_knots": Interval(numbers.Integral, 2, None),
        "monotonic_penalty": NON_NEGATIVE,
    }

    def __init__(
        self,
        *,
        field: str | int | None = None,
        n_knots: int = 20,
        embedding_dim: int = 8,
        hidden_dim: int = 32,
        auxiliary_features: tuple[str | int, ...] | None = None,
        auxiliary_l2: float = 0.01,
        monotonic_penalty: float = 1.0,
        alpha: float = 0.0,
        validation_fraction: float | None = None,
        learning_rate: float = 0.01,
        max_iter: int = 500,
        min_samples_per_field: int = 100,
        n_threads: int | None = 1,
        random_state: int | None = None,
    ) -> None:
        self.field = field
        self.n_knots = n_knots
        self.embedding_dim = embedding_dim
        self.hidden_dim = hidden_dim
        self.auxiliary_features = auxiliary_features
        self.auxiliary_l2 = auxiliary_l2
        self.monotonic_penalty = monotonic_penalty
        self.alpha = alpha
        self.validation_fraction = validation_fraction
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.min_samples_per_field = min_samples_per_field
        self.n_threads = n_threads
        self.random_state = random_state

    def _build(self, s, y, w, row_slots, n_slots) -> None:
        knots = np.unique(weighted_quantiles(s, w, int(self.n_knots) - 1))
        # one distinct score: a unit interval around it, so that the map still has a slope
        self.knots_ = knots if knots.size >= 2 else knots[0] + np.array([-1.0, 1.0])
        slope, intercept = fit_logistic_map(
            np.column_stack([s, np.ones_like(s)]), y, w, lower=np.array([0.0, -np.inf]), x0=np.array([1.0, 0.0])
        )
        self._start_values = slope * self.knots_ + intercept

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        return {
            "knot_values": (self.knots_.size,),
            "fallback_knot_values": (self.knots_.size,),
            "embedding": (self._n_slots(), int(self.embedding_dim)),
            **mlp_shapes("aux", int(self.embedding_dim) + self._n_auxiliary(), int(self.hidden_dim)),
        }

    def _init(self, rng: np.random.Generator) -> dict[str, NDArray[np.float64]]:
        d = int(self.embedding_dim)
        return {
            "knot_values": self._start_values.copy(),
            "fallback_knot_values": self._start_values.copy(),
            "embedding": rng.normal(0.0, 1.0 / np.sqrt(d), (self._n_slots(), d)),
            **mlp_init("aux", d + self._n_auxiliary(), int(self.hidden_dim), rng),
        }

    def _rows(self, s: NDArray[np.float64], slots: NDArray[np.intp], features: NDArray | None) -> dict[str, Any]:
        torch = import_optional("torch")
        t = self.knots_
        left = np.clip(np.searchsorted(t, s, side="right") - 1, 0, t.size - 2)
        lam = (s - t[left]) / (t[left + 1] - t[left])
        aux = None if features is None else torch.as_tensor(features)
        return {"left": torch.as_tensor(left), "lam": torch.as_tensor(lam), "slot": torch.as_tensor(slots), "aux": aux}

    def _logits(self, module, rows):
        torch = import_optional("torch")
        left, lam, slot = rows["left"], rows["lam"], rows["slot"]
        n_slots = self._n_slots()
        own = slot < n_slots
        # rows of the fallback slot read the fallback knots (stored after the field knots) and no field term
        v = torch.cat([module["knot_values"], module["fallback_knot_values"]])
        left = left + torch.where(own, 0, self.knots_.size)
        univariate = v[left] + lam * (v[left + 1] - v[left])
        if rows["aux"] is None:  # g(h_c) per slot; none for the fallback
            if n_slots == 0:
                return univariate
            shift = mlp(module, "aux", module["embedding"])[torch.clamp(slot, max=n_slots - 1)]
            return univariate + torch.where(own, shift, torch.zeros_like(shift))
        embedding = torch.zeros((slot.shape[0], int(self.embedding_dim)), dtype=torch.float64)
        if n_slots:
            embedding = module["embedding"][torch.clamp(slot, max=n_slots - 1)] * own[:, None]
        return univariate + mlp(module, "aux", torch.cat([embedding, rows["aux"]], dim=1))

    def _penalty(self, module):
        torch = import_optional("torch")
        return float(self.monotonic_penalty) * sum(
            torch.relu(v[:-1] - v[1:]).sum() for v in (module["knot_values"], module["fallback_knot_values"])
        )

    def _validate_state(self) -> None:
        super()._validate_state()
        if self.knots_.ndim != 1 or self.knots_.size < 2 or np.any(np.diff(self.knots_) <= 0):
            raise ValueError("model data field state.knots_ must be a strictly increasing array of >= 2 knots")


def _check_bin_counts(name: str, counts: Any) -> None:
    """The rule of AdaCalib's ``bin_counts``: a non-empty increasing sequence of positive integers."""
    check_positive_ints(name, counts)
    if np.any(np.diff(counts) <= 0):
        raise ValueError(f"{name} must be a non-empty increasing sequence of positive integers; got {counts!r}")


class AdaCalib(FieldNetwork):
    """Doubly-adaptive calibration (AdaCalib): per-field monotone piecewise-linear maps from posterior statistics.

    Parameters
    ----------
    field : str or int, default=None
        The field column of ``X`` (name, or index for an array). Required.
    bin_counts : tuple of int, default=(5, 10, 20)
        Candidate numbers of equal-frequency bins; each field value mixes its candidates with learned
        attention weights (field-adaptive binning). 20 is the MCNet paper's setting for every binning method.
    min_samples_per_bin : int >= 1, default=20
        A candidate with more bins than ``n_rows / min_samples_per_bin`` is masked for that field value (the
        smallest candidate is always kept), so that every bin's posterior statistics rest on enough rows.
    hidden_dim : int >= 1, default=16
        Hidden units of the two perceptrons that turn posterior statistics into keypoint values (and of the
        auxiliary perceptron).
    auxiliary_features : sequence of str or int, default=None
        Numeric columns of ``X`` fed to an auxiliary two-layer perceptron whose output is added to the
        calibrated logit (the MCNet paper's Table 2 "-Aux" variant); standardised with their weighted mean
        and standard deviation at fit. It does not see the score, so the map stays increasing in the score.
    auxiliary_l2 : float >= 0, default=0.01
        L2 penalty on the auxiliary perceptron's weights, applied when ``auxiliary_features`` are given (why:
        ``docs/defaults/field.rst``).
    alpha : float >= 0, default=0.0
        Weight of the field-balance penalty (MCNet paper eq. 11-12), as in the MCNet paper's Table 3; 0 switches
        it off (the original loss).
    validation_fraction : float in [0, 1) or None, default=None
        Fraction of the rows held out (at random, from ``random_state``) for early stopping: the held-out log
        loss is checked every 10 Adam steps, training stops after 5 checks without improvement, and the best
        parameters are kept (the starting point included). None means 0.2 with ``auxiliary_features`` and 0
        (every row trains, ``max_iter`` steps, as in the paper) without them.
    learning_rate : float > 0, default=0.01
        Adam step size (full batch).
    max_iter : int >= 1, default=500
        Adam steps.
    min_samples_per_field : int >= 1, default=100
        Field values with fewer rows (of positive weight) at fit time, and unseen values, use the fallback.
    n_threads : int >= 1 or None, default=1
        Torch intra-op threads while fitting and predicting (restored afterwards); ``None`` keeps torch's
        setting; raise it for millions of rows (why 1: ``docs/defaults/field.rst``).
    random_state : int >= 0 or None, default=None
        Seeds the initial weights.

    Attributes
    ----------
    field_values_ : list of str, then None
        Field values seen at fit time, sorted, then None for the missing level if a value was missing.
    field_slots_ : ndarray of shape (n_values,)
        Slot of each value; -1 means the fallback slot (index ``n_slots``).
    keypoints_ : ndarray of shape (n_keypoints,)
        Keypoint positions (weighted mean logit of each bin) of every (slot, candidate) pair, grouped.
    keypoint_features_ : ndarray of shape (n_keypoints, 3)
        Posterior statistics of each bin: smoothed positive-rate logit minus mean logit, mean logit,
        ``log1p`` of the bin's weight.
    keypoint_groups_ : ndarray of shape (n_keypoints,)
        Group ``slot * len(bin_counts) + candidate`` of each keypoint, non-decreasing.
    candidate_mask_ : ndarray of shape (n_slots + 1, len(bin_counts))
        Which candidates each slot may use.
    auxiliary_mean_, auxiliary_scale_ : ndarray of shape (n_auxiliary_features,)
        Standardisation of the auxiliary features (empty without them).
    module_ : torch.nn.ParameterDict
        The keypoint perceptrons ``head_*`` and ``seg_*``, the ``attention`` logits per slot, and the auxiliary
        perceptron ``aux_*`` when there are auxiliary features.

    Raises
    ------
    ValueError
        As for :class:`NeuCalib`: from :meth:`fit`, a parameter breaks its rule (see Parameters), the split, a
        diverging ``learning_rate``, ``X`` without its columns, invalid data; from :meth:`predict` as there.
    TypeError
        As for :class:`NeuCalib`: a parameter has the wrong type (``field`` is required).
    ImportError
        From :meth:`fit`: torch is not installed (``pip install "mcal[mcnet]"``).

    Notes
    -----
    After Wei et al. (2022). For every field value (and for all rows, the fallback), the calibration rows
    are cut into equal-frequency bins of the logit, and each bin's posterior statistics are computed. A
    shared perceptron maps the first bin's statistics to the calibrated logit at its keypoint, and a second
    maps each pair of neighbouring bins (their statistics and the empirical slope of their posterior logits)
    to a positive slope between their keypoints, so every calibration function of the family is continuous
    and strictly increasing by construction (the paper reaches monotonicity with an order-preserving
    constraint, as the MCNet paper's section 4.1 describes it); the map is the linear interpolation of the
    keypoints, extended linearly beyond the end ones (the MCNet paper's eq. 6, whose knot values :math:`a_k`
    AdaCalib learns with neural networks from each field's posterior statistics: MCNet section 4.1 and
    Appendix B.2).
    Field-adaptive binning: each slot mixes the functions of its candidate bin counts with softmax attention
    weights learned per slot (a soft form of the paper's selection among bin numbers). No public reference
    code exists; this reconstruction follows the paper's description and is not numerically comparable to it.

    References
    ----------
    .. [1] Wei, Zhang, Hou, Liu, Liu, Wang and Zheng, "Posterior Probability Matters: Doubly-Adaptive
       Calibration for Neural Predictions in Online Advertising", SIGIR 2022, pp. 2645-2649,
       doi:10.1145/3477495.3531911, arXiv:2205.07295.
    .. [2] Dai et al., MCNet, WWW 2025, arXiv:2503.00334, section 4.1 (eq. 6) and Appendix B.2.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"country": rng.choice(["de", "fr"], 400)})
    >>> p = rng.uniform(0.05, 0.95, 400)
    >>> y = rng.random(400) < np.where(X["country"] == "de", p ** 2, p)
    >>> cal = AdaCalib(field="country", max_iter=50, random_state=0).fit(p, y, X=X)
    >>> grid = np.linspace(0.01, 0.99, 5)
    >>> bool(np.all(np.diff(cal.predict(grid, X=pd.DataFrame({"country": ["de"] * 5}))) > 0))
    True
    """

    _state_attrs: ClassVar[tuple[str, ...]] = (
        "field_values_",
        "field_slots_",
        "keypoints_",
        "keypoint_features_",
        "keypoint_groups_",
        "candidate_mask_",
        "auxiliary_mean_",
        "auxiliary_scale_",
    )
    _state_constraints: ClassVar[dict[str, Any]] = {
        **FieldNetwork._state_constraints,
        "keypoints_": FLOATS,
        "keypoint_features_": FLOATS,
        "keypoint_groups_": INTEGERS,
        "candidate_mask_": BOOLEANS,
    }
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **FieldNetwork._parameter_constraints,
        "min_samples_per_bin": POSITIVE_INT,
        "bin_counts": _check_bin_counts,
    }
    #: Keys of slot/candidate groups are spaced this far apart; clipped logits lie in (-16.2, 16.2).
    _STRIDE: ClassVar[float] = 64.0

    def __init__(
        self,
        *,
        field: str | int | None = None,
        bin_counts: tuple[int, ...] = (5, 10, 20),
        min_samples_per_bin: int = 20,
        hidden_dim: int = 16,
        auxiliary_features: tuple[str | int, ...] | None = None,
        auxiliary_l2: float = 0.01,
        alpha: float = 0.0,
        validation_fraction: float | None = None,
        learning_rate: float = 0.01,
        max_iter: int = 500,
        min_samples_per_field: int = 100,
        n_threads: int | None = 1,
        random_state: int | None = None,
    ) -> None:
        self.field = field
        self.bin_counts = bin_counts
        self.min_samples_per_bin = min_samples_per_bin
        self.hidden_dim = hidden_dim
        self.auxiliary_features = auxiliary_features
        self.auxiliary_l2 = auxiliary_l2
        self.alpha = alpha
        self.validation_fraction = validation_fraction
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.min_samples_per_field = min_samples_per_field
        self.n_threads = n_threads
        self.random_state = random_state

    def _build(self, s, y, w, row_slots, n_slots) -> None:
        counts = [int(k) for k in self.bin_counts]
        positions, features, groups = [], [], []
        mask = np.zeros((n_slots + 1, len(counts)), dtype=bool)
        for slot in range(n_slots + 1):
            rows = (w > 0) & ((row_slots == slot) if slot < n_slots else True)
            n_rows = int(rows.sum())
            for c, k in enumerate(counts):
                mask[slot, c] = c == 0 or n_rows >= k * int(self.min_samples_per_bin)
                pos, feat = _bin_keypoints(s[rows], y[rows], w[rows], k)
                positions.append(pos)
                features.append(feat)
                groups.append(np.full(pos.size, slot * len(counts) + c, dtype=np.int64))
        self.keypoints_ = np.concatenate(positions)
        self.keypoint_features_ = np.concatenate(features)
        self.keypoint_groups_ = np.concatenate(groups)
        self.candidate_mask_ = mask

    def _starts(self) -> NDArray[np.intp]:
        return np.flatnonzero(np.r_[True, np.diff(self.keypoint_groups_) != 0])

    def _shapes(self) -> dict[str, tuple[int, ...]]:
        h, n_aux = int(self.hidden_dim), self._n_auxiliary()
        aux = mlp_shapes("aux", n_aux, h) if n_aux else {}
        return {**mlp_shapes("head", 3, h), **mlp_shapes("seg", 7, h), "attention": self.candidate_mask_.shape, **aux}

    def _init(self, rng: np.random.Generator) -> dict[str, NDArray[np.float64]]:
        h, n_aux = int(self.hidden_dim), self._n_auxiliary()
        aux = mlp_init("aux", n_aux, h, rng) if n_aux else {}
        return {
            **mlp_init("head", 3, h, rng),
            **mlp_init("seg", 7, h, rng),
            "attention": np.zeros(self.candidate_mask_.shape),
            **aux,
        }

    def _rows(self, s: NDArray[np.float64], slots: NDArray[np.intp], features: NDArray | None) -> dict[str, Any]:
        torch = import_optional("torch")
        n_cand = self.candidate_mask_.shape[1]
        starts = self._starts()
        ends = np.r_[starts[1:], self.keypoints_.size]
        groups = slots[:, None] * n_cand + np.arange(n_cand)[None, :]
        keys = self.keypoint_groups_ * self._STRIDE + self.keypoints_
        # index of the keypoint at or left of each score within its group, kept inside the group's segments
        found = np.searchsorted(keys, groups * self._STRIDE + s[:, None], side="right") - 1
        left = np.clip(found, starts[groups], ends[groups] - 2)
        kp = self.keypoints_
        lam = (s[:, None] - kp[left]) / (kp[left + 1] - kp[left])
        aux = None if features is None else torch.as_tensor(features)
        return {"left": torch.as_tensor(left), "lam": torch.as_tensor(lam), "slot": torch.as_tensor(slots), "aux": aux}

    def _keypoint_values(self, module):
        """Calibrated logit at every keypoint: head value plus the running sum of positive slopes x widths."""
        torch = import_optional("torch")
        kp, feat = self.keypoints_, self.keypoint_features_
        starts = self._starts()
        inner = np.setdiff1d(np.arange(kp.size), starts)
        width = kp[inner] - kp[inner - 1]
        posterior = feat[:, 0] + feat[:, 1]
        slope_hint = np.clip((posterior[inner] - posterior[inner - 1]) / width, -10.0, 10.0)
        seg_in = torch.as_tensor(np.column_stack([feat[inner - 1], feat[inner], slope_hint]))
        slopes = torch.nn.functional.softplus(mlp(module, "seg", seg_in) + _SOFTPLUS_ONE)
        increments = torch.zeros(kp.size, dtype=torch.float64)
        increments = increments.index_put((torch.as_tensor(inner),), slopes * torch.as_tensor(width))
        running = torch.cumsum(increments, 0)
        group_index = torch.as_tensor(np.cumsum(np.r_[True, np.diff(self.keypoint_groups_) != 0]) - 1)
        head = torch.as_tensor(kp[starts]) + mlp(module, "head", torch.as_tensor(feat[starts]))
        return head[group_index] + running - running[torch.as_tensor(starts)][group_index]

    def _logits(self, module, rows):
        torch = import_optional("torch")
        u = self._keypoint_values(module)
        left = rows["left"]
        values = u[left] + rows["lam"] * (u[left + 1] - u[left])
        scores = module["attention"].masked_fill(~torch.as_tensor(self.candidate_mask_), float("-inf"))
        weights = torch.softmax(scores, dim=1)[rows["slot"]]
        calibrated = (weights * values).sum(dim=1)
        return calibrated if rows["aux"] is None else calibrated + mlp(module, "aux", rows["aux"])

    def _validate_state(self) -> None:
        super()._validate_state()
        kp, feat, groups, mask = self.keypoints_, self.keypoint_features_, self.keypoint_groups_, self.candidate_mask_
        n_groups = (self._n_slots() + 1) * len(self.bin_counts)
        if mask.dtype != bool or mask.shape != (self._n_slots() + 1, len(self.bin_counts)) or not mask[:, 0].all():
            raise ValueError(
                "model data field state.candidate_mask_ must be boolean (n_slots + 1, n_candidates), column 0 set"
            )
        if feat.shape != (kp.size, 3) or groups.shape != kp.shape or groups.dtype.kind != "i":
            raise ValueError("model data fields state.keypoint_* must describe the same keypoints")
        if not np.array_equal(np.unique(groups), np.arange(n_groups)) or np.any(np.diff(groups) < 0):
            raise ValueError("model data field state.keypoint_groups_ must list every group in order")
        same = np.diff(groups) == 0
        if np.any(np.diff(kp)[same] <= 0) or np.bincount(groups, minlength=n_groups).min() < 2:
            raise ValueError("model data field state.keypoints_ must increase strictly, >= 2 per group")


def _bin_keypoints(
    s: NDArray[np.float64], y: NDArray[np.float64], w: NDArray[np.float64], n_bins: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Keypoints (weighted mean logit per equal-frequency bin) and their posterior statistics, >= 2 keypoints."""
    edges = equal_frequency_edges(s, w, n_bins)
    idx = assign_bins(s, edges)
    weight = np.bincount(idx, weights=w)
    positives = np.bincount(idx, weights=w * y)
    mean = np.bincount(idx, weights=w * s) / weight
    prior = positives.sum() / weight.sum()
    # one pseudo-row at the group's positive rate keeps bins of a single class finite in logit units
    posterior = logit((positives + prior) / (weight + 1.0))
    features = np.column_stack([posterior - mean, mean, np.log1p(weight)])
    if mean.size == 1:  # a single distinct score: a second keypoint one logit unit above, same statistics
        mean, features = np.r_[mean, mean + 1.0], np.vstack([features, features])
        features[1, :2] = [features[0, 0] - 1.0, mean[1]]
    return mean, features
