# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import signal
import threading

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service import fanout
from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import DeadlineExceeded, fetch_concurrently

# Waits on events are bounded so a broken implementation fails the test instead of hanging it.
EVENT_TIMEOUT = 5.0


def echo(key, deadline):
    return {"id": key, "deadline": deadline}


def test_results_follow_key_order_even_when_completion_order_is_reversed():
    keys = ["k%d" % i for i in range(6)]
    done = dict((key, threading.Event()) for key in keys)
    finished = []
    lock = threading.Lock()

    def fetch_one(key, deadline):
        index = keys.index(key)
        if index + 1 < len(keys):
            # Each key finishes only after the next one, so completion order is the reverse.
            assert done[keys[index + 1]].wait(EVENT_TIMEOUT)
        with lock:
            finished.append(key)
        done[key].set()
        return key.upper()

    result = fetch_concurrently(keys, fetch_one, max_concurrency=len(keys))

    assert finished == list(reversed(keys))
    assert list(result) == keys
    assert list(result.values()) == [key.upper() for key in keys]


@pytest.mark.parametrize("max_concurrency,count", [(1, 5), (4, 12), (7, 21)])
def test_concurrency_is_bounded_and_reached(max_concurrency, count):
    lock = threading.Lock()
    active = [0]
    peak = [0]
    # The barrier trips only when max_concurrency fetches are inside at once: fewer workers make it
    # time out (a BrokenBarrierError in the results), more workers push the peak above the bound.
    barrier = threading.Barrier(max_concurrency, timeout=EVENT_TIMEOUT)

    def fetch_one(key, deadline):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            barrier.wait()
        finally:
            with lock:
                active[0] -= 1
        return key

    keys = list(range(count))
    result = fetch_concurrently(keys, fetch_one, max_concurrency=max_concurrency)

    assert result == dict((key, key) for key in keys)
    assert peak[0] == max_concurrency


class RecordingThread(threading.Thread):
    """The worker threads the fan-out starts."""

    started = []

    def start(self):
        RecordingThread.started.append(self)
        super().start()


@pytest.fixture
def recorded_threads(monkeypatch):
    RecordingThread.started = []
    monkeypatch.setattr(fanout.threading, "Thread", RecordingThread)
    return RecordingThread.started


@pytest.mark.parametrize("count,max_concurrency,expected_workers", [(3, 16, 3), (40, 16, 16), (2, 2, 2)])
def test_pool_size_is_min_of_bound_and_key_count(recorded_threads, count, max_concurrency, expected_workers):
    fetch_concurrently(list(range(count)), echo, max_concurrency=max_concurrency)

    assert len(recorded_threads) == expected_workers
    # Daemon threads: no join at the interpreter's exit waits for a request abandoned by an interrupt.
    assert all(thread.daemon for thread in recorded_threads)


def test_one_key_is_fetched_inline_without_a_pool(recorded_threads):
    threads = []

    def fetch_one(key, deadline):
        threads.append(threading.current_thread())
        return "item"

    assert fetch_concurrently(["only"], fetch_one) == {"only": "item"}
    assert threads == [threading.current_thread()]
    assert recorded_threads == []


def test_one_key_error_is_captured_inline():
    error = ValueError("boom")

    def fetch_one(key, deadline):
        raise error

    assert fetch_concurrently(["only"], fetch_one)["only"] is error


def test_exceptions_are_captured_per_key_and_others_still_returned():
    errors = {"b": RuntimeError("b broke"), "d": KeyError("d")}

    def fetch_one(key, deadline):
        if key in errors:
            raise errors[key]
        return key * 2

    result = fetch_concurrently(["a", "b", "c", "d"], fetch_one, max_concurrency=2)

    assert result["a"] == "aa"
    assert result["c"] == "cc"
    assert result["b"] is errors["b"]
    assert result["d"] is errors["d"]


@pytest.mark.parametrize("keys", [["only"], ["a", "b", "c"]])
def test_keyboard_interrupt_propagates(keys):
    def fetch_one(key, deadline):
        if key == keys[0]:
            raise KeyboardInterrupt()
        return key

    with pytest.raises(KeyboardInterrupt):
        fetch_concurrently(keys, fetch_one, max_concurrency=2)


def test_interrupt_cancels_requests_not_yet_started():
    called = []
    lock = threading.Lock()
    release = threading.Event()

    def fetch_one(key, deadline):
        with lock:
            called.append(key)
        if key == 0:
            raise KeyboardInterrupt()
        # Key 1 may already be running on the single worker; hold it so keys 2.. stay queued
        # until the interrupt has cancelled them.
        release.wait(0.5)
        return key

    with pytest.raises(KeyboardInterrupt):
        fetch_concurrently(list(range(6)), fetch_one, max_concurrency=1)

    assert set(called) <= {0, 1}


