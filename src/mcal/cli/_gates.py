"""``--fail-if``: quality gates of ``mcal evaluate`` and ``mcal monitor`` for CI pipelines.

A condition is ``METRIC OP NUMBER``, e.g. ``"ecce_sigma > 3"``, with OP one of ``< <= > >= == !=``. It is parsed by
a regular expression and compared with the :mod:`operator` functions: never evaluated as code. The command exits 1
and names each condition that held (for each score column, or each window), and 0 when none held; a malformed
condition, a number that is not finite (``inf``, or ``1e999`` that overflows to it: such a condition could never
hold, or always would), or a metric the command does not compute, is a usage error (exit 2) that lists the valid
names. ``mce_pvalue`` is the p-value of the worst segment, not adjusted for the number of segments;
``mce_pvalue_adjusted`` is it Holm-adjusted for them.
"""

from __future__ import annotations

import argparse
import math
import operator
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mcal.cli._options import CLIError

_OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt}
_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_GRAMMAR = re.compile(rf"\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<number>{_NUMBER})\s*")


@dataclass(frozen=True)
class Condition:
    """One parsed ``--fail-if`` condition: ``metric op threshold``."""

    metric: str
    op: str
    threshold: float

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.threshold:g}"

    def holds(self, value: float) -> bool:
        """Whether the condition holds for ``value``; an undefined (NaN) value holds none."""
        return not math.isnan(value) and _OPS[self.op](value, self.threshold)


@dataclass(frozen=True)
class Gates:
    """The metrics a command can gate on: name -> (column of its result table, options it needs)."""

    metrics: Mapping[str, tuple[str, tuple[str, ...]]]

    def names(self) -> str:
        """The metric names, with those of interval bounds folded: ``a, b and the interval bounds
        <metric>_low, <metric>_high of a``."""
        bounds = sorted(
            n[: -len("_low")] for n in self.metrics if n.endswith("_low") and n[: -len("_low")] in self.metrics
        )
        folded = {f"{name}_{end}" for name in bounds for end in ("low", "high")}
        plain = ", ".join(sorted(set(self.metrics) - folded))
        return (
            f"{plain} and the interval bounds <metric>_low, <metric>_high of {', '.join(bounds)}" if bounds else plain
        )

    def parse(self, text: str) -> Condition:
        """The ``argparse`` type of ``--fail-if``: a bad condition is a usage error (exit 2) naming the valid metrics.

        Raises
        ------
        argparse.ArgumentTypeError
            If ``text`` does not match ``METRIC OP NUMBER``, NUMBER is not finite, or METRIC is not one of
            :attr:`metrics`.
        """
        match = _GRAMMAR.fullmatch(text)
        if match is None or not math.isfinite(float(match["number"])):
            raise argparse.ArgumentTypeError(
                f"must be METRIC OP NUMBER with OP one of < <= > >= == != and a finite NUMBER (e.g. 'ecce_sigma > 3'); "
                f"got {text!r}; "
                f"metrics: {self.names()}"
            )
        metric = match["metric"]
        if metric not in self.metrics:
            raise argparse.ArgumentTypeError(f"must name one of the metrics {self.names()}; got {metric!r} in {text!r}")
        return Condition(metric, match["op"], float(match["number"]))

    def add_argument(self, parser: argparse.ArgumentParser, per: str) -> None:
        """Add ``--fail-if CONDITION`` (repeatable) to ``parser``; ``per`` says what each check runs over."""
        parser.add_argument(
            "--fail-if", action="append", type=self.parse, default=[], metavar="COND",
            help=f"exit 1 if the condition holds for any {per}, e.g. 'ecce_sigma > 3' (repeatable; each condition "
            f"that held is named on stderr); metrics: {self.names()}; mce_pvalue is the worst segment's p-value, "
            "not adjusted for the number of segments (mce_pvalue_adjusted: Holm-adjusted for them)",
        )  # fmt: skip

    def check_options(self, conditions: Iterable[Condition], args: argparse.Namespace, what: str = "") -> None:
        """Refuse, before any work, a condition on a metric this command does not compute (``what`` says for which
        input, e.g. "with --outcome regression"), or that an option not given would add.

        Raises
        ------
        CLIError
            Naming the metric and the metrics computed, or the option it needs.
        """
        for condition in conditions:
            if condition.metric not in self.metrics:
                raise CLIError(f"--fail-if {str(condition)!r}: the metric {condition.metric} is not computed {what}; "
                               f"metrics: {self.names()}")  # fmt: skip
            for needs in self.metrics[condition.metric][1]:
                if getattr(args, needs.lstrip("-").replace("-", "_")) is None:
                    raise CLIError(f"--fail-if {str(condition)!r}: the metric {condition.metric} needs {needs}")

    def report(self, conditions: Iterable[Condition], rows: Iterable[tuple[str, Mapping[str, float]]]) -> int:
        """Check every condition on every row (a score column, a window), print each one that held on stderr.

        Returns 1 if any held, else 0.
        """
        conditions = list(conditions)
        held = 0
        for label, row in rows:
            for condition in conditions:
                value = float(row[self.metrics[condition.metric][0]])
                if condition.holds(value):
                    held += 1
                    print(f"mcal: fail-if: {condition} held for {label} ({condition.metric} = {value:.6g})",
                          file=sys.stderr)  # fmt: skip
        if held:
            print(f"mcal: fail-if: {held} condition(s) held; exit status 1", file=sys.stderr)
        return 1 if held else 0


