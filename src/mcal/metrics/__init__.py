"""Calibration and ranking metrics. Metrics never import estimators.

All take ``(y_true, y_prob, *, sample_weight=None, ...)``.
"""

from mcal.metrics._binned import ReliabilityCurve, ece, reliability_curve
from mcal.metrics._cumulative import ecce, ecce_pvalue, ecce_sigma
from mcal.metrics._field import FieldPcoc, f_rce, field_pcoc, pcoc
from mcal.metrics._multicalibration import MCEResult, mce
from mcal.metrics._smooth import max_group_smece, smece
from mcal.metrics._summary import calibration_summary
from mcal.metrics._standard import brier_score, log_loss, pr_auc, roc_auc

__all__ = [
    "FieldPcoc",
    "MCEResult",
    "ReliabilityCurve",
    "brier_score",
    "calibration_summary",
    "ece",
    "ecce",
    "ecce_pvalue",
    "ecce_sigma",
    "f_rce",
    "field_pcoc",
    "log_loss",
    "max_group_smece",
    "mce",
    "pcoc",
    "pr_auc",
    "reliability_curve",
    "roc_auc",
    "smece",
]
