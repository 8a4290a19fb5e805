"""The package's version, read from its installed metadata."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ocr-client")
except PackageNotFoundError:  # run from a source tree that was not installed
    __version__ = "0.0.0"

USER_AGENT = f"ocr-client/{__version__}"
