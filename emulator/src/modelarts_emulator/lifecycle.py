# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Phase timelines of training jobs.

A timeline is a list of steps (phase, secondary phase, length). It is driven either by the clock
(``seconds`` lengths, measured from the job's creation) or by polls (``polls`` lengths: the number
of GETs of that job which see the step). The last step has no length: the job stays there.

A poll-driven transition is stamped halfway between the poll that first saw it and the last time a
client saw the job before (a GET or a search), as if it happened while the client slept: the times
in the documents (start_time, duration, running_records) then agree with what a client observed,
and a job first seen Running has already run a while.
"""

import math
import threading

PHASES = ("Creating", "Pending", "Running", "Failed", "Completed", "Terminating", "Terminated", "Abnormal")
TERMINAL_PHASES = ("Failed", "Completed", "Terminated", "Abnormal")
DEFAULT_SECONDARY = {
    "Creating": "Creating",
    "Pending": "Queuing",
    "Running": "Running",
    "Failed": "Failed",
    "Completed": "Completed",
    "Terminating": "Terminating",
    "Terminated": "Terminated",
    "Abnormal": "Lost",
}
# How long each phase lasted in the synthesised past of a job declared with just ``phase: X``.
HISTORY_SECONDS = {"Creating": 25, "Pending": 45, "Running": 1800, "Terminating": 15}
ENDED_AGO_SECONDS = 600
_STATIC_PATHS = {
    "Creating": ["Creating"],
    "Pending": ["Creating", "Pending"],
    "Running": ["Creating", "Pending", "Running"],
    "Completed": ["Creating", "Pending", "Running", "Completed"],
    "Failed": ["Creating", "Pending", "Running", "Failed"],
    "Terminating": ["Creating", "Pending", "Running", "Terminating"],
    "Terminated": ["Creating", "Pending", "Running", "Terminating", "Terminated"],
    "Abnormal": ["Creating", "Abnormal"],
}


class TimelineError(ValueError):
    """A timeline that cannot be used (unknown phase, mixed clocks, bad lengths)."""


class Step:
    """One phase of a timeline."""

    __slots__ = ("phase", "secondary_phase", "length", "restart", "v1_status")

    def __init__(self, phase, secondary_phase=None, length=None, restart=False, v1_status=None):
        self.phase = phase
        self.secondary_phase = secondary_phase
        self.length = length
        self.restart = restart
        self.v1_status = v1_status

    def as_dict(self, mode):
        """Return the step as scenario-style data."""
        data = {"phase": self.phase, "secondary_phase": self.secondary_phase}
        if self.length is not None:
            data[mode] = self.length
        if self.restart:
            data["restart"] = True
        if self.v1_status is not None:
            data["v1_status"] = self.v1_status
        return data


class Snapshot:
    """What a job looks like at one moment: the steps entered so far with their entry times (ms)."""

    __slots__ = ("history", "created_ms", "now_ms")

    def __init__(self, history, created_ms, now_ms):
        self.history = history  # list of (Step, entered_ms)
        self.created_ms = created_ms
        self.now_ms = now_ms

    @property
    def step(self):
        """The current step."""
        return self.history[-1][0]

    @property
    def phase(self):
        """The current phase."""
        return self.step.phase

    @property
    def terminal(self):
        """Whether the current phase is terminal."""
        return self.phase in TERMINAL_PHASES


def parse_timeline(spec, default_step=1, clock=None):
    """Parse a timeline spec into (mode, steps).

    ``spec`` is a list whose items are phase names or mappings with ``phase`` and optionally
    ``secondary_phase``, ``polls`` or ``seconds``, ``restart`` and ``v1_status``. Items without a
    length use ``default_step``. ``clock`` (``polls``/``seconds``) decides the mode when no item names one.
    """
    if not isinstance(spec, list) or not spec:
        raise TimelineError("timeline must be a non-empty list")
    raw = []
    modes = set()
    for item in spec:
        if isinstance(item, str):
            item = {"phase": item}
        if not isinstance(item, dict) or "phase" not in item:
            raise TimelineError('timeline items must be phase names or mappings with a "phase" key: %r' % (item,))
        phase = str(item["phase"])
        if phase not in PHASES:
            raise TimelineError("unknown phase %r (expected one of %s)" % (phase, ", ".join(PHASES)))
        for key in ("polls", "seconds"):
            if key in item:
                modes.add(key)
        raw.append((phase, item))
    if len(modes) > 1:
        raise TimelineError("a timeline is driven by polls or by seconds, not both")
    mode = modes.pop() if modes else (clock or "polls")
    if mode not in ("polls", "seconds"):
        raise TimelineError('clock must be "polls" or "seconds"')
    steps = []
    ran = False
    for index, (phase, item) in enumerate(raw):
        last = index == len(raw) - 1
        length = None
        if not last:
            length = item.get(mode, default_step)
            try:
                length = float(length) if mode == "seconds" else int(length)
            except (TypeError, ValueError):
                raise TimelineError("step length must be a number: %r" % (length,)) from None
            if length < (0 if mode == "seconds" else 1):
                raise TimelineError("a %s length must be at least %s" % (mode, 0 if mode == "seconds" else 1))
        secondary = item.get("secondary_phase")
        if secondary is None:
            secondary = "CreateFailed" if phase == "Abnormal" and not ran else DEFAULT_SECONDARY[phase]
        ran = ran or phase == "Running"
        v1_status = item.get("v1_status")
        steps.append(Step(phase, str(secondary), length, bool(item.get("restart")), int(v1_status) if v1_status is not None else None))
    return mode, steps


def static_timeline(phase, secondary_phase=None, run_seconds=None):
    """Return (steps, seconds_before_now) for a job that has already reached ``phase``.

    The past is synthesised with realistic lengths so that times and durations are consistent.
    """
    if phase not in _STATIC_PATHS:
        raise TimelineError("unknown phase %r" % (phase,))
    items = []
    total = 0.0
    path = _STATIC_PATHS[phase]
    for index, name in enumerate(path):
        item = {"phase": name}
        if index < len(path) - 1:
            seconds = HISTORY_SECONDS[name] if name != "Running" or run_seconds is None else float(run_seconds)
            item["seconds"] = seconds
            total += seconds
        elif secondary_phase:
            item["secondary_phase"] = secondary_phase
        items.append(item)
    if phase in ("Running", "Pending", "Creating"):
        # Jobs still in progress have spent a while in their current phase too.
        total += HISTORY_SECONDS[phase] if phase != "Running" else (float(run_seconds) if run_seconds else 600.0)
    elif phase in TERMINAL_PHASES:
        # ... and finished jobs finished a while ago, not the moment the emulator started.
        total += ENDED_AGO_SECONDS
    _mode, steps = parse_timeline(items, clock="seconds")
    return steps, total


class Lifecycle:
    """A job's timeline plus what has been observed of it. Thread-safe."""

    def __init__(self, mode, steps, created_at, not_found_polls=0):
        self.mode = mode
        self.steps = steps
        self.created_at = float(created_at)  # epoch seconds on the emulator clock
        self.not_found_polls = int(not_found_polls)
        self._lock = threading.Lock()
        self.polls = 0  # polls that saw the job
        self.hidden_polls = 0  # polls answered "not found"
        self._entered = [self.created_at]  # poll mode: entry time (s) of steps 0..current
        self._last_seen = self.created_at  # poll mode: when a client last saw the job (GET or search)
        self._bulk_seen = False  # the last poll was a search by id: the next GET reads the job as that search saw it
        self._bounds = []
        total = 0
        for step in steps[:-1]:
            total += step.length
            self._bounds.append(total)

    def _index_for_polls(self, polls):
        for index, bound in enumerate(self._bounds):
            if polls <= bound:
                return index
        return len(self.steps) - 1

    def _index_for_time(self, now):
        elapsed = now - self.created_at
        for index, bound in enumerate(self._bounds):
            if elapsed < bound:
                return index
        return len(self.steps) - 1

    @property
    def created_ms(self):
        """The creation time in milliseconds, as the API gives ``metadata.create_time``."""
        return int(self.created_at * 1000)

    def settles_at_ms(self):
        """The first millisecond (epoch, emulator clock) from which the job's phase can no longer change: the start of its
        last step on a clock-driven timeline, with 2 ms to spare for the float arithmetic of :meth:`_index_for_time`;
        ``math.inf`` for a poll-driven one (its phase follows the polls, not the clock)."""
        if self.mode != "seconds":
            return math.inf
        return math.floor((self.created_at + (self._bounds[-1] if self._bounds else 0.0)) * 1000) + 2

    def visible(self, now):
        """Whether the job exists yet (for listing; does not count a poll)."""
        with self._lock:
            return now >= self.created_at and self.hidden_polls >= self.not_found_polls

    def poll(self, now, bulk=False):
        """Count one poll of this job and return its Snapshot, or None when it is 'not found' yet.

        ``bulk``: the poll is a search that returned the job (by id, or one counted as a poll).  A GET that follows such a poll,
        with no other poll between, is the client reading the full document of what the search
        showed: it is not counted again, so one observation costs one step whichever way it is made.
        """
        with self._lock:
            if now < self.created_at:
                return None
            if self.hidden_polls < self.not_found_polls:
                self.hidden_polls += 1
                return None
            if not bulk and self._bulk_seen:
                self._bulk_seen = False
                return self._snapshot(now, self.polls)
            self._bulk_seen = bulk
            self.polls += 1
            return self._snapshot(now, self.polls)

    def peek(self, now):
        """Return the current Snapshot without counting a poll (None when not visible)."""
        with self._lock:
            if now < self.created_at or self.hidden_polls < self.not_found_polls:
                return None
            return self._snapshot(now, max(self.polls, 1) if self.mode == "polls" else 0)

    def _snapshot(self, now, polls):
        if self.mode == "seconds":
            index = self._index_for_time(now)
            entered = [self.created_at] + [self.created_at + b for b in self._bounds]
            history = [(self.steps[i], int(entered[i] * 1000)) for i in range(index + 1)]
        else:
            index = self._index_for_polls(polls)
            while len(self._entered) <= index:
                self._entered.append((self._last_seen + now) / 2.0)
            self._last_seen = max(self._last_seen, now)
            history = [(self.steps[i], int(self._entered[i] * 1000)) for i in range(index + 1)]
        return Snapshot(history, self.created_ms, int(now * 1000))

    def describe(self, now):
        """Return a summary for the control API."""
        snap = self.peek(now)
        return {
            "clock": self.mode,
            "phase": snap.phase if snap else None,
            "polls": self.polls,
            "not_found_polls_left": max(0, self.not_found_polls - self.hidden_polls),
            "timeline": [s.as_dict(self.mode) for s in self.steps],
        }
