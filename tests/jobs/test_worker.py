"""jobs/worker.py and the qcluster command around it: model check at start-up, drain on SIGTERM."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from jobs import worker
from jobs.engines.health import cluster_pipelines, model_problems, official_models_dir
from jobs.engines.pool import engine_thread
from jobs.models import Job
from jobs.queue import waiting_task_ids
from jobs.services import job_run
from tests.jobs.factories import JobFactory

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def pack_copy(settings, tmp_path) -> Path:
    """A copy of the real offline pack that a test may damage."""
    pack = tmp_path / "models"
    shutil.copytree(django_settings.OCR_MODELS_DIR, pack, ignore=shutil.ignore_patterns(".build*"))
    settings.OCR_MODELS_DIR = pack
    return pack


def test_a_sound_pack_passes(pack_copy):
    assert model_problems("cpu") == []


def test_a_damaged_model_file_is_reported(pack_copy):
    weights = pack_copy / "PP-OCRv6_small_rec" / "inference.onnx"
    weights.write_bytes(weights.read_bytes()[:-10])
    assert model_problems("cpu") == ["PP-OCRv6_small_rec/inference.onnx: checksum mismatch"]


def test_the_gpu_cluster_needs_paddleocr_vl(pack_copy, settings):
    settings.OCR_GPU_CLUSTER = True
    assert cluster_pipelines("gpu") == ["ocr", "structure", "vl"]
    assert cluster_pipelines("cpu") == []
    [problem] = model_problems("gpu")
    assert "runs the vl pipeline" in problem and str(pack_copy / "PaddleOCR-VL") in problem
    (pack_copy / "PaddleOCR-VL").mkdir()
    assert model_problems("gpu") == []


def test_ocr_models_verify_and_list_report_the_same_pack(pack_copy, capsys):
    call_command("ocr_models", "verify")
    assert f"ok: the cpu workers' models (offline pack {pack_copy})" in capsys.readouterr().out
    call_command("ocr_models", "list", "--json")
    listed = json.loads(capsys.readouterr().out)
    assert listed["pack"] == str(pack_copy)
    assert {row["dir"]: row["status"] for row in listed["models"]}["PP-OCRv6_small_det"] == "ok"

    (pack_copy / "PP-OCRv6_small_det" / "inference.onnx").unlink()
    with pytest.raises(CommandError, match="PP-OCRv6_small_det/inference.onnx: missing"):
        call_command("ocr_models", "verify")


def test_official_models_are_looked_for_where_paddlex_downloads_them():
    from paddlex.utils.cache import CACHE_DIR

    assert official_models_dir() == Path(CACHE_DIR) / "official_models"


def test_qcluster_refuses_to_start_without_models(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test",
           "OCR_MODELS_DIR": str(tmp_path / "empty"), "PADDLE_PDX_CACHE_HOME": str(tmp_path / "paddlex")}
    done = subprocess.run([sys.executable, "manage.py", "qcluster"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1
    assert "The cpu worker cannot start, its models are missing or damaged" in done.stderr
    assert "python manage.py ocr_models install" in done.stderr


@pytest.fixture
def drain(monkeypatch):
    """A fresh stop flag for this test; the process's own (none, outside qcluster) comes back after."""
    monkeypatch.setattr(worker, "_stopping", None)
    worker.install_drain()
    yield


def test_a_signal_sets_the_flag_then_runs_the_previous_handler(drain):
    received = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    try:
        worker.drain_on(signal.SIGUSR1)
        assert not worker.stopping()
        os.kill(os.getpid(), signal.SIGUSR1)
        assert worker.stopping()
        assert received == [signal.SIGUSR1]
        # Again (Ctrl-C in `make run` sends SIGINT, then SIGTERM): django-q2's stop is not run a second time.
        os.kill(os.getpid(), signal.SIGUSR1)
        assert worker.stopping() and received == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, previous)


@pytest.mark.django_db
def test_a_stopping_worker_hands_a_new_task_back_unclaimed():
    job = JobFactory()
    job_run(job_id=job.pk, worker_id="host:1", budget_seconds=60, stopping=lambda: True)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.worker_id) == (Job.Status.QUEUED, 0, "")
    # A fresh queue entry replaces the one this worker took (acknowledged when the task returns).
    assert job.queue_task_id in waiting_task_ids(job.cluster)


def test_engine_thread_runs_in_a_forked_worker():
    # django-q2 forks its worker processes; an engine thread started in the parent is not in the child.
    import multiprocessing

    from jobs.engines.pool import engine_thread

    assert engine_thread().submit(os.getpid).result(timeout=10) == os.getpid()
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=lambda: answers.put(engine_thread().submit(os.getpid).result(timeout=10)))
    child.start()
    try:
        assert answers.get(timeout=30) == child.pid
    finally:
        child.join(30)


@pytest.fixture
def core_shares(monkeypatch):
    """No table of core shares and nothing pinned yet, as in a qcluster process before it forks."""
    monkeypatch.setattr(worker, "_core_shares", None)
    monkeypatch.setattr(worker, "_pinned", False)


def pinned_in_a_child() -> set[int]:
    """The cores a forked child's (a worker's) engine thread may run on after ``pin_to_own_cores``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        try:
            worker.pin_to_own_cores()
            os.write(write, json.dumps(sorted(engine_thread().submit(os.sched_getaffinity, 0).result())).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        cores = set(json.loads(answer.read()))
    os.waitpid(pid, 0)
    return cores


@pytest.mark.skipif(len(os.sched_getaffinity(0)) != 2, reason="the shares below are those of 2 cores")
def test_workers_that_fill_the_cores_each_get_one_to_themselves_and_a_dead_ones_share_is_free(core_shares):
    worker.install_core_shares(2, 1)
    cores, _, holders = worker._core_shares
    holders[1] = os.getpid()  # a live worker holds the second core
    assert pinned_in_a_child() == {cores[0]}
    # That child has ended: its share is free for the next one, and the live worker's is not.
    assert pinned_in_a_child() == {cores[0]}
    holders[0], holders[1] = os.getpid(), 0
    assert pinned_in_a_child() == {cores[1]}
    assert os.sched_getaffinity(0) == set(cores)  # this process (the sentinel's part) stays unpinned


def test_workers_that_do_not_fill_the_cores_stay_unpinned(core_shares, settings):
    cores = len(os.sched_getaffinity(0))
    worker.install_core_shares(1, cores)  # one worker: the scheduler's to place
    worker.install_core_shares(2, cores)  # more OCR threads than cores
    settings.OCR_PIN_WORKERS = False  # a host whose cores other services share
    worker.install_core_shares(cores, 1)
    assert worker._core_shares is None
    assert pinned_in_a_child() == os.sched_getaffinity(0)
