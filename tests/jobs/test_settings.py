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


def boot(show: str = "DATABASES['default']['ENGINE']", **env) -> subprocess.CompletedProcess:
    """Import the production settings in a fresh interpreter with exactly ``env`` (plus PATH); prints ``show``."""
    return subprocess.run(
        [sys.executable, "-c", f"import ocrsite.settings.base as s; print(s.{show})"],
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


def manage(args: list[str], **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env={"PATH": os.environ["PATH"], **env},
                          capture_output=True, text=True, timeout=120)


def test_example_secret_keys_are_refused(tmp_path):
    for example in ("change-me", "CHANGE-ME"):
        refused = boot(SECRET_KEY=example, DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
        assert refused.returncode != 0 and "example value" in refused.stderr


def test_embedded_default_generates_one_key_every_entry_point_reads(tmp_path):
    """`make run`, then the README's `manage.py drf_create_token`: no environment, same key."""
    code = ("import ocrsite.settings.base as s, pathlib; "
            "assert s.SECRET_KEY == (s.VAR_DIR / 'secret_key').read_text().strip(); print(s.SECRET_KEY)")
    keys = {subprocess.run([sys.executable, "-c", code], cwd=REPO, env={"PATH": os.environ["PATH"]},
                           capture_output=True, text=True, timeout=60, check=True).stdout for _ in range(2)}
    assert len(keys) == 1 and len(keys.pop().strip()) >= 50


def test_check_deploy_is_clean_with_the_production_example(tmp_path):
    env = {}
    for line in (REPO / "docker/env/common.env.example").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            env[name] = value
    env.update(SECRET_KEY="a-real-deployment-key-" + "x" * 40, METRICS_TOKEN="a-real-scrape-token",
               DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3", REDIS_URL="redis://127.0.0.1:6379/15")
    checked = manage(["check", "--deploy", "--fail-level", "WARNING"], **env)
    assert checked.returncode == 0, checked.stderr + checked.stdout
    assert "no issues" in checked.stdout


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no shared memory folder on this system")
def test_embedded_cache_lives_in_shared_memory_under_a_name_only_the_site_knows(tmp_path):
    def cache_dir(**env) -> str:
        booted = boot("CACHES['default']['LOCATION']", DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3",
                      METRICS_PUBLIC="true", **env)
        assert booted.returncode == 0, booted.stderr
        return booted.stdout.strip()

    one, same, other = cache_dir(SECRET_KEY="one-long-secret"), cache_dir(SECRET_KEY="one-long-secret"), \
        cache_dir(SECRET_KEY="another-secret")
    assert one.startswith("/dev/shm/ocr-") and one == same != other  # every process of a site shares it
    assert "secret" not in one
    assert cache_dir(SECRET_KEY="one-long-secret", CACHE_DIR=str(tmp_path / "cache")) == str(tmp_path / "cache")


def test_a_deployment_without_a_metrics_token_refuses_to_start_unless_metrics_are_declared_public(tmp_path):
    deployment = {"SECRET_KEY": "a-real-deployment-key", "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3"}
    refused = boot(**deployment)
    assert refused.returncode != 0 and "METRICS_TOKEN is not set" in refused.stderr

    for allowed in ({"METRICS_TOKEN": "scrape-token"}, {"METRICS_PUBLIC": "true"}, {"DEBUG": "true"}):
        started = boot("METRICS_TOKEN", **deployment, **allowed)
        assert started.returncode == 0, (allowed, started.stderr)
    # The embedded default (no DATABASE_URL) is one machine's site: its commands start with no environment.
    assert boot("METRICS_PUBLIC").stdout.strip() == "True"
