"""The ``mcal`` command line: fit, predict, evaluate, report, monitor and demo. Thin: it calls only the public API.

Run ``mcal --help`` or ``mcal COMMAND --help``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from mcal.cli import _demo, _evaluate, _fit, _monitor, _report
from mcal.cli._common import CLIError

_COMMANDS = (_fit.FIT, _fit.PREDICT, _evaluate.EVALUATE, _report.REPORT, _monitor.MONITOR, _demo.DEMO)

_DESCRIPTION = """\
Calibrate a classifier's probabilities and check them.

Typical use, on a CSV or Parquet file with a score column and a label column:
  mcal evaluate scores.csv --score-col p --label-col y          how calibrated is p?
  mcal fit scores.csv --score-col p --label-col y --method isotonic -o model.json
  mcal predict model.json new.csv -o new_calibrated.csv         adds the column p_calibrated
  mcal evaluate new_calibrated.csv --score-col p --score-col p_calibrated --label-col y
  mcal report new_calibrated.csv --score-col p --score-col p_calibrated --label-col y -o report.html
  mcal monitor scores.parquet --score-col p --label-col y --time-col t --window 1D -o monitor.html
  mcal demo                                                     everything, on data shipped with mcal

Exit status: 0 on success, 1 when a --fail-if condition held, 2 on bad input (any "mcal: error").
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mcal`` command, with one sub-command per action."""
    from mcal import __version__

    parser = argparse.ArgumentParser(
        prog="mcal", description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"mcal {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in _COMMANDS:
        command.add_to(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments without the program name; ``sys.argv[1:]`` when None.

    Returns
    -------
    status : int
        0 on success, 1 when a ``--fail-if`` condition held (each is named on stderr), 2 on bad input: a usage
        error (``argparse``'s, a malformed ``--fail-if`` condition) or any other error reported on stderr as
        ``mcal: error: ...`` (a missing or unreadable file, a bad column or value, a missing optional dependency),
        so that a pipeline tells a failed gate from a command that could not run.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning  # restored on exit: warnings read as messages, not source lines
        try:
            return args.run(args)
        except (CLIError, ValueError, TypeError, KeyError, OSError, ImportError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            print(f"mcal: error: {message}", file=sys.stderr)
            return 2


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"mcal: warning: {message}", file=sys.stderr if file is None else file)
