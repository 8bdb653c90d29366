"""The ``mcal`` command line: fit, predict, evaluate, report, monitor and demo. Thin: it calls only the public API.

Run ``mcal --help`` or ``mcal COMMAND --help``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from mcal.cli import _demo, _evaluate, _fit, _monitor, _predict, _report
from mcal.cli._options import CLIError

_COMMANDS = (_fit.FIT, _predict.PREDICT, _evaluate.EVALUATE, _report.REPORT, _monitor.MONITOR, _demo.DEMO)

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
  mcal fit scores.csv --score-cols p_a,p_b,p_c --label-col y --method temperature -o model.json
                                                                k classes: one probability column per class

Exit status: 0 on success, 1 when a --fail-if condition held, 2 on bad input (any "mcal: error"), 141 (as a
shell reports a command ended by SIGPIPE) when stdout was closed before the output was written, as by '| head'.
"""

#: Exit status when stdout is closed before the output is written: 128 + SIGPIPE (13), as a shell reports it.
EXIT_BROKEN_PIPE = 141


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
        so that a pipeline tells a failed gate from a command that could not run; ``EXIT_BROKEN_PIPE`` (141, as a
        shell reports a command ended by SIGPIPE) when stdout was closed before the output was written (``mcal
        evaluate ... | head -1``): nothing more is printed, and the ``--fail-if`` conditions, checked after the
        output, are not (not 0, which would pass a gate unchecked).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning  # restored on exit: warnings read as messages, not source lines
        try:
            status = args.run(args)
            sys.stdout.flush()  # a closed pipe raises here rather than at exit, where it could not be handled
            return status
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_BROKEN_PIPE
        except (CLIError, ValueError, TypeError, KeyError, OSError, ImportError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            print(f"mcal: error: {message}", file=sys.stderr)
            return 2


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the flush at exit does not fail on the closed pipe again (as the
    Python documentation of SIGPIPE recommends)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a file descriptor: nothing is flushed to it
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"mcal: warning: {message}", file=sys.stderr if file is None else file)
