# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 8, 9 and 13: the matcher's child ends with its parent, waits on any descriptor, and no timer overflows.

* 8: a parent killed without a chance to clean up (SIGKILL) leaves no matcher spinning: the child ends with it.
* 9: in a process with descriptors of 1024 and more, the matcher still answers (``select.select`` refused them), and a
  wait that fails is a :class:`MatchError`, never another exception.
* 13: a deadline 2**32 s or 10**12 s away is a far deadline for every timer (the matcher's lock and alarm, the watchdog's
  condition, a socket's timeout, a nap, a file read's join), never an OverflowError.

Bounds are loose: they tell "ended" from "still running", they do not measure speed.
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.service import credentials as credentials_mod
from ansible_collections.modelarts.training.plugins.module_utils.results import matching
from ansible_collections.modelarts.training.plugins.module_utils.waiting import waiter as waiter_mod
from ansible_collections.modelarts.training.plugins.module_utils.service import watchdog as watchdog_mod
from ansible_collections.modelarts.training.plugins.module_utils.results.matching import MatchError, Matcher
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import HttpTransport
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import Connection

PATHOLOGICAL = r"(a+)+$"
PATHOLOGICAL_LINE = "a" * 40 + "b"
HUGE = [2**32, 10**12]
# How long "gone eventually" may take: the watcher is woken at once; this only bounds a loaded machine.
GONE_WITHIN = 60


