# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a ``Running`` job stopped making progress (option ``stall``, issue 59): pure functions over what the caller
read and an injected ``now`` (epoch seconds).  Nothing here does I/O.

* :func:`judge_progress` gives an item's ``progress``, ``{stalled, since, signals: {idle, quiet, service}, problems}``,
  from the checked :class:`~.wait_options.StallSettings`, the job (an item or its v2 document), each task's metrics
  answer, the log-size history and the job's events.  :func:`stall_words` and :func:`stall_message` word a stalled
  job's verdict for ``msg``; :func:`stall_identity` names a stall for the event source's ``event_id``;
  :func:`record_log_size` merges one poll's log size into the history the caller keeps between polls.
* **Evidence, never guesses.**  A signal that cannot be read (no ``gpuUtil``/``npuUtil`` - a CPU flavour -, ``-1``
  samples, fewer averages than ``idle_minutes``, a refused or failed read, a log not ready) is a ``problems`` line and
  never a stall.  No signal counts inside the grace (``grace_minutes`` since the job's last start: its newest running
  record, or the end of a fault-tolerance recovery, so a job the service restarted starts its grace again), nor
  before the last start: the windows are cut at it.
* ``require`` (``all``/``any``) applies over the measured signals asked for (idle, quiet); the service's own hang
  verdict (a ``JobHanged`` event, or a recover record with ``fault_scenario: job_hanged``) newer than the last start
  stalls a job on its own.
* ``since`` is when the stall began: the start of the accelerators' idle run (the latest over the tasks), the last log
  growth, the service's first hang after the last start; with ``all`` the latest of the measured ones, and the
  earliest of what stalls the job on its own.
"""

from __future__ import annotations

import datetime
import math
import re

from ansible_collections.modelarts.training.plugins.module_utils.text import describe_job, label

RUNNING = "Running"
# The accelerator metrics of the metrics call, in the order one is preferred when a task reports both with samples.
ACCELERATOR_METRICS = ("gpuUtil", "npuUtil")
NO_SAMPLE = -1
# At most this many trailing -1 averages (minutes the service has not averaged yet) are skipped before the idle window.
TRAILING_GAPS = 2
HANG_SCENARIO = "job_hanged"
# An event is the service's hang verdict only in the service's own form, at level Warning or Error and (when the event
# says its source) from the Job: a reason/type/event_type/name that IS JobHanged, or a message that starts with the
# tag "[JobHanged]" or is the console's sentence ("The system detects that your training job may be suspended", with
# what the console adds after it).  A job name, a task's line or an account notice that merely mentions the word
# ("Job JobHanged-repro started.", "resources may be suspended") is not the service's verdict.
HANG_NAME = "jobhanged"
HANG_EVENT_FIELDS = ("reason", "type", "event_type", "name")
HANG_TAG = "[jobhanged]"
HANG_SENTENCE = re.compile(r"^The system detects that your training job may be suspended(?:\.|$)", re.IGNORECASE)
HANG_LEVELS = ("warning", "error")
HANG_SOURCE = "job"
# A JobHanged event this close to a job_hanged recover record is the same hang, counted once.
SAME_HANG_SECONDS = 300
PROBLEM_CHARS = 300
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2})$")
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


# -- reading the service's answers -------------------------------------------------------------------------------


def iso(seconds):
    """Epoch seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (None stays None)."""
    if seconds is None:
        return None
    return (_EPOCH + datetime.timedelta(seconds=int(math.floor(seconds)))).strftime("%Y-%m-%dT%H:%M:%SZ")


def event_seconds(value):
    """An event's time as epoch seconds: epoch milliseconds, or ISO 8601 with a zone (``+08:00``, ``Z``); None when it
    cannot be read (a time without a zone is not guessed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        value = int(value.strip())
    if isinstance(value, (int, float)):
        return value / 1000.0 if math.isfinite(value) and value > 0 else None
    match = _ISO.match(value.strip()) if isinstance(value, str) else None
    if not match:
        return None
    day, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "UTC", "GMT") else zone if ":" in zone else zone[:3] + ":" + zone[3:]
    try:
        moment = datetime.datetime.fromisoformat("%sT%s%s" % (day, clock, zone))
    except ValueError:
        return None
    return (moment - _EPOCH).total_seconds() + (float(fraction) if fraction else 0.0)


