"""What a qcluster process adds to django-q2: a drain on SIGTERM (the model check at start-up
is ``jobs.engines.health``). Wired in by ``jobs/management/commands/qcluster.py``.

Drain. django-q2 stops a cluster on SIGTERM/SIGINT (``Cluster.sig_handler``)
by fetching nothing more and queueing one STOP pill per worker *behind* the
tasks already prefetched (``queue_limit``), then waiting for the workers. A
``process_job`` task works for up to ``OCR_TASK_BUDGET_SECONDS``, so a stop
could take several budgets, far past any grace period, and Kubernetes would
then SIGKILL the worker mid-page. So the qcluster command also sets a flag
shared by every process of the cluster (a byte of shared memory created before
django-q2 forks, inherited by the sentinel and each worker). ``job_run`` reads
it at page boundaries: the page being processed is committed, the job is
released to the queue for another worker, prefetched tasks are put back
unclaimed, and the workers reach their STOP pills within about one page.

Cores of their own. Where the cluster's workers fill the machine exactly (``Q_WORKERS`` ×
``OCR_CPU_THREADS`` = the usable cores, as ``Q_WORKERS=2`` on 2 cores), each worker pins its
engine's thread to ``OCR_CPU_THREADS`` cores that no other live worker holds, on its first task
(``pin_to_own_cores``). Left to the scheduler, the two OCR threads were moved between the cores
while each worker's other threads (storing, encoding) ran: a 40-page PDF on two workers took 20.95 s
against 20.31 s with every thread of each worker pinned, and 19.47 s against 19.67 s with the
engine's thread alone pinned rather than every thread, whose other threads then take whichever core
is free (docs/benchmarks.md). Workers that do not fill the cores, or more OCR threads than cores,
are left to the scheduler, as are all of them with ``OCR_PIN_WORKERS=false``.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal

from django.conf import settings

from jobs.engines.pool import engine_thread

# Set once the cluster was asked to stop; None outside a qcluster process.
_stopping = None


def install_drain() -> None:
    """Create the shared flag. Call in the qcluster main process before django-q2 forks its processes."""
    global _stopping
    # A byte of shared memory with no lock, not an Event: setting an Event takes a lock shared by
    # every process, so a second SIGTERM arriving inside the handler (django-q2 terminates workers
    # that linger) deadlocked that process while it held the lock, and every other process after it.
    # django-q2 forks (cluster.get_mp_context); the flag must come from the same context.
    _stopping = multiprocessing.get_context("fork").RawValue(ctypes.c_bool, False)


# How long the main process gives its sentinel to exit on its own after a signal (``drain_on``).
SENTINEL_GONE_WITHIN_SECONDS = 0.5


def drain_on(*signums: int) -> None:
    """Chain onto the installed handlers: set the flag, then let django-q2 stop the cluster as usual.

    Only the first signal a process receives reaches django-q2: `make run`'s Ctrl-C sends SIGINT and
    then SIGTERM to every process, and a second ``Cluster.stop`` inside the first one (both set the
    same multiprocessing Event) hung the process for good.

    A SIGTERM to the whole process group (systemd's default ``KillMode``, ``pkill -f qcluster``,
    ``kill 0``) reaches the sentinel too, where django-q2 leaves SIGTERM at its default: the sentinel
    dies while it sleeps on the stop Event, and ``Cluster.stop`` setting that Event then waited
    forever for it to wake (``multiprocessing.Condition.notify``). The main process hung with its
    136 MB until a SIGKILL. So the main process first gives the sentinel a moment to go away; only
    a sentinel still running (SIGTERM to the main process alone, as Docker and Kubernetes send it)
    is told to stop.
    """
    previous = {signum: signal.getsignal(signum) for signum in signums}
    handled = False

    def handler(received, frame):
        nonlocal handled
        _stopping.value = True
        if handled or not callable(previous[received]):
            return
        handled = True
        sentinel = getattr(getattr(previous[received], "__self__", None), "sentinel", None)  # Cluster.sig_handler's
        # The process's end, read from its pipe: the signal may have interrupted the main process's own
        # wait for it just after it was reaped, where is_alive() no longer learns that it ended.
        if sentinel is not None and multiprocessing.connection.wait([sentinel.sentinel], SENTINEL_GONE_WITHIN_SECONDS):
            return  # the signal reached the whole group: nothing is left to tell
        previous[received](received, frame)

    for signum in signums:
        signal.signal(signum, handler)


def request_stop() -> None:
    """Ask every process of the cluster to stop at its next page boundary, as a SIGTERM does."""
    if _stopping is not None:
        _stopping.value = True


def stopping() -> bool:
    """True in any process of a cluster that was asked to stop."""
    return _stopping is not None and _stopping.value


# (usable cores, cores per worker, pid holding each share or 0) once ``install_core_shares`` found that the
# workers fill the machine; None otherwise and outside a qcluster process.
_core_shares: tuple[list[int], int, multiprocessing.Array] | None = None
_pinned = False
# How long a worker waits for the table's lock, held for a few instructions, before it stays unpinned.
CORE_SHARES_LOCK_SECONDS = 1.0


def install_core_shares(workers: int, threads: int) -> None:
    """Share the usable cores among ``workers`` when their ``threads`` each fill them exactly
    (and ``OCR_PIN_WORKERS`` allows it). Call in the qcluster main process before django-q2 forks
    its processes."""
    global _core_shares
    cores = sorted(os.sched_getaffinity(0))
    if settings.OCR_PIN_WORKERS and workers > 1 and workers * threads == len(cores):
        _core_shares = (cores, threads, multiprocessing.get_context("fork").Array(ctypes.c_int, workers))


def pin_to_own_cores() -> None:
    """Pin this worker's engine thread to a share of the cores that no live worker holds.

    Once per process, before its engine is built there: the threads onnxruntime starts from that
    thread inherit the pinning. A share whose holder has died (a recycled or killed worker) is free
    again.
    """
    global _pinned
    if _core_shares is None or _pinned:
        return
    _pinned = True
    cores, per_worker, holders = _core_shares
    if not holders.get_lock().acquire(timeout=CORE_SHARES_LOCK_SECONDS):
        return
    try:
        share = next((index for index, pid in enumerate(holders) if not process_alive(pid)), None)
        if share is None:
            return  # more workers than shares: a replacement started before its predecessor was reaped
        holders[share] = os.getpid()
    finally:
        holders.get_lock().release()
    own = set(cores[share * per_worker:(share + 1) * per_worker])
    engine_thread().submit(os.sched_setaffinity, 0, own).result()


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (0: none)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
