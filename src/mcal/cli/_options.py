"""The options that several commands share, and what checks their values: the lowest module of the command line.

It imports no other module of :mod:`mcal.cli` and, at import time, nothing outside the standard library, so that
``mcal --help`` stays fast. A number option with a floor or bounds is parsed by an ``argparse`` ``type=`` of this
module (:func:`integer`, :func:`real`), so that ``argparse`` reports a bad value before any work, as a usage
error naming the option (exit status 2). A rule the library declares and the command line does not restate is
re-worded from the library's error by :func:`named_as_options`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence

#: Help of ``--na-values``, shared by every command that reads DATA.
NA_HELP = (
    "comma-separated cell texts that mean a missing value in every column, e.g. 'NA,null'; empty cells are always "
    "missing, and --na-values '' makes them the only missing cells. Default: empty cells, and pandas' markers "
    "(NA, NaN, nan, null, NULL, None, N/A, #N/A, ...) only in a column whose other cells are all numbers or all "
    "TRUE/FALSE (or that holds only markers), or in the label column beside two other labels, so that "
    "a text value such as the country code NA stays a value"
)
#: Help of ``--score-cols``, with the rule that maps labels to columns (:func:`mcal.cli._multiclass.class_codes`).
SCORE_COLS_HELP = (
    "k > 1 classes: one probability column per class, comma-separated, rows summing to 1, e.g. --score-cols "
    "p_ant,p_bee,p_cat, or a prefix that is not a column (p_: every column whose name starts with it, in file "
    "order). Labels are integers 0..k-1 (the position of the class's column in the list), or class "
    "names, each the end of exactly one column's name (cat for p_cat; a column no label names is a class absent "
    "from the data), or k class names none of which ends a column's name, matched to the columns in sorted order "
    "(numbers by value, text alphabetically); anything else is an error that names the labels and the columns"
)
#: Help of --segments, shared by the commands that take it.
SEGMENTS_SYNTAX = (
    "; NAME:N sets the values of one column (see --segment-values), e.g. country:30,education,age. A per-value "
    "table lists every value of each column with at least 10 rows"
)
#: Bootstrap resamples of --ci unless --n-resamples is given.
N_RESAMPLES = 200


class CLIError(Exception):
    """Bad input, reported by the command line as ``mcal: error: <message>`` with exit status 2, as ``argparse``
    reports usage errors (exit status 1 means that a ``--fail-if`` condition held)."""


class Command:
    """One sub-command: its name, help text, argument set-up and action."""

    def __init__(self, name: str, help: str, description: str, configure, run) -> None:
        self.name, self.help, self.description = name, help, description
        self.configure, self.run = configure, run

    def add_to(self, sub) -> None:
        """Register this command on an ``argparse`` sub-parsers object."""
        parser = sub.add_parser(
            self.name,
            help=self.help,
            description=self.description,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        self.configure(parser)
        parser.set_defaults(run=self.run)


# ----------------------------------------------------------------------------------------------- values


def integer(minimum: int) -> Callable[[str], int]:
    """The ``argparse`` ``type=`` of an integer option of at least ``minimum``: argparse reports any other value
    as ``argument --n-bins: must be an integer >= 1; got 0`` (exit status 2)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; got {value}")
        return value

    return parse


def real(rule: str, accept: Callable[[float], bool]) -> Callable[[str], float]:
    """The ``argparse`` ``type=`` of a number option: finite, and within the bounds that ``accept`` checks
    (``rule`` says them); argparse reports any other value as ``argument --ci: must be <rule>; got 1.5``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {rule}; got {text!r}") from None
        if not (math.isfinite(value) and accept(value)):
            raise argparse.ArgumentTypeError(f"must be {rule}; got {value}")
        return value

    return parse


#: Counts of at least one (bins, workers), and integers of at least 0 (a depth, a seed).
POSITIVE_INT = integer(1)
NON_NEGATIVE_INT = integer(0)
#: A level or a probability: a number strictly between 0 and 1.
OPEN_UNIT = real("a number in (0, 1)", lambda v: 0 < v < 1)


@contextlib.contextmanager
def named_as_options(options: Mapping[str, str]) -> Iterator[None]:
    """Re-word the library's error about a parameter that an option set, to name the option: ``n_resamples must be
    0 (...) or an integer >= 2; got 1`` becomes ``--n-resamples must be ...`` (``options``: parameter -> option,
    e.g. ``{"n_jobs": "--n-jobs"}``), also after the context a wrapper puts first (``the HistogramBinning
    calibrator of class column 0 could not be fitted: n_bins must ...``). The rule stays the library's, declared
    once. A command line passes None only by leaving an option out, so "None" is dropped from the rule. Other
    errors pass unchanged.

    Raises
    ------
    CLIError
        For a ``ValueError`` or ``TypeError`` whose message says ``"<parameter> must "``, at its start or after
        ``": "``.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        message = str(exc)
        for start in [0, *(m.end() for m in re.finditer(": ", message))]:
            name, sep, rule = message[start:].partition(" must ")
            if sep and name in options:
                for none in ("be None, ", "be None or "):
                    rule = rule.replace(none, "be ", 1) if rule.startswith(none) else rule
                rule = rule.replace(" or None;", ";", 1)
                raise CLIError(f"{message[:start]}{options[name]} must {rule}") from exc
        raise