def _seconds(value, milliseconds=False):
    """A whole positive time from a document (``start_at`` in seconds, ``start_time`` in milliseconds), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value / 1000.0 if milliseconds else float(value)


def _dicts(value):
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def _document(job):
    """``(phase, status)`` of an item (its ``details`` is the v2 document) or of a v2 document."""
    job = job if isinstance(job, dict) else {}
    doc = job.get("details") if isinstance(job.get("details"), dict) else job
    status = doc.get("status") if isinstance(doc.get("status"), dict) else {}
    phase = job.get("phase") if "phase" in job and "status" not in job else status.get("phase")
    return phase, status


def last_start(status):
    """When the job last started, in epoch seconds: the latest of ``status.start_time``, its running records'
    ``start_at`` and the end of a finished fault-tolerance recovery (``recover_end_at``); None when none is given."""
    starts = [_seconds(status.get("start_time"), milliseconds=True)]
    for record in _dicts(status.get("running_records")):
        starts.append(_seconds(record.get("start_at")))
        starts.extend(_seconds(recover.get("recover_end_at")) for recover in _dicts(record.get("recover_records")))
    starts = [start for start in starts if start is not None]
    return max(starts) if starts else None


def _tasks(status, *more):
    names = [task for task in status.get("tasks") or () if isinstance(task, str)] if isinstance(status.get("tasks"), list) else []
    for mapping in more:
        names.extend(task for task in mapping or () if task not in names)
    return names


def _error_text(error):
    status = getattr(error, "status", None)
    text = str(error) or type(error).__name__
    if isinstance(status, int) and not isinstance(status, bool) and ("%d" % status) not in text:
        text = "HTTP %d: %s" % (status, text)
    return label(text, PROBLEM_CHARS)


# -- idle accelerators -------------------------------------------------------------------------------------------


def _series(answer):
    """``{metric: [values]}`` of one task's metrics answer (values that are not numbers become -1: no sample)."""
    found = {}
    for entry in _dicts(answer.get("metrics") if isinstance(answer, dict) else None):
        if entry.get("metric") in ACCELERATOR_METRICS and isinstance(entry.get("value"), list):
            found[entry["metric"]] = [
                float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0 else NO_SAMPLE
                for value in entry["value"]
            ]
    return found


def _pick_metric(series):
    """The accelerator metric to judge a task by: the one with the most samples (gpuUtil on a tie); None if none."""
    ranked = sorted(series, key=lambda name: (-sum(1 for value in series[name] if value != NO_SAMPLE), ACCELERATOR_METRICS.index(name)))
    return ranked[0] if ranked else None


def _idle_task(task, answer, settings, now, start, origin=None):
    """``(entry, held, run_start, problem)`` for one task: ``entry`` is ``{metric, last, peak}`` (None when nothing was
    read), ``run_start`` the start of its idle run (epoch seconds, on the grid of one-minute averages that begins at
    ``origin`` - the job's first start -, cut at the last start)."""
    if isinstance(answer, BaseException):
        return None, False, None, "idle: task %s: its metrics could not be read (%s)" % (label(task), _error_text(answer))
    if not isinstance(answer, dict):
        return None, False, None, "idle: task %s: its metrics were not read" % label(task)
    series = _series(answer)
    metric = _pick_metric(series)
    if metric is None:
        return None, False, None, "idle: task %s reports no gpuUtil or npuUtil (a CPU flavour?): its accelerators cannot be judged" % label(task)
    values = series[metric]
    # The newest minutes may not be averaged yet (-1): up to TRAILING_GAPS of them are skipped, and the window (and the
    # idle run) ends at the newest real sample.
    skipped = 0
    while skipped < TRAILING_GAPS and skipped < len(values) and values[-1 - skipped] == NO_SAMPLE:
        skipped += 1
    values = values[: len(values) - skipped]
    window = values[-settings.idle_minutes :]
    samples = [value for value in window if value != NO_SAMPLE]
    entry = {"metric": metric, "last": samples[-1] if samples else None, "peak": max(samples) if samples else None}
    if any(value > settings.idle_below for value in samples):
        return entry, False, None, None  # busy: evidence enough, whatever else the window holds
    if start is None or now - (settings.idle_minutes + skipped) * 60 < start:
        return entry, False, None, None  # the window reaches back before the last start: not yet, and no problem
    if len(values) < settings.idle_minutes:
        return (
            entry,
            False,
            None,
            "idle: task %s has %d one-minute averages of %s, idle_minutes needs %d" % (label(task), len(values), metric, settings.idle_minutes),
        )
    if len(samples) < len(window):
        return (
            entry,
            False,
            None,
            "idle: task %s: %d of the newest %d averages of %s have no sample (-1)" % (label(task), len(window) - len(samples), len(window), metric),
        )
    run = 0
    for value in reversed(values):
        if value == NO_SAMPLE or value > settings.idle_below:
            break
        run += 1
    # The averages are whole minutes counted from the job's first start (``origin``): the newest one ends at the last
    # such minute boundary before ``now``, so the run's start stays the same from poll to poll (and so the stall's
    # ``since``, and its event_id), wherever in a minute the job started.  The skipped trailing -1 minutes come after
    # the run: it is dated from the newest real sample, and stays put when they are averaged later.
    base = origin if origin is not None and origin <= now else start
    run_start = base + math.floor((now - base) / 60.0) * 60.0 - (run + skipped) * 60
    return entry, True, max(run_start, start), None


