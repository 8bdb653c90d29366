"""The demo: every available calibrator on Bank Marketing, fitted and compared on held-out data.

Splits the shipped Bank Marketing data in three (seeded): a base logistic regression is trained on the
first (as the MCGrad paper's base predictor), every registered calibrator is fitted on the second, and all
are evaluated on the third, including the multicalibration error over segments of the features the MCGrad
paper protects (age bins, marital status, education, job).
"""

from __future__ import annotations

import inspect
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from mcal._optional import import_optional
from mcal._persistence import atomic_write_bytes, check_output_folder
from mcal._registry import METHODS, get_method
from mcal.datasets import BANK_CATEGORICAL, BANK_NUMERICAL, bank_marketing_groups, load_bank_marketing
from mcal.metrics import calibration_summary
from mcal.report import format_pvalue_columns
from mcal.segments import generate_segments

#: The demo's field (context) column for field-aware methods.
DEMO_FIELD = "job"
#: Features whose segments (up to 3 conditions, numerical ones in tertiles) the demo's MCE columns cover.
DEMO_SEGMENT_FEATURES = ["age", "marital", "education", "job"]
BASE = "uncalibrated"


@dataclass
class DemoResult:
    """What :func:`run_demo` produced.

    Attributes
    ----------
    table : DataFrame
        One row per score column (the base model and each calibrator), metrics on the test split.
    output_dir : Path
        Folder holding ``metrics.json``, ``reliability.png`` and ``report.html``.
    skipped : dict of str to str
        Methods (or the report) that could not run here, with the reason.
    report : Path or None
        The HTML report (``report.html``) of every score column; None when matplotlib is missing.
    """

    table: pd.DataFrame
    output_dir: Path
    skipped: dict[str, str] = field(default_factory=dict)
    report: Path | None = None