def repeated(names: Sequence[str]) -> list[str]:
    """The names that occur more than once, sorted (for the messages of options that take each name once)."""
    return sorted({n for n in names if names.count(n) > 1})


def split_names(value: str | None, option: str) -> list[str]:
    """Split the comma-separated names given to ``option``; an empty or repeated name is an error."""
    if value is None:
        return []
    names = [v.strip() for v in value.split(",")]
    if any(not n for n in names):
        raise CLIError(f"{option} must not hold an empty name; got {value!r}")
    twice = repeated(names)
    if twice:
        raise CLIError(f"{option} must name each entry once; got {twice} more than once in {value!r}")
    return names


def check_unique_scores(names: list[str]) -> None:
    """Reject a score column named twice by ``--score-col`` (it would be reported once, silently)."""
    duplicated = repeated(names)
    if duplicated:
        raise CLIError(f"--score-col must name each column once; got {duplicated} more than once")


def check_ci(args) -> None:
    """Reject ``--n-resamples`` without ``--ci`` (their values are checked by their ``type=``)."""
    if args.ci is None and args.n_resamples is not None:
        raise CLIError("--n-resamples needs --ci (the bootstrap intervals it sets)")


def check_regression_options(args) -> None:
    """Refuse the options that apply to binary labels only, with ``--outcome regression``."""
    if args.outcome != "regression":
        return
    for option, value in (("--field", getattr(args, "field", None)), ("--pos-label", args.pos_label),
                          ("--ci", getattr(args, "ci", None))):  # fmt: skip
        if value is not None:
            raise CLIError(f"{option} applies to binary labels; got {option} {value!r} with --outcome regression")


# ----------------------------------------------------------------------------------------------- arguments


def add_data_arguments(
    parser, *, score_required: bool, multiple_scores: bool = False, soft_labels: bool = False, classes: bool = False
) -> None:
    """Add DATA, --score-col (or with ``classes`` --score-cols, one column per class), --label-col, --weight-col,
    --pos-label, --sep, --na-values and --decimal."""
    parser.add_argument(
        "data", metavar="DATA", help="CSV (.csv, .csv.gz, .tsv, .txt) or Parquet (.parquet, .pq, folder) file"
    )
    # --score-col or --score-cols, one of them required; alone, --score-col is required as before
    scores = parser.add_mutually_exclusive_group(required=score_required) if classes else parser
    required = {} if classes else {"required": score_required}
    if multiple_scores:
        scores.add_argument(
            "--score-col",
            action="append",
            metavar="COL",
            **required,
            help="column of probabilities in [0, 1] (of real predictions with --outcome regression); repeat the "
            "option to compare several columns",
        )
        if classes:
            scores.add_argument("--score-cols", action="append", metavar="A,B,C",
                                help=f"{SCORE_COLS_HELP}; repeat the option to compare several sets of columns, "
                                     "matched to the classes in the order of the first")  # fmt: skip
    else:
        scores.add_argument(
            "--score-col",
            metavar="COL",
            **required,
            help="column of probabilities in [0, 1] (of real predictions for regression)",
        )
        if classes:
            scores.add_argument("--score-cols", metavar="A,B,C", help=SCORE_COLS_HELP)
    label_help = ("column of binary labels (0/1, bool, or see --pos-label), of real outcomes for regression, or "
                  "of k classes with --score-cols")  # fmt: skip
    if soft_labels:
        label_help += "; soft labels in [0, 1] for methods that accept them (e.g. mcgrad)"
    parser.add_argument("--label-col", required=True, metavar="COL", help=label_help)
    parser.add_argument("--weight-col", metavar="COL", help="column of non-negative sample weights (optional)")
    parser.add_argument(
        "--pos-label", metavar="VALUE", help="label value of the positive class, e.g. yes (needed for text labels)"
    )
    add_csv_arguments(parser)


