"""docker/: every image, command, port and variable the compose file and the Kubernetes manifests name
exists in the project. Docker cannot run here, so these files are checked by reading them."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

import django
import pytest
import yaml
from django.core.management import get_commands, load_command_class
from uvicorn.main import main as uvicorn_main

from jobs.observability.keda import GPU_QUEUE_DEPTH_SQL, LLM_QUEUE_DEPTH_SQL
from tests.e2e.conftest import WS_MAX_SIZE as E2E_WS_MAX_SIZE

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"
SITE_PACKAGES = Path(django.__file__).resolve().parents[1]
# Variables read by something other than ocrsite/settings: the reader's source must still name them.
OTHER_READERS = {
    "DJANGO_SETTINGS_MODULE": REPO / "manage.py",
    "Q_CLUSTER_NAME": SITE_PACKAGES / "django_q" / "conf.py",
    "PADDLE_PDX_CACHE_HOME": SITE_PACKAGES / "paddlex" / "utils" / "cache.py",
    "OCR_BUILD_PYTHON": REPO / "ocr_engine" / "models" / "pack.py",
    "OCR_WHEEL_CACHE": REPO / "ocr_engine" / "models" / "pack.py",
    # The web server's own: its processes, and the proxies whose forwarded headers it trusts.
    "WEB_CONCURRENCY": SITE_PACKAGES / "uvicorn" / "config.py",
    "FORWARDED_ALLOW_IPS": SITE_PACKAGES / "uvicorn" / "config.py",
    "WATCHFILES_FORCE_POLLING": SITE_PACKAGES / "watchfiles" / "main.py",  # ocr_watch's folder
    # The S3 store's credentials (STORAGE_URL), found by boto3 as it finds them everywhere.
    "AWS_ACCESS_KEY_ID": SITE_PACKAGES / "botocore" / "credentials.py",
    "AWS_SECRET_ACCESS_KEY": SITE_PACKAGES / "botocore" / "credentials.py",
}
# Variables for the tools inside the images (Python, pip, the shell), set by the Dockerfiles only.
IMAGE_TOOL_VARIABLES = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONPATH", "PIP_NO_CACHE_DIR",
                        "PIP_DISABLE_PIP_VERSION_CHECK", "VIRTUAL_ENV", "PATH"}


# --- reading the files -------------------------------------------------------

@cache
def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


@cache
def k8s_documents() -> list[tuple[str, dict]]:
    return [(str(path.relative_to(DOCKER)), doc) for path in sorted((DOCKER / "k8s").rglob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]


def k8s(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for _, doc in k8s_documents() if doc.get("kind") == kind}


def pod_specs() -> dict[str, dict]:
    """Deployments' and Jobs' pod specs, by workload name."""
    return {name: doc["spec"]["template"]["spec"] for kind in ("Deployment", "Job") for name, doc in k8s(kind).items()}


def k8s_containers() -> list[tuple[str, dict]]:
    return [(name, c) for name, spec in pod_specs().items() for c in spec["containers"]]


@cache
def dockerfile(name: str) -> list[str]:
    """Instructions with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (DOCKER / name).read_text())
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def instructions(name: str, keyword: str) -> list[str]:
    return [line.split(None, 1)[1] for line in dockerfile(name) if line.split(None, 1)[0].upper() == keyword]


def stages(name: str) -> set[str]:
    return {m.group(1) for line in instructions(name, "FROM") if (m := re.search(r"\bAS\s+(\S+)", line, re.I))}


def env_keys(name: str) -> set[str]:
    return {pair.split("=", 1)[0] for line in instructions(name, "ENV") for pair in shlex.split(line)}


