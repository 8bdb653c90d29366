"""Torch plumbing that the network families (MCNet, the field networks) and the command line share: the check of a
``device`` setting and the ``torch.device`` it names here, the intra-op thread setting, and the field-balance penalty of the MCNet paper
(eq. 11-12). Torch is never imported here: each function takes the torch module.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

#: The devices the networks run on: the CPU and CUDA GPUs (exact inference needs float64, which not every backend has).
_DEVICE = re.compile(r"cpu|cuda(:[0-9]+)?")
_DEVICE_RULE = "'cpu', 'cuda' or 'cuda:N' (a torch device's name, as a str)"


@contextlib.contextmanager
def torch_threads(torch: Any, n_threads: int | None) -> Iterator[None]:
    """Run with ``n_threads`` torch intra-op threads (None: leave torch's setting), restoring it afterwards."""
    before = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(int(n_threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def check_device(name: str, device: Any) -> None:
    """Raise ``TypeError`` unless ``device`` is a str, ``ValueError`` unless it reads 'cpu', 'cuda' or 'cuda:N'.

    Whether the device exists here is checked only where it is used (:func:`torch_device`), so that a model file
    records its training device and loads on any machine.
    """
    if not isinstance(device, str):
        raise TypeError(f"{name} must be {_DEVICE_RULE}; got {device!r} of type {type(device).__name__}")
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"{name} must be {_DEVICE_RULE}; got {device!r}")


def torch_device(torch: Any, name: str, device: Any) -> Any:
    """The ``torch.device`` for ``device``, checked as ``MCNet.fit`` checks it (:func:`check_device`) and available on this machine.

    Parameters
    ----------
    torch : module
        The torch module.
    name : str
        What the message calls the setting: ``"device"``, or ``"--device"`` on the command line.
    device : str
        'cpu', 'cuda' or 'cuda:N'.

    Returns
    -------
    device : torch.device
        The device, available on this machine.

    Raises
    ------
    TypeError
        If ``device`` is not a str.
    ValueError
        If it is another string, or names a CUDA device that torch cannot use here (no CUDA, or no device N).
    """
    check_device(name, device)
    if device == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ValueError(
            f"{name} must name a device available on this machine; got {device!r}, but "
            "torch.cuda.is_available() is False (no CUDA GPU or driver, or a CPU-only torch build)"
        )
    resolved, count = torch.device(device), torch.cuda.device_count()
    if resolved.index is not None and resolved.index >= count:
        raise ValueError(
            f"{name} must name a device available on this machine; got {device!r}, but torch sees "
            f"{count} CUDA device(s), cuda:0 to cuda:{count - 1}"
        )
    return resolved


def balance_penalty(torch: Any, p: Any, y: Any, w: Any, groups: Any, n_groups: int) -> Any:
    """Eq. 11-12: the population standard deviation over fields of DIFF_c = sum_{i in c} w_i (p_i - y_i) / sum_i w_i.

    ``1e-12`` under the square root keeps the gradient finite when every DIFF_c is equal.

    Parameters
    ----------
    torch : module
        The torch module.
    p, y, w : Tensor of shape (n_samples,)
        Calibrated probabilities, labels and weights of a batch.
    groups : Tensor of int64 of shape (n_samples,)
        Field code of each row, in [0, n_groups).
    n_groups : int
        Number of fields.

    Returns
    -------
    penalty : Tensor of shape ()
        The standard deviation, differentiable in ``p``.
    """
    diff = torch.zeros(n_groups, dtype=p.dtype, device=p.device).index_add_(0, groups, w * (p - y)) / w.sum()
    return torch.sqrt(((diff - diff.mean()) ** 2).mean() + 1e-12)
