# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Wait for training jobs to reach a phase: small pure functions and one loop over them.

Nothing here does I/O. ``wait_for_jobs`` is given a ``poll(keys, deadline)`` callable, a monotonic
``clock``, a ``sleeper`` and a wall-clock ``now``, so tests drive it with a fake clock and
recorded phase sequences, and never really sleep.

Rules, all measured on ``clock``:

* One deadline for the whole call: ``start + timeout``, shared by every job.
* Each round polls every job that is not yet in a ``wait_for`` phase; a job that is stops being
  polled. The interval between rounds starts at ``sleep`` and is multiplied by ``GROWTH_FACTOR``
  (1.5) after every sleep, up to ``max(sleep, sleep_max)``. After a round the service throttled
  (``throttled()``), it is multiplied by ``THROTTLED_GROWTH`` (2) before the nap, under the same cap.
  How a round learns the phases (a search per 10 jobs, or one GET per job) is ``poll``'s business
  (``observer``'s phase sources).
* No sleep runs past the deadline: a nap is ``min(interval, time left)``. When a nap reaches the
  deadline, one last round is polled right at it, so a job that finished during that nap is seen.
  That last round (and only it) is polled with the deadline moved ``grace`` seconds on (the caller
  passes one ``request_timeout``): the one overrun the deadline allows, and a bounded one. A round
  that itself runs past the deadline is not followed by another.
* ``timeout=0`` means "look once, do not wait": that single round is the last round.
* The wait ends at once, with outcome ``failed``, when any job is in a ``fail_on`` phase, or is in a
  final phase (``TERMINAL_PHASES``) that is outside ``wait_for``: such a job can never reach
  ``wait_for``, so waiting for it would only spin until the deadline.
* Errors: ``getattr(exc, 'transient', False)`` errors are tolerated until the deadline;
  ``getattr(exc, 'not_found', False)`` errors are tolerated during a job's first
  ``not_found_tolerance`` polls (a job just created may not be visible yet; not one asked for by a value that
  cannot be an id, ``not_an_id``), and end the wait with outcome ``error`` afterwards; any other error ends it at
  once with outcome ``error``.  A transient error
  that is also ``unreached`` (no connection to a host that has not answered once: refused, a name that does
  not resolve) ends it too (``unreached``): what never answered is not waited for until the deadline.
* Only a job whose last item is in ``wait_for`` counts as done; the outcome is ``satisfied`` only
  when every job is, and none of them is done by a search's word alone (``unconfirmed``): those are
  read by their own GET first.
"""

from __future__ import annotations

import datetime
import time

from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import wait_option_problems
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import TERMINAL_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_job
from ansible_collections.modelarts.training.plugins.module_utils.service.watchdog import timer_seconds

OUTCOME_SATISFIED = "satisfied"
OUTCOME_FAILED = "failed"
OUTCOME_TIMEOUT = "timeout"
OUTCOME_ERROR = "error"

# Verdicts on one job after one observation.
JOB_DONE = "done"
JOB_FAILED = "failed"
JOB_UNREACHABLE = "unreachable"
JOB_WAITING = "waiting"
JOB_TOLERATED = "tolerated"
JOB_FATAL = "fatal"

# Verdicts that end the whole wait at once.
ENDING_VERDICTS = frozenset((JOB_FAILED, JOB_UNREACHABLE, JOB_FATAL))

GROWTH_FACTOR = 1.5
# After a round the service throttled, the interval grows by this much instead (still capped).
THROTTLED_GROWTH = 2.0
DEFAULT_NOT_FOUND_TOLERANCE = 3


class MissingResult(Exception):
    """``poll`` returned nothing for a key it was asked about: a bug in the caller, so fatal."""


def utc_now():
    """Return the current wall-clock time as an aware UTC datetime (the default ``now``)."""
    return datetime.datetime.now(datetime.timezone.utc)


def format_utc(moment):
    """Format a datetime as ISO 8601 UTC to the second, e.g. ``2026-01-31T12:00:05Z``.

    A naive datetime is taken to be UTC already.
    """
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment.replace(microsecond=0).isoformat() + "Z"


def validate_wait_options(wait_for, fail_on, timeout, sleep, sleep_max, not_found_tolerance=DEFAULT_NOT_FOUND_TOLERANCE):
    """Return a list of problems with the wait options (empty when they are usable); the rules live in ``wait_options``."""
    return wait_option_problems(wait_for, fail_on, timeout, sleep, sleep_max, not_found_tolerance)


def next_interval(interval, cap, growth=GROWTH_FACTOR):
    """Return the interval to use after sleeping ``interval``: grown by ``growth``, at most ``cap``."""
    return min(interval * growth, cap)


def nap_length(interval, now, deadline):
    """Return how long to sleep now: the interval, cut short so as not to pass the deadline (and to what a sleep takes:
    a ``wait_timeout`` and ``wait_sleep_max`` of 10**12 s nap for decades at a time, never an OverflowError)."""
    return timer_seconds(min(interval, deadline - now))


def _flag(exc, name):
    # A method where a property was meant would otherwise read as true and tolerate every error.
    value = getattr(exc, name, False)
    return bool(value) and not callable(value)


def judge(observation, poll_number, wait_for, fail_on, terminal_phases=TERMINAL_PHASES, not_found_tolerance=DEFAULT_NOT_FOUND_TOLERANCE):
    """Classify one job's latest observation; return ``(verdict, reason)``.

    ``observation`` is an item dict or the exception its fetch raised; ``poll_number`` counts this
    job's polls so far, this one included. ``reason`` is a short text for ending verdicts, else None.
    """
    if isinstance(observation, BaseException):
        # A value that cannot be a job id will never be found: no job just created is behind it (ModelArtsError.not_an_id).
        if _flag(observation, "not_found") and not _flag(observation, "not_an_id"):
            if poll_number <= not_found_tolerance:
                return JOB_TOLERATED, None
            return JOB_FATAL, "not found after %d poll%s: %s" % (poll_number, "" if poll_number == 1 else "s", observation)
        if _flag(observation, "transient"):
            return JOB_TOLERATED, None
        return JOB_FATAL, str(observation)
    phase = observation.get("phase")
    if phase in wait_for:
        return JOB_DONE, None
    if phase in fail_on:
        reason = observation.get("failure_reason")
        return JOB_FAILED, "reached phase %s: %s" % (phase, reason if reason else "no failure reason given")
    if phase in terminal_phases:
        return JOB_UNREACHABLE, "is %s, a final phase outside wait_for (%s), so it can never get there" % (phase, ", ".join(wait_for))
    return JOB_WAITING, None


def unreached(observation, judged):
    """``judged`` made fatal for a tolerated error that says the service has not answered once (``unreached``)."""
    if judged[0] == JOB_TOLERATED and _flag(observation, "unreached"):
        return JOB_FATAL, "%s (no answer has come from there yet: the wait ends now, not at wait_timeout)" % (observation,)
    return judged


def record_phase(history, phase, at):
    """Append ``{phase, at}`` to ``history`` when ``phase`` differs from the last entry; return whether it did."""
    if history and history[-1]["phase"] == phase:
        return False
    history.append({"phase": phase, "at": at})
    return True


def wait_outcome(verdicts):
    """Return the outcome for a set of verdicts, or None while the wait must go on.

    A job in a fail_on or unreachable phase wins over an error on another job, because it is a
    definite answer about the jobs themselves; every ending job is still named in the message.
    """
    values = set(verdicts.values())
    if values & {JOB_FAILED, JOB_UNREACHABLE}:
        return OUTCOME_FAILED
    if JOB_FATAL in values:
        return OUTCOME_ERROR
    if values <= {JOB_DONE}:
        return OUTCOME_SATISFIED
    return None


def _seconds(value):
    return "%.1fs" % (value,)


class WaitResult:
    """What a wait saw, per job and overall.

    Attributes (dicts are keyed by job key and ordered like the keys given):

    * ``outcome``: ``'satisfied'``, ``'failed'``, ``'timeout'`` or ``'error'``.
    * ``items``: the last item seen per key, or None when none was ever fetched.
    * ``polls``: requests made per key (those that failed included; the ``initial`` fetch counts).
    * ``phase_history``: per key, a list of ``{'phase', 'at'}`` phase changes, the first
      observation included; ``at`` is ISO 8601 UTC wall-clock time.
    * ``waited_seconds``: seconds the whole wait took, on the monotonic clock.
    * ``job_waited_seconds``: per key, seconds from the start to that job's last observation.
    * ``verdicts``: per key, the verdict on its last observation (``JOB_*``).
    * ``failures``: key -> reason, for the jobs that ended the wait (fail_on phase, unreachable
      final phase, fatal error).
    * ``errors``: key -> the exception raised by that key's latest poll, or None when it succeeded.
    * ``wait_for``, ``fail_on``, ``timeout``: the options, for the message.
    """

    def __init__(self, keys, wait_for, fail_on, timeout):
        self.outcome = None
        self.items = dict((key, None) for key in keys)
        self.polls = dict((key, 0) for key in keys)
        self.phase_history = dict((key, []) for key in keys)
        self.job_waited_seconds = dict((key, 0.0) for key in keys)
        self.verdicts = dict((key, JOB_WAITING) for key in keys)
        self.errors = dict((key, None) for key in keys)
        self.failures = {}
        self.waited_seconds = 0.0
        self.wait_for = list(wait_for)
        self.fail_on = list(fail_on)
        self.timeout = timeout

    @property
    def ok(self):
        """True when every job reached a wait_for phase."""
        return self.outcome == OUTCOME_SATISFIED

    def unsatisfied_keys(self):
        """Keys not in a wait_for phase: those that ended the wait first, then the rest in key order."""
        rest = [key for key, verdict in self.verdicts.items() if verdict != JOB_DONE and key not in self.failures]
        return list(self.failures) + rest

    def job_fields(self, key):
        """Return the wait keys the module adds to one job's item: waited_seconds, polls, phase_history."""
        return {
            # Milliseconds are what a monotonic reading can tell; its float's last digits are noise.
            "waited_seconds": round(self.job_waited_seconds[key], 3),
            "polls": self.polls[key],
            "phase_history": [dict(entry) for entry in self.phase_history[key]],
        }

    def job_message(self, key, note=None):
        """One sentence on why a job is not satisfied (empty for a satisfied one); a caller's ``note`` on a failed job
        follows it after ``"; "``."""
        item = self.items[key]
        who = describe_job(key, item)
        if key in self.failures:
            separator = ": " if self.verdicts[key] == JOB_FATAL else " "
            return who + separator + self.failures[key] + ("; " + note if note else "")
        if self.verdicts[key] == JOB_DONE:
            return ""
        waited = _seconds(self.job_waited_seconds[key])
        if item:
            text = "%s: last phase seen %s, after waiting %s" % (who, item.get("phase"), waited)
        else:
            text = "%s: never seen, after waiting %s" % (who, waited)
        if self.errors[key] is not None:
            text += " (last poll failed: %s)" % (self.errors[key],)
        return text

    def message(self, limit=None, notes=None):
        """Render a concise human message: what happened, then one sentence per unsatisfied job.

        ``limit`` caps how many jobs are named (None names them all). Only item fields and
        ``str(exc)`` of fetch errors are used, so the text holds no secrets; ``notes`` (key -> text, already
        safe) adds the caller's words to a failed job's sentence.
        """
        total = len(self.items)
        waited = _seconds(self.waited_seconds)
        targets = ", ".join(self.wait_for)
        if self.outcome == OUTCOME_SATISFIED:
            return "all %d training job%s reached %s after %s" % (total, "" if total == 1 else "s", targets, waited)
        keys = self.unsatisfied_keys()
        if self.outcome == OUTCOME_TIMEOUT:
            head = "timed out after %s (wait_timeout %s) waiting for %s" % (waited, self.timeout, targets)
        elif self.outcome == OUTCOME_FAILED:
            head = "stopped waiting for %s after %s" % (targets, waited)
        else:
            head = "stopped waiting for %s after %s on an error" % (targets, waited)
        head += ", %d of %d training job%s not %s" % (len(keys), total, "" if total == 1 else "s", " or ".join(self.wait_for))
        shown = keys if limit is None else keys[:limit]
        parts = [self.job_message(key, (notes or {}).get(key)) for key in shown]
        if len(shown) < len(keys):
            parts.append("and %d more" % (len(keys) - len(shown),))
        return head + ": " + "; ".join(parts)

    def complete(self, results, now=utc_now):
        """Take the fuller items of ``results`` (``key -> item or exception``, the phase source's ``complete``) in
        place of the last ones seen; an error leaves the last item as it was.  A phase that changed meanwhile joins
        ``phase_history`` (the verdicts stay those of the wait's rounds)."""
        for key, value in (results or {}).items():
            if key in self.items and isinstance(value, dict):
                self.items[key] = value
                if self.phase_history[key]:
                    record_phase(self.phase_history[key], value.get("phase"), format_utc(now()))

    def observe(self, key, observation, elapsed, stamp, judged, ran_out=False):
        """Record one observation of ``key`` with its verdict ``judged`` = ``(verdict, reason)``.

        ``ran_out``: the observation is a GET the wait ran out on (:func:`ran_out`).  After a GET that left the job
        unfinished, what that GET said is what is reported.  A job never read, or done by a search's word only, keeps
        the error.
        """
        verdict, reason = judged
        self.job_waited_seconds[key] = elapsed
        before, self.verdicts[key] = self.verdicts[key], verdict
        if isinstance(observation, BaseException):
            seen = self.items[key] is not None or self.errors[key] is not None
            if not (ran_out and seen and before != JOB_DONE):
                self.errors[key] = observation
        else:
            self.errors[key] = None
            self.items[key] = observation
            record_phase(self.phase_history[key], observation.get("phase"), stamp)
        if verdict in ENDING_VERDICTS:
            self.failures[key] = reason


def _result_for(results, key):
    value = results.get(key)
    if isinstance(value, (dict, BaseException)):
        return value
    return MissingResult("poll returned no result for this job")


def _poll_safely(poll, keys, deadline, known=()):
    """``{key: item or exception}`` for ``keys``, then for the other ``known`` keys ``poll`` also answered for."""
    try:
        results = poll(list(keys), deadline)
    except Exception as exc:
        # A poll that fails as a whole fails for each job, so the usual error rules apply.
        return dict((key, exc) for key in keys)
    answers = dict((key, _result_for(results, key)) for key in keys)
    for key in known:
        if key not in answers and isinstance(results.get(key), (dict, BaseException)):
            answers[key] = results[key]
    return answers


def ran_out(observation, given, deadline):
    """True when ``observation`` is a request the wait's own ``deadline`` cut short (``deadline_cut``) and that deadline
    was all it was ``given`` (no ``grace`` past it): the wait running out during it, not a failed request.  The caller
    reports what the request before it said, when there was one."""
    return given == deadline and _flag(observation, "deadline_cut")


def _counts_as_poll(observation):
    # A request the fan-out never sent (deadline already passed) or never answered is not a GET.
    return not (_flag(observation, "not_sent") or isinstance(observation, MissingResult))


def wait_for_jobs(
    keys,
    poll,
    waiting,
    clock=time.monotonic,
    sleeper=time.sleep,
    now=utc_now,
    not_found_tolerance=DEFAULT_NOT_FOUND_TOLERANCE,
    initial=None,
    terminal_phases=TERMINAL_PHASES,
    growth=GROWTH_FACTOR,
    start=None,
    grace=0.0,
    throttled=None,
    unconfirmed=None,
    stalled=None,
):
    """Poll jobs until all are in ``waiting.wait_for``, any fails, or the shared deadline passes.

    ``waiting`` is the wait's typed part (``wait_options.WaitSettings``, as the door resolved it): the phases that end
    the wait well (``wait_for``) and badly (``fail_on``), its ``timeout``, and the polling interval and cap (``sleep``,
    ``sleep_max``) in seconds.

    ``poll(keys, deadline)`` returns a dict ``key -> item or Exception`` for the keys asked (the
    module passes a closure over ``fanout.fetch_concurrently``). ``initial``, when given, is the
    result of a first fetch already made (``key -> item or Exception``): it is judged as the first
    round, counted as one poll per key, and keys it lacks are polled at once. ``start`` is the
    ``clock`` reading the call began at, so that fetch counts against the deadline; it defaults to
    ``clock()`` on entry. ``now()`` gives the wall-clock time for ``phase_history``. ``grace`` is how far
    past the deadline the requests of the last round may run (so the whole call ends by
    ``start + timeout + grace``).  ``throttled()``, when given, says whether the service throttled the
    calls since it was last asked: the next nap is then at least ``THROTTLED_GROWTH`` times the interval
    (capped as usual), so rounds slow down under throttling instead of hammering.  ``unconfirmed()``, when given,
    names the jobs whose item so far comes from a search only (``observer``): a wait every job of which is done is
    satisfied only once those are read again - the round that does so follows at once, within ``grace`` of the
    deadline like a last round - and ``poll`` may answer for jobs done already (a phase source confirming them with
    the room a round leaves), which are judged again like any observation.  ``stalled(item)``, when given, says why a job
    still waited for stopped making progress (option ``stall``: ``progress.Progress.stalled``), or None: such a job ends
    the wait like a ``fail_on`` phase.

    Returns a ``WaitResult``; raises ``ValueError`` for unusable options (see
    ``validate_wait_options``). The rules are in this module's docstring.
    """
    wait_for, fail_on, timeout, sleep, sleep_max = waiting.wait_for, waiting.fail_on, waiting.timeout, waiting.sleep, waiting.sleep_max
    problems = validate_wait_options(wait_for, fail_on, timeout, sleep, sleep_max, not_found_tolerance)
    if problems:
        raise ValueError("; ".join(problems))
    keys = list(dict.fromkeys(keys))
    wait_for = frozenset(wait_for)
    fail_on = frozenset(fail_on or ())
    result = WaitResult(keys, sorted(wait_for), sorted(fail_on), timeout)
    started = clock() if start is None else start
    deadline = started + timeout
    cap = max(sleep, sleep_max)
    interval = sleep
    last_round = timeout <= 0
    pending = keys
    first_round = initial is not None

    confirming = False  # this round reads the jobs done by a search only (see unconfirmed)
    while True:
        round_deadline = deadline + grace if last_round or confirming else deadline
        if first_round:
            observations = dict((key, _result_for(initial, key)) for key in pending if key in initial)
            missing = [key for key in pending if key not in initial]
            if missing:
                observations.update(_poll_safely(poll, missing, round_deadline, keys))
            observations = dict((key, observations[key]) for key in pending)
            first_round = False
        else:
            observations = _poll_safely(poll, pending, round_deadline, keys) if pending else {}
        elapsed = clock() - started
        stamp = format_utc(now())
        for key, observation in observations.items():
            if _counts_as_poll(observation):
                result.polls[key] += 1
            judged = judge(observation, result.polls[key], wait_for, fail_on, terminal_phases, not_found_tolerance)
            if stalled is not None and judged[0] == JOB_WAITING and stalled(observation):
                judged = JOB_FAILED, stalled(observation)
            result.observe(key, observation, elapsed, stamp, unreached(observation, judged), ran_out(observation, round_deadline, deadline))
        pending = [key for key in keys if result.verdicts[key] != JOB_DONE]

        outcome = wait_outcome(result.verdicts)
        if outcome == OUTCOME_SATISFIED and unconfirmed is not None:
            doubtful = set(unconfirmed())
            pending = [key for key in keys if key in doubtful]
            if pending:
                # Done by a search only: not an answer to open a gate on until each job's own GET says so.
                outcome, confirming = None, not confirming
                if confirming:
                    continue
        confirming = False
        if outcome is None and last_round:
            outcome = OUTCOME_TIMEOUT
        if outcome is None:
            current = clock()
            remaining = deadline - current
            if remaining <= 0:
                outcome = OUTCOME_TIMEOUT
            else:
                if throttled is not None and throttled():
                    interval = min(cap, interval * THROTTLED_GROWTH)
                nap = nap_length(interval, current, deadline)
                sleeper(nap)
                # Decided from the nap, not by re-reading the clock: float rounding could leave the
                # clock a hair short of the deadline and skip the last look.
                last_round = nap >= remaining
                interval = next_interval(interval, cap, growth)
                continue
        result.outcome = outcome
        result.waited_seconds = clock() - started
        return result
