"""Progress bars for long work (report building, MCGrad rounds, MCNet epochs), quiet unless asked for.

One entry point, :func:`progress`, a context manager that yields an object with ``update()``. Loops call it
whatever the setting; the setting decides whether anything is drawn:

- ``enabled=None`` (auto): a tqdm bar on standard error when standard error is a terminal and tqdm is installed,
  nothing otherwise (pipes, log files, CI, ``--quiet`` on the command line passes ``False``);
- ``enabled=True``: always a bar (tqdm required: ``pip install 'mcal[progress]'``);
- ``enabled=False``: nothing, and tqdm is never imported.

A loop whose length is not known in advance (early stopping) passes the cap as ``total`` and leaves early; the bar
then ends at the count reached (``5/5 rounds``, not ``5/100``) before it closes.

Examples
--------
>>> with progress(total=3, desc="rounds", enabled=False) as bar:
...     for _ in range(3):
...         bar.update()
>>> bar.n
3
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from mcal._optional import import_optional, is_available


class Progress:
    """The handle a loop updates: counts steps and forwards them to a tqdm bar when one is shown.

    Attributes
    ----------
    n : int
        Steps done so far.
    total : int or None
        Expected number of steps (None when unknown).
    shown : bool
        Whether a bar is drawn.
    """

    def __init__(self, bar: Any, total: int | None) -> None:
        self._bar = bar
        self.n = 0
        self.total = total

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def update(self, n: int = 1, **postfix: float) -> None:
        """Advance by ``n`` steps; keyword values (e.g. ``loss=0.31``) are shown beside the bar."""
        self.n += n
        if self._bar is not None:
            if postfix:
                self._bar.set_postfix(postfix, refresh=False)
            self._bar.update(n)


def _stderr_is_terminal() -> bool:
    stream = sys.stderr
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def check_progress(enabled: object) -> None:
    """Raise ``TypeError`` unless ``enabled`` (an estimator's ``progress`` parameter) is True, False or None."""
    if enabled is not None and not isinstance(enabled, (bool, np.bool_)):  # numpy bools, as check_bool takes them
        raise TypeError(f"progress must be True, False or None (automatic); got {enabled!r}")


def check_progress_param(name: str, enabled: object) -> None:
    """:func:`check_progress` as a parameter constraint (:mod:`mcal._validation`)."""
    check_progress(enabled)


def should_show(enabled: bool | None) -> bool:
    """Whether :func:`progress` with this setting draws a bar here and now.

    Parameters
    ----------
    enabled : bool or None
        True, False, or None for automatic (standard error is a terminal and tqdm is installed).

    Returns
    -------
    shown : bool

    Raises
    ------
    TypeError
        If ``enabled`` is not a bool or None.
    """
    check_progress(enabled)
    if enabled is None:
        return _stderr_is_terminal() and is_available("tqdm")
    return enabled


@contextmanager
def progress(total: int | None, desc: str, *, enabled: bool | None = None, unit: str = "step") -> Iterator[Progress]:
    """A progress bar around a loop, shown on a terminal and silent otherwise.

    Parameters
    ----------
    total : int or None
        Expected number of steps (the cap, for loops that may stop early); None when unknown.
    desc : str
        Short label shown before the bar, e.g. ``"MCGrad rounds"``.
    enabled : bool or None, default=None
        None: a bar only when standard error is a terminal and tqdm is installed. True: always (tqdm required).
        False: never.
    unit : str, default="step"
        Name of one step, e.g. ``"round"`` or ``"epoch"``.

    Yields
    ------
    bar : Progress
        Call ``bar.update()`` once per step (``bar.update(loss=0.3)`` to show a value).

    Raises
    ------
    ValueError
        If ``total`` is negative or not an integer.
    TypeError
        If ``enabled`` is not a bool or None.
    ImportError
        If ``enabled=True`` and tqdm is not installed (``pip install 'mcal[progress]'``).
    """
    if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 0):
        raise ValueError(f"total must be a non-negative integer or None; got {total!r}")
    bar = None
    if should_show(enabled):
        tqdm = import_optional("tqdm.auto").tqdm
        bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, dynamic_ncols=True)
    handle = Progress(bar, total)
    try:
        yield handle
    finally:
        if bar is not None:
            if total is not None and handle.n < total:  # stopped early: the bar ends at the count reached
                bar.total = handle.n
                bar.refresh()
            bar.close()
