"""The report section of a method comparison (:func:`mcal.select_calibrator`, ``mcal report --compare-methods``)."""

from __future__ import annotations

from html import escape
from typing import Any

from mcal.report._html import _num, _pvalue_cell

#: Columns shown, with their headings.
_COLUMNS = {"log_loss": "held-out log loss", "delta": "Δ to the best", "delta_se": "paired SE",
            "mce_sigma": "MCE / σ", "mce_pvalue": "MCE p (Holm)", "fit_seconds": "seconds"}  # fmt: skip


def comparison_section(selection: Any) -> str:
    """The comparison table of a :class:`~mcal.selection.CalibratorSelection`, the chosen row marked, and why."""
    head = "".join(f"<th>{escape(label)}</th>" for label in _COLUMNS.values())
    rows = []
    for name, row in selection.table.iterrows():
        cells = "".join(_pvalue_cell(row[c]) if c == "mce_pvalue" else _num(row[c]) for c in _COLUMNS)
        css = ' class="best"' if row["chosen"] else ""
        rows.append(f'<tr data-method="{escape(str(name))}"{css}><th scope="row">{escape(str(name))}</th>{cells}'
                    f"<td>{escape(str(row['note']))}</td></tr>")  # fmt: skip
    n_folds = int(selection.folds.max()) + 1
    return (
        '<section id="methods"><h2>Method comparison</h2>'
        f'<div class="scroll"><table class="metrics"><thead><tr><th>method</th>{head}<th>note</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="note">Chosen: <strong>{escape(selection.chosen)}</strong>. {escape(selection.reason)}. '
        f"Every method was fitted on {n_folds} shared folds and scored on the rows it did not see "
        "(<code>mcal.select_calibrator</code>); the simplest method within "
        f"{selection.se_tolerance:g} paired standard error of the best's log loss and "
        f"{selection.se_tolerance:g} sigma of its MCE is chosen, so that a gain within the noise "
        f"never picks a more complex one. MCE over {selection.n_segments} segment(s).</p></section>"
    )
