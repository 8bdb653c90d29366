"""Building blocks of the metrics that other mcal packages reuse (plotting, the report, :mod:`mcal.dask`).

They are not metrics themselves: argument checks, the distribution of the Brownian range, the encoding of a field
column, the walk of partial sums per segment, and the segments a metric reads. Public names here, so that no module
outside :mod:`mcal.metrics` imports one of its private modules.
"""

from mcal.metrics._binned import check_bins
from mcal.metrics._cumulative import ECCE_SIGMA_CHANGED, brownian_range_sf, sigma_scale
from mcal.metrics._curves import check_open_unit
from mcal.metrics._field import encode_field
from mcal.metrics._multicalibration import _resolve_segments as resolve_segments
from mcal.metrics._multicalibration import check_categorical_use, mce_result, walk_extremes
from mcal.metrics._regression import join_successive_differences, successive_difference_parts

__all__ = [
    "ECCE_SIGMA_CHANGED",
    "brownian_range_sf",
    "check_bins",
    "check_categorical_use",
    "check_open_unit",
    "encode_field",
    "join_successive_differences",
    "mce_result",
    "resolve_segments",
    "sigma_scale",
    "successive_difference_parts",
    "walk_extremes",
]
