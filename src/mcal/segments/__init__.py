"""Segments: groups of rows over which multicalibration is measured and enforced."""

from mcal.segments._generate import generate_segments
from mcal.segments._segments import Segments, concat, from_labels, from_masks

__all__ = ["Segments", "concat", "from_labels", "from_masks", "generate_segments"]
