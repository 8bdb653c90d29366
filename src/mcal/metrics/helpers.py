"""Deprecated: the building blocks that other mcal packages reuse moved into the private :mod:`mcal._shared` (and
the argument checks into :mod:`mcal._constraints`, the field encoding into :mod:`mcal._features`). Each name here
still resolves, with a ``DeprecationWarning`` naming its new home, until mcal 0.3."""

from mcal._shared.moved import moved_names

__getattr__ = moved_names(
    "mcal.metrics.helpers",
    {
        "ECCE_SIGMA_CHANGED": "mcal._shared.brownian.ECCE_SIGMA_CHANGED",
        "brownian_range_sf": "mcal._shared.brownian.brownian_range_sf",
        "check_bins": "mcal._constraints.check_bins",
        "check_categorical_use": "mcal._shared.segments.check_categorical_use",
        "check_open_unit": "mcal._constraints.check_open_unit",
        "encode_field": "mcal._features.fields.encode_field",
        "join_successive_differences": "mcal._shared.walks.join_successive_differences",
        "mce_result": "mcal._shared.mce.mce_result",
        "resolve_segments": "mcal._shared.segments.resolve_segments",
        "sigma_scale": "mcal._shared.brownian.sigma_scale",
        "successive_difference_parts": "mcal._shared.walks.successive_difference_parts",
        "walk_extremes": "mcal._shared.walks.walk_extremes",
    },
)