class Interrupted(BaseException):
    """What a signal handler raises in the calling thread (ansible-core's TaskTimeoutError is a BaseException too)."""


def test_an_interrupt_in_the_calling_thread_never_waits_for_the_requests_in_flight():
    # Issue 36: a task's timeout in the controller's process sat through every request in flight.
    release = threading.Event()
    started = []
    ended = []
    lock = threading.Lock()

    def fetch_one(key, deadline):
        with lock:
            started.append(key)
            if len(started) == 2:
                # Both workers are in flight: the interrupt comes now, from the calling thread's signal handler.
                signal.setitimer(signal.ITIMER_REAL, 0.01)
        release.wait(EVENT_TIMEOUT)
        with lock:
            ended.append(key)
        return key

    def on_alarm(_signum, _frame):
        raise Interrupted()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        with pytest.raises(Interrupted):
            fetch_concurrently(list(range(6)), fetch_one, max_concurrency=2)
        # Back in the caller with both requests still in flight: nothing waited for them.
        assert ended == [] and sorted(started) == [0, 1]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        release.set()
    for thread in threading.enumerate():
        if thread.name == "modelarts-fetch":
            thread.join(EVENT_TIMEOUT)
    # The workers end with their requests and start no other key.
    assert sorted(ended) == [0, 1] and sorted(started) == [0, 1]


def test_a_worker_s_base_exception_is_raised_once_the_started_keys_have_ended():
    def fetch_one(key, deadline):
        if key == 1:
            raise Interrupted()
        return key

    with pytest.raises(Interrupted):
        fetch_concurrently(list(range(5)), fetch_one, max_concurrency=1)


def test_the_shared_deadline_is_passed_to_every_fetch():
    result = fetch_concurrently(["a", "b", "c"], echo, max_concurrency=3, deadline=1234.5, clock=lambda: 1000.0)

    assert [item["deadline"] for item in result.values()] == [1234.5, 1234.5, 1234.5]


def test_no_deadline_passes_none():
    result = fetch_concurrently(["a", "b"], echo)

    assert [item["deadline"] for item in result.values()] == [None, None]


def test_keys_whose_turn_comes_after_the_deadline_are_not_fetched():
    now = [0.0]
    called = []

    def fetch_one(key, deadline):
        called.append(key)
        now[0] += 1.0
        return key

    # One worker runs keys in order: a at t=0, b at t=1, c at t=2 is at the deadline.
    result = fetch_concurrently(["a", "b", "c", "d"], fetch_one, max_concurrency=1, deadline=2.0, clock=lambda: now[0])

    assert called == ["a", "b"]
    assert result["a"] == "a" and result["b"] == "b"
    for key in ("c", "d"):
        assert isinstance(result[key], DeadlineExceeded)
        assert result[key].key == key
        assert result[key].transient is True
        assert result[key].not_found is False
        assert result[key].not_sent is True


def test_a_passed_deadline_skips_a_single_inline_key_too():
    def fetch_one(key, deadline):
        raise AssertionError("fetched after the deadline")

    result = fetch_concurrently([("v1", "job", 3)], fetch_one, deadline=5.0, clock=lambda: 5.0)

    assert isinstance(result[("v1", "job", 3)], DeadlineExceeded)
    assert "v1/job/3" in str(result[("v1", "job", 3)])


def test_tuple_keys_and_duplicates_are_fetched_once_in_first_seen_order():
    called = []
    lock = threading.Lock()

    def fetch_one(key, deadline):
        with lock:
            called.append(key)
        return key[1]

    keys = [("v1", "j1", 1), "x", ("v1", "j1", 1), "x", ("v1", "j1", 2)]
    result = fetch_concurrently(keys, fetch_one, max_concurrency=4)

    assert list(result) == [("v1", "j1", 1), "x", ("v1", "j1", 2)]
    assert sorted(map(str, called)) == sorted(map(str, result))


def test_no_keys_means_no_calls():
    def fetch_one(key, deadline):
        raise AssertionError("called")

    assert fetch_concurrently([], fetch_one) == {}
    assert fetch_concurrently(iter(()), fetch_one) == {}


@pytest.mark.parametrize("bad", [0, -1, 1.5, None, True])
def test_invalid_max_concurrency_is_refused(bad):
    with pytest.raises(ValueError, match="max_concurrency"):
        fetch_concurrently(["a", "b"], echo, max_concurrency=bad)


def test_many_keys_all_fetched_once():
    counts = {}
    lock = threading.Lock()

    def fetch_one(key, deadline):
        with lock:
            counts[key] = counts.get(key, 0) + 1
        return {"id": key}

    keys = ["job-%03d" % i for i in range(200)]
    result = fetch_concurrently(keys, fetch_one, max_concurrency=16)

    assert list(result) == keys
    assert all(result[key] == {"id": key} for key in keys)
    assert counts == dict((key, 1) for key in keys)
