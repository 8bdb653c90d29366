"""Model files: versioned JSON with a SHA-256 digest of its content, plus safetensors for network weights."""

from mcal._persistence.files import load, save

__all__ = ["load", "save"]
