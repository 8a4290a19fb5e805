"""Settings read the environment in one place and refuse unsafe or inconsistent values at boot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from ocrsite.env import env_bool, env_int, env_list

REPO = Path(__file__).resolve().parents[2]


def boot(**env) -> subprocess.CompletedProcess:
    """Import the production settings in a fresh interpreter with exactly ``env`` (plus PATH)."""
    return subprocess.run(
        [sys.executable, "-c", "import ocrsite.settings.base as s; print(s.DATABASES['default']['ENGINE'])"],
        cwd=REPO, env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True, timeout=60,
    )


def test_secret_key_is_required_outside_debug(tmp_path):
    refused = boot(DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
    assert refused.returncode != 0 and "SECRET_KEY is not set" in refused.stderr

    debug = boot(DEBUG="true", DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
    assert debug.returncode == 0 and "sqlite3" in debug.stdout


def test_queue_timing_order_is_enforced(tmp_path):
    bad = boot(SECRET_KEY="k", DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3", Q_TIMEOUT="900", Q_RETRY="800")
    assert bad.returncode != 0 and "Q_TIMEOUT" in bad.stderr


def test_env_helpers_parse_and_reject(monkeypatch):
    monkeypatch.setenv("X_INT", "1_000")
    monkeypatch.setenv("X_BOOL", "yes")
    monkeypatch.setenv("X_LIST", "a, b,,c")
    assert env_int("X_INT", 0) == 1000 and env_bool("X_BOOL", False) is True
    assert env_list("X_LIST", []) == ["a", "b", "c"] and env_int("X_MISSING", 7) == 7
    monkeypatch.setenv("X_BOOL", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_BOOL"):
        env_bool("X_BOOL", False)