def add_csv_arguments(parser) -> None:
    """Add --sep, --na-values and --decimal, the options of reading a CSV DATA file."""
    parser.add_argument(
        "--sep", metavar="SEP", help="CSV field separator (default: detected from the header line among , ; tab |)"
    )
    parser.add_argument("--na-values", metavar="A,B", help=NA_HELP)
    parser.add_argument(
        "--decimal", metavar="CHAR", help="decimal mark of the numbers in a CSV file (default '.'), e.g. ',' for "
        "0,5 in a file separated by ';'",
    )  # fmt: skip


def add_segments_arguments(parser, help: str) -> None:
    """``--segments`` (``help`` says what it adds), ``--segment-values``, ``--max-depth`` and ``--categorical``, of
    ``mcal evaluate``, ``mcal report`` and ``mcal monitor``."""
    parser.add_argument("--segments", metavar="A,B", help=help)
    parser.add_argument(
        "--segment-values", type=integer(2), metavar="N", help="values per --segments column (default 3, at least "
        "2): a categorical column keeps its N-1 most frequent values as segments and groups the others as 'not in "
        "{...}'; a numerical one is cut into N quantile bins; NAME:N in --segments sets one column",
    )  # fmt: skip
    parser.add_argument("--max-depth", type=NON_NEGATIVE_INT, metavar="N",
                        help="conditions per segment with --segments (default 3)")  # fmt: skip
    parser.add_argument(
        "--categorical", metavar="A,B", help="columns of --segments that are categorical whatever their type, e.g. "
        "integer codes (one segment per frequent value instead of quantile bins); text, bool and category columns "
        "are categorical anyway",
    )  # fmt: skip


def add_evaluation_arguments(parser, *, n_bins_help: str, segments_help: str) -> None:
    """The options of ``mcal evaluate`` and ``mcal report`` alike: ``--n-bins``, ``--strategy``, those of
    :func:`add_segments_arguments`, ``--all-segments``, ``--outcome``, ``--ci`` and ``--n-resamples``."""
    parser.add_argument("--n-bins", type=POSITIVE_INT, default=10, metavar="N", help=n_bins_help)
    _add_strategy_argument(parser)
    add_segments_arguments(parser, segments_help)
    _add_all_segments_argument(parser)
    _add_outcome_argument(parser)
    _add_ci_arguments(parser)


def _add_strategy_argument(parser) -> None:
    """``--strategy``: equal-width or quantile bins of the diagrams."""
    parser.add_argument(
        "--strategy", choices=("uniform", "quantile"), default="uniform", help="bins of the reliability diagrams "
        "(--plot, the report): uniform (default, equal width) or quantile (equal rows, so no bin is nearly empty)",
    )  # fmt: skip


def _add_all_segments_argument(parser) -> None:
    """``--all-segments``: list near-duplicate segments too."""
    parser.add_argument(
        "--all-segments", action="store_true", help="list near-duplicate segments among the worst too (by default a "
        "segment that errs in the same direction as a worse listed one and shares 80%% of the larger one's rows "
        "with it is grouped under it; see mcal.metrics.worst_segments)",
    )  # fmt: skip


def _add_outcome_argument(parser) -> None:
    """``--outcome``: binary labels or real outcomes."""
    parser.add_argument(
        "--outcome", choices=("classification", "regression"), default="classification",
        help="classification (default): binary labels and probabilities; regression: a continuous label column and "
        "real-valued predictions, evaluated by MSE, MAE, mean prediction and outcome, ECCE with its successive-"
        "differences sigma, and the regression MCE with --segments",
    )  # fmt: skip


def _add_ci_arguments(parser) -> None:
    """``--ci`` and ``--n-resamples``: bootstrap intervals."""
    parser.add_argument(
        "--ci", type=OPEN_UNIT, nargs="?", const=0.95, metavar="LEVEL", help="bootstrap confidence intervals "
        "(level 0.95 unless given) of each metric, the MCE and the worst segments' ECCE in sigmas; rows are "
        "resampled with their weights, with a fixed seed (mcal.metrics.bootstrap), all resamples of a metric at "
        "once; percentile intervals of the log loss, Brier score, AUCs and PCOC, basic (bias-corrected) ones of "
        "ECE, ECCE, MCE and F-RCE, which may lie below the value, down to 0",
    )  # fmt: skip
    parser.add_argument("--n-resamples", type=integer(2), metavar="N",
                        help=f"bootstrap resamples of --ci (default {N_RESAMPLES})")  # fmt: skip
