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
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import signal

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


def stopping() -> bool:
    """True in any process of a cluster that was asked to stop."""
    return _stopping is not None and _stopping.value
