"""``mcal demo``: every calibrator on Bank Marketing, shipped with mcal."""

from __future__ import annotations

from mcal._persistence import check_output_folder
from mcal._registry import METHODS
from mcal.cli._options import NON_NEGATIVE_INT, CLIError, Command, split_names


def _configure(parser) -> None:
    parser.add_argument("-o", "--output", "--output-dir", dest="output_dir", default="mcal-demo", metavar="DIR",
                        help="folder for the outputs (default: mcal-demo)")  # fmt: skip
    parser.add_argument("--methods", metavar="A,B", help="run only these methods (default: all)")
    parser.add_argument("--quick", action="store_true", help="a 12,000-row subsample, for a fast check")
    parser.add_argument("--random-state", type=NON_NEGATIVE_INT, default=0, metavar="N", help="seed (default 0)")


def _run(args) -> int:
    from mcal.demo import run_demo

    methods = split_names(args.methods, "--methods") or None
    unknown = [name for name in methods or () if name not in METHODS]
    if unknown:
        raise CLIError(f"--methods must name methods among {', '.join(sorted(METHODS))}; got {', '.join(unknown)}")
    try:
        check_output_folder(args.output_dir, "-o/--output")
    except OSError as exc:  # a file where the folder should go: refused before the model is trained
        raise CLIError(str(exc)) from exc
    run_demo(args.output_dir, methods=methods, quick=args.quick, random_state=args.random_state)
    return 0


DEMO = Command(
    "demo",
    "calibrate a model on Bank Marketing (shipped with mcal) with every method",
    "Train a logistic regression on one split of UCI Bank Marketing, fit every available calibrator on a second\n"
    "split, evaluate all of them on a third, print the table and write metrics.json, reliability.png and the\n"
    "HTML report report.html (whose path it prints).",
    _configure,
    _run,
)