def first_start(status):
    """When the job first started, in epoch seconds: ``status.start_time``, else its earliest running record's
    ``start_at``; None when neither is given.  Its one-minute averages are counted from then."""
    first = _seconds(status.get("start_time"), milliseconds=True)
    if first is not None:
        return first
    starts = [_seconds(record.get("start_at")) for record in _dicts(status.get("running_records"))]
    starts = [start for start in starts if start is not None]
    return min(starts) if starts else None


def _idle(settings, metrics, tasks, now, start, origin=None):
    signal = {"held": False, "minutes": settings.idle_minutes, "tasks": {}}
    problems = []
    starts = []
    for task in tasks:
        entry, held, run_start, problem = _idle_task(task, (metrics or {}).get(task), settings, now, start, origin)
        if entry is not None:
            signal["tasks"][task] = entry
        if problem:
            problems.append(problem)
        if held:
            starts.append(run_start)
    if not tasks:
        problems.append("idle: the job names no task whose metrics could be read")
    signal["held"] = bool(tasks) and len(starts) == len(tasks)
    return signal, (max(starts) if signal["held"] else None), problems


# -- a silent log ------------------------------------------------------------------------------------------------


def record_log_size(history, when, size):
    """``history`` (one task's ``[(time, size)]``, oldest first, as the caller keeps it between polls) with the size
    read at ``when`` (epoch seconds; the AOM call's ``end_line`` or the preview's ``full_size``) merged in: a new list.

    Bounded whatever ``quiet_minutes`` and however long the wait: it keeps the last observation before the current size
    (the growth's evidence), the first observation of the current size (when it was last seen growing) and the newest
    one - at most three.  A size that is not a whole number (a log not ready: None), or an observation not newer than
    the newest kept, leaves the history as it is."""
    entries = [tuple(entry) for entry in history or ()]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0 or (entries and when <= entries[-1][0]):
        return entries
    entries.append((when, size))
    first = len(entries) - 1
    while first > 0 and entries[first - 1][1] == size:
        first -= 1
    keep = ([entries[first - 1]] if first > 0 else []) + [entries[first]] + ([entries[-1]] if first < len(entries) - 1 else [])
    return keep


