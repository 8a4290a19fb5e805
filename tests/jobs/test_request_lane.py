"""A web process's request lane: quick requests one after another on one thread, slow ones not in the way."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from ocrsite.request_lane import RequestLane

PATIENCE = 0.05
NEVER = 60.0  # a patience no request here runs out of, however slow the machine


@pytest.fixture
def pool():
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="pool") as executor:
        yield executor


def test_quick_requests_run_in_order_one_at_a_time_on_the_lanes_thread(pool):
    lane = RequestLane(pool, NEVER)
    ran, running, overlaps = [], [0], []
    lock = threading.Lock()

    def request(number: int) -> int:
        with lock:
            running[0] += 1
            overlaps.append(running[0])
        time.sleep(0.001)
        with lock:
            running[0] -= 1
            ran.append((number, threading.current_thread().name))
        return number * 2

    futures = [lane.submit(request, number) for number in range(20)]
    assert [future.result(timeout=10) for future in futures] == [number * 2 for number in range(20)]
    assert [number for number, _ in ran] == list(range(20))
    assert {thread for _, thread in ran} == {"lane"}
    assert max(overlaps) == 1


def test_requests_queued_behind_a_slow_one_go_to_the_pool_and_are_answered(pool):
    lane = RequestLane(pool, PATIENCE)
    slow_started, release = threading.Event(), threading.Event()

    def slow() -> str:
        slow_started.set()
        release.wait(30)
        return "slow"

    slow_future = lane.submit(slow)
    assert slow_started.wait(5)
    queued = [lane.submit(lambda: threading.current_thread().name) for _ in range(3)]  # queued on the lane
    try:
        threads = [future.result(timeout=5) for future in queued]  # answered while the slow one still runs
        assert not slow_future.done()
        assert all(name.startswith("pool") for name in threads)
        time.sleep(PATIENCE)  # the slow one has run for longer than the patience: a new one skips the queue
        assert lane.submit(lambda: threading.current_thread().name).result(timeout=5).startswith("pool")
    finally:
        release.set()
    assert slow_future.result(timeout=5) == "slow"
    # Once the slow one is done (its caller has its answer a moment before the lane is free), the
    # lane takes requests again.
    deadline = time.monotonic() + 5
    while lane.started_at is not None and time.monotonic() < deadline:
        time.sleep(0.001)
    assert lane.submit(lambda: threading.current_thread().name).result(timeout=5) == "lane"


def test_a_request_that_fails_hands_its_error_to_its_caller_and_the_lane_goes_on(pool):
    lane = RequestLane(pool, NEVER)

    def broken():
        raise ValueError("no such page")

    failed = lane.submit(broken)
    after = lane.submit(lambda: "next")
    with pytest.raises(ValueError, match="no such page"):
        failed.result(timeout=5)
    assert after.result(timeout=5) == "next"
