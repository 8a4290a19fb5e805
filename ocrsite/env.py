"""Typed readers for environment variables: the only place settings touch ``os.environ``.

Each helper fails loudly on a value it cannot parse, so a typo in a deploy
surfaces at boot, not as a silently ignored default.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None else value


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value.replace("_", ""))
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}.") from None


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}.") from None


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, got {value!r}.")


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated list; blanks dropped."""
    value = os.environ.get(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def secret_key_file(path: Path) -> str:
    """The key stored in ``path``, created (random, owner-only) on first use.

    Concurrent first starts (web and worker) race safely: the file is created
    exclusively and a loser reads the winner's key.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # the winner may not have written it yet
            key = path.read_text().strip()
            if key:
                return key
            time.sleep(0.02)
        raise ImproperlyConfigured(f"{path} is empty; delete it to generate a new key.") from None
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return secret_key_file(path)
    key = secrets.token_urlsafe(50)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return key


def memory_dir(secret: str, fallback: Path) -> Path:
    """A folder of this site's in shared memory (``/dev/shm``) where Linux has one, else ``fallback``.

    For state every process shares and no restart needs, written on each request (rate
    limits): a small file there costs a tenth of one on a journaling disk. The name comes
    from ``secret``, so another local user can neither guess it nor create it first.
    """
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return fallback
    return shm / f"ocr-{hashlib.sha256(secret.encode()).hexdigest()[:24]}"
