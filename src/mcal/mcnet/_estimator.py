"""The MCNet estimator: parameters, binning and fields, the fit's orchestration, inference modes, fitted state."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from mcal._base import BaseCalibrator
from mcal._binning import assign_bins
from mcal._features.field_inputs import feature_matrix, field_column, named_columns
from mcal._features.fields import UNSEEN, FieldVocabulary
from mcal._optional import import_optional
from mcal._torch import check_device, torch_device, torch_threads
from mcal._validation import EPS, logit
from mcal.mcnet._checks import (
    MCNET_CONSTRAINTS,
    STATE_CONSTRAINTS,
    check_compiled_tables,
    check_fitted_structure,
    check_param_relations,
    check_weight_tensors,
)
from mcal.mcnet._compiled import build_tables, check_tables, evaluate_tables
from mcal.mcnet._exact import auxiliary_logits, float64_weights, network_logits
from mcal.mcnet._fitting import BIN_COUNT_CANDIDATES, Layout, Rows, Trainer, choice_fits, fit_weights
from mcal.mcnet._grid import check_grid_tables, grid_tables, stored_grid_logits, stored_tables
from mcal.mcnet._inputs import LOGIT_BOUND, balance_groups, bin_geometry, standardisation
from mcal.mcnet._model_file import model_tensors, read_tensors, stored_parameters, upgrade_model_data, weight_arrays
from mcal.mcnet._network import SCORE_WEIGHT_SCALE, Architecture
from mcal.mcnet._training import Spec, split_rows

#: Rows per optimizer step of the quadrature by default (the paper's 2,048).
QUADRATURE_BATCH = 2048
#: Default weight of the smoothness penalty (``docs/defaults/mcnet.rst``).
DEFAULT_SMOOTHNESS = 3e-3


class MCNet(BaseCalibrator):
    """Monotonic Calibration Networks (MCNet): per-bin monotone neural calibration functions with field context.

    Parameters
    ----------
    n_bins : int >= 1 or "auto", default="auto"
        Number K of equal-frequency bins of the score (fewer when tied scores make edges coincide). "auto" chooses
        K among 1, 2 and 4 on the calibration rows: each count trains on 75 % of them for 40 % of the step
        budget, and the fewest bins whose held-out log loss is within one paired standard error of the lowest
        are kept and trained on every row (see Notes); the fit then costs about twice a fixed count's. The paper finds MCNet-Field worse with more bins (its
        Appendix B.3); why the default: ``docs/defaults/mcnet.rst``.
    n_nodes : int >= 2, default=25
        Clenshaw-Curtis nodes T of the per-row quadrature (Appendix A.2): the integral of ``integral="quadrature"``
        and of ``inference="exact"``.
    integral : {"grid", "quadrature"}, default="grid"
        How eq. 7's integral is computed in training (and in the compiled tables). "grid": f1 is evaluated on a
        fixed grid of 65 scores spanning each bin's data range, for every (bin, field), and integrated as the
        trapezoid of its positive piecewise-linear interpolant, so each row costs a gather and a quadratic, and
        training runs full batch; the map is strictly increasing in the score by construction, and
        ``inference="compiled"`` predicts with exactly this map. "quadrature": the paper's per-row
        Clenshaw-Curtis quadrature with ``n_nodes`` nodes (Algorithms 1-2), trained in mini-batches.
    bin_joins : {"continuous", "raised"}, default="continuous"
        How eq. 8 joins the bins, for each field. "continuous": each bin's map starts where the previous bin's
        ends (only the first bin's bias term f2 is free), so the map is continuous in the score. "raised": each
        bin keeps its own bias term, raised where needed to where the previous bin ends, so the map may jump up
        at a bin edge (closer to the paper's eq. 7-8, with K free levels per field). Both are monotone in the
        score; see Notes.
    hidden_sizes : non-empty sequence of int >= 1, default=(32, 32)
        Hidden layer widths of the per-bin MLPs f1 and f2. The paper uses (128, 128); see Notes.
    embedding_dim : int >= 1, default=8
        Size of the per-bin field embedding h (the paper's 128; see Notes).
    beta : float >= 0, default=0.0
        Weight of the order-preserving regularizer (eq. 10, 13); the paper uses 1.0. Here the map is monotone
        across bins by construction; with ``bin_joins="raised"`` the penalty only pulls the network's own bias
        terms into order, and with "continuous" it is zero.
    alpha : float >= 0, default=0.0
        Weight of the field-balance regularizer (eq. 11-13); needs ``field`` or ``balance_field``. The paper
        does not report its value; 0 leaves the regularizer off, as in its Table 1 runs without Table 3's ablation.
    smoothness : float >= 0, default=3e-3
        Weight of a roughness penalty added to the training loss (not in the paper): the squared differences of
        log f1 between neighbouring points of the 65-score grid, summed along each (bin, field) grid and averaged
        over the grids (with either ``integral``). It pulls each bin's map towards a straight line in logit units,
        the warm start's shape, where the data do not bend it; 0 trains eq. 13 alone. Why: ``docs/defaults/mcnet.rst``.
    field : str or int or None, default=None
        Column of ``X`` (name, or index for an array) holding the field used as context: MCNet-Field.
        Missing values (NaN, None, NA) are a field value of their own. ``None`` gives MCNet-None (the
        embedding is the zero vector).
    balance_field : str or int or None, default=None
        Column grouping the rows for the field-balance regularizer; ``None`` uses ``field``. With
        ``field=None`` this gives the paper's MCNet-None trained with the balance regularizer (Table 3).
    auxiliary_features : non-empty sequence of str or int, or None, default=None
        Numeric columns of ``X`` for the optional auxiliary network (Appendix A.3), added in logit units.
    auxiliary_hidden_size : int >= 1, default=64
        Hidden width of the auxiliary two-layer MLP.
    learning_rate : float > 0, default=1e-2
        Adam's peak step size: reached by a linear warm-up over the first 100 steps (a tenth of the budget if
        fewer), then lowered along a cosine to 5 % of it at the end of the budget (the paper uses 1e-4 or 1e-5
        with millions of rows and mini-batches).
    batch_size : int >= 1 or None, default=None
        Rows per optimizer step. None: every training row (full batch) with ``integral="grid"``, 2,048 (the
        paper's) with the quadrature.
    max_epochs : int >= 1, default=1000
        Most passes over the training part; with ``max_steps`` it sets the step budget
        ``min(max_steps, max_epochs * ceil(n_train / batch_size))``.
    max_steps : int >= 1, default=500
        Most optimizer steps, however large the data: full batch, the budget is 500 passes over every row.
    min_steps : int >= 0, default=500
        Early stopping cannot end a fit before this many steps (nor before the budget, if smaller).
    patience : int >= 1, default=500
        Stop after this many optimizer steps without a lower held-out loss (read every 25 steps, or every
        ``ceil(n_held_out / batch_size)`` steps when more); the best reading's weights are kept.
    validation_fraction : float in [0, 1), default=0.0
        Part of the calibration rows held out for early stopping, in [0, 1). 0, the paper's regime, trains on
        every row for the whole step budget, the learning rate annealed to its end.
    memory_efficient : bool, default=False
        With ``integral="quadrature"``, the backward pass of Algorithm 2: recompute f1 a few nodes at a time and integrate the gradient, instead
        of storing the activations of all T nodes: lower peak memory for one more forward pass of f1 (measured in
        ``benchmarks/results/mcnet.md``).
    random_state : int >= 0 or None, default=None
        Seeds the initial weights, the split, the mini-batch order and the fallback draws (all numpy; torch's
        global generator is never used).
    n_threads : int >= 1 or None, default=1
        Torch intra-op threads while fitting and predicting (restored afterwards); ``None`` keeps torch's
        setting. One thread gives identical results on every CPU; raise it on a dedicated many-core machine
        (why 1: ``docs/defaults/mcnet.rst``).
    progress : bool or None, default=None
        Show a progress bar over the optimizer steps: None on a terminal only, True always (tqdm required), False
        never.
    n_processes : int >= 1, default=1
        Train with this many processes at once (``torch.distributed`` data parallelism, gloo, CPU only): each
        mini-batch is split between them and their gradients summed, so the fit is the single-process one up
        to float32 rounding. Worth it for large calibration sets trained with
        large batches; not with ``alpha > 0``. Scripts need the ``if __name__ == "__main__":`` guard (the
        processes are spawned).
    device : {"cpu", "cuda", "cuda:N"}, default="cpu"
        Torch device that :meth:`fit` trains on. Training only: the fitted weights are moved to the CPU, and
        :meth:`predict` runs there unless its own ``device`` asks otherwise. A model file records this setting,
        and a model trained on a GPU loads and predicts on a machine without one, with the values a CPU-trained
        model with the same weights gives. Whether the device exists is checked by :meth:`fit`, not on loading.
    inference : {"exact", "compiled"}, default="compiled"
        ``"compiled"`` evaluates tables built at fit time (no network pass): with ``integral="grid"`` the very map
        training optimised; with the quadrature, a monotone cubic interpolation of it (within 1e-4).
        ``"exact"`` evaluates the network with the per-row T-node quadrature in float64: the quadrature's map, and
        for a grid-trained model an exact check of its map (within 3e-3 in logit units over the calibration
        scores, ``tests/mcnet/test_grid.py``).

    Attributes
    ----------
    bin_edges_ : ndarray of shape (n_bins + 1,)
        Bin edges in logit units, strictly increasing; the outer ones are :math:`\\mp` logit(1 - EPS) and bin k is
        ``(edge_k, edge_{k+1}]``.
    n_bins_ : int
        Bins of the fitted map (``bin_edges_.size - 1``): ``n_bins``, or the count ``"auto"`` chose, less any that
        tied scores merged.
    bin_count_losses_ : dict of str to float
        With ``n_bins="auto"``, each candidate count's weighted held-out log loss in the choice (keys "1", "2",
        "4"); empty otherwise.
    score_range_ : ndarray of shape (2,)
        Smallest and largest calibration score, in logit units.
    field_values_ : list of str (then None) or None
        The field vocabulary (context codes 1..C): the values seen at fit, sorted, then ``None`` for the missing
        level when the field had missing values; ``None`` for MCNet-None.
    auxiliary_mean_, auxiliary_scale_ : ndarray of shape (n_auxiliary,) or None
        Standardisation of the auxiliary features.
    n_steps_ : int
        Optimizer steps run.
    best_step_ : int
        Step whose weights were kept (0 = the warm start).
    n_epochs_, best_epoch_ : int
        The passes over the training part that ``n_steps_`` and ``best_step_`` fall in (0 = the warm start).
    loss_curve_ : ndarray of shape (n_readings,)
        Mean training loss (eq. 13) between two readings of the held-out loss.
    validation_loss_curve_ : ndarray of shape (n_readings + 1,) or (0,)
        Held-out eq. 13 at the warm start and at each reading (empty without a held-out part).
    module_ : torch.nn.ParameterDict
        The trained weights (float32, on the CPU).
    compiled_values_, compiled_slopes_ : ndarray
        Tables of the compiled mode, shapes (C + 1, ``n_bins_``, G) and (C + 1, ``n_bins_``, G - 1, 2).

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), ``alpha > 0`` without a field, or
        ``n_processes > 1`` with ``alpha > 0`` or a device other than the CPU, a ``device`` that torch cannot use
        on this machine, a ``validation_fraction`` that leaves an empty part, held-out rows of zero weight or a
        training part with one class, a ``field``, ``balance_field`` or auxiliary column missing from ``X``, or
        invalid scores, labels, weights or features (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`).
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input is not array-like.
    ImportError
        From :meth:`fit`: torch is not installed (``pip install "mcal[mcnet]"``).

    Notes
    -----
    Dai et al. (2025), section 4.2: the score is cut into K equal-frequency bins; in bin k and field c,

    .. math:: f^k(s, c) = \\int_{a_k}^{s} f_1^k(t, h^k(c))\\,dt + f_2^k(h^k(c)), \\qquad f_1^k > 0,

    (eq. 7), the bins assembled by eq. 8, and the loss is eq. 13, log loss
    :math:`+ \\beta L_{order}` (eq. 10) :math:`+ \\alpha L_{balance}` (eq. 11-12). The paper integrates by
    Clenshaw-Curtis quadrature per row (Algorithms 1-2; ``integral="quadrature"``). Since the map depends on the
    score and the field alone, the default integrates f1 once per step on a fixed score grid per (bin, field),
    as the trapezoid of its piecewise-linear interpolant: 25-100 times fewer network
    passes, and training runs full batch (``benchmarks/results/mcnet_synthetic.md``).

    Choices the paper leaves open (the reasons and measurements behind them: ``docs/defaults/mcnet.rst``):

    * **Units and output.** s is the clipped score logit and :math:`f^k` a calibrated logit; the output
      is :math:`\\sigma(f^k)` clipped to [EPS, 1 - EPS]; Appendix A.3's auxiliary network adds in logit units.
    * **Where the integral starts.** :math:`a_k` is the bin's lower edge; for the first bin, the smallest
      calibration score; eq. 10 compares :math:`f^k(b_k)` with :math:`f_2^{k+1}`.
    * **Bin intervals.** Bin k is :math:`(b_{k-1}, b_k]`, not eq. 8's :math:`[b_{k-1}, b_k)`: a score equal to
      an edge belongs to the bin whose quantile it is, as in mcal's shared binning.
    * **Positivity.** :math:`f_1 = \\mathrm{softplus}(\\cdot) + 10^{-4}` instead of the paper's sigmoid; hidden
      activations are SiLU; f1 reads the score normalised to the bin's data range.
    * **Warm start.** Platt scaling with one intercept per field, fitted on the training part; f1's output
      layer starts at zero with bias :math:`\\mathrm{softplus}^{-1}(a)` and f2's output layer is solved
      (minimum norm) so that :math:`f_2^k(c) = a\\,a_k + b_c`. Held-out step 0 is this start.
    * **Monotone across bins by construction.** The bins are joined in training and prediction alike,
      so the map is non-decreasing in the score for every field and ROC-AUC within a field equals the base score's. ``bin_joins="continuous"``: bin k+1 starts where
      bin k ends (one free level per field). ``bin_joins="raised"``: bin k+1's bias term is raised, where
      needed, to the value bin k ends at (a cumulative maximum), and eq. 10 (weight ``beta``) is kept on the
      network's own bias terms.
    * **Unseen fields.** Each pass 10% of the training rows get the no-context code (h = 0); unseen fields at
      predict time use that function, with one warning. Eq. 10 covers it too.
    * **Bin count.** The paper fixes K; ``n_bins="auto"`` chooses it on calibration rows alone (the held-out quarter
      is drawn from ``random_state``), then trains it on every row exactly as that integer ``n_bins`` would.
    * **Training length.** Counted in optimizer steps; full batch (the default with the grid), a step is an
      epoch. By default every row trains for the whole budget, the learning rate annealed to its end, as the
      paper trains a fixed number of epochs without early stopping. With ``validation_fraction > 0``, early
      stopping reads eq. 13 of the map on the held-out rows (log loss and alpha times the balance term; the
      penalty on the network's own bias terms is left out); it cannot stop before ``min_steps``, and the weights
      of the best reading are kept, the warm start included. Appendix B.4's :math:`L_2` regularization is not
      applied; ``smoothness`` (not in the paper) regularizes the shape of f1 instead.
    * **Precision.** Training runs in float32; exact inference and the compiled tables use float64.
    * **Field balance.** DIFF_c uses the mini-batch, is weighted by ``sample_weight``, and ``1e-12`` under
      the square root keeps the gradient finite.

    References
    ----------
    .. [1] Dai, Zhang, Chen, Dong, Gao, Zhang, Ma, Chen, Li, Chen and Guo, "MCNet: Monotonic Calibration
       Networks for Expressive Uncertainty Calibration in Online Advertising", WWW 2025. arXiv:2503.00334
    .. [2] Wehenkel and Louppe, "Unconstrained Monotonic Neural Networks", NeurIPS 2019. arXiv:1908.05164

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.01, 0.99, 2000)
    >>> y = rng.binomial(1, p ** 2)
    >>> cal = MCNet(n_bins=4, hidden_sizes=(8,), embedding_dim=4, max_epochs=2, random_state=0).fit(p, y)
    >>> out = cal.predict(np.array([0.2, 0.5, 0.8]))
    >>> bool(np.all(np.diff(out) > 0) and np.all((out > 0) & (out < 1)))
    True

    The training device does not matter to prediction, which runs on the CPU (unless ``predict``'s ``device``
    says otherwise), with or without a GPU here:

    >>> trained_on_gpu = cal.set_params(device="cuda:0")  # what the file of a model trained on a GPU records
    >>> bool(np.array_equal(trained_on_gpu.predict(np.array([0.2, 0.5, 0.8])), out))
    True
    """

    uses_features: ClassVar[bool] = True
    field_values_: list[str | None] | None
    auxiliary_mean_: NDArray[np.float64] | None
    auxiliary_scale_: NDArray[np.float64] | None
    _state_attrs: ClassVar[tuple[str, ...]] = (
        "bin_edges_",
        "n_bins_",
        "bin_count_losses_",
        "score_range_",
        "field_values_",
        "auxiliary_mean_",
        "auxiliary_scale_",
        "n_epochs_",
        "best_epoch_",
        "n_steps_",
        "best_step_",
        "loss_curve_",
        "validation_loss_curve_",
    )
    _state_constraints: ClassVar[dict[str, Any]] = STATE_CONSTRAINTS

    def __init__(
        self,
        *,
        n_bins: int | str = "auto",
        n_nodes: int = 25,
        integral: str = "grid",
        bin_joins: str = "continuous",
        hidden_sizes: tuple[int, ...] = (32, 32),
        embedding_dim: int = 8,
        beta: float = 0.0,
        alpha: float = 0.0,
        smoothness: float = DEFAULT_SMOOTHNESS,
        field: str | int | None = None,
        balance_field: str | int | None = None,
        auxiliary_features: tuple[str | int, ...] | None = None,
        auxiliary_hidden_size: int = 64,
        learning_rate: float = 1e-2,
        batch_size: int | None = None,
        max_epochs: int = 1000,
        max_steps: int = 500,
        min_steps: int = 500,
        patience: int = 500,
        validation_fraction: float = 0.0,
        memory_efficient: bool = False,
        random_state: int | None = None,
        n_threads: int | None = 1,
        progress: bool | None = None,
        n_processes: int = 1,
        device: str = "cpu",
        inference: str = "compiled",
    ) -> None:
        self.n_bins = n_bins
        self.n_nodes = n_nodes
        self.integral = integral
        self.bin_joins = bin_joins
        self.hidden_sizes = hidden_sizes
        self.embedding_dim = embedding_dim
        self.beta = beta
        self.alpha = alpha
        self.smoothness = smoothness
        self.field = field
        self.balance_field = balance_field
        self.auxiliary_features = auxiliary_features
        self.auxiliary_hidden_size = auxiliary_hidden_size
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.max_steps = max_steps
        self.min_steps = min_steps
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.memory_efficient = memory_efficient
        self.random_state = random_state
        self.n_threads = n_threads
        self.progress = progress
        self.n_processes = n_processes
        self.device = device
        self.inference = inference

    # -- parameters -------------------------------------------------------------------------------------
    _parameter_constraints: ClassVar[dict[str, Any]] = MCNET_CONSTRAINTS

    def _check_param_relations(self) -> None:
        check_param_relations(self)

    # -- derived structure ------------------------------------------------------------------------------
    def _architecture(self) -> Architecture:
        return self._network_for(self.bin_edges_.size - 1)

    def _network_for(self, n_bins: int) -> Architecture:
        """The network's sizes at ``n_bins`` bins, for the fitted field vocabulary and auxiliary features."""
        return Architecture(
            n_bins=n_bins,
            n_fields=0 if self.field_values_ is None else len(self.field_values_),
            hidden_sizes=tuple(int(h) for h in self.hidden_sizes),
            embedding_dim=int(self.embedding_dim),
            n_auxiliary=0 if self.auxiliary_mean_ is None else self.auxiliary_mean_.size,
            auxiliary_hidden_size=int(self.auxiliary_hidden_size),
        )

    def _geometry(self) -> dict[str, NDArray[np.float64]]:
        return bin_geometry(self.bin_edges_, self.score_range_)

    def _contexts(self, X: Any, n: int, *, fitting: bool) -> NDArray[np.intp]:
        if self.field is None:
            return np.zeros(n, dtype=np.intp)
        col = field_column(X, self.field, n)
        if fitting:
            self.field_values_ = FieldVocabulary.fit(col).to_list()
        assert self.field_values_ is not None  # set at fit whenever a field is
        codes = FieldVocabulary(self.field_values_).transform(col, f"X[{self.field!r}]")
        return np.where(codes == UNSEEN, 0, codes + 1)

    def _auxiliary(self, X: Any, n: int, *, fitting: bool) -> NDArray[np.float64] | None:
        if self.auxiliary_features is None:
            return None
        values = feature_matrix(X, list(self.auxiliary_features), n)
        if fitting:
            self.auxiliary_mean_, self.auxiliary_scale_ = standardisation(values)
        assert self.auxiliary_mean_ is not None and self.auxiliary_scale_ is not None  # set at fit with the features
        return (values - self.auxiliary_mean_) / self.auxiliary_scale_

    # -- fit --------------------------------------------------------------------------------------------
    def _fit(self, y_prob, y, sample_weight, X) -> None:
        torch = import_optional("torch")
        with torch_threads(torch, self.n_threads):
            self._fit_network(torch, y_prob, y, sample_weight, X)

    def _fit_network(self, torch, y_prob, y, sample_weight, X) -> None:
        device = torch_device(torch, "device", self.device)
        rng = np.random.default_rng(self.random_state)
        rows = self._rows(y_prob, y, sample_weight, X)
        trainer = self._trainer()
        if self.n_bins == "auto":
            n_bins, losses = choice_fits(torch, device, trainer, rows, rng.spawn(1)[0], int(self.max_steps))
            self.bin_count_losses_ = {str(k): float(v) for k, v in zip(BIN_COUNT_CANDIDATES, losses, strict=True)}
        else:
            n_bins, self.bin_count_losses_ = int(self.n_bins), {}
        train_rows, validation_rows = split_rows(y, rows.w, self.validation_fraction, rng)
        layout = Layout.of(rows, n_bins)
        self.bin_edges_, self.score_range_, self.n_bins_ = layout.edges, rows.score_range, layout.edges.size - 1
        P, history, _, _ = fit_weights(torch, device, trainer, rows, layout, train_rows=train_rows,
                                       validation_rows=validation_rows, rng=rng, max_steps=int(self.max_steps))  # fmt: skip
        self.module_ = stored_parameters(torch, weight_arrays(P))
        self.n_epochs_, self.best_epoch_ = int(history["n_epochs"]), int(history["best_epoch"])
        self.n_steps_, self.best_step_ = int(history["n_steps"]), int(history["best_step"])
        self.loss_curve_ = np.asarray(history["loss_curve"], dtype=np.float64)
        self.validation_loss_curve_ = np.asarray(history["validation_loss_curve"], dtype=np.float64)
        self._compile(torch)

    def _rows(self, y_prob, y, sample_weight, X) -> Rows:
        """The calibration rows as the fit reads them; sets the field vocabulary and the auxiliary standardisation."""
        n = y_prob.shape[0]
        # the fit does not depend on the weights' scale; weights up to 1 neither overflow nor vanish in float32
        sample_weight = sample_weight / sample_weight.max()
        x = logit(y_prob)
        contexts = self._contexts(X, n, fitting=True)
        if self.field is None:
            self.field_values_ = None
        self.auxiliary_mean_ = self.auxiliary_scale_ = None
        aux = self._auxiliary(X, n, fitting=True)
        groups, n_groups = self._balance_groups(X, n, contexts)
        observed = x[sample_weight > 0]
        n_contexts = 1 if self.field_values_ is None else len(self.field_values_) + 1
        return Rows(x, y, sample_weight, contexts, groups, n_groups, aux, n_contexts,
                    np.array([observed.min(), observed.max()]))  # fmt: skip

    def _trainer(self) -> Trainer:
        """How this estimator trains (:class:`mcal.mcnet._fitting.Trainer`), from its parameters."""
        schedule = dict(learning_rate=float(self.learning_rate), max_epochs=int(self.max_epochs),
                        min_steps=int(self.min_steps), patience=int(self.patience))  # fmt: skip
        scale = SCORE_WEIGHT_SCALE if self.integral == "grid" else 1.0
        return Trainer(self._network_for, self._spec, self._batch_size, schedule, int(self.n_processes),
                       self.n_threads, self.progress, scale)  # fmt: skip

    def _balance_groups(self, X: Any, n: int, contexts: NDArray[np.intp]) -> tuple[NDArray[np.intp] | None, int]:
        if self.alpha == 0:
            return None, 0
        if self.balance_field is None or self.balance_field == self.field:
            assert self.field_values_ is not None  # the balance groups are the field's values
            return contexts - 1, len(self.field_values_)
        return balance_groups(X, self.balance_field, n)

    def _batch_size(self, n_train: int) -> int:
        """Rows per optimizer step: ``batch_size``, or by default every training row (full batch) for the grid
        integral and :data:`QUADRATURE_BATCH` for the quadrature."""
        if self.batch_size is not None:
            return int(self.batch_size)
        return n_train if self.integral == "grid" else QUADRATURE_BATCH

    def _spec(self, arch: Architecture, integral: str | None = None) -> Spec:
        return Spec(
            n_hidden=len(arch.hidden_sizes),
            n_nodes=int(self.n_nodes),
            beta=float(self.beta),
            alpha=float(self.alpha),
            smoothness=float(self.smoothness),
            memory_efficient=self.memory_efficient,
            bin_joins=self.bin_joins,
            integral=self.integral if integral is None else integral,
        )

    def _compile(self, torch: Any) -> None:
        P = float64_weights(torch, self.module_, torch.device("cpu"))
        if self.integral == "grid":
            self.compiled_values_, self.compiled_slopes_ = self._grid_tables(torch, P)
            return
        self.compiled_values_, self.compiled_slopes_ = build_tables(
            torch,
            P,
            n_hidden=len(self._architecture().hidden_sizes),
            edges=self.bin_edges_,
            geometry=self._geometry(),
            n_nodes=int(self.n_nodes),
            bin_joins=self.bin_joins,
        )

    # -- predict ----------------------------------------------------------------------------------------
    def predict(self, y_prob: ArrayLike, *, X: Any = None, device: str = "cpu") -> NDArray[np.floating]:
        """Return calibrated probabilities, on the CPU unless ``device`` says otherwise, wherever the model was
        trained: a model trained on a GPU predicts on a machine without one, as a CPU-trained one would.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples,)
            Uncalibrated probabilities in [0, 1].
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Holds the ``field`` and ``auxiliary_features`` columns when the model reads them.
        device : {"cpu", "cuda", "cuda:N"}, default="cpu"
            Torch device of the exact mode's float64 network pass (a GPU's sums may differ from the CPU's in
            the last bits); ``inference="compiled"`` evaluates numpy tables and takes only ``"cpu"``.

        Returns
        -------
        y_calibrated : ndarray of shape (n_samples,)
            Calibrated P(y=1), float32 if ``y_prob`` is float32, else float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        TypeError
            If ``device`` is not a str, or as :meth:`BaseCalibrator.predict <mcal.BaseCalibrator.predict>`.
        ValueError
            If ``device`` is not 'cpu', 'cuda' or 'cuda:N', names a CUDA device that torch cannot use here, or
            is not 'cpu' with ``inference="compiled"``; on invalid scores, or ``X`` without the model's columns.
        """
        check_device("device", device)
        if device != "cpu" and self.inference == "compiled":
            raise ValueError(
                f"device must be 'cpu' with inference='compiled', whose tables are evaluated with numpy "
                f"on the CPU; got device={device!r}"
            )
        return self._checked_predict(y_prob, X, lambda p, X_: self._predict(p, X_, device=device))

    def _feature_columns(self) -> list[Any] | None:
        """The auxiliary features and the field, by name."""
        return named_columns(self.field, self.auxiliary_features)

    def _predict(self, y_prob, X, device: str = "cpu") -> NDArray[np.float64]:
        n = y_prob.shape[0]
        x = logit(y_prob)
        bins = assign_bins(x, self.bin_edges_[1:-1])
        contexts = self._contexts(X, n, fitting=False)
        aux = self._auxiliary(X, n, fitting=False)
        if self.inference == "compiled" and self.integral == "grid":
            torch = import_optional("torch")
            logits = stored_grid_logits(torch, self.compiled_values_, self.compiled_slopes_, self._geometry(), x, bins,
                                        contexts)  # fmt: skip
            if aux is not None:
                logits = logits + auxiliary_logits(torch, self.module_, aux)
        elif self.inference == "compiled":
            logits = evaluate_tables(self.compiled_values_, self.compiled_slopes_, self.bin_edges_, x, bins, contexts)
            if aux is not None:
                logits = logits + auxiliary_logits(import_optional("torch"), self.module_, aux)
        else:
            logits = self._exact_logits(x, bins, contexts, aux, device)
        return np.clip(expit(logits), EPS, 1.0 - EPS)

    def _exact_logits(self, x, bins, contexts, aux, device: str) -> NDArray[np.float64]:
        torch = import_optional("torch")
        with torch_threads(torch, self.n_threads):
            return self._network_logits(torch, x, bins, contexts, aux, torch_device(torch, "device", device))

    def _grid_tables(self, torch: Any, P: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The grid map's tables of float64 weights ``P``, as a model file stores them."""
        geometry = {k: torch.as_tensor(v, dtype=torch.float64) for k, v in self._geometry().items()}
        with torch.no_grad():
            return stored_tables(grid_tables(torch, P, geometry, n_hidden=len(self.hidden_sizes),
                                             bin_joins=self.bin_joins))  # fmt: skip

    def _network_logits(self, torch, x, bins, contexts, aux, device) -> NDArray[np.float64]:
        """The per-row T-node quadrature of the network (the quadrature's map; a check of the grid's)."""
        spec = self._spec(self._architecture(), integral="quadrature")
        return network_logits(torch, self.module_, spec, self._geometry(), x, bins, contexts, aux, device)

    # -- persistence ------------------------------------------------------------------------------------
    @classmethod
    def _from_dict(cls, data: dict[str, Any], tensors: dict[str, NDArray] | None) -> MCNet:
        return super()._from_dict(upgrade_model_data(data), tensors)

    def _get_tensors(self) -> dict[str, NDArray]:
        return model_tensors(self.module_, self.compiled_values_, self.compiled_slopes_)

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        check_fitted_structure(self, LOGIT_BOUND, BIN_COUNT_CANDIDATES)
        check_weight_tensors(
            tensors,
            self._architecture().layout(),
            n_bins=self.bin_edges_.size - 1,
            n_contexts=len(self.field_values_ or []) + 1,
        )
        self.module_, self.compiled_values_, self.compiled_slopes_ = read_tensors(import_optional("torch"), tensors)
        self._check_tables_match_network()

    def _check_tables_match_network(self) -> None:
        """Check loaded tables against the network, on the CPU (a model fitted on a GPU loads on a machine without
        one): the grid's are rebuilt from the weights (:func:`check_grid_tables`), the quadrature's spot-checked
        (:func:`check_tables`)."""
        torch = import_optional("torch")
        with torch_threads(torch, self.n_threads):
            if self.integral == "grid":
                P = float64_weights(torch, self.module_, torch.device("cpu"))
                check_grid_tables(self.compiled_values_, self.compiled_slopes_, self._grid_tables(torch, P))
                return
            check_tables(
                self.compiled_values_,
                self.bin_edges_,
                lambda x, bins, contexts: self._network_logits(torch, x, bins, contexts, None, torch.device("cpu")),
            )

    def _validate_state(self) -> None:
        check_fitted_structure(self, LOGIT_BOUND, BIN_COUNT_CANDIDATES)
        check_compiled_tables(self.compiled_values_, self.compiled_slopes_)

    # -- pickling: arrays only --------------------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns the instance's own dict
        if "module_" in state:
            state["module_"] = weight_arrays(state["module_"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state.get("module_"), dict):
            state = {**state, "module_": stored_parameters(import_optional("torch"), state["module_"])}
        super().__setstate__(state)
