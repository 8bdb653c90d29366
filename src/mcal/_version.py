"""The installed version of mcal, in a module of its own so that lower layers (model files) read it without
importing the package's public API."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mcal")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without installation
    __version__ = "0.0.0+unknown"