def _quiet(settings, logs, log_errors, tasks, start):
    """``({held, since}, since, problems)``: quiet when no task's log changed across ``quiet_minutes`` of polling, as
    observed (the newest observation, not ``now``: a poll that read nothing proves nothing), cut at the last start.

    ``since`` is the last growth seen (the first observation of the current size), or, when no task's log was seen
    growing, the first observation - but only once the observations span ``quiet_minutes``: before that, with no
    growth seen, quiet is unmeasured (``since: null``, a ``problems`` line), neither held nor read as progress (one
    read, or a few polls, cannot tell a silent log from one that just grew)."""
    problems = []
    changes = []
    observed = []
    grown = False
    for task in tasks:
        error = (log_errors or {}).get(task)
        entries = [entry for entry in (logs or {}).get(task) or () if isinstance(entry, (list, tuple)) and len(entry) == 2]
        if error is not None:
            text = _error_text(error) if isinstance(error, BaseException) else label(str(error), PROBLEM_CHARS)
            problems.append("quiet: task %s: its log could not be read (%s)" % (label(task), text))
            continue
        if not entries:
            problems.append("quiet: task %s: no size of its log was read yet" % label(task))
            continue
        size = entries[-1][1]
        first = len(entries) - 1
        while first > 0 and entries[first - 1][1] == size:
            first -= 1
        changes.append(entries[first][0])
        observed.append(entries[-1][0])
        grown = grown or first > 0  # growth seen across polls: a size observed, then a different one
    if not tasks:
        problems.append("quiet: the job names no task whose log could be read")
    if problems or not changes:
        return {"held": False, "since": None}, None, problems
    since = max(changes) if start is None else max(*changes, start)
    span = min(observed) - since
    if not grown and span < settings.quiet_minutes * 60:
        minutes = int(max(0, span) // 60)
        problems.append("quiet: the log was seen across %d of the %d minutes needed; it is measured across polls" % (minutes, settings.quiet_minutes))
        return {"held": False, "since": None}, None, problems
    held = span >= settings.quiet_minutes * 60
    return {"held": held, "since": iso(since)}, (since if held else None), problems


# -- the service's own verdict -----------------------------------------------------------------------------------


def _is_hang_event(event):
    """Whether ``event`` is the service's hang verdict in its own form (see :data:`HANG_NAME`): a Warning or Error of
    the Job (an event that names no source is taken as the job's) whose reason/type/event_type/name is JobHanged or
    whose message starts with ``[JobHanged]`` or with the console's sentence."""
    level, source = event.get("level"), event.get("source")
    if not isinstance(level, str) or level.strip().lower() not in HANG_LEVELS:
        return False
    if source is not None and not (isinstance(source, str) and source.strip().lower() == HANG_SOURCE):
        return False
    if any(isinstance(event.get(field), str) and event[field].strip().lower() == HANG_NAME for field in HANG_EVENT_FIELDS):
        return True
    message = event.get("message")
    return isinstance(message, str) and (message.strip().lower().startswith(HANG_TAG) or bool(HANG_SENTENCE.match(message.strip())))


def _service(status, events, start):
    """``({held, hangs, last}, since, problems)``: the hang verdicts newer than the last start (a recover record's
    ``fault_scenario: job_hanged`` at its ``recover_start_at``, a JobHanged event at its time; an event within
    :data:`SAME_HANG_SECONDS` of a record being the same hang)."""
    problems = []
    records = []
    for record in _dicts(status.get("running_records")):
        for recover in _dicts(record.get("recover_records")):
            if recover.get("fault_scenario") == HANG_SCENARIO:
                when = _seconds(recover.get("recover_start_at"))
                if when is None:
                    problems.append("service: a job_hanged recover record has no recover_start_at: it was left out")
                else:
                    records.append(when)
    found = list(records)
    if isinstance(events, BaseException):
        problems.append("service: the job's events could not be read (%s)" % _error_text(events))
        events = None
    if isinstance(events, dict):
        events = events.get("events")
    for event in _dicts(events):
        if _is_hang_event(event):
            when = event_seconds(event.get("time"))
            if when is None:
                problems.append("service: a JobHanged event has no readable time: it was left out")
            elif not any(abs(when - record) <= SAME_HANG_SECONDS for record in records):
                found.append(when)
    newer = sorted(when for when in found if start is not None and when > start)
    signal = {"held": bool(newer), "hangs": len(newer), "last": iso(newer[-1]) if newer else None}
    return signal, (newer[0] if newer else None), problems


# -- the verdict -------------------------------------------------------------------------------------------------


def judge_progress(settings, job, now, metrics=None, logs=None, events=None, log_errors=None):
    """The item's ``progress``: None when ``settings`` is None (no ``stall``) or the job is not ``Running``, else
    ``{stalled, since, signals: {idle, quiet, service}, problems}`` (a signal not asked for is None).

    ``job``: the item (its ``details``) or the v2 document.  ``now``: epoch seconds.  ``metrics``: ``{task: the metrics
    call's answer}`` (``{"metrics": [{"metric", "value": [...]}]}``), or the exception its read raised.  ``logs``:
    ``{task: [(time, size)]}`` as :func:`record_log_size` keeps it; ``log_errors``: ``{task: exception or text}`` for
    this poll's reads that gave no size.  ``events``: the events answer (or its ``events`` list), the exception its
    read raised, or None when not read.  The tasks judged are the document's ``status.tasks`` and those given."""
    if settings is None:
        return None
    phase, status = _document(job)
    if phase != RUNNING:
        return None
    signals = {"idle": None, "quiet": None, "service": None}
    if isinstance(job, dict) and job.get("api_version") == "v1":
        return {"stalled": False, "since": None, "signals": signals, "problems": ["a v1 job's progress cannot be read: stall judges v2 jobs"]}
    start = last_start(status)
    problems = []
    if start is None:
        problems.append("the job's start time is not known: no signal can count until it is")
    sinces = {}
    if settings.idle_minutes is not None:
        signals["idle"], sinces["idle"], found = _idle(settings, metrics, _tasks(status, metrics), now, start, first_start(status))
        problems.extend(found)
    if settings.quiet_minutes is not None:
        signals["quiet"], sinces["quiet"], found = _quiet(settings, logs, log_errors, _tasks(status, logs, log_errors), start)
        problems.extend(found)
    if settings.service:
        signals["service"], sinces["service"], found = _service(status, events, start)
        problems.extend(found)
    in_grace = start is None or now < start + settings.grace_minutes * 60
    if start is not None and in_grace:
        # Said, not silent: a clock that does not move (the service's status.duration not live) keeps a job here.
        until = iso(start + settings.grace_minutes * 60)
        problems.append("inside its grace until %s (grace_minutes after its last start, %s): no signal counts yet" % (until, iso(start)))
    if in_grace:
        for signal in signals.values():
            if signal is not None:
                signal["held"] = False
    measured = [name for name in ("idle", "quiet") if signals[name] is not None]
    held = [name for name in measured if signals[name]["held"]]
    reasons = []
    if held and (settings.require == "any" or len(held) == len(measured)):
        reasons.append(max(sinces[name] for name in held) if settings.require == "all" else min(sinces[name] for name in held))
    if signals["service"] is not None and signals["service"]["held"]:
        reasons.append(sinces["service"])
    stalled = bool(reasons)  # inside the grace no signal is held, so none is a reason
    return {"stalled": stalled, "since": iso(min(reasons)) if stalled else None, "signals": signals, "problems": problems}


def _percent(value):
    return ("%.1f" % value).rstrip("0").rstrip(".") if value is not None else "?"


def _minutes(seconds):
    minutes = int(max(0, seconds) // 60)
    return "%d minute%s" % (minutes, "" if minutes == 1 else "s")


def stall_words(progress, now):
    """A stalled job's signals in words, for ``msg``: ``gpuUtil at most 0.4% on every task for 30 minutes; no log line
    for 42 minutes of polling (same size since 2026-11-25T02:00:03Z); ...; the service still reports Running``.  ``now``: epoch seconds."""
    signals = (progress or {}).get("signals") or {}
    parts = []
    idle = signals.get("idle")
    if idle and idle.get("held"):
        entries = list(idle["tasks"].values())
        names = "/".join(sorted(set(entry["metric"] for entry in entries)))
        peaks = [entry["peak"] for entry in entries if entry.get("peak") is not None]
        parts.append("%s at most %s%% on every task for %s" % (names, _percent(max(peaks) if peaks else None), _minutes(idle["minutes"] * 60)))
    quiet = signals.get("quiet")
    if quiet and quiet.get("held"):
        # ``since`` is the first poll that saw the log's current size (or the last start), not the last growth: the
        # silence is measured across polling, and may be older.
        parts.append("no log line for %s of polling (same size since %s)" % (_minutes(now - event_seconds(quiet["since"])), quiet["since"]))
    service = signals.get("service")
    if service and service.get("held"):
        parts.append(
            "the service itself found the job hung at %s%s"
            % (service["last"], " (%d hangs since its last start)" % service["hangs"] if service["hangs"] > 1 else "")
        )
    parts.append("the service still reports Running")
    return "; ".join(parts)


def stall_message(key, item, now):
    """``training job <id> (<name>) stopped making progress: <stall_words>``: a stalled item's line of ``msg``."""
    return "%s stopped making progress: %s" % (describe_job(key, item), stall_words((item or {}).get("progress"), now))


def stall_identity(job_id, progress):
    """The identity of a stall for the event source's ``event_id`` (pass it as ``extra``): ``stall:<job id>:<since>``;
    the same while the job stays stalled, a new one once it made progress and stalled anew.  None when not stalled."""
    if not progress or not progress.get("stalled") or not progress.get("since"):
        return None
    return "stall:%s:%s" % (job_id, progress["since"])
