# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""matching.py: a metric's regex runs in a child process that the deadline, the call's end or an interrupt ends."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.results import matching
from ansible_collections.modelarts.training.plugins.module_utils.results.matching import MatchError, Matcher

# Backtracks catastrophically: on 40 "a" and a "b", Python's re takes longer than any test runs.
PATHOLOGICAL = r"(a+)+$"
PATHOLOGICAL_LINE = "a" * 40 + "b"


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie (killed, not yet reaped by its parent) is gone too: it runs no more.
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_each_wanted_pattern_answers_its_matches_in_line_order():
    matcher = Matcher([r"acc=([0-9.]+)", r"loss=([0-9.]+)"])
    try:
        lines = ["acc=0.9 loss=0.3", "nothing", "acc=0.8", "loss=0.5"]
        # [line number, start, end] of each capture: lines[0][4:7] is "0.9".
        assert matcher.match(lines, [(0, False), (1, False)], time.monotonic() + 30) == [[[0, 4, 7], [2, 4, 7]], [[0, 13, 16], [3, 5, 8]]]
        # first: the newest line only (lines come newest first).
        assert matcher.match(lines, [(0, True)], time.monotonic() + 30) == [[[0, 4, 7]]]
        # One child serves every page.
        assert matcher.pages == 2
    finally:
        matcher.close()


def test_a_group_that_did_not_take_part_is_no_match_and_a_capture_is_never_cut():
    matcher = Matcher([r"acc=(?:([0-9.]+)|n/a)", r"x=(.*)"])
    try:
        answer = matcher.match(["acc=n/a", "x=" + "9" * 500], [(0, False), (1, False)], time.monotonic() + 30)
        assert answer[0] == []
        # Its span, whole: the caller masks a capture within its line before anything is cut.
        assert answer[1] == [[1, 2, 502]]
    finally:
        matcher.close()


def test_a_catastrophic_pattern_ends_at_the_deadline_and_its_process_is_killed():
    matcher = Matcher([PATHOLOGICAL, r"acc=([0-9.]+)"])
    try:
        matcher.match(["acc=1"], [(1, True)], time.monotonic() + 30)
        pid = matcher.process.pid
        with pytest.raises(MatchError) as raised:
            matcher.match([PATHOLOGICAL_LINE], [(0, True)], time.monotonic() + 1)
        assert raised.value.timed_out
        assert "did not end by the call's deadline" in str(raised.value)
        assert gone(pid)
        assert matcher.process is None
        # The next page starts another child (with time left, it answers).
        assert matcher.match(["acc=2"], [(1, True)], time.monotonic() + 30) == [[[0, 4, 5]]]
    finally:
        matcher.close()


def test_close_from_another_thread_ends_a_match_under_way():
    matcher = Matcher([PATHOLOGICAL])
    failures = []

    def work():
        try:
            matcher.match([PATHOLOGICAL_LINE], [(0, True)], None)
        except MatchError as error:
            failures.append(error)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while matcher.process is None:
        time.sleep(0.01)
    pid = matcher.process.pid
    matcher.close()
    worker.join(30)
    assert not worker.is_alive() and failures
    assert gone(pid)


def test_an_interrupt_of_the_waiting_thread_reaches_it_and_the_caller_ends_the_child():
    """A task's timeout: in the controller's process, a signal handler raises in the thread that waits for the answer."""

    class Timeout(Exception):
        pass

    def handler(_signum, _frame):
        raise Timeout()

    matcher = Matcher([PATHOLOGICAL])
    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(Timeout):
            try:
                matcher.match([PATHOLOGICAL_LINE], [(0, True)], None)
            finally:
                pid = matcher.process.pid
                matcher.close()
        assert gone(pid)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_child_ends_itself_at_the_deadline_when_nobody_kills_it(monkeypatch):
    """A task killed without a chance to clean up leaves no child spinning: the child's own alarm ends it."""
    monkeypatch.setattr(matching, "ALARM_SLACK", 0)
    matcher = Matcher([PATHOLOGICAL])
    matcher.match(["b"], [(0, True)], time.monotonic() + 1)
    process = matcher.process
    # The next page spins; nobody reads its answer, nobody kills it.
    os.write(process.stdin.fileno(), b'{"lines": ["' + PATHOLOGICAL_LINE.encode() + b'"], "wanted": [[0, true]]}\n')
    assert process.wait(30) == -signal.SIGALRM
    matcher.close()


def test_a_missing_interpreter_is_an_error_not_a_hang():
    matcher = Matcher([r"(x)"], executable="")
    with pytest.raises(MatchError) as raised:
        matcher.match(["x"], [(0, True)], time.monotonic() + 5)
    assert "no Python interpreter" in str(raised.value)
    with pytest.raises(MatchError) as raised:
        Matcher([r"(x)"], executable="/nonexistent/python").match(["x"], [(0, True)], time.monotonic() + 5)
    assert "could not start" in str(raised.value)


def test_a_deadline_already_passed_starts_no_child():
    matcher = Matcher([r"(x)"])
    with pytest.raises(MatchError) as raised:
        matcher.match(["x"], [(0, True)], time.monotonic() - 1)
    assert raised.value.timed_out and matcher.process is None