def split_bank(random_state: int = 0, quick: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Bank Marketing split 40/30/30 into base-model training, calibration and test rows (seeded).

    With ``quick``, a stratified 12,000-row subsample is split instead (for tests).
    """
    df = load_bank_marketing().drop(columns=["day"])
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(df))
    if quick:
        order = order[:12000]
    n_train, n_cal = int(0.4 * len(order)), int(0.3 * len(order))
    parts = np.split(order, [n_train, n_train + n_cal])
    return tuple(df.iloc[idx].reset_index(drop=True) for idx in parts)


def fit_base_model(train: pd.DataFrame, random_state: int = 0):
    """The base predictor: one-hot categoricals, standardised numericals, L2 logistic regression (C=2)."""
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore", drop="first"), BANK_CATEGORICAL),
            ("num", StandardScaler(), BANK_NUMERICAL),
        ]
    )
    model = make_pipeline(pre, LogisticRegression(C=2.0, max_iter=5000, random_state=random_state))
    return model.fit(train[BANK_CATEGORICAL + BANK_NUMERICAL], train["y"])


def _make(name: str, random_state: int) -> Any:
    cls = get_method(name)
    params = inspect.signature(cls.__init__).parameters
    kwargs: dict[str, Any] = {}
    if "field" in params:
        kwargs["field"] = DEMO_FIELD
    if "random_state" in params:
        kwargs["random_state"] = random_state
    return cls(**kwargs)


def _features(model: Any, df: pd.DataFrame) -> pd.DataFrame | None:
    if not model.uses_features:
        return None
    if getattr(model, "uses_groups", False):  # HKRR, DFMC: the MCGrad paper's prespecified groups
        return bank_marketing_groups(df)
    if "field" in model.get_params() and not hasattr(model, "features"):
        return df[[DEMO_FIELD]]
    return df[BANK_CATEGORICAL + BANK_NUMERICAL]


def default_methods() -> list[str]:
    """The registered methods the demo fits by default: those that calibrate a classifier's probability.

    Methods for real-valued outcomes (class attribute ``outcome = "regression"``) are left out, since the demo's
    scores are probabilities of a binary label.
    """
    return [name for name in METHODS if getattr(get_method(name), "outcome", None) != "regression"]


def run_demo(
    output_dir: str | Path = "mcal-demo",
    *,
    methods: list[str] | None = None,
    quick: bool = False,
    random_state: int = 0,
    stream: TextIO | None = None,
) -> DemoResult:
    """Run the demo and write its results.

    Parameters
    ----------
    output_dir : str or Path, default="mcal-demo"
        Folder for ``metrics.json``, ``reliability.png`` and ``report.html`` (created if needed).
    methods : list of str, default=None
        Registered method names to run (all when None).
    quick : bool, default=False
        Use a 12,000-row subsample (for tests).
    random_state : int, default=0
        Seed of the split, the base model and every calibrator.
    stream : text stream, default=None
        Where progress and the table are printed (``sys.stdout`` when None).

    Returns
    -------
    result : DemoResult

    Raises
    ------
    ValueError
        If a name in ``methods`` is not a registered method.
    NotADirectoryError
        If ``output_dir``, or the nearest of its parents that exists, is a file (checked before any work).
    """
    out = stream if stream is not None else sys.stdout
    names = default_methods() if methods is None else list(methods)
    for name in names:
        get_method(name)  # raises on unknown names before any work
    output_dir = check_output_folder(output_dir, "output_dir")
    train, cal, test = split_bank(random_state, quick)
    base = fit_base_model(train, random_state)
    cols = BANK_CATEGORICAL + BANK_NUMERICAL
    p_cal, p_test = base.predict_proba(cal[cols])[:, 1], base.predict_proba(test[cols])[:, 1]
    print(f"Bank Marketing: {len(train)} rows train the base model, {len(cal)} calibrate, {len(test)} test", file=out)
    scores: dict[str, np.ndarray] = {BASE: p_test}
    fit_seconds: dict[str, float] = {BASE: 0.0}
    skipped: dict[str, str] = {}
    for name in names:
        try:
            model = _make(name, random_state)
            start = time.perf_counter()
            model.fit(p_cal, cal["y"].to_numpy(), X=_features(model, cal))
            fit_seconds[name] = time.perf_counter() - start
            scores[name] = model.predict(p_test, X=_features(model, test))
        except ImportError as exc:
            skipped[name] = str(exc)
            continue
        print(f"  fitted {name:<22s} in {fit_seconds[name]:6.2f} s", file=out)
    segments = generate_segments(test[DEMO_SEGMENT_FEATURES])
    table = calibration_summary(test["y"].to_numpy(), scores, field=test[DEMO_FIELD].to_numpy(), segments=segments)
    table.insert(0, "fit_seconds", pd.Series(fit_seconds))
    output_dir.mkdir(parents=True, exist_ok=True)
    _write_outputs(output_dir, table, test["y"].to_numpy(), scores, skipped, random_state)
    report = _write_report(output_dir, test, scores, segments, random_state, skipped)
    print(
        f"\nHeld-out metrics ({len(test)} rows; field for F-RCE: {DEMO_FIELD}; MCE over {segments.n_segments} "
        f"segments of {', '.join(DEMO_SEGMENT_FEATURES)}):",
        file=out,
    )
    shown = format_pvalue_columns(table)  # "< 1e-15", never "0"
    print(shown.to_string(float_format=lambda v: f"{v:.4f}", line_width=_TABLE_WIDTH), file=out)
    print(f"\n{advice(table)}", file=out)
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}", file=out)
    print(f"\nwrote {output_dir / 'metrics.json'} and {output_dir / 'reliability.png'}", file=out)
    if report is not None:
        print(f"report: {report}", file=out)
    return DemoResult(table, output_dir, skipped, report)


#: Characters per line of the printed table: wider tables wrap into blocks of columns.
_TABLE_WIDTH = 110


def advice(table: pd.DataFrame) -> str:
    """One line of advice from the demo's own numbers: the method of lowest log loss against the base model, and
    what it does to the multicalibration error (MCE) when the table has it."""
    methods = table.drop(index=BASE)
    if methods.empty:
        return f"advice: no calibration method ran; the base model's log loss is {table.at[BASE, 'log_loss']:.4f}."
    best = str(methods["log_loss"].idxmin())
    before, after = table.at[BASE, "log_loss"], table.at[best, "log_loss"]
    if after >= before:
        return (f"advice: no method beat the base model's log loss ({before:.4f}; the best, {best}, has {after:.4f}): "
                "its scores are calibrated enough on this data.")  # fmt: skip
    mce_text = ""
    if "mce_sigma" in table.columns:
        mce_before, mce_after = table.at[BASE, "mce_sigma"], table.at[best, "mce_sigma"]
        change = f"{mce_before:.1f} to {mce_after:.1f} sigma"
        mce_text = (f" and the worst segment's error from {change}" if mce_after < mce_before
                    else f", but not the worst segment's error ({change})")  # fmt: skip
    return (f"advice: {best} lowers log loss from {before:.4f} to {after:.4f}{mce_text}; fit it on your own data "
            f"with `mcal fit DATA --method {best} ...`.")  # fmt: skip


def _write_report(
    output_dir: Path, test: pd.DataFrame, scores: dict, segments: Any, seed: int, skipped: dict
) -> Path | None:
    """The HTML report of every score column on the test split; None (and a reason in ``skipped``) without matplotlib."""
    from mcal.report import make_report

    try:
        return make_report(
            test["y"].to_numpy(),
            scores,
            path=output_dir / "report.html",
            segments=segments,
            field=test[DEMO_FIELD],
            title="mcal demo: Bank Marketing before and after calibration",
            description=f"UCI Bank Marketing (bank-full), held-out test split (random_state={seed})",
        )
    except ImportError as exc:
        skipped["report"] = str(exc)
        return None


def _write_outputs(
    output_dir: Path, table: pd.DataFrame, y: np.ndarray, scores: dict, skipped: dict, seed: int
) -> None:
    from mcal import __version__

    doc = {
        "mcal_version": __version__,
        "dataset": "UCI Bank Marketing (bank-full), CC BY 4.0",
        "random_state": seed,
        "field": DEMO_FIELD,
        "segment_features": DEMO_SEGMENT_FEATURES,
        "metrics": json.loads(table.to_json(orient="index")),
        "skipped": skipped,
    }
    atomic_write_bytes(output_dir / "metrics.json", json.dumps(doc, indent=2).encode())
    try:
        plt = import_optional("matplotlib.pyplot")
    except ImportError:
        return
    from mcal.plotting import plot_calibration

    n = len(scores) - 1
    ncols = min(4, max(n, 1))
    nrows = max(1, -(-n // ncols))
    # constrained layout keeps each panel's title clear of the x-label of the panel above
    fig = plt.figure(figsize=(3.6 * ncols, 4.4 * nrows), layout="constrained")
    try:
        grid = fig.add_gridspec(nrows, ncols)
        methods = [(k, v) for k, v in scores.items() if k != BASE]
        for i, (name, p) in enumerate(methods):
            row, col = divmod(i, ncols)
            pair = grid[row, col].subgridspec(2, 1, height_ratios=[3, 1], hspace=0.05)
            top, bottom = fig.add_subplot(pair[0]), fig.add_subplot(pair[1])
            plot_calibration(y, {BASE: scores[BASE], name: p}, axes=(top, bottom))  # 95% Wilson intervals
            top.set_title(name, fontsize=9)
            top.set_ylabel("observed frequency" if col == 0 else "", fontsize=8)
            bottom.set_ylabel("rows per bin" if col == 0 else "", fontsize=8)
            bottom.set_xlabel("mean predicted probability", fontsize=8)
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    finally:
        plt.close(fig)
    atomic_write_bytes(output_dir / "reliability.png", buf.getvalue())
