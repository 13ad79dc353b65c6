# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the service says about a job besides its document: its events and each task's log.

Three calls, shaped as the official SDK's models read them (huaweicloudsdkmodelarts
``ListTrainingJobEvents``, ``ShowTrainingJobLogsFromAom``, ``ShowTrainingJobLogsPreview``):

* ``GET /v2/{project_id}/training-jobs/{id}/events?offset&limit&level&order``: ``{total, limit, offset,
  order, start_time, end_time, events: [{time, level, message, source}]}``, newest first by default,
  with times in the region's local time (``+08:00``); ``offset`` is a page index, ``limit`` 1-100.
* ``GET /v2/{project_id}/training-jobs/{id}/logs/{task_id}?lines&order&base_line``: the AOM log by
  lines: ``{start_line, end_line, lines, content}``; ``lines`` 1-500 (default 50), ``order`` ``desc``
  (newest first, the default) or ``asc``; ``base_line`` continues from a line number.
* ``GET /v2/{project_id}/training-jobs/{id}/tasks/{task_id}/logs/preview``: the latest part of the
  log, at most 5 MB: ``{content, current_size, full_size}`` (sizes in bytes).

A job that has not run yet has no log: the AOM call answers HTTP 204 with no body, the preview
``ModelArts.2776``.  A scenario job's ``log`` mapping shapes its logs (docs/emulator.md):
``lines`` (training lines before the end, default 400; the job's ``metric_lines``, ``produced.py``, are written through
them), ``append`` (lines written last), ``fault``
(``forbidden``: 403 on both log calls; ``aom_forbidden``: 403 on the AOM call only; ``not_ready``)
and ``events_fault`` (``forbidden``: 403 on the events call). A job with an ``activity`` mapping (activity.py) writes its
training lines as it makes progress, so both calls see the log grow, and fall silent while the job is hung; its
``service_hang`` adds ``JobHanged`` events.
"""

import datetime

from . import activity, documents, errors, failures, produced

PREVIEW_LIMIT = 5 * 1024 * 1024
AOM_MAX_LINES = 500
EVENTS_MAX_LIMIT = 100
LOCAL_TIME = datetime.timezone(datetime.timedelta(hours=8))
LOG_KEYS = ("lines", "append", "fault", "events_fault")
LOG_FAULTS = ("forbidden", "aom_forbidden", "not_ready")
EVENT_LEVELS = ("Info", "Warning", "Error")


def check_log_spec(spec):
    """The scenario's ``log`` mapping, checked (a ValueError names the problem)."""
    spec = dict(spec or {})
    unknown = set(spec) - set(LOG_KEYS)
    if unknown:
        raise ValueError("log: unknown keys %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(LOG_KEYS)))
    if spec.get("fault") not in (None,) + LOG_FAULTS:
        raise ValueError("log.fault must be one of %s" % ", ".join(LOG_FAULTS))
    if spec.get("events_fault") not in (None, "forbidden"):
        raise ValueError("log.events_fault must be forbidden")
    if not isinstance(spec.get("append", []), list):
        raise ValueError("log.append must be a list of lines")
    spec["lines"] = int(spec.get("lines", 400))
    spec["append"] = [str(line) for line in spec.get("append") or []]
    spec.setdefault("fault", None)
    spec.setdefault("events_fault", None)
    return spec


def _local(ms):
    return datetime.datetime.fromtimestamp(ms / 1000.0, LOCAL_TIME).strftime("%Y-%m-%dT%H:%M:%S+08:00")


def _ran(snapshot):
    return any(step.phase == "Running" for step, _entered in snapshot.history)


def job_events(job, snapshot, failure):
    """The job's events so far, oldest first: ``{time, level, message, source}`` as the service words them."""
    events = [{"ms": snapshot.created_ms, "level": "Info", "message": "Training job created.", "source": "Job"}]
    history = snapshot.history
    for index, (step, entered) in enumerate(history[1:], 1):
        phase = step.phase
        # How long the step lasted (till now for the last one): an event of the step never falls after it.
        lasted = (history[index + 1][1] if index + 1 < len(history) else max(snapshot.now_ms, entered)) - entered
        if phase == "Pending":
            events.append({"ms": entered, "level": "Info", "message": "The training job is queuing and awaiting resource allocation.", "source": "Job"})
        elif phase == "Running" and step.restart:
            events.append({"ms": entered, "level": "Warning", "message": "The training job has been restarted.", "source": "Job"})
        elif phase == "Running":
            events.append({"ms": entered, "level": "Info", "message": "The training job starts to run.", "source": "Job"})
            events.append({"ms": entered + min(6000, lasted // 2), "level": "Info", "message": "[worker-0] Training code downloaded.", "source": "Task"})
        elif phase == "Completed":
            events.append({"ms": entered, "level": "Info", "message": "Training job executed.", "source": "Job"})
        elif phase in ("Failed", "Abnormal") and failure:
            # One story per failure kind (failures.py): what was seen coming, how the task ended, the job's verdict.
            events.extend(failures.events(failure, entered, since=max(event["ms"] for event in events)))
        elif phase == "Terminated":
            events.append({"ms": entered, "level": "Info", "message": "The training job has been manually stopped.", "source": "Job"})
    # The service's own hang detection (the scenario's activity.service_hang): a JobHanged warning when it fires.
    events.extend(activity.hang_events(job, snapshot))
    return [dict(time=_local(event.pop("ms")), **event) for event in sorted(events, key=lambda event: event["ms"])]


def task_log_lines(job, snapshot, task, failure, spec):
    """The whole log of ``task`` so far, as a list of lines (deterministic per job and task); None before it ran."""
    if not _ran(snapshot):
        return None
    start = next(entered for step, entered in snapshot.history if step.phase == "Running")
    stamp = datetime.datetime.fromtimestamp(start / 1000.0, LOCAL_TIME)
    lines = [
        "[ModelArts Service Log]Trainer start at %s" % stamp.strftime("%Y-%m-%d-%H:%M:%S"),
        "[ModelArts Service Log]modelarts-pipe: will create log file /tmp/log/%s.log" % task,
        "INFO: Using device cuda:0, world size %d" % job.node_count,
    ]
    if job.annotations.get("jupyter-lab/enable", "true") == "true":
        # Notebook servers print their access token: the job document's endpoints.jupyter_lab.token.
        lines.append("[I %s ServerApp] Jupyter Server is running at: http://localhost:8888/lab?token=%s" % (stamp.strftime("%H:%M:%S.000"), job.uid_b[:24]))
    grown = activity.log_training_lines(job, snapshot)
    # A job with an ``activity`` writes its training lines as it makes progress (activity.py); others the scenario's lines.
    count = max(0, spec["lines"]) if grown is None else grown
    training = []
    for index in range(count):
        loss, throughput = 2.5 / (1 + index * 0.01), 812.5 + index % 7
        training.append("INFO: epoch %d step %05d loss %.4f lr 0.001000 throughput %.1f samples/s" % (index // 100 + 1, index, loss, throughput))
    # What the job produced (the scenario's metric_lines): written through the training lines, as each epoch ends.
    lines.extend(produced.interleave(training, (getattr(job, "metric_lines", None) or {}).get(task)))
    phase = snapshot.phase
    if phase in ("Failed", "Abnormal") and failure:
        if task == failure["task"]:
            # The failing task's end tells the failure's story (failures.py), nothing else.
            lines.extend(failures.log_end(failure) or ())
        else:
            lines.append("WARNING: %s ended, stopping" % failure["task"])
            lines.append("[ModelArts Service Log]Training end with return code: 143")
    elif phase == "Completed":
        lines.append("INFO: saved model to /home/ma-user/modelarts/outputs/train_url_0/model.pth")
        lines.append("[ModelArts Service Log]Training completed.")
    elif phase == "Terminated":
        lines.append("[ModelArts Service Log]Training end with return code: 143")
    lines.extend(spec["append"])
    return lines


def _forbidden(action):
    return errors.ApiError(403, "ModelArts.2771", "No permission to perform %s on this training job." % action)


def not_ready():
    """``ModelArts.2776``: the task has no log yet."""
    return errors.ApiError(400, "ModelArts.2776", "The log of this task is not ready yet.")


def _int_param(params, name, default, low, high):
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise errors.invalid_argument("%s must be an integer" % name) from None
    if not low <= value <= high:
        raise errors.invalid_argument("%s must be between %d and %d" % (name, low, high))
    return value


def events_body(job, snapshot, failure, params):
    """The events list answer for query ``params`` (a dict of single values)."""
    if job.log["events_fault"] == "forbidden":
        raise _forbidden("modelarts:trainJob:listEvents")
    offset = _int_param(params, "offset", 0, 0, 1 << 30)
    limit = _int_param(params, "limit", 50, 1, EVENTS_MAX_LIMIT)
    order = params.get("order") or "desc"
    if order not in ("asc", "desc"):
        raise errors.invalid_argument("order must be asc or desc")
    level = params.get("level")
    if level is not None and level not in EVENT_LEVELS:
        raise errors.invalid_argument("level must be one of %s" % ", ".join(EVENT_LEVELS))
    events = [event for event in job_events(job, snapshot, failure) if level is None or event["level"] == level]
    if order == "desc":
        events.reverse()
    page = events[offset * limit : offset * limit + limit]
    return {
        "total": len(events),
        "limit": limit,
        "offset": offset,
        "order": order,
        "start_time": events[-1]["time"] if events and order == "desc" else (events[0]["time"] if events else ""),
        "end_time": events[0]["time"] if events and order == "desc" else (events[-1]["time"] if events else ""),
        "events": page,
    }


def _task_lines(job, snapshot, task, failure):
    if task not in documents.task_names(job):
        raise errors.ApiError(404, "ModelArts.2778", "Task %s does not exist in this training job." % task)
    if job.log["fault"] == "not_ready":
        return None
    # The same log at every read of the same step: built once (a log of 100,000 lines is read 200 pages at a time).
    key = (task, snapshot.phase, len(snapshot.history), bool(failure), activity.log_training_lines(job, snapshot))
    cached = getattr(job, "_log_cache", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    lines = task_log_lines(job, snapshot, task, failure, job.log)
    job._log_cache = (key, lines)  # pylint: disable=protected-access
    return lines


def aom_body(job, snapshot, task, failure, params):
    """The AOM log answer (a dict), or None for HTTP 204 (no log yet)."""
    if job.log["fault"] in ("forbidden", "aom_forbidden"):
        raise _forbidden("modelarts:trainJob:getLogs")
    lines = _int_param(params, "lines", 50, 1, AOM_MAX_LINES)
    order = params.get("order") or "desc"
    if order not in ("asc", "desc"):
        raise errors.invalid_argument("order must be asc or desc")
    log = _task_lines(job, snapshot, task, failure)
    if log is None:
        return None
    total = len(log)
    base = params.get("base_line")
    try:
        base = int(base) if base not in (None, "") else None
    except ValueError:
        raise errors.invalid_argument("base_line must be a line number") from None
    # Line numbers start at 1; desc reads towards older lines from base_line (excluded), asc towards newer ones.
    if order == "desc":
        end = min(total, base - 1) if base is not None else total
        numbers = list(range(end, max(0, end - lines), -1))
    else:
        first = base + 1 if base is not None else 1
        numbers = list(range(first, min(total, first + lines - 1) + 1))
    content = "\n".join(log[number - 1] for number in numbers)
    return {
        "start_line": str(numbers[0]) if numbers else "",
        "end_line": str(numbers[-1]) if numbers else "",
        "lines": len(numbers),
        "content": content,
    }


def preview_body(job, snapshot, task, failure):
    """The preview answer: the log's last 5 MB at most, with both sizes."""
    if job.log["fault"] == "forbidden":
        raise _forbidden("modelarts:trainJob:getLogs")
    log = _task_lines(job, snapshot, task, failure)
    if log is None:
        raise not_ready()
    data = ("\n".join(log) + "\n").encode("utf-8")
    shown = data[-PREVIEW_LIMIT:]
    return {"content": shown.decode("utf-8", "ignore"), "current_size": len(shown), "full_size": len(data)}
