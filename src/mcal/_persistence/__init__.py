"""Model files: versioned JSON with a SHA-256 digest of its content, plus safetensors for network weights; and the
atomic writes every output file of mcal goes through.

The atomic writes are imported at once, the rest on first use (they need scikit-learn and pandas)."""

from typing import TYPE_CHECKING

from mcal._optional import lazy_attributes
from mcal._persistence.atomic import atomic_write_bytes, check_output_folder, check_output_path
from mcal._persistence.legacy import refuse_legacy_state

if TYPE_CHECKING:
    from mcal._persistence.files import load, save
    from mcal._persistence.nested import nested_state, nested_tensors, restore_nested

__all__ = [
    "atomic_write_bytes",
    "check_output_folder",
    "check_output_path",
    "load",
    "nested_state",
    "nested_tensors",
    "refuse_legacy_state",
    "restore_nested",
    "save",
]

__getattr__, __dir__ = lazy_attributes(
    __name__,
    {
        "load": "mcal._persistence.files",
        "save": "mcal._persistence.files",
        "nested_state": "mcal._persistence.nested",
        "nested_tensors": "mcal._persistence.nested",
        "restore_nested": "mcal._persistence.nested",
    },
)
