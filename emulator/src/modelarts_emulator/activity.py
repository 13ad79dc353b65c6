# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a job makes progress: each task's utilisation, a log that grows or falls silent, the service's hang verdict.

* ``GET /v2/{project_id}/training-jobs/{id}/metrics/{task_id}`` (the official SDK's ``ShowTrainingJobMetrics``, no query
  parameters): ``{"metrics": [{"metric": "cpuUsage", "value": [..]}, {"metric": "memUsage", ...}, {"metric": "gpuUtil",
  ...}, {"metric": "gpuMemUsage", ...}]}`` - one average a minute (percent), oldest first, ``-1`` where no sample was taken.
  The minutes are counted from the job's first start (its first Running step), on the emulator's clock; only whole minutes
  are averaged (the minute in progress is not), the last one of a finished job ends with its run; at most the newest
  :data:`MAX_MINUTES`. A GPU flavour has ``gpuUtil``/``gpuMemUsage``, an NPU one ``npuUtil``/``npuMemUsage``, a CPU one
  neither. A job that has not run has every series empty.
* A scenario job's ``activity`` mapping (docs/emulator.md) shapes what a job does while it runs: ``util`` (``busy``,
  ``idle`` or a percent), ``hang_at`` (from then on, until a restart, the job is hung: accelerators at ~0 and no log
  line), ``log_per_minute`` (the log grows that many training lines a minute of progress), ``samples`` (``all``, ``none``
  - every average ``-1`` -, ``gaps``), ``fault`` (``forbidden``: 403 on the metrics call) and ``service_hang`` (the
  service's hang detection: a ``JobHanged`` event and/or a recover record ``fault_scenario: job_hanged`` on the running
  record the hang happened in).

A job without ``activity`` is as before: busy accelerators, and a log that is the same at every read of a step.
"""

import hashlib

from . import errors

MAX_MINUTES = 1440
ACTIVITY_KEYS = ("util", "hang_at", "log_per_minute", "samples", "fault", "service_hang")
SERVICE_HANG_KEYS = ("at", "event", "record", "task", "level")
EVENT_LEVELS = ("Info", "Warning", "Error")
UTIL_NAMES = ("busy", "idle")
SAMPLES = ("all", "none", "gaps")
NO_SAMPLE = -1
DEFAULT_LOG_PER_MINUTE = 6
HANG_EVENT_MESSAGE = (
    "[JobHanged] The system detects that your training job may be suspended. Go to the job details page to view the cause and handle the issue."
)
HANG_REASON = "The training job is suspected to be hung: process I/O and accelerator utilisation unchanged"
# Per flavour, the series a task's metrics answer holds, in the SDK's order.
FLAVOR_METRICS = {
    "gpu": ("cpuUsage", "memUsage", "gpuUtil", "gpuMemUsage"),
    "npu": ("cpuUsage", "memUsage", "npuUtil", "npuMemUsage"),
    "cpu": ("cpuUsage", "memUsage"),
}
ACCELERATOR_UTIL = ("gpuUtil", "npuUtil")
ACCELERATOR_MEM = ("gpuMemUsage", "npuMemUsage")


def check_activity_spec(spec, seconds, tasks):
    """The scenario's ``activity`` mapping, checked (a ValueError names the problem); None when absent.

    ``seconds(value, where)``: the scenario's reading of a length of time (a number of seconds, or ``12m``, ``1h30m``);
    ``tasks``: the job's task names.
    """
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise ValueError("activity must be a mapping {%s}" % ", ".join(ACTIVITY_KEYS))
    unknown = set(spec) - set(ACTIVITY_KEYS)
    if unknown:
        raise ValueError("activity: unknown keys %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(ACTIVITY_KEYS)))
    util = spec.get("util", "busy")
    if isinstance(util, bool) or not (util in UTIL_NAMES or isinstance(util, (int, float)) and 0 <= util <= 100):
        raise ValueError("activity.util must be busy, idle or a percent from 0 to 100, got %r" % (util,))
    hang_at = None
    if spec.get("hang_at") is not None:
        hang_at = seconds(spec["hang_at"], "activity.hang_at")
        if hang_at < 0:
            raise ValueError("activity.hang_at must be >= 0")
    per_minute = spec.get("log_per_minute", DEFAULT_LOG_PER_MINUTE)
    if isinstance(per_minute, bool) or not isinstance(per_minute, int) or per_minute < 0:
        raise ValueError("activity.log_per_minute must be a whole number >= 0, got %r" % (per_minute,))
    samples = spec.get("samples", "all")
    if samples not in SAMPLES:
        raise ValueError("activity.samples must be one of %s" % ", ".join(SAMPLES))
    if spec.get("fault") not in (None, "forbidden"):
        raise ValueError("activity.fault must be forbidden")
    hangs = spec.get("service_hang")
    if hangs is None:
        hangs = []
    elif isinstance(hangs, dict):
        hangs = [hangs]
    if not isinstance(hangs, list):
        raise ValueError("activity.service_hang must be a mapping {%s} or a list of them" % ", ".join(SERVICE_HANG_KEYS))
    verdicts = []
    for index, hang in enumerate(hangs):
        where = "activity.service_hang[%d]" % index
        if not isinstance(hang, dict) or "at" not in hang:
            raise ValueError("%s must be a mapping with at (and %s)" % (where, ", ".join(SERVICE_HANG_KEYS[1:])))
        unknown = set(hang) - set(SERVICE_HANG_KEYS)
        if unknown:
            raise ValueError("%s: unknown keys %s (known: %s)" % (where, ", ".join(sorted(unknown)), ", ".join(SERVICE_HANG_KEYS)))
        at = seconds(hang["at"], "%s.at" % where)
        if at < 0:
            raise ValueError("%s.at must be >= 0" % where)
        for flag in ("event", "record"):
            if not isinstance(hang.get(flag, True), bool):
                raise ValueError("%s.%s must be true or false" % (where, flag))
        task = str(hang.get("task", tasks[0]))
        if task not in tasks:
            raise ValueError("%s.task %r does not exist: the job has the tasks %s" % (where, task, ", ".join(tasks)))
        level = hang.get("level", "Warning")
        if level not in EVENT_LEVELS:
            raise ValueError("%s.level must be one of %s" % (where, ", ".join(EVENT_LEVELS)))
        verdicts.append({"at": at, "event": hang.get("event", True), "record": hang.get("record", True), "task": task, "level": level})
    return {
        "util": util,
        "hang_at": hang_at,
        "log_per_minute": per_minute,
        "samples": samples,
        "fault": spec.get("fault"),
        "service_hang": sorted(verdicts, key=lambda verdict: verdict["at"]),
    }


# The runs of a job ----------------------------------------------------------------------------------------
def runs(snapshot):
    """The job's Running stints so far: ``[(start_ms, end_ms, restart)]``, the open one ending now."""
    found = []
    history = snapshot.history
    for index, (step, entered) in enumerate(history):
        if step.phase != "Running":
            continue
        end = history[index + 1][1] if index + 1 < len(history) else max(snapshot.now_ms, entered)
        found.append((entered, end, step.restart))
    return found