def running(pid):
    """Whether ``pid`` runs (a zombie, killed and not yet reaped, runs no more)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, within=GONE_WITHIN):
    ends = time.monotonic() + within
    while time.monotonic() < ends and any(running(pid) for pid in pids):
        time.sleep(0.1)
    return [pid for pid in pids if running(pid)]


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as handle:
            return [int(word) for word in handle.read().split()]
    except OSError:
        return []


# -- 8: the child ends with its parent ------------------------------------------------------------------------------

PARENT = textwrap.dedent(
    """
    import sys, threading, time
    sys.path.insert(0, sys.argv[1])
    from ansible_collections.modelarts.training.plugins.module_utils.results.matching import Matcher
    matcher = Matcher([%r])
    threading.Thread(target=matcher.match, args=([%r], [(0, True)], None), daemon=True).start()
    while matcher.process is None:
        time.sleep(0.01)
    time.sleep(0.5)
    print(matcher.process.pid, flush=True)
    time.sleep(3600)
    """
    % (PATHOLOGICAL, PATHOLOGICAL_LINE)
)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc")
def test_a_parent_killed_without_cleaning_up_leaves_no_matcher_spinning():
    """No deadline (so no alarm): before issue 56 the child spun for as long as the pattern backtracks - for ever."""
    root = os.path.abspath(matching.__file__)
    for _level in range(7):  # results/matching.py -> the folder holding ansible_collections/
        root = os.path.dirname(root)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, root], stdout=subprocess.PIPE, text=True)
    left = []
    try:
        child = int(parent.stdout.readline())
        left = [child] + children(child)
        assert running(child)
        parent.kill()
        parent.wait(30)
        assert wait_gone(left) == [], "the matcher (and its watcher) outlived the process that started it"
    finally:
        if parent.poll() is None:
            parent.kill()
        for pid in left:
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_watcher_ends_with_the_matcher_when_the_call_ends_it():
    matcher = Matcher([PATHOLOGICAL, r"acc=([0-9.]+)"])
    try:
        matcher.match(["acc=1"], [(1, True)], time.monotonic() + 30)
        pids = [matcher.process.pid] + children(matcher.process.pid)
    finally:
        matcher.close()
    if os.path.exists("/proc/self/task/%d/children" % os.getpid()):
        assert len(pids) == 2, "the matcher has its watcher"
    assert wait_gone(pids) == []


# -- 9: descriptors of 1024 and more ----------------------------------------------------------------------------------


def test_the_matcher_answers_in_a_process_with_descriptors_over_1024():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip("RLIMIT_NOFILE's hard limit is %d" % hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    opened = []
    matcher = Matcher([r"acc=([0-9.]+)"])
    try:
        while not opened or opened[-1] < 1100:
            opened.append(os.open(os.devnull, os.O_RDONLY))
        answer = matcher.match(["acc=0.5", "acc=0.7"], [(0, True)], time.monotonic() + 30)
        assert matcher.process.stdout.fileno() >= 1024 and matcher.process.stdin.fileno() >= 1024
        assert len(answer) == 1 and answer[0] and answer[0][0][0] == 0
    finally:
        matcher.close()
        for fd in opened:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_wait_that_fails_is_a_match_error(monkeypatch):
    class Broken(object):
        def __enter__(self):
            return self

        def __exit__(self, *_exc):
            return False

        def register(self, *_args):
            raise ValueError("filedescriptor out of range in select()")

    matcher = Matcher([r"acc=([0-9.]+)"])
    monkeypatch.setattr(matching, "_SELECTOR", Broken)
    try:
        with pytest.raises(MatchError) as raised:
            matcher.match(["acc=1"], [(0, True)], time.monotonic() + 30)
        assert "waiting for the regular expression matcher failed: filedescriptor out of range in select()" in str(raised.value)
        assert matcher.process is None
    finally:
        matcher.close()


# -- 13: far deadlines ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", HUGE, ids=["2**32", "10**12"])
def test_a_far_deadline_is_no_overflow_of_the_matchers_lock_or_alarm(seconds):
    matcher = Matcher([r"acc=([0-9.]+)"])
    try:
        assert matcher.match(["acc=0.5"], [(0, True)], time.monotonic() + seconds)[0]
        # A second page waits for the lock with the deadline as its timeout.
        assert matcher.match(["acc=0.7"], [(0, True)], time.monotonic() + seconds)[0]
        assert matcher.pages == 2
    finally:
        matcher.close()


def test_the_watchdog_thread_survives_a_far_deadline_and_ends_a_near_one():
    failures = []
    previous = threading.excepthook
    threading.excepthook = failures.append
    dog = watchdog_mod.Watchdog(time.monotonic)
    try:
        far = dog.watch(time.monotonic() + 10**12)
        time.sleep(0.3)  # the thread now waits for the far deadline
        near = dog.watch(time.monotonic() + 0.2)
        ends = time.monotonic() + GONE_WITHIN
        while not near.killed and time.monotonic() < ends:
            time.sleep(0.05)
        assert near.killed and not far.killed
        assert not failures, [failure.exc_value for failure in failures]
    finally:
        threading.excepthook = previous
        dog.abandon()


@pytest.mark.parametrize("seconds", HUGE, ids=["2**32", "10**12"])
def test_every_timer_computed_from_a_far_deadline_is_one_the_platform_takes(seconds, tmp_path):
    watch = watchdog_mod.Watch(time.monotonic() + seconds, time.monotonic)
    assert 0 < watch.remaining() <= watchdog_mod.TIMER_MAX
    assert threading.Lock().acquire(timeout=watch.remaining())
    nap = waiter_mod.nap_length(seconds, 0.0, float(seconds))
    assert 0 < nap <= watchdog_mod.TIMER_MAX and nap < seconds
    sock = socket.socket()
    try:
        transport = HttpTransport.__new__(HttpTransport)
        transport.connection = Connection(connect_timeout=seconds, request_timeout=seconds)
        transport._clock = time.monotonic  # pylint: disable=protected-access
        for timeout in transport._timeouts(time.monotonic() + seconds):  # pylint: disable=protected-access
            sock.settimeout(timeout)
    finally:
        sock.close()
    path = tmp_path / "token"
    path.write_text("secret-token")
    assert credentials_mod.read_text_file(str(path), "auth_token_file", timeout=float(seconds)) == "secret-token"