def env_file_keys(path: Path) -> set[str]:
    return {line.split("=", 1)[0].strip() for line in path.read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")}


@cache
def settings_variables() -> set[str]:
    """Names passed to the ocrsite.env readers (env_str, env_int, ...) by the deployment settings."""
    names = set()
    modules = [path for path in (REPO / "ocrsite" / "settings").glob("*.py") if path.name != "test.py"]
    for node in (node for path in modules for node in ast.walk(ast.parse(path.read_text()))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("env_")
                and node.args and isinstance(node.args[0], ast.Constant)):
            names.add(node.args[0].value)
    assert len(names) > 20, "the settings no longer read the environment through ocrsite.env?"
    return names


def project_services() -> dict[str, dict]:
    """Compose services that run this project's images (postgres and redis run their own)."""
    return {name: svc for name, svc in compose()["services"].items() if "build" in svc}


def built_images() -> dict[str, dict]:
    return {svc["image"].split(":")[0]: svc["build"] for svc in project_services().values()}


def project_commands() -> list[tuple[str, list[str]]]:
    found = [(f"compose {name}", svc["command"]) for name, svc in project_services().items()]
    found += [(f"k8s {name}", c["command"]) for name, c in k8s_containers()]
    for name in ("Dockerfile", "Dockerfile.gpu"):
        found += [(f"{name} CMD", json.loads(line)) for line in instructions(name, "CMD")]
    return found


# --- images --------------------------------------------------------------------

def test_compose_builds_each_image_from_a_dockerfile_stage_that_exists():
    assert set(built_images()) == {"ocr-platform", "ocr-platform-modelbuilder", "ocr-platform-gpu"}
    for image, build in built_images().items():
        context = (DOCKER / build["context"]).resolve()
        assert context == REPO, image
        assert (context / build["dockerfile"]).is_file(), image
        if "target" in build:
            assert build["target"] in stages(Path(build["dockerfile"]).name), image
    for name in ("postgres", "redis"):  # outside images are pinned to a major version
        assert re.fullmatch(r"[a-z]+:\d+-bookworm", compose()["services"][name]["image"])


def test_dockerfiles_copy_files_that_exist_and_the_context_lets_through():
    for name in ("Dockerfile", "Dockerfile.gpu"):
        allowed = {line[1:] for line in (DOCKER / f"{name}.dockerignore").read_text().splitlines()
                   if line.startswith("!")}
        copies = instructions(name, "COPY")
        assert copies, name
        for copy in copies:
            *sources, _destination = copy.split()
            for source in sources:
                assert (REPO / source).exists(), f"{name}: COPY {source}"
                assert source in allowed, f"{name}: {source} is excluded by {name}.dockerignore"


def test_kubernetes_runs_the_images_compose_builds():
    images = {c["image"] for _, c in k8s_containers()}
    assert images <= set(built_images())
    main, jobs = ({i["name"]: i for i in yaml.safe_load(path.read_text())["images"]}
                  for path in (DOCKER / "k8s" / "kustomization.yaml", DOCKER / "k8s" / "jobs" / "kustomization.yaml"))
    assert set(main) | set(jobs) == images
    for name in set(main) & set(jobs):  # the two kustomizations point at the same pushed images
        assert main[name] == jobs[name]


def test_kustomizations_list_files_that_exist():
    for path in (DOCKER / "k8s").rglob("kustomization.yaml"):
        for resource in yaml.safe_load(path.read_text())["resources"]:
            assert (path.parent / resource).is_file(), f"{path}: {resource}"


# --- commands and ports --------------------------------------------------------

def test_qcluster_is_the_projects_own_command():
    # Its model check and SIGTERM drain are lost if django-q2's command wins (INSTALLED_APPS order).
    assert get_commands()["qcluster"] == "jobs"


def test_every_command_exists_and_accepts_its_arguments():
    commands = get_commands()
    for where, argv in project_commands():
        if argv[:2] == ["python", "manage.py"]:
            name, args = argv[2], argv[3:]
            assert name in commands, f"{where}: no management command {name!r}"
            parser = load_command_class(commands[name], name).create_parser("manage.py", name)
            parser.parse_args(args)  # exits (SystemExit) on an unknown option
        else:
            # The web server: uvicorn, whose own parser checks the options (it exits on an unknown one).
            assert argv[0] == "uvicorn", f"{where}: unexpected program {argv[0]!r}"
            context = uvicorn_main.make_context("uvicorn", argv[1:])
            module, attribute = context.params["app"].split(":")
            assert hasattr(__import__(module, fromlist=[attribute]), attribute), where


def web_port(argv: list[str]) -> int:
    return int(argv[argv.index("--port") + 1])


def test_the_web_port_is_the_same_everywhere():
    [expose] = instructions("Dockerfile", "EXPOSE")
    web = compose()["services"]["web"]
    port = web_port(web["command"])
    assert int(expose) == port
    assert web["expose"] == [str(port)]
    assert f"http://localhost:{port}/readyz" in " ".join(web["healthcheck"]["test"])

    [container] = pod_specs()["ocr-web"]["containers"]
    assert web_port(container["command"]) == port
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": port}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    [service_port] = k8s("Service")["ocr-web"]["spec"]["ports"]
    assert service_port["targetPort"] in ports


def test_compose_publishes_only_the_proxy():
    """A published web port would bypass the proxy's TLS, body limits and rate of requests."""
    published = {name: svc["ports"] for name, svc in compose()["services"].items() if svc.get("ports")}
    assert published == {"proxy": ["80:80", "443:443"]}


def test_every_web_server_refuses_large_websocket_frames():
    """Our WebSockets only send: a client's frame over the limit closes its socket before it is buffered."""
    [make_limit] = re.findall(r"^WS_MAX_SIZE := (\d+)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    assert "--ws-max-size $(WS_MAX_SIZE)" in (REPO / "Makefile").read_text()
    assert str(E2E_WS_MAX_SIZE) == make_limit and int(make_limit) <= 64 * 1024
    web_servers = [(where, argv) for where, argv in project_commands() if argv[0] == "uvicorn"]
    assert {where for where, _ in web_servers} >= {"compose web", "k8s ocr-web", "Dockerfile CMD"}
    for where, argv in web_servers:
        assert uvicorn_main.make_context("uvicorn", argv[1:]).params["ws_max_size"] == int(make_limit), where


def test_the_web_takes_client_addresses_from_its_proxy_only():
    """Lockout, throttles and logs see the address uvicorn resolves: X-Forwarded-For believed from the proxy's
    address (compose) or the ingress controllers' network (Kubernetes), FORWARDED_ALLOW_IPS."""
    web, proxy = compose()["services"]["web"], compose()["services"]["proxy"]
    assert "--proxy-headers" in web["command"]
    assert web["environment"]["FORWARDED_ALLOW_IPS"] == proxy["networks"]["default"]["ipv4_address"]
    [container] = pod_specs()["ocr-web"]["containers"]
    assert "--proxy-headers" in container["command"]
    assert k8s("ConfigMap")["ocr-config"]["data"]["FORWARDED_ALLOW_IPS"]
    assert {"configMapRef": {"name": "ocr-config"}} in container["envFrom"]


# --- environment -----------------------------------------------------------------

def assert_read_by_the_project(name: str, where: str) -> None:
    if name in settings_variables():
        return
    assert name in OTHER_READERS, f"{where}: nothing in the project reads {name}"
    assert name in OTHER_READERS[name].read_text(), f"{where}: {OTHER_READERS[name]} no longer reads {name}"


def test_every_variable_compose_sets_is_read_by_the_project():
    for name, service in project_services().items():
        for key in service.get("environment", {}):
            assert_read_by_the_project(key, f"compose {name}")
        for env_file in service["env_file"]:
            example = DOCKER / f"{env_file}.example"
            assert example.is_file(), f"compose {name}: {env_file} has no .example to copy"
            for key in env_file_keys(example):
                assert_read_by_the_project(key, str(example.relative_to(REPO)))


def test_every_variable_kubernetes_sets_is_read_by_the_project():
    for name, container in k8s_containers():
        entries = container.get("env", [])
        # Set only to be expanded into another value, e.g. ALLOWED_HOSTS="...,$(POD_IP)".
        expanded = {m for e in entries for m in re.findall(r"\$\((\w+)\)", e.get("value", ""))}
        for entry in entries:
            if entry["name"] not in expanded:
                assert_read_by_the_project(entry["name"], f"k8s {name}")
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                assert source["configMapRef"]["name"] in k8s("ConfigMap"), name
            else:
                assert source["secretRef"]["name"] in secret_examples(), name
    for key in k8s("ConfigMap")["ocr-config"]["data"]:
        assert_read_by_the_project(key, "k8s ConfigMap ocr-config")
    for key in secret_examples()["ocr-secrets"]["stringData"]:
        assert_read_by_the_project(key, "k8s Secret ocr-secrets")


def test_dockerfiles_set_only_variables_someone_reads():
    for name in ("Dockerfile", "Dockerfile.gpu"):
        for key in env_keys(name) - IMAGE_TOOL_VARIABLES:
            assert_read_by_the_project(key, name)


def test_the_operations_guide_documents_every_variable():
    guide = (REPO / "docs" / "operations.md").read_text().split("## Environment variables", 1)[1]
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", guide))
    assert settings_variables() | set(OTHER_READERS) <= documented


@cache
def secret_examples() -> dict[str, dict]:
    path = DOCKER / "k8s" / "secret.example.yaml"
    return {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(path.read_text())}


def test_kubernetes_serves_https_only_with_hsts_secure_cookies_and_a_metrics_token(tmp_path):
    """The web pod's environment (ConfigMap, the filled-in Secret, its own env) through the real settings:
    what Django then sends, and `check --deploy` clean."""
    [container] = pod_specs()["ocr-web"]["containers"]
    env = {**k8s("ConfigMap")["ocr-config"]["data"], **secret_examples()["ocr-secrets"]["stringData"],
           **{e["name"]: e["value"] for e in container["env"] if "value" in e}}
    assert env["HTTPS"] == "true" and env["METRICS_TOKEN"] == "" and "METRICS_PUBLIC" not in env
    # Filled in as the Secret's comments ask; the database and Redis are local ones (nothing connects).
    env.update(SECRET_KEY="a-real-deployment-key-" + "x" * 40, METRICS_TOKEN="a-real-scrape-token",
               DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3", REDIS_URL="redis://127.0.0.1:6379/15",
               ALLOWED_HOSTS=env["ALLOWED_HOSTS"].replace("$(POD_IP)", "10.1.2.3"))
    shown = "SECURE_SSL_REDIRECT, SECURE_HSTS_SECONDS, SESSION_COOKIE_SECURE, CSRF_COOKIE_SECURE"
    booted = subprocess.run([sys.executable, "-c", f"from ocrsite.settings.base import {shown}; print({shown})"],
                            cwd=REPO, env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True,
                            timeout=60)
    assert booted.stdout.split() == ["True", "31536000", "True", "True"], booted.stderr
    checked = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=REPO,
                             env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0 and "no issues" in checked.stdout, checked.stderr + checked.stdout

    unfilled = subprocess.run([sys.executable, "-c", "import ocrsite.settings.base"], cwd=REPO,
                              env={"PATH": os.environ["PATH"], **env, "METRICS_TOKEN": ""}, capture_output=True,
                              text=True, timeout=60)
    assert unfilled.returncode != 0 and "METRICS_TOKEN is not set" in unfilled.stderr


def test_volumes_are_claimed():
    claims = k8s("PersistentVolumeClaim")
    for name, spec in pod_specs().items():
        for volume in spec.get("volumes", []):
            assert volume["persistentVolumeClaim"]["claimName"] in claims, name
    declared = set(compose()["volumes"])
    for name, service in compose()["services"].items():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            if source.startswith("./"):  # a file of this repository, e.g. the proxy's config
                assert (DOCKER / source).exists(), name
            else:
                assert source in declared, name


def test_the_watcher_polls_folders_on_volumes_that_the_image_lets_it_write():
    service = compose()["services"]["ocr-watch"]
    argv = service["command"]
    mounts = {mount.split(":")[1] for mount in service["volumes"]}
    watched, out = argv[3], argv[argv.index("--out") + 1]
    assert {watched, out, "/data/media"} <= mounts  # the jobs' files are on the media volume, as for web
    assert "--poll" in argv
    [created] = [line for line in dockerfile("Dockerfile") if "mkdir -p" in line]
    assert watched in created and out in created and "chown -R app:app /data /models /watch" in created


# --- workers, GPU, KEDA ------------------------------------------------------------

def seconds(duration: str) -> int:
    value, unit = re.fullmatch(r"(\d+)([sm])", duration).groups()
    return int(value) * (60 if unit == "m" else 1)


def test_workers_get_the_same_grace_period_in_compose_and_kubernetes():
    for cluster in ("cpu", "gpu", "llm"):
        service = compose()["services"][f"worker-{cluster}"]
        spec = pod_specs()[f"ocr-worker-{cluster}"]
        assert service["environment"]["Q_CLUSTER_NAME"] == cluster
        assert {"name": "Q_CLUSTER_NAME", "value": cluster} in spec["containers"][0]["env"]
        assert seconds(service["stop_grace_period"]) == spec["terminationGracePeriodSeconds"] >= 60


def test_the_gpu_worker_reserves_a_gpu():
    [device] = compose()["services"]["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    [container] = pod_specs()["ocr-worker-gpu"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert "paddlepaddle-gpu==" in " ".join(instructions("Dockerfile.gpu", "RUN"))
    index = "https://www.paddlepaddle.org.cn/packages/stable/cu126/"  # PaddlePaddle's own index, CUDA 12.6
    assert any(index in arg for arg in instructions("Dockerfile.gpu", "ARG"))


def test_keda_scales_the_gpu_workers_from_zero_with_the_query_from_the_code():
    scaled = k8s("ScaledObject")["ocr-worker-gpu"]["spec"]
    assert scaled["scaleTargetRef"]["name"] in k8s("Deployment")
    assert (scaled["minReplicaCount"], scaled["cooldownPeriod"]) == (0, 600)
    [trigger] = scaled["triggers"]
    assert trigger["type"] == "postgresql"
    assert trigger["metadata"]["query"] == GPU_QUEUE_DEPTH_SQL
    auth = k8s("TriggerAuthentication")[trigger["authenticationRef"]["name"]]["spec"]["secretTargetRef"]
    assert [ref["parameter"] for ref in auth] == ["connection"]
    assert auth[0]["key"] in secret_examples()[auth[0]["name"]]["stringData"]


def test_keda_scales_the_llm_workers_from_zero_on_their_own_queue_with_the_query_from_the_code():
    scaled = k8s("ScaledObject")["ocr-worker-llm"]["spec"]
    deployment = k8s("Deployment")[scaled["scaleTargetRef"]["name"]]["spec"]
    assert "replicas" not in deployment and scaled["minReplicaCount"] == 0
    [trigger] = scaled["triggers"]
    assert trigger["type"] == "postgresql" and trigger["metadata"]["query"] == LLM_QUEUE_DEPTH_SQL
    assert trigger["authenticationRef"]["name"] in k8s("TriggerAuthentication")


# --- dashboard --------------------------------------------------------------------

@pytest.mark.django_db
def test_the_dashboard_queries_series_that_metrics_exposes(client):
    from jobs.models import Job
    from tests.jobs.factories import JobFactory, PageResultFactory

    from django.utils import timezone

    from jobs.models import JobFields

    # Rows for every series to have samples: a processed page, a failure and a read job's fields.
    PageResultFactory(job=JobFactory(engine={"device": "cpu"}), timings={"ocr": 1.0})
    JobFactory(status=Job.Status.FAILED, error_code="timeout")
    JobFields.objects.create(job=JobFactory(status=Job.Status.SUCCEEDED), status="succeeded", backend="rules",
                             queued_at=timezone.now(), finished_at=timezone.now())
    exposed = client.get("/metrics").content.decode()
    dashboard = json.loads((DOCKER / "grafana" / "dashboard.json").read_text())
    queried = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\bocr_[a-z_]+", target["expr"])}
    assert queried
    for name in queried:
        assert re.search(rf"^{name}[{{ ]", exposed, re.M), f"the dashboard queries {name}, /metrics has no such series"


# Variables of `make run` itself (the Makefile reads them), documented with the others.
MAKEFILE_VARIABLES = {"HOST", "PORT", "PYTHON"}


def test_the_operations_guide_documents_only_variables_that_exist():
    guide = (REPO / "docs" / "operations.md").read_text().split("## Environment variables", 1)[1]
    rows = [line for line in guide.splitlines() if line.startswith("| `")]
    named = {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", row.split("|")[1])}
    makefile = (REPO / "Makefile").read_text()
    assert all(re.search(rf"\b{name}\b", makefile) for name in MAKEFILE_VARIABLES)
    assert named <= settings_variables() | set(OTHER_READERS) | MAKEFILE_VARIABLES