def hang_window(spec, stints):
    """``(from_ms, to_ms)`` while the job is hung (to the start of the next restart, or the end of its runs); None."""
    if not spec or spec["hang_at"] is None or not stints:
        return None
    start = stints[0][0] + int(spec["hang_at"] * 1000)
    end = stints[-1][1]
    if start >= end:
        return None
    later = [stint[0] for stint in stints if stint[0] > start]
    return start, (later[0] if later else end)


def progress_ms(spec, stints):
    """How long the job made progress (ran and was not hung), in ms."""
    window = hang_window(spec, stints)
    total = 0
    for start, end, _restart in stints:
        total += end - start
        if window:
            total -= max(0, min(end, window[1]) - max(start, window[0]))
    return max(0, total)


def log_training_lines(job, snapshot):
    """How many training lines the log holds now: None for a job without ``activity`` (its scenario's ``log.lines``)."""
    spec = getattr(job, "activity", None)
    if spec is None:
        return None
    return progress_ms(spec, runs(snapshot)) * spec["log_per_minute"] // 60000


# Metrics ---------------------------------------------------------------------------------------------------
def _noise(job, task, metric, minute):
    """A number in [0, 1), the same for the same job, task, series and minute."""
    digest = hashlib.sha256(("%s/%s/%s/%d" % (job.uid, task, metric, minute)).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 4294967296.0


def _between(low, high, noise):
    return round(low + (high - low) * noise, 1)


def _value(job, spec, task, metric, minute, state):
    """One minute's average of ``metric`` for a task in ``state`` (``busy``, ``idle`` or ``hung``)."""
    noise = _noise(job, task, metric, minute)
    if metric in ACCELERATOR_UTIL:
        if state == "hung":
            return _between(0.0, 0.3, noise)
        util = spec["util"] if spec else "busy"
        if util == "busy":
            return _between(86.0, 98.9, noise)
        if util == "idle":
            return _between(0.0, 0.5, noise)
        return float(util)
    if metric in ACCELERATOR_MEM:
        # A hung collective keeps its memory; a job still preparing its data has not loaded its model yet.
        return _between(3.0, 6.0, noise) if state == "idle" else _between(62.0, 74.0, noise)
    if metric == "cpuUsage":
        if state == "hung":
            return _between(0.5, 2.0, noise)
        if job.flavor == "cpu" or state == "idle":
            return _between(78.0, 95.0, noise)
        return _between(25.0, 45.0, noise)
    return _between(30.0, 40.0, noise)  # memUsage


def metrics_body(job, snapshot, task):
    """The metrics answer of ``task`` (checked to be the job's): ``{"metrics": [{metric, value}]}``."""
    spec = getattr(job, "activity", None)
    if spec and spec["fault"] == "forbidden":
        raise errors.ApiError(403, "ModelArts.2771", "No permission to perform modelarts:trainJob:get on this training job.")
    names = FLAVOR_METRICS[job.flavor]
    stints = runs(snapshot)
    if not stints:
        return {"metrics": [{"metric": name, "value": []} for name in names]}
    first, end = stints[0][0], stints[-1][1]
    window = hang_window(spec, stints)
    idle = bool(spec) and spec["util"] == "idle"
    minutes = []
    minute = 0
    while first + 60000 * minute < end and first + 60000 * (minute + 1) <= snapshot.now_ms:
        minutes.append(minute)
        minute += 1
    minutes = minutes[-MAX_MINUTES:]
    series = {name: [] for name in names}
    for minute in minutes:
        at = min(first + 60000 * minute + 30000, end - 1)
        missing = spec is not None and (spec["samples"] == "none" or spec["samples"] == "gaps" and minute % 3 == 1)
        state = "hung" if window and window[0] <= at < window[1] else ("idle" if idle else "busy")
        for name in names:
            series[name].append(NO_SAMPLE if missing else _value(job, spec, task, name, minute, state))
    return {"metrics": [{"metric": name, "value": series[name]} for name in names]}


# The service's verdict -------------------------------------------------------------------------------------
def _verdicts(job, snapshot):
    """The service's hang verdicts reached by now: ``[(at_ms, verdict)]``, each inside the job's runs."""
    spec = getattr(job, "activity", None)
    if not spec or not spec["service_hang"]:
        return []
    stints = runs(snapshot)
    if not stints:
        return []
    found = []
    for verdict in spec["service_hang"]:
        at = stints[0][0] + int(verdict["at"] * 1000)
        if at <= snapshot.now_ms and any(start <= at < end for start, end, _restart in stints):
            found.append((at, verdict))
    return found


def hang_events(job, snapshot):
    """The ``JobHanged`` events so far, as logs.job_events builds them (``ms``, level, message, source)."""
    return [
        {"ms": at, "level": verdict["level"], "message": HANG_EVENT_MESSAGE, "source": "Job"} for at, verdict in _verdicts(job, snapshot) if verdict["event"]
    ]


def decorate_running_records(job, snapshot, records):
    """Add the service's hang verdicts to ``records`` (documents._running_records, one per Running stint, in order)."""
    spec = getattr(job, "activity", None)
    if not spec or not spec["service_hang"]:
        return records  # every document of a search renders its records: nothing to do costs nothing
    stints = runs(snapshot)
    for at, verdict in _verdicts(job, snapshot):
        if not verdict["record"]:
            continue
        index = next(i for i, (start, end, _restart) in enumerate(stints) if start <= at < end)
        record = records[index]
        recover = {
            "recover_start_at": at // 1000,
            "recover": "job_reschedule",
            "fault_scenario": "job_hanged",
            "reason": HANG_REASON,
            "related_task": verdict["task"],
            "recover_result": "recovering",
        }
        restarted = index + 1 < len(stints) and stints[index + 1][2]
        if restarted:
            # The hang ended this run: the service rescheduled the job, and the next record is its new start.
            recover["recover_end_at"] = stints[index + 1][0] // 1000
            recover["recover_result"] = "success"
            record.update(
                {
                    "end_reason": "job hanged",
                    "end_related_task": verdict["task"],
                    "end_recover": "job_reschedule",
                    "end_recover_before_downgrade": "job_reschedule",
                }
            )
        record.setdefault("recover_records", []).append(recover)
    return records
