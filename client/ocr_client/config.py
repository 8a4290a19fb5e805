"""Where the command line finds the server and the token: its flags, then ``OCR_URL`` / ``OCR_TOKEN``, then a file.

The file is TOML, ``$OCR_CONFIG`` or ``$XDG_CONFIG_HOME/ocr-client/config.toml``
(``~/.config/ocr-client/config.toml``)::

    url = "https://ocr.example.org"
    token = "0123abcd..."
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path


class ConfigError(Exception):
    """The settings are missing or unreadable; the message says what to set."""


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None  # None only where the command takes none (``mcp --http``: each request brings its own)


def config_path() -> Path:
    if os.environ.get("OCR_CONFIG"):
        return Path(os.environ["OCR_CONFIG"])
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "ocr-client" / "config.toml"


def load(url: str | None = None, token: str | None = None, path: Path | None = None, *,
         token_needed: bool = True) -> Settings:
    """The settings from the arguments, the environment and the config file, in that order."""
    path = path or config_path()
    values: dict = {}
    if path.exists():
        try:
            values = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as error:
            raise ConfigError(f"cannot read the config file {path}: {error}") from None
    url = url or os.environ.get("OCR_URL") or values.get("url")
    token = token or os.environ.get("OCR_TOKEN") or values.get("token")
    missing = [name for name, value, needed in (("OCR_URL", url, True), ("OCR_TOKEN", token, token_needed))
               if needed and not value]
    if missing:
        raise ConfigError(f"set {' and '.join(missing)} (the server's address such as http://127.0.0.1:8000, and "
                          f"your API token from its /settings/ page), pass --url/--token, or write them to {path}")
    return Settings(url=str(url), token=str(token) if token else None)
