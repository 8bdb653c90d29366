"""Model files: versioned JSON with a SHA-256 digest of its content, plus safetensors for network weights; and the
atomic writes every output file of mcal goes through."""

from mcal._persistence.files import atomic_write_bytes, check_output_path, load, save

__all__ = ["atomic_write_bytes", "check_output_path", "load", "save"]
