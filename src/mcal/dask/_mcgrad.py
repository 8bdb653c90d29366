"""MCGrad on a Dask cluster: the same rounds as :class:`mcal.MCGrad`, with the data spread over the workers."""

from __future__ import annotations

import inspect
import numbers
import sys
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from mcal._constraints import Interval
from mcal._features.encoder import FeatureEncoder
from mcal._lightgbm import check_float32_weight_range, check_monotone_constraints
from mcal._optional import import_optional
from mcal._validation import FIT_SWAP, warn
from mcal.dask._engine import DaskEngine
from mcal.dask._inputs import (
    BlockSummary,
    FoldSpec,
    aligned,
    assign_folds,
    check_block,
    compute,
    get_client,
    is_dask_collection,
    merge_encoders,
    missing_column_error,
    persist,
    stack,
    totals,
)
from mcal.dask._predict import predict
from mcal.mcgrad import MCGrad
from mcal.mcgrad.engine import LogLoss, Part

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover
    from typing_extensions import Self

#: Parameters of :class:`DaskMCGrad` that :class:`~mcal.MCGrad` does not have.
_DASK_PARAMS = ("client", "timeout")


class DaskMCGrad(MCGrad):
    """MCGrad fitted on dask collections with a ``distributed`` cluster; the fitted model is an ordinary MCGrad.

    The algorithm, its parameters and defaults, and the model file are those of :class:`mcal.MCGrad` (Algorithm 1
    of [1]_). Only where the data lives changes:

    - categories are encoded once, globally (the union of the levels of every partition, as :class:`~mcal.MCGrad`
      would learn from the whole table) before any booster sees a partition, so a categorical column whose
      partitions hold different levels is re-encoded consistently instead of training LightGBM silently wrong;
    - the encoded rows are then dealt to partitions at random (one shuffle), because data-parallel LightGBM
      builds each feature's bins from one worker's rows: with partitions split by a feature (by date, by
      country) the bins would miss the other workers' values;
    - each round's booster is fitted by ``lightgbm.dask`` on the workers with ``F_{t-1}`` as init score;
    - the rescaling Newton steps and the early-stopping validation loss are dask reductions;
    - holdout (or k-fold) early stopping runs on a split made on the workers: each partition sends a random share
      of each class to validation (stratified within the partition), seeded by ``random_state`` and the
      partition number.

    The fitted boosters are local ``lightgbm.Booster`` objects: :meth:`predict` works on in-memory data without
    Dask, and lazily (block by block) on dask collections; :meth:`to_local` returns a plain :class:`~mcal.MCGrad`,
    and :func:`mcal.save` writes the same model file as for :class:`~mcal.MCGrad` (it loads as one).

    Parameters
    ----------
    client : distributed.Client or None, default=None
        The cluster; None uses the running default client.
    timeout : float > 0 or None, default=None
        Most seconds one distributed step (a booster fit, a reduction, persisting a round's scores) may take
        before the fit stops with ``TimeoutError``; it also sets LightGBM's socket ``time_out`` (whole minutes,
        rounded up, at most 35,791: LightGBM's limit, about 24.8 days). None sets no limit of mcal's own:
        LightGBM's sockets then keep their default of 120 minutes, after which a stalled booster fit fails in
        LightGBM. A worker that leaves during a
        booster fit stops the fit with :class:`~mcal.dask.WorkerLostError` whatever the timeout.
    max_rounds, early_stopping, validation_fraction, n_folds, patience, min_gain_se, early_stopping_metric, max_time, rescale, \
rescale_input, learning_rate, max_depth, min_child_samples, n_estimators, max_leaves, l2_regularization, \
min_gain_to_split, min_sum_hessian_in_leaf, lightgbm_params, categorical_features, progress, random_state
        As in :class:`mcal.MCGrad`, with the same defaults; ``early_stopping_metric`` must be ``"log_loss"``.
    n_jobs : int or None, default=None
        LightGBM threads of local :meth:`predict` calls; the distributed fits use each worker's threads.

    Attributes
    ----------
    n_rounds_, rescale_factors_, validation_losses_, feature_importances_, boosters_, n_features_in_, \
feature_names_in_
        As in :class:`mcal.MCGrad`.

    Raises
    ------
    ValueError
        From :meth:`fit`: as :class:`mcal.MCGrad` (a parameter breaks its rule: see Parameters), inputs not
        partitioned alike, or no running client (see :meth:`fit`).
    TypeError
        From :meth:`fit`: as :class:`mcal.MCGrad`, an input that is not a dask collection, or a ``client`` that is
        not a ``distributed.Client``.

    Notes
    -----
    Results agree with :class:`mcal.MCGrad` on the same data up to LightGBM's data-parallel training, which
    builds each feature's histogram bins from the workers' own rows, and which worker gets which partition
    (the difference is measured in ``benchmarks/results/dask_scale.md``); runs are not
    bit-identical run to run. The early-stopping split differs from the in-memory one (it is drawn per
    partition). LightGBM's own early stopping is not used (it breaks under Dask); MCGrad's is computed here.
    ``lightgbm.dask`` prints "Finding random open ports for workers" for each booster fit; pass a logger to
    ``lightgbm.register_logger`` to route it elsewhere.

    References
    ----------
    .. [1] N. Tax et al., "MCGrad: Multicalibration at Web Scale", KDD 2026. arXiv:2509.19884.

    Examples
    --------
    >>> import numpy as np, pandas as pd, dask.dataframe as dd
    >>> from distributed import Client
    >>> client = Client(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0")
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"group": rng.choice(["a", "b"], 4000), "p": 0.5})
    >>> df["y"] = rng.random(4000) < np.where(df["group"] == "a", 0.2, 0.8)
    >>> ddf = dd.from_pandas(df, npartitions=2)
    >>> model = DaskMCGrad(client=client, min_child_samples=20, random_state=0)
    >>> model = model.fit(ddf["p"], ddf["y"], X=ddf[["group"]])  # doctest: +ELLIPSIS
    Finding random open ports for workers...
    >>> local = model.to_local()
    >>> p = local.predict(df["p"], X=df[["group"]])
    >>> bool(abs(p[df["group"] == "a"].mean() - 0.2) < 0.03)
    True
    >>> client.close()
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "client": "no_validation",  # checked where it is used (get_client): a distributed.Client, or None
        "timeout": [
            None,
            Interval(numbers.Real, 0, None, closed="neither", rule="a positive number of seconds or None"),
        ],
        **MCGrad._parameter_constraints,
    }

    def __init__(self, *, client: Any = None, timeout: float | None = None, **mcgrad_params: Any) -> None:
        # MCGrad's parameters are forwarded (MCGrad rejects unknown names); the signature that scikit-learn's
        # get_params reads is spelled out below the class, from MCGrad's, so the two cannot drift apart.
        super().__init__(**mcgrad_params)
        self.client = client
        self.timeout = timeout

    def __sklearn_clone__(self) -> DaskMCGrad:
        """An unfitted copy with the same parameters and the same ``client`` (which cannot be deep-copied)."""
        from sklearn.base import clone

        params = {k: clone(v, safe=False) for k, v in self.get_params(deep=False).items() if k != "client"}
        return type(self)(client=self.client, **params)

    # -- fit -------------------------------------------------------------------------------------------------
    def fit(self, y_prob: Any, y: Any, *, X: Any = None, sample_weight: Any = None) -> Self:  # type: ignore[override]
        """Fit MCGrad on dask collections.

        Parameters
        ----------
        y_prob : dask Array or Series of shape (n_samples,)
            Uncalibrated probabilities in [0, 1].
        y : dask Array or Series of shape (n_samples,)
            Labels, 0/1, bool or soft labels in [0, 1].
        X : dask DataFrame, Series or 2-D Array of shape (n_samples, n_features), default=None
            Features, partitioned as ``y_prob``.
        sample_weight : dask Array or Series of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : DaskMCGrad

        Raises
        ------
        TypeError
            If an input is not a dask collection, or ``client`` is not a ``distributed.Client``.
        ValueError
            As :meth:`mcal.MCGrad.fit` (the message names the partition), if the inputs are not partitioned
            alike, if partitions disagree on the columns, or if no client runs.
        WorkerLostError
            If a worker leaves the cluster during a booster fit.
        TimeoutError
            If a step runs longer than ``timeout`` seconds.
        """
        return self._fit_collections(y_prob, y, X, sample_weight)

    #: The calibrator that the fitted model is (:meth:`to_local`, model files), and the name of its scores.
    _local_class: ClassVar[type] = MCGrad
    _score: ClassVar[str] = "y_prob"

    def _real(self) -> tuple | None:
        """None for probabilities; the bounds of real-valued predictions (see :func:`~mcal.dask._inputs.clean_block`)."""
        return None

    def _fit_collections(self, scores: Any, y: Any, X: Any, sample_weight: Any) -> Self:
        """The fit of any dask MCGrad: scores, labels, features and weights as dask collections."""
        self._validate_params()
        client = get_client(self.client)
        blocks = aligned({self._score: scores, "y": y, "sample_weight": sample_weight, "X": X}, matrix=("X",))
        split_seed, lgb_seed = self._seeds()
        folds = None
        if self.early_stopping is not None and self.max_rounds > 0:
            holdout = self.early_stopping == "holdout"
            folds = FoldSpec(2 if holdout else int(self.n_folds), float(self.validation_fraction) if holdout else None,
                             split_seed)  # fmt: skip
        encoder, summaries, (Xe, yy, w, F0, fold) = self._encode(client, blocks, folds, X is not None, split_seed)
        check_monotone_constraints(self.lightgbm_params, encoder)
        engine = DaskEngine(client, self._lightgbm_params(lgb_seed), int(self.n_estimators),
                            np.flatnonzero(encoder.categorical_).tolist(), self.timeout, self._loss())  # fmt: skip

        def splits() -> tuple[list[Part], list[Part]]:
            kept = [s for s in summaries if s.n > 0]
            assert folds is not None  # splits() runs only with early stopping, which draws the folds
            train, valid = [], []
            for k in [1] if self.early_stopping == "holdout" else range(folds.n_folds):
                train.append(self._select((Xe, yy, w, F0), fold, k, False, kept, client))
                valid.append(self._select((Xe, yy, w, F0), fold, k, True, kept, client))
            return train, valid

        self._fit_rounds(engine, encoder, Part(Xe, yy, w, F0), splits)
        return self

    def _encode(self, client: Any, blocks: dict[str, list], folds: FoldSpec | None, has_X: bool, seed: int) -> tuple:
        """Check the partitions, learn one global encoder, deal the encoded rows to partitions at random.

        Data-parallel LightGBM builds each feature's histogram bins from the rows of one worker, so partitions
        that are not random samples (sorted by date, split by country) would give bins that miss the levels or
        values of the other workers. Dealing the rows at random (one shuffle of the encoded data) makes every
        worker's rows a sample of the whole.

        Returns the encoder, the summaries (rows, fold counts) of the dealt partitions and their persisted dask
        Arrays (features with a spare score column, labels, weights, ``logit(y_prob)``, early-stopping folds).
        """
        dask = import_optional("dask")
        dd = import_optional("dask.dataframe")
        rows = list(
            enumerate(zip(blocks[self._score], blocks["y"], blocks["sample_weight"], blocks["X"], strict=False))
        )
        check = dask.delayed(check_block, pure=True)
        try:
            summaries = compute(client, [
                check(i, p, yy, w, x, label="y", allow_soft=True, categorical_features=self.categorical_features,
                      folds=folds, real=self._real(), score=self._score)
                for i, (p, yy, w, x) in rows
            ], self.timeout, "checking the inputs")  # fmt: skip
        except KeyError as exc:  # the first step that reads the inputs' partitions; check_block raises no KeyError
            raise missing_column_error(exc) from exc
        # the weight range first: a weight past float32 would also swamp the class sums that totals checks
        check_float32_weight_range(
            min((s.w_low for s in summaries), default=np.inf), max((s.w_high for s in summaries), default=0.0)
        )
        total = totals(summaries, "y", real=self._real() is not None, score=self._score)
        if all(s.scores_binary for s in summaries) and total.n_zero + total.n_one < total.n:  # as MCGrad warns
            warn(f"y_prob holds only 0 and 1 while y holds probabilities; {FIT_SWAP}")
        if folds is not None:
            assert self.early_stopping is not None  # folds are drawn for early stopping only
            _check_split(total, self.early_stopping, folds)
        encoder = (
            merge_encoders(summaries, self.categorical_features) if has_X else FeatureEncoder().fit(np.empty((1, 0)))
        )
        width = encoder.n_features_in_ + 1
        n_out = max(sum(s.n > 0 for s in summaries), len(client.scheduler_info()["workers"]))
        encode = dask.delayed(_encode_block, pure=True)
        frame = dd.from_delayed(
            [encode(i, p, yy, w, x, encoder, folds, seed, self._loss()) for i, (p, yy, w, x) in rows],
            meta=_encode_block(0, [], [], None, np.empty((0, 0)), None, None, 0, self._loss(), width),
        )
        dealt = persist(client, frame.shuffle(on=_TARGET, npartitions=n_out), self.timeout, "dealing the rows")
        parts = dealt.to_delayed(optimize_graph=False)
        n_folds = 1 if folds is None else folds.n_folds
        dealt_summaries = compute(client, [dask.delayed(_dealt_summary)(b, n_folds) for b in parts], self.timeout,
                                  "counting the dealt rows")  # fmt: skip
        sizes = [s.n for s in dealt_summaries]
        columns = dask.delayed(_columns, pure=True, nout=5)
        split = [columns(b, width) for b in parts]
        arrays = [stack([c[k] for c in split], sizes, width if k == 0 else None) for k in range(4)]
        arrays.append(stack([c[4] for c in split], sizes, dtype=np.int8))
        return encoder, dealt_summaries, persist(client, arrays, self.timeout, "encoding the inputs")

    def _select(self, arrays: tuple, fold: Any, k: int, inside: bool, kept: list[BlockSummary], client: Any) -> Part:
        """The rows of fold ``k`` (``inside``) or of the other folds, as a persisted part."""
        dask = import_optional("dask")
        take = dask.delayed(_take_rows, pure=True)
        fold_blocks = fold.to_delayed().ravel()
        assert all(s.fold_counts is not None for s in kept)  # counted when the folds were drawn
        sizes = [int(s.fold_counts[k]) if inside else s.n - int(s.fold_counts[k]) for s in kept]  # type: ignore[index]
        selected = []
        for arr in arrays:
            blocks = arr.to_delayed().ravel()
            taken = [take(b, f, k, inside) for b, f in zip(blocks, fold_blocks, strict=False)]
            selected.append(stack(taken, sizes, arr.shape[1] if arr.ndim == 2 else None))
        return Part(*persist(client, selected, self.timeout, "the early-stopping split"))

    # -- predict and export ----------------------------------------------------------------------------------
    def predict(self, y_prob: Any, *, X: Any = None) -> Any:
        """Calibrated probabilities: computed here for in-memory input, lazily block by block for dask input.

        Parameters
        ----------
        y_prob : array-like, or dask Array or Series, of shape (n_samples,)
            Uncalibrated probabilities in [0, 1].
        X : DataFrame or array-like, or dask DataFrame or Array, of shape (n_samples, n_features), default=None
            Features, as at fit (partitioned as ``y_prob`` for dask input).

        Returns
        -------
        y_calibrated : ndarray, or dask Array or Series, of shape (n_samples,)
            Calibrated P(y=1); a dask collection of the same kind (and partitions) as ``y_prob`` when that is one.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        ValueError
            As :meth:`mcal.MCGrad.predict` (for dask input, when the result is computed); for a dask ``X`` that
            lacks a column of the fit by its metadata, at once.
        TypeError
            As :meth:`mcal.MCGrad.predict`.
        """
        if is_dask_collection(y_prob) or is_dask_collection(X):
            return predict(self.to_local(), y_prob, X=X)
        return super().predict(y_prob, X=X)

    def to_local(self) -> MCGrad:
        """The fitted model as a plain :class:`mcal.MCGrad` (same parameters but ``client`` and ``timeout``).

        Returns
        -------
        model : MCGrad
            Shares the fitted boosters, encoder and compiled rounds (:meth:`mcal.MCGrad.compile`); predicts
            without Dask.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        """
        self._check_fitted()
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in _DASK_PARAMS}
        local = self._local_class(**params)
        local.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_") and not k.startswith("_")})
        local._single_row = None
        local._compiled = getattr(self, "_compiled", None)  # compiled from the same boosters, if at all
        return local

    def to_dict(self) -> dict[str, Any]:
        """The dict of the equivalent :class:`mcal.MCGrad`, so that :func:`mcal.save` writes an MCGrad model file.

        Returns
        -------
        data : dict
            ``{"class": "MCGrad", "params": dict, "state": dict or None}``, as :meth:`mcal.MCGrad.to_dict` writes
            it (without ``client`` and ``timeout``).

        Raises
        ------
        ValueError, TypeError
            As :meth:`mcal.BaseCalibrator.to_dict`.
        """
        if self.__sklearn_is_fitted__():
            return self.to_local().to_dict()
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in _DASK_PARAMS}
        return self._local_class(**params).to_dict()

    @classmethod
    def from_dict(cls, data: dict[str, Any], tensors: dict | None = None) -> Any:
        """Model files of a DaskMCGrad hold an MCGrad: use :func:`mcal.load` or :meth:`mcal.MCGrad.from_dict`.

        Parameters
        ----------
        data : dict
            Ignored: the call always raises.
        tensors : dict, default=None
            Ignored.

        Returns
        -------
        None
            Never returns.

        Raises
        ------
        ValueError
            Always, naming the class to load instead.
        """
        local = cls._local_class.__name__
        article = "an" if local.startswith("M") else "a"
        raise ValueError(
            f"{cls.__name__} saves {article} {local} model; load it with mcal.load or mcal.{local}.from_dict"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["client"] = None  # a client belongs to one process
        return state


def dask_signature(local: type) -> inspect.Signature:
    """The ``__init__`` signature of the calibrator ``local`` with ``client`` and ``timeout`` in front of its keyword
    parameters."""
    base = inspect.signature(local.__dict__["__init__"])
    self_param, *params = base.parameters.values()
    extra = [
        inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Any),
        inspect.Parameter("timeout", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="float | None"),
    ]
    return base.replace(parameters=[self_param, *extra, *params])


DaskMCGrad.__init__.__signature__ = dask_signature(MCGrad)  # type: ignore[attr-defined]  # read by inspect


def _check_split(total: BlockSummary, method: str, folds: FoldSpec) -> None:
    """The global row counts must allow the split that an in-memory MCGrad fit makes: at least ``n_folds`` rows
    (``"kfold"``; 2 otherwise) of each class for 0/1 labels, or in all for other labels."""
    binary = total.n_zero + total.n_one == total.n
    need = folds.n_folds if method == "kfold" else 2
    counts = [total.n_zero, total.n_one] if binary else [total.n]
    if min(counts) < need:
        what = "of each class" if binary else "in all"
        raise ValueError(
            f"y must have at least {need} rows {what} for early_stopping={method!r}; got {counts} "
            "(use early_stopping=None with a fixed max_rounds on data this small)"
        )


#: Column of the encoded rows that deals them to partitions at random.
_TARGET = "__partition__"


def _encode_block(
    index: int, p: Any, y: Any, w: Any, X: Any, encoder: FeatureEncoder | None, folds: FoldSpec | None,
    seed: int, loss: LogLoss, width: int = 0,
) -> pd.DataFrame:  # fmt: skip
    """One partition encoded as a frame: features ``f0..`` (with a spare score column), ``y``, ``w``, ``F``
    (the loss's link of the scores: ``logit(y_prob)`` for MCGrad), the early-stopping ``fold`` and a random
    destination partition."""
    n = len(p)
    yy = np.asarray(y, dtype=np.float64).reshape(-1)
    Xe = np.empty((0, width)) if encoder is None else encoder.transform(np.empty((n, 0)) if X is None else X,
                                                                         n_extra_columns=1)  # fmt: skip
    frame = pd.DataFrame(Xe, columns=[f"f{j}" for j in range(Xe.shape[1])])
    frame["y"] = yy
    frame["w"] = np.ones(n) if w is None else np.asarray(w, dtype=np.float64).reshape(-1)
    frame["F"] = loss.link(np.asarray(p, dtype=np.float64).reshape(-1))
    frame["fold"] = assign_folds(yy, folds, index) if folds is not None else np.zeros(n, dtype=np.int8)
    # dask sends a row to partition hash(value) % n_out: random 62-bit values spread the rows evenly
    frame[_TARGET] = np.random.default_rng([seed, index]).integers(0, 2**62, size=n)
    return frame


def _dealt_summary(part: pd.DataFrame, n_folds: int) -> BlockSummary:
    return BlockSummary(n=len(part), fold_counts=np.bincount(part["fold"].to_numpy(), minlength=n_folds))


def _columns(part: pd.DataFrame, width: int) -> tuple:
    """The arrays of one dealt partition: features (C-ordered), labels, weights, logit, folds."""
    X = np.ascontiguousarray(part[[f"f{j}" for j in range(width)]].to_numpy(dtype=np.float64))
    return (X, *(part[c].to_numpy(dtype=np.float64) for c in ("y", "w", "F")), part["fold"].to_numpy(dtype=np.int8))


def _take_rows(block: Any, fold: Any, k: int, inside: bool) -> Any:
    return block[(fold == k) if inside else (fold != k)]
