"""What a qcluster's main process watches while its cluster runs: workers that died, and its own liveness.

django-q2's workers share one ``multiprocessing.Queue`` of tasks, and an idle worker waits in its
``get()`` holding the queue's read lock. A worker killed there (``kill -9``, the out-of-memory
killer) takes the lock with it: every other worker, and the one django-q2 starts in its place, then
waits on it for ever, and the cluster takes no task again while it looks alive. This is
django-q2's open issue #23 (https://github.com/django-q2/django-q2/issues/23, upstream
https://github.com/Koed00/django-q/issues/394). Nothing can release that lock from outside, so a
cluster one of whose workers died while idle ends itself (exit status ``STALLED_EXIT``) and its
supervisor starts it afresh: ``make run``'s loop, compose's ``restart``, Kubernetes. Busy workers
hand their jobs over at the next page boundary first (the drain flag of ``jobs.worker``).

A worker killed while busy holds no lock of the queue; its job is handed on at once instead of
after its lease (``job_requeue_lost``): any running job held by a worker of this host whose
process is gone.

Each worker records its state in shared memory created before django-q2 forks (``install``):
idle, busy (from django-q2's ``pre_execute`` until ``post_execute_in_worker``), or gone of its own
accord (a recycled worker, or one that took its stop pill: multiprocessing runs its finalizers on
a normal exit, never on a kill). The watch also touches ``OCR_CLUSTER_ALIVE_FILE`` every few
seconds, the workers' liveness probe.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import multiprocessing.util
import os
import signal
import socket
import sys
import time
from pathlib import Path

from django.conf import settings
from django.db import close_old_connections
from django_q.signals import post_execute_in_worker, post_spawn, pre_execute

from jobs import worker

logger = logging.getLogger(__name__)

# How often the watch looks; a dead busy worker's job is handed on, and a stalled cluster ends, this late at most.
WATCH_SECONDS = 2.0
# How long busy workers get to hand their jobs over before a stalled cluster ends (about one page).
DRAIN_SECONDS = 15.0
STALLED_EXIT = 3  # the exit status of a cluster that ended itself; its supervisor starts it again
SLOTS = 64  # workers a cluster may have had alive at once, replacements included

IDLE, BUSY, LEFT = 0, 1, 2  # a worker's state; LEFT: it ended of its own accord

_pids = _states = _claims = None  # shared, once ``install`` ran (the qcluster main process and its children)


def install() -> None:
    """Create the workers' shared states and connect django-q2's signals; call before the cluster forks."""
    global _pids, _states, _claims
    context = multiprocessing.get_context("fork")  # django-q2 forks (cluster.get_mp_context)
    # Raw arrays and one lock for claiming and freeing slots only: a worker's state is written without
    # a lock, so a worker never waits on the main process, whose stop handler (SIGINT) may interrupt it
    # anywhere while it waits for the workers to end.
    _pids, _states, _claims = context.RawArray(ctypes.c_int, SLOTS), context.RawArray(ctypes.c_int, SLOTS), context.Lock()
    post_spawn.connect(_spawned, dispatch_uid="cluster_watch.spawned")
    pre_execute.connect(_busy, dispatch_uid="cluster_watch.busy")
    post_execute_in_worker.connect(_idle, dispatch_uid="cluster_watch.idle")
    # Processes of a cluster whose main process was killed (kill -9) would go on as a second cluster
    # beside the one its supervisor starts: each child of the cluster dies with its parent.
    os.register_at_fork(after_in_child=_die_with_parent)


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _slot() -> int | None:
    pid = os.getpid()
    for index, held in enumerate(_pids):  # its own slot, which nobody frees while it lives: no lock
        if held == pid:
            return index
    if not _claims.acquire(timeout=1):
        return None
    try:
        for index, held in enumerate(_pids):
            if not held:  # a dead worker's slot is freed by the watch, once it has seen how it ended
                _pids[index], _states[index] = pid, IDLE
                return index
    finally:
        _claims.release()
    return None  # more workers than slots: this one goes unwatched


def _set_state(state: int) -> None:
    if _pids is not None and (index := _slot()) is not None:
        _states[index] = state


def _spawned(sender, proc_name, **kwargs) -> None:  # in each new worker
    _set_state(IDLE)
    # Run on a normal end of the process only (multiprocessing's own finalizers), never on a kill.
    multiprocessing.util.Finalize(None, _set_state, args=(LEFT,), exitpriority=100)


def _busy(sender, **kwargs) -> None:
    _set_state(BUSY)


def _idle(sender, **kwargs) -> None:
    _set_state(IDLE)


def workers_busy() -> int:
    return sum(1 for pid, state in zip(_pids, _states) if pid and state == BUSY and worker.process_alive(pid))


def died_while_idle() -> list[int]:
    """Workers that are gone, were idle, and did not end of their own accord; their slots are freed."""
    found = []
    with _claims:
        for index, pid in enumerate(_pids):
            if pid and not worker.process_alive(pid):
                if _states[index] == IDLE:
                    found.append(pid)
                _pids[index] = 0
    return found


def local_worker_alive(worker_id: str) -> bool:
    """Whether ``worker_id`` ("host:pid", ``jobs.tasks.worker_identity``) names a live qcluster process of this host."""
    host, _, pid = worker_id.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit() or not sys.platform.startswith("linux"):
        return True  # another host's, or no /proc to look in: its lease says
    try:
        return b"qcluster" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def watch(cluster: str) -> None:
    """Watch the cluster ``cluster`` from this, its main, process until it is asked to stop.

    Run on the main thread: the cluster's stop handlers (SIGTERM, SIGINT) run there between two looks,
    and a cluster ended here (``end_cluster``) exits with its own status, which no other thread of the
    process can overtake with a normal exit.
    """
    from jobs.services.lifecycle import job_requeue_lost  # the app registry is ready by now

    alive_file = Path(settings.OCR_CLUSTER_ALIVE_FILE)
    while not worker.stopping():
        if dead := died_while_idle():
            logger.critical("Worker %s died while it waited for a task: its cluster's task queue may be locked for "
                            "good (django-q2 issue #23). Handing busy jobs over and restarting the cluster.",
                            ", ".join(map(str, dead)))
            end_cluster(cluster)
        try:
            job_requeue_lost(alive=local_worker_alive)
        except Exception:  # noqa: BLE001 - a database outage: the watch goes on, and so does the lease
            logger.warning("Could not look for jobs of dead workers", exc_info=True)
        finally:
            close_old_connections()
        try:
            alive_file.parent.mkdir(parents=True, exist_ok=True)
            alive_file.touch()
        except OSError:
            logger.warning("Could not touch %s", alive_file, exc_info=True)
        time.sleep(WATCH_SECONDS)


def end_cluster(cluster: str) -> None:
    """Let busy workers hand their jobs over, SIGKILL every process this one started (the sentinel, its
    workers, pusher and monitor), queue again what its pusher had taken but no worker started, and exit."""
    from jobs.services.lifecycle import job_requeue_unstarted

    worker.request_stop()
    deadline = time.monotonic() + DRAIN_SECONDS
    while workers_busy() and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        job_requeue_unstarted(cluster=cluster)
    except Exception:  # noqa: BLE001 - then the lease and the requeue_stale schedule find them later
        logger.exception("Could not queue again the jobs this cluster had taken")
    logging.shutdown()
    os._exit(STALLED_EXIT)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