#: ``mcal evaluate``: the columns of its metrics table; ``ecce_sigma`` is ECCE in sigma units (``ecce_sigma_scale``).
#: With ``--ci``, the bounds ``<metric>_low`` and ``<metric>_high`` of the metrics that have a bootstrap interval.
_EVALUATE_METRICS = {
    name: (name, ()) for name in ("log_loss", "brier_score", "roc_auc", "pr_auc", "ece", "ecce", "ecce_sigma_scale",
                                  "ecce_pvalue", "pcoc")
} | {"ecce_sigma": ("ecce_sigma_scale", ()), "f_rce": ("f_rce", ("--field",))} | {
    name: (name, ("--segments",)) for name in ("mce_sigma", "mce_absolute", "mce_pvalue", "mce_pvalue_adjusted")
}  # fmt: skip
_WITH_INTERVALS = ("log_loss", "brier_score", "roc_auc", "pr_auc", "ece", "ecce", "ecce_sigma_scale", "ecce_sigma",
                   "pcoc", "f_rce", "mce_sigma")  # fmt: skip
EVALUATE = Gates(
    _EVALUATE_METRICS
    | {f"{name}_{end}": (f"{_EVALUATE_METRICS[name][0]}_{end}", (*_EVALUATE_METRICS[name][1], "--ci"))
       for name in _WITH_INTERVALS for end in ("low", "high")}
)  # fmt: skip

#: ``mcal evaluate --outcome regression``: the columns of :func:`mcal.metrics.regression_summary` (no intervals).
EVALUATE_REGRESSION = Gates(
    {name: (name, ()) for name in ("mse", "mae", "mean_prediction", "mean_outcome", "ecce", "ecce_sigma_scale",
                                   "ecce_pvalue")}
    | {"ecce_sigma": ("ecce_sigma_scale", ())}
    | {name: (name, ("--segments",)) for name in ("mce_sigma", "mce_absolute", "mce_pvalue", "mce_pvalue_adjusted")}
)  # fmt: skip

#: What ``--fail-if`` of ``mcal evaluate`` parses: the metrics of either outcome (``--outcome`` picks the set
#: checked before any work).
EVALUATE_ANY = Gates(dict(EVALUATE.metrics) | dict(EVALUATE_REGRESSION.metrics))

#: ``mcal monitor``: the columns of the per-window table of :func:`mcal.monitor.monitor` (``alarm`` is 1 from the
#: window where the drift alarm fired on, else 0).
MONITOR = Gates(
    {name: (name, ()) for name in ("n_samples", "weight", "positive_rate", "mean_score", "log_loss", "log_loss_low",
                                   "log_loss_high", "ecce", "ecce_sigma_scale", "ecce_sigma_scale_low",
                                   "ecce_sigma_scale_high", "ecce_pvalue", "pcoc", "pcoc_low", "pcoc_high", "evalue",
                                   "log10_evalue", "alarm")}
    | {f"ecce_sigma{end}": (f"ecce_sigma_scale{end}", ()) for end in ("", "_low", "_high")}
    | {name: (name, ("--segments",)) for name in ("mce_sigma", "mce_sigma_low", "mce_sigma_high", "mce_pvalue",
                                                  "mce_pvalue_adjusted")}
)  # fmt: skip
