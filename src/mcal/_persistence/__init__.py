"""Model files: versioned JSON with a SHA-256 digest of its content, plus safetensors for network weights; the
check of LightGBM model text read from them; and the atomic writes every output file of mcal goes through."""

from mcal._persistence.atomic import atomic_write_bytes, check_output_path
from mcal._persistence.files import load, save
from mcal._persistence.lightgbm_text import booster_from_text

__all__ = ["atomic_write_bytes", "booster_from_text", "check_output_path", "load", "save"]
