"""Calibration and ranking metrics. Metrics never import estimators.

All take ``(y_true, y_prob, *, sample_weight=None, ...)``; :func:`bootstrap` takes the metric first and gives an
interval of any of them. ``ecce``, ``ecce_sigma``, ``ecce_std``, ``ecce_pvalue``, ``mce`` and ``reliability_curve``
also take real outcomes and predictions with ``outcome="regression"``, and ``mse`` and ``mae`` take them only. The
``multiclass_*``, ``top_label_*`` and ``classwise_*`` metrics take labels of k classes with an (n_samples, k)
probability matrix.
"""

from mcal._shared.mce import MCEResult, holm
from mcal.metrics._binned import ReliabilityCurve, ece, reliability_curve
from mcal.metrics._bootstrap import BootstrapResult, bootstrap
from mcal.metrics._cumulative import ecce, ecce_pvalue, ecce_sigma, ecce_std
from mcal.metrics._curves import (
    CumulativeCurve,
    ReliabilityIntervals,
    cumulative_curve,
    reliability_intervals,
    wilson_interval,
)
from mcal.metrics._field import FieldPcoc, f_rce, field_pcoc, pcoc
from mcal.metrics._findings import worst_segments
from mcal.metrics._multicalibration import mce, mce_sigma
from mcal.metrics._multiclass import (
    ClasswiseMCE,
    classwise_ecce,
    classwise_ece,
    classwise_mce,
    multiclass_brier_score,
    multiclass_log_loss,
    multiclass_summary,
    top_label,
    top_label_ecce,
    top_label_ece,
    top_label_mce,
)
from mcal.metrics._per_value import PerValueTable, per_value_table
from mcal.metrics._regression import mae, mse
from mcal.metrics._smooth import max_group_smece, smece
from mcal.metrics._standard import brier_score, log_loss, pr_auc, roc_auc
from mcal.metrics._summary import calibration_summary, regression_summary, segment_intervals, summary_intervals

__all__ = [
    "BootstrapResult",
    "ClasswiseMCE",
    "CumulativeCurve",
    "FieldPcoc",
    "MCEResult",
    "PerValueTable",
    "ReliabilityCurve",
    "ReliabilityIntervals",
    "bootstrap",
    "brier_score",
    "calibration_summary",
    "classwise_ecce",
    "classwise_ece",
    "classwise_mce",
    "cumulative_curve",
    "ecce",
    "ecce_pvalue",
    "ecce_sigma",
    "ecce_std",
    "ece",
    "f_rce",
    "field_pcoc",
    "holm",
    "log_loss",
    "mae",
    "max_group_smece",
    "mce",
    "mce_sigma",
    "mse",
    "multiclass_brier_score",
    "multiclass_log_loss",
    "multiclass_summary",
    "pcoc",
    "per_value_table",
    "pr_auc",
    "regression_summary",
    "reliability_curve",
    "reliability_intervals",
    "roc_auc",
    "segment_intervals",
    "smece",
    "summary_intervals",
    "top_label",
    "top_label_ecce",
    "top_label_ece",
    "top_label_mce",
    "wilson_interval",
    "worst_segments",
]
