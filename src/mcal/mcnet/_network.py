"""The MCNet networks in PyTorch: per-bin f1 (positive integrand), f2 (bias), field embedding h, auxiliary MLP.

Every bin has its own parameters (Dai et al. 2025, eq. 7: :math:`\\Theta_1^k, \\Theta_2^k, \\Phi^k`); they are
stacked along a leading bin axis and held in one ``torch.nn.ParameterDict``, so that all bins are evaluated
in one batched pass (``torch.bmm`` over blocks of rows that share a bin). torch is passed in by the caller,
which imports it through :func:`mcal._optional.import_optional`; this module never imports it itself.

Shapes: K bins, C fields (context code 0 is the no-context embedding, a zero vector, and codes 1..C the
fields), d the embedding size, H_0..H_{L-1} the hidden sizes, T quadrature nodes, F auxiliary features.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal.mcnet._quadrature import clenshaw_curtis

#: Floor added to the integrand, so f1 stays strictly positive even where softplus underflows.
MIN_SLOPE = 1e-4
#: Number of quadrature nodes whose gradients are integrated at once by the memory-efficient backward.
NODE_CHUNK = 5
#: With the grid integral, f1's score weights start this many times wider than PyTorch's default draw: the score
#: input spans a bin's whole data range, most rows sit in a small part of it, and with the default draw f1 barely
#: bends there (a one-bin fit stayed farther from a smooth power map than with three bins;
#: ``docs/defaults/mcnet.rst``). The quadrature keeps the default draw: its few nodes per row need a
#: smooth integrand.
SCORE_WEIGHT_SCALE = 8.0


@dataclass(frozen=True)
class Architecture:
    """Sizes of an MCNet network; everything needed to rebuild its parameters from a weights file."""

    n_bins: int
    n_fields: int
    hidden_sizes: tuple[int, ...]
    embedding_dim: int
    n_auxiliary: int
    auxiliary_hidden_size: int

    def layout(self) -> dict[str, tuple[tuple[int, ...], int]]:
        """Name -> (shape, fan-in) of every parameter; the names are the keys of the weights file."""
        K, d, H = self.n_bins, self.embedding_dim, self.hidden_sizes
        context = d if self.n_fields else 0
        out: dict[str, tuple[tuple[int, ...], int]] = {}
        if self.n_fields:
            out["embedding"] = ((K, self.n_fields, d), 1)
        out["f1_in_score"] = ((K, H[0]), 1 + context)
        for net, fan_in in (("f1", 1 + context), ("f2", max(context, 1))):
            if self.n_fields:
                out[f"{net}_in_context"] = ((K, d, H[0]), fan_in)
            out[f"{net}_in_bias"] = ((K, H[0]), fan_in)
            for layer in range(1, len(H)):
                out[f"{net}_w{layer}"] = ((K, H[layer - 1], H[layer]), H[layer - 1])
                out[f"{net}_b{layer}"] = ((K, H[layer]), H[layer - 1])
            out[f"{net}_out_w"] = ((K, H[-1]), H[-1])
            out[f"{net}_out_b"] = ((K,), H[-1])
        if self.n_auxiliary:
            out["aux_w0"] = ((self.n_auxiliary, self.auxiliary_hidden_size), self.n_auxiliary)
            out["aux_b0"] = ((self.auxiliary_hidden_size,), self.n_auxiliary)
            out["aux_w1"] = ((self.auxiliary_hidden_size,), self.auxiliary_hidden_size)
            out["aux_b1"] = ((1,), self.auxiliary_hidden_size)
        return out


def initial_weights(
    arch: Architecture, rng: np.random.Generator, *, slope: float, score_scale: float = 1.0
) -> dict[str, NDArray[np.float32]]:
    """Initial parameters: PyTorch's default uniform(+-1/sqrt(fan_in)) draws (f1's score weights ``score_scale``
    times wider: :data:`SCORE_WEIGHT_SCALE` with the grid integral), with zero output layers.

    The output layers start at zero weight, so f1 = ``slope`` everywhere
    (``f1_out_b = softplus^{-1}(slope - MIN_SLOPE)``), f2 = 0 until :func:`warm_start_bias` sets it, and aux = 0.
    The embeddings start as standard normal draws, as in ``torch.nn.Embedding``.
    """
    weights: dict[str, NDArray[np.float32]] = {}
    for name, (shape, fan_in) in arch.layout().items():
        if name == "embedding":
            w = rng.standard_normal(shape)
        elif name.endswith("_out_w") or name in ("f2_out_b", "aux_w1", "aux_b1"):
            w = np.zeros(shape)
        elif name == "f1_out_b":
            target = max(slope - MIN_SLOPE, MIN_SLOPE)
            w = np.full(shape, target + np.log(-np.expm1(-target)))  # softplus^{-1}, finite for any slope
        else:
            w = rng.uniform(-1.0, 1.0, size=shape) / np.sqrt(fan_in)
            w = w * score_scale if name == "f1_in_score" else w
        weights[name] = w.astype(np.float32)
    return weights


def to_parameters(torch: Any, weights: dict[str, NDArray], *, device: Any, dtype: Any) -> Any:
    """A ``torch.nn.ParameterDict`` holding ``weights`` on ``device`` with ``dtype``."""
    return torch.nn.ParameterDict(
        {k: torch.nn.Parameter(torch.as_tensor(np.asarray(v), dtype=dtype, device=device)) for k, v in weights.items()}
    )


# -- the per-bin networks -----------------------------------------------------------------------------------
def f2_features(torch: Any, P: Any, n_hidden: int) -> tuple[Any, Any]:
    """First-layer context term of f1 and the last hidden layer of f2, for every (bin, context).

    Returns
    -------
    offset : tensor of shape (K, C + 1, H_0)
        :math:`W^k_{1,h} h^k(c) + b^k_1`, the part of f1's first layer that does not depend on the score.
    features : tensor of shape (K, C + 1, H_{L-1})
        f2's last hidden activations; context 0 has :math:`h = 0`.
    """
    act = torch.nn.functional.silu
    if "embedding" in P:
        emb = P["embedding"]
        h = torch.cat([torch.zeros_like(emb[:, :1]), emb], dim=1)
        offset = torch.baddbmm(P["f1_in_bias"][:, None, :], h, P["f1_in_context"])
        z = torch.baddbmm(P["f2_in_bias"][:, None, :], h, P["f2_in_context"])
    else:
        offset = P["f1_in_bias"][:, None, :]
        z = P["f2_in_bias"][:, None, :]
    z = act(z)
    for layer in range(1, n_hidden):
        z = act(torch.baddbmm(P[f"f2_b{layer}"][:, None, :], z, P[f"f2_w{layer}"]))
    return offset, z


def context_tables(torch: Any, P: Any, n_hidden: int) -> tuple[Any, Any]:
    """f1's context term (as :func:`f2_features`) and eq. 7's bias term f2 for every (bin, context).

    Returns
    -------
    offset : tensor of shape (K, C + 1, H_0)
    bias : tensor of shape (K, C + 1)
        :math:`f_2^k(h^k(c))`, in logit units.
    """
    offset, z = f2_features(torch, P, n_hidden)
    return offset, (z * P["f2_out_w"][:, None, :]).sum(-1) + P["f2_out_b"][:, None]


def ordered_tables(
    torch: Any,
    P: Any,
    geometry: dict[str, Any],
    *,
    n_hidden: int,
    n_nodes: int,
    memory_efficient: bool = False,
    bin_joins: str = "continuous",
) -> tuple[Any, Any, Any, Any]:
    r""":func:`context_tables` with eq. 7's bias terms joined so that the map never drops at a bin edge.

    With :math:`I^k(c)` the integral of f1 over bin k from its anchor to its upper edge and the prefix sums
    :math:`S_k = \sum_{j<k} I^j`:

    - ``"continuous"``: bin k+1 starts where bin k ends, :math:`\tilde f_2^{k}(c) = f_2^1(c) + S_k(c)`; only the
      first bin's bias term is free, so the map is continuous in the score;
    - ``"raised"``: bin k+1 starts where bin k ends or higher, :math:`\tilde f_2^{k+1}(c) = \max(f_2^{k+1}(c),
      \tilde f_2^k(c) + I^k(c))`, that is :math:`S_k + \mathrm{cummax}_k(f_2^k - S_k)`, differentiable almost
      everywhere. Where the bins are already in order (eq. 10's penalty is zero) nothing changes.

    Parameters
    ----------
    geometry : dict of str to tensor
        ``edges`` (K + 1,), ``anchor``, ``center``, ``half_width`` (K,), in logit units.
    bin_joins : {"continuous", "raised"}
        How the bins' bias terms are joined (MCNet's ``bin_joins``).

    Returns
    -------
    offset : tensor of shape (K, C + 1, H_0)
    bias : tensor of shape (K, C + 1)
        The joined bias terms: the map's value at each bin's anchor, in logit units.
    raw_bias : tensor of shape (K, C + 1)
        :math:`f_2^k(h^k(c))` as the network gives it (eq. 10's penalty reads it).
    gaps : tensor of shape (K - 1, C + 1)
        :math:`I^k(c)`: the rise of bin k's map from its anchor to its upper edge.
    """
    offset, raw = context_tables(torch, P, n_hidden)
    K, n_ctx = raw.shape
    if K < 2:
        return offset, raw, raw, raw.new_zeros(0, n_ctx)
    bins = np.repeat(np.arange(K - 1), n_ctx)
    b = torch.as_tensor(bins, device=raw.device)
    c = torch.as_tensor(np.tile(np.arange(n_ctx), K - 1), device=raw.device)
    gaps = integrate_rows(
        torch,
        P,
        geometry,
        geometry["edges"][1:-1][b],
        bins,
        offset[b, c],
        n_hidden=n_hidden,
        n_nodes=n_nodes,
        memory_efficient=memory_efficient,
    ).reshape(K - 1, n_ctx)
    rise = torch.cat([raw.new_zeros(1, n_ctx), torch.cumsum(gaps, dim=0)])
    if bin_joins == "continuous":
        return offset, rise + raw[:1], raw, gaps
    return offset, rise + torch.cummax(raw - rise, dim=0).values, raw, gaps


def warm_start_bias(torch: Any, P: Any, n_hidden: int, targets: NDArray[np.float64]) -> None:
    """Set f2's output layer, in place, so that :math:`f_2^k(h^k(c))` equals ``targets[k, c]`` at the current weights.

    Context 0 (h = 0) is matched by the output bias; the field differences by the minimum-norm output
    weights (exact while C <= H_{L-1}, least squares beyond).
    """
    with torch.no_grad():
        _, z = f2_features(torch, P, n_hidden)
        z = z.detach().cpu().double().numpy()
        w = np.linalg.pinv(z[:, 1:] - z[:, :1]) @ (targets[:, 1:] - targets[:, :1])[..., None]
        w = w[..., 0]
        P["f2_out_w"].copy_(torch.as_tensor(w))
        P["f2_out_b"].copy_(torch.as_tensor(targets[:, 0] - (z[:, 0] * w).sum(-1)))


def integrand(torch: Any, P: Any, n_hidden: int, u: Any, offset: Any, block_bins: Any) -> Any:
    """f1 at the quadrature nodes of blocks of rows; strictly positive (softplus plus :data:`MIN_SLOPE`).

    Parameters
    ----------
    u : tensor of shape (n_blocks, R, T')
        Normalised node positions (score logit minus the bin centre, over the bin half-width).
    offset : tensor of shape (n_blocks, R, H_0)
        Context term of each row (:func:`context_tables`).
    block_bins : long tensor of shape (n_blocks,)
        The bin of each block.

    Returns
    -------
    f1 : tensor of shape (n_blocks, R, T')
        The derivative of the calibrated logit with respect to the score logit.
    """
    act = torch.nn.functional.silu
    nb, R, T = u.shape
    z = torch.addcmul(offset[:, :, None, :], u[..., None], P["f1_in_score"][block_bins][:, None, None, :])
    z = act(z).reshape(nb, R * T, -1)
    for layer in range(1, n_hidden):
        z = act(torch.baddbmm(P[f"f1_b{layer}"][block_bins][:, None, :], z, P[f"f1_w{layer}"][block_bins]))
    out = torch.bmm(z, P["f1_out_w"][block_bins][:, :, None]).squeeze(-1) + P["f1_out_b"][block_bins][:, None]
    return (torch.nn.functional.softplus(out) + MIN_SLOPE).reshape(nb, R, T)


def auxiliary(torch: Any, P: Any, features: Any) -> Any:
    """The auxiliary two-layer MLP of Appendix A.3 on standardised features, in logit units, shape (n,)."""
    z = torch.nn.functional.silu(features @ P["aux_w0"] + P["aux_b0"])
    return z @ P["aux_w1"] + P["aux_b1"]


# -- blocks of rows that share a bin -------------------------------------------------------------------------
def _block_size(counts: NDArray[np.intp]) -> int:
    """The block size (a multiple of 8, at most 256) that needs the fewest padded slots for these bin counts."""
    candidates = np.arange(8, 257, 8)
    slots = (-(-counts[None, :] // candidates[:, None]) * candidates[:, None]).sum(axis=1)
    return int(candidates[::-1][np.argmin(slots[::-1])])  # ties go to the larger block: fewer, bigger matmuls


def block_layout(bins: NDArray[np.intp], n_bins: int) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """Group rows by bin into blocks of R rows, so that one ``bmm`` evaluates every bin's network.

    Returns
    -------
    index : ndarray of shape (n_blocks, R)
        Row of each slot; ``n`` (one past the last row) marks a padding slot.
    block_bins : ndarray of shape (n_blocks,)
        The bin of each block.
    position : ndarray of shape (n,)
        Flat slot of each row, to gather block results back into row order.
    """
    n = bins.shape[0]
    counts = np.bincount(bins, minlength=n_bins)
    R = _block_size(counts)
    per_bin = -(-counts // R)
    block_bins = np.repeat(np.arange(n_bins), per_bin)
    order = np.argsort(bins, kind="stable")
    rank = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    slot = (np.repeat(np.cumsum(per_bin) - per_bin, counts) + rank // R) * R + rank % R
    index = np.full(block_bins.size * R, n, dtype=np.intp)
    index[slot] = order
    position = np.empty(n, dtype=np.intp)
    position[order] = slot
    return index.reshape(-1, R), block_bins, position


@functools.lru_cache(maxsize=8)
def _cc_rule(n_nodes: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    return clenshaw_curtis(n_nodes)


def integrate_rows(
    torch: Any,
    P: Any,
    geometry: dict[str, Any],
    upper: Any,
    bins: NDArray[np.intp],
    offset: Any,
    *,
    n_hidden: int,
    n_nodes: int,
    memory_efficient: bool,
) -> Any:
    """Eq. 7's integration term of each row: the integral of f1 from its bin's anchor to ``upper``.

    Parameters
    ----------
    geometry : dict of str to tensor
        ``anchor``, ``center``, ``half_width``, each of shape (K,), in logit units.
    upper : tensor of shape (n,)
        Score logits, the upper integration bounds (below the anchor the integral is negative).
    bins : ndarray of shape (n,)
        Bin of each row.
    offset : tensor of shape (n, H_0)
        Context term of each row (:func:`context_tables`).
    n_hidden, n_nodes : int
        Number of hidden layers; number T of Clenshaw-Curtis nodes.
    memory_efficient : bool
        Algorithm 2 of Dai et al. (2025): recompute f1 a few nodes at a time in the backward pass and
        integrate the gradient, instead of letting autograd store the activations of all T nodes.

    Returns
    -------
    integral : tensor of shape (n,)
        Algorithm 1: :math:`\\frac{x - a}{2}\\sum_j w_j f_1\\big(a + \\frac{x - a}{2}(\\delta_j + 1)\\big)`.
    """
    n = bins.shape[0]
    dev, dtype = upper.device, upper.dtype
    index, block_bins, position = block_layout(bins, geometry["anchor"].shape[0])
    index_t = torch.as_tensor(index, device=dev)
    bb = torch.as_tensor(block_bins, device=dev)
    nodes_np, weights_np = _cc_rule(n_nodes)
    nodes = torch.as_tensor(nodes_np, dtype=dtype, device=dev)
    anchor = geometry["anchor"][bb][:, None]
    x = torch.cat([upper, upper.new_zeros(1)])[index_t]
    x = torch.where(index_t < n, x, anchor)  # padding slots integrate over an empty interval
    half = (x - anchor) / 2.0
    points = anchor[..., None] + half[..., None] * (nodes + 1.0)
    u = (points - geometry["center"][bb][:, None, None]) / geometry["half_width"][bb][:, None, None]
    weighted = half[..., None] * torch.as_tensor(weights_np, dtype=dtype, device=dev)
    off = torch.cat([offset, offset.new_zeros(1, offset.shape[1])])[index_t]
    if memory_efficient and torch.is_grad_enabled():
        names = ("f1_in_score", *(f"f1_{p}{k}" for k in range(1, n_hidden) for p in "wb"), "f1_out_w", "f1_out_b")
        blocks = _integral_function(torch).apply(u, weighted, bb, (n_hidden, names), off, *(P[k] for k in names))
    else:
        blocks = (integrand(torch, P, n_hidden, u, off, bb) * weighted).sum(-1)
    return blocks.reshape(-1)[torch.as_tensor(position, device=dev)]


@functools.cache
def _integral_function(torch: Any) -> Any:
    class NodeChunkedIntegral(torch.autograd.Function):
        """Forward: the weighted sum of f1 over the nodes, a few nodes at a time and without a graph (Algorithm 1).
        Backward: Algorithm 2, the gradient integrated over the same node chunks."""

        @staticmethod
        def forward(ctx, u, weighted, block_bins, spec, offset, *params):
            n_hidden, names = spec
            with torch.no_grad():
                P = dict(zip(names, params, strict=False))
                out = sum(
                    (
                        integrand(torch, P, n_hidden, u[..., j : j + NODE_CHUNK], offset, block_bins)
                        * weighted[..., j : j + NODE_CHUNK]
                    ).sum(-1)
                    for j in range(0, u.shape[-1], NODE_CHUNK)
                )
            ctx.save_for_backward(u, weighted, block_bins, offset, *params)
            ctx.spec = spec
            return out

        @staticmethod
        def backward(ctx, grad_out):
            u, weighted, block_bins, offset, *params = ctx.saved_tensors
            n_hidden, names = ctx.spec
            needs = ctx.needs_input_grad[4:]
            leaves = [t.detach().requires_grad_(bool(need)) for t, need in zip([offset, *params], needs, strict=False)]
            wanted = [t for t in leaves if t.requires_grad]
            grads = [torch.zeros_like(t) for t in wanted]
            P = dict(zip(names, leaves[1:], strict=False))
            for start in range(0, u.shape[-1], NODE_CHUNK):
                part = slice(start, start + NODE_CHUNK)
                with torch.enable_grad():
                    f1 = integrand(torch, P, n_hidden, u[..., part], leaves[0], block_bins)
                    total = (f1 * weighted[..., part] * grad_out[..., None]).sum()
                for g, d in zip(grads, torch.autograd.grad(total, wanted, allow_unused=True), strict=False):
                    if d is not None:
                        g += d
            it = iter(grads)
            return (None, None, None, None, *[next(it) if t.requires_grad else None for t in leaves])

    return NodeChunkedIntegral
