# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Regular expressions over log lines, in a child process that the call ends at its deadline.

A metric's ``regex`` is the user's, and a log's lines are the service's: a pattern that backtracks catastrophically
(``(a+)+$`` on a long run of ``a``) would keep Python's ``re`` busy for years, and ``re`` can be interrupted by nothing:
it holds the GIL (so a thread of the task's process stops every other thread, the one that would end it included)
and no signal handler runs while it matches (so neither a task's ``timeout:`` in the controller's process nor the
call's deadline could end it).  So the patterns run in a child Python (``sys.executable -I -S``, the interpreter the
task runs on, nothing imported but ``re`` and ``json``), fed a page of lines at a time; the task waits for its answer
with ``poll`` until the call's deadline, and at the deadline - or when the task is interrupted, or the call ends -
the child is killed.  A task killed without a chance to clean up (a module killed on its host) leaves no matcher
spinning either: the child ends when its parent does (a watcher process it forks sees the end of a pipe only the parent
writes to; see :data:`CHILD`), and at the deadline in any case (``signal.alarm``, whose default action ends a process
whatever it is doing).  Not Linux's parent-death signal: it follows the thread that started the child, and the thread
that reads a call's first page may end long before the call.

:class:`Matcher` is what ``metric_reads.py`` uses: ``match(lines, wanted, deadline)`` answers, for each wanted pattern,
where in the lines its one group captured (the caller holds the lines: nothing is cut before it masks a capture).  No
line over :data:`LINE_CHARS` is matched: of a longer one the caller sends its end, with up to :data:`CONTEXT_CHARS`
before it that are not matched but seen (``[text, start]``: matched from ``start``), so that ``^``, ``\\A``, ``\\b`` and a
look-behind see the line as it is, not a line starting where the window does.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import sys
import threading
import time

from ansible_collections.modelarts.training.plugins.module_utils.service.watchdog import TIMER_MAX, timer_seconds

# The most of a line that is matched: no metric line is that long, and each line's matching stays bounded (of a longer
# line, the caller sends its end: metric_reads.LogScan).
LINE_CHARS = 4096
# Of a long line's window, how much of the text before it is sent with it (seen by ``\b`` and look-behinds, not matched).
CONTEXT_CHARS = 256
# The child's end, at the latest, past the deadline it was given (its alarm has a resolution of one second).
ALARM_SLACK = 2

# The child: reads the patterns, then one page of lines at a time, and answers each page on one line of JSON: for each
# wanted pattern, the ``[line number, start, end]`` of what its group captured (the caller holds the lines, and quotes a
# capture masked within its line).  A line's value is its LAST match (``best acc=0.95, acc=0.52`` says 0.52 now).
# ``first`` patterns (``pick: last``) stop at the first line that matches (the newest: lines come newest first) and
# report its last match; the others report, of each line, the match with the smallest and the one with the largest
# number (``max``/``min`` consider every match: a line's others lie between them), or its first match that is not a
# finite number - where they stop, since the caller fails closed on it.  So an answer holds at most two hits a line.
#
# The child ends when its parent does, whatever ends the parent (SIGKILL included): ``re`` holds the child's only thread,
# so a watcher process forked from it blocks on the ``life`` pipe, whose one writing end is the parent's; at its end of
# file (the parent closed it, or ended) the watcher kills the child if the child is still its parent, and leaves.  It
# holds none of the child's pipes to the parent (a child killed otherwise still ends its answer), and only the life
# pipe or its own alarm ends it (not a ^C to the group, which the parent may outlive).
CHILD = r"""
import json, os, re, signal, sys
head = json.loads(sys.stdin.readline())
alarm = int(head.get("alarm") or 0)
if alarm:
    signal.alarm(alarm)
if head.get("life") is not None and hasattr(os, "fork"):
    me = os.getpid()
    try:
        watcher = os.fork()
    except OSError:
        watcher = -1
    if watcher == 0:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            os.close(0)
            os.close(1)
            if alarm:
                signal.alarm(alarm + 1)
            while os.read(head["life"], 1):
                pass
            if os.getppid() == me:
                os.kill(me, signal.SIGKILL)
        finally:
            os._exit(0)
    os.close(head["life"])
patterns = [re.compile(text) for text in head["patterns"]]
out = sys.stdout
def value(text):
    try:
        found = float(text.strip())
    except ValueError:
        return None
    return found if found - found == 0 else None
def line_hits(finditer, number, text, first, pos=0):
    spans = [found.span(1) for found in finditer(text, pos) if found.start(1) >= 0]
    if not spans:
        return [], False
    if first:
        return [[number, spans[-1][0], spans[-1][1]]], True
    low = high = None
    for start, end in spans:
        found = value(text[start:end])
        if found is None:
            return [[number, start, end]], True
        if low is None or found < low[0]:
            low = (found, start, end)
        if high is None or found > high[0]:
            high = (found, start, end)
    return [[number, low[1], low[2]]] + ([[number, high[1], high[2]]] if high[1:] != low[1:] else []), False
for line in sys.stdin:
    page = json.loads(line)
    lines = page["lines"]
    answer = []
    for index, first in page["wanted"]:
        finditer = patterns[index].finditer
        hits = []
        for number, text in enumerate(lines):
            # [text, start]: a long line's window and the context before it, matched from start (never ^ at the cut).
            text, pos = (text, 0) if isinstance(text, str) else text
            found, stop = line_hits(finditer, number, text, first, pos)
            hits.extend(found)
            if stop:
                break
        answer.append(hits)
    out.write(json.dumps(answer) + "\n")
    out.flush()
"""


class MatchError(Exception):
    """The patterns could not be matched: the deadline passed (``timed_out``), or the child could not run or ended."""

    def __init__(self, message, timed_out=False):
        super().__init__(message)
        self.timed_out = timed_out


class Matcher(object):
    """The patterns of one call, matched in a child process started at the first page and killed by :meth:`close`.

    ``patterns`` are the regular expressions (already compiled once by the caller, so each compiles); ``clock`` is the
    call's monotonic clock, which deadlines are readings of.  Safe to use from several threads: one page is matched at
    a time.  ``executable`` is the interpreter to run (``sys.executable`` by default).
    """

    def __init__(self, patterns, clock=time.monotonic, executable=None):
        self.patterns = list(patterns)
        self.clock = clock
        self.executable = sys.executable if executable is None else executable
        self.lock = threading.Lock()
        self.process = None
        self.life = None
        self.buffer = b""
        self.closed = False
        self.pages = 0

    def _start(self, deadline):
        if not self.executable:
            raise MatchError("no Python interpreter to match regular expressions in (sys.executable is empty)")
        left = None if deadline is None else deadline - self.clock()
        if left is not None and left <= 0:
            raise MatchError("the deadline passed before the log's lines could be matched", timed_out=True)
        try:
            # The child's life pipe (see CHILD): this process holds its only writing end, closed when the child is ended.
            life, self.life = os.pipe()
            self.life = os.fdopen(self.life, "wb", 0)
            try:
                # Not AnsibleModule.run_command: the matcher serves the module, the action plugin in the controller's
                # process, the lookup and the event source alike (no AnsibleModule in three of them), and it keeps a child
                # with open pipes across pages, killed at the deadline - run_command runs a command to its end.
                self.process = subprocess.Popen(  # pylint: disable=ansible-bad-function
                    [self.executable, "-I", "-S", "-c", CHILD],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                    pass_fds=(life,),
                )
            finally:
                os.close(life)
        except OSError as error:
            self._close_life()
            raise MatchError("the regular expression matcher could not start: %s" % (error.strerror or type(error).__name__)) from None
        # Within what signal.alarm takes (a wait_timeout of 10**12 s is an alarm decades away); the watcher's is a second later.
        alarm = 0 if left is None else min(int(math.ceil(left)) + ALARM_SLACK, int(TIMER_MAX) - 1)
        self._send({"patterns": self.patterns, "alarm": alarm, "life": life}, deadline)

    def match(self, lines, wanted, deadline=None):
        """For each ``(pattern index, first)`` of ``wanted``, the ``[line number, start, end]`` of what the pattern's group
        captured in ``lines`` (``lines[number][start:end]``; a line given as ``[text, from]`` is matched from ``from``, its
        spans in ``text``), in the order of ``lines``: with ``first``, the last match of
        the first line it matches; else of each line the match of the smallest and of the largest number, or its first
        match that is no finite number, the last hit (see :data:`CHILD`).  A match whose group took no part is none.

        Raises :class:`MatchError` when the answer has not come by ``deadline`` (the child is then killed: a pattern
        that backtracks catastrophically never ends), or when the child cannot run."""
        if not wanted:
            return []
        if not self.lock.acquire(timeout=-1 if deadline is None else timer_seconds(deadline - self.clock())):
            raise MatchError("the deadline passed while another page of the log was matched", timed_out=True)
        try:
            if self.closed:
                raise MatchError("the matcher was closed: the call has ended")
            if self.process is None:
                self._start(deadline)
            self._send({"lines": list(lines), "wanted": [[int(index), bool(first)] for index, first in wanted]}, deadline)
            answer = json.loads(self._receive(deadline).decode("utf-8"))
            self.pages += 1
            return answer
        except MatchError:
            self._kill()
            raise
        finally:
            self.lock.release()

    def _send(self, data, deadline):
        payload = (json.dumps(data) + "\n").encode("ascii")
        handle = self.process.stdin
        view = memoryview(payload)
        while view:
            self._ready(handle, deadline, write=True)
            try:
                written = os.write(handle.fileno(), view[: 1 << 16])
            except OSError:
                raise MatchError("the regular expression matcher ended unexpectedly") from None
            view = view[written:]

    def _receive(self, deadline):
        handle = self.process.stdout
        while b"\n" not in self.buffer:
            self._ready(handle, deadline)
            piece = os.read(handle.fileno(), 1 << 16)
            if not piece:
                raise MatchError("the regular expression matcher ended unexpectedly")
            self.buffer += piece
        line, _newline, self.buffer = self.buffer.partition(b"\n")
        return line

    def _ready(self, handle, deadline, write=False):
        """Wait until ``handle`` can be read (or written) without blocking, or raise at ``deadline``.  A signal's
        exception (a task's ``timeout:`` in this process) interrupts the wait; the caller's ``finally`` ends the child.

        ``poll`` where there is one, never ``select.select``: a long-lived process (an execution environment, a rulebook)
        has descriptors of 1024 and more, which select refuses.  Whatever the wait raises is a :class:`MatchError`."""
        while True:
            left = None if deadline is None else deadline - self.clock()
            if left is not None and left <= 0:
                raise MatchError("matching the log's lines did not end by the call's deadline", timed_out=True)
            if self.closed:
                raise MatchError("the matcher was closed: the call has ended")
            # At most a second at a time: close() from another thread is seen within it.
            wait = 1.0 if left is None else min(1.0, left)
            try:
                with _SELECTOR() as selector:
                    selector.register(handle, selectors.EVENT_WRITE if write else selectors.EVENT_READ)
                    if selector.select(wait):
                        return
            except (OSError, ValueError) as error:
                raise MatchError("waiting for the regular expression matcher failed: %s" % (getattr(error, "strerror", None) or error)) from None

    def _kill(self):
        process = self.process
        # The life pipe first: its watcher then kills a child not yet reaped (its number cannot be another's).
        self._close_life()
        _send_kill(process)
        if process is not None:
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignored
                pass
            for handle in (process.stdin, process.stdout):
                try:
                    handle.close()
                except OSError:
                    pass
        self.process = None
        self.buffer = b""

    def close(self):
        """End the child at once, whatever it is doing (a thread waiting for its answer then raises :class:`MatchError`)."""
        self.closed = True
        self._close_life()
        _send_kill(self.process)
        if self.lock.acquire(timeout=2):
            try:
                self._kill()
            finally:
                self.lock.release()

    def _close_life(self):
        life = self.life
        if life is not None:
            try:
                life.close()  # once, whichever thread comes first (FileIO hands its descriptor to one close)
            except OSError:
                pass


# poll where the platform has it (no descriptor of its own, no limit at 1024); else the best selector there is.
_SELECTOR = getattr(selectors, "PollSelector", selectors.DefaultSelector)


def _send_kill(process):
    """SIGKILL to ``process`` (a ``subprocess.Popen`` or None) unless it has ended."""
    if process is not None and process.poll() is None:
        try:
            process.kill()
        except OSError:
            pass
