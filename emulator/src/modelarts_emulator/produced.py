# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job produced, as a scenario sets it: metric lines in its task logs and its ft-metrics series.

* ``metric_lines``: a list of lines (the first task's log) or ``{task: [lines]}``.  ``logs.task_log_lines`` writes them
  through the training lines at even intervals - as an algorithm prints a validation line at the end of each epoch -,
  the last one right after the last training line, before the log's end.
* ``ft_metrics``: the series of ``GET /v2/{project_id}/training-jobs/{id}/ft-metrics`` (the official SDK's
  ``ShowFtMetrics``): a list of ``FtMetric`` mappings (``name_en``, ``group``, ``data`` - any JSON, as the SDK types it
  ``object`` -, and optionally ``name_cn``, ``x_axis``, ``unit``, ``type``, ``tags``...), or a mapping ``{metrics: [...],
  fault: forbidden}`` (``forbidden``: 403 on the call) or ``{answer: "<JSON text>"}`` (the whole answer's text, served
  as given: a key given twice, points of any shape).  The answer holds them once the job has run; a job without them
  answers an empty ``data.metrics``.

The v1 ``model_metric_list`` stays a key of its own, the document's JSON text (``documents.py``); a list of texts gives
the key once per text (a document whose key repeats).
"""

import datetime

from . import errors

FT_FAULTS = ("forbidden",)


class AnswerText(str):
    """A scenario's ft-metrics answer as JSON text, served as given (``ft_metrics.answer``)."""


FT_METRIC_TEXT_KEYS = ("name_cn", "name_en", "des_en", "des_cn", "type", "group", "x_axis", "unit")
FT_METRIC_LIST_KEYS = ("group_by", "tags")
FT_METRIC_KEYS = FT_METRIC_TEXT_KEYS + FT_METRIC_LIST_KEYS + ("data",)


def check_metric_lines(value, tasks):
    """``{task: [lines]}`` of the scenario's ``metric_lines`` (a list is the first task's); a ValueError names the problem."""
    if value is None:
        return {}
    if isinstance(value, list):
        value = {tasks[0]: value}
    if not isinstance(value, dict):
        raise ValueError("metric_lines must be a list of lines or a mapping of task names to lists of lines")
    found = {}
    for task, lines in value.items():
        if task not in tasks:
            raise ValueError("metric_lines: task %r does not exist: the job has the tasks %s" % (task, ", ".join(tasks)))
        if not isinstance(lines, list):
            raise ValueError("metric_lines.%s must be a list of lines" % task)
        found[task] = [str(line) for line in lines]
    return found


def check_ft_metrics(value):
    """``(series, fault)`` of the scenario's ``ft_metrics``; a ValueError names the problem."""
    if value is None:
        return None, None
    fault = None
    if isinstance(value, dict):
        unknown = set(value) - {"metrics", "fault", "answer"}
        if unknown:
            raise ValueError("ft_metrics: unknown keys %s (known: metrics, fault, answer)" % ", ".join(sorted(unknown)))
        if value.get("answer") is not None:
            if not isinstance(value["answer"], str) or "metrics" in value:
                raise ValueError("ft_metrics.answer is the answer's JSON text, a string, given without metrics")
            answer = AnswerText(value["answer"])
        fault = value.get("fault")
        if fault not in (None,) + FT_FAULTS:
            raise ValueError("ft_metrics.fault must be one of %s" % ", ".join(FT_FAULTS))
        if value.get("answer") is not None:
            return answer, fault
        value = value.get("metrics") or []
    if not isinstance(value, list):
        raise ValueError("ft_metrics must be a list of series ({name_en, group, data}) or a mapping {metrics, fault}")
    series = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict) or not isinstance(entry.get("name_en"), str):
            raise ValueError("ft_metrics[%d] must be a mapping with a name_en" % index)
        unknown = set(entry) - set(FT_METRIC_KEYS)
        if unknown:
            raise ValueError("ft_metrics[%d]: unknown keys %s (known: %s)" % (index, ", ".join(sorted(unknown)), ", ".join(FT_METRIC_KEYS)))
        for key in FT_METRIC_TEXT_KEYS:
            if entry.get(key) is not None and not isinstance(entry[key], str):
                raise ValueError("ft_metrics[%d].%s must be a string" % (index, key))
        for key in FT_METRIC_LIST_KEYS:
            if entry.get(key) is not None and not (isinstance(entry[key], list) and all(isinstance(item, str) for item in entry[key])):
                raise ValueError("ft_metrics[%d].%s must be a list of strings" % (index, key))
        series.append(dict(entry))
    return series, fault


def model_metric_list_text(value):
    """The v1 ``model_metric_list`` of a scenario: its JSON text, served as given (NaN and all), or None; a list of texts
    (a tuple here) is the key given once per text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(text, str) for text in value):
        return tuple(value)
    raise ValueError("model_metric_list is the v1 document's JSON text, a string (or a list of them: the key given once per text)")


def interleave(training, metric_lines):
    """``training`` lines with ``metric_lines`` written through them at even intervals, the last after the last of them."""
    if not metric_lines:
        return list(training)
    lines = []
    count = len(metric_lines)
    per = len(training) / float(count)
    start = 0
    for index, line in enumerate(metric_lines):
        end = len(training) if index == count - 1 else int(round(per * (index + 1)))
        lines.extend(training[start:end])
        lines.append(line)
        start = end
    return lines


def _series(entry):
    series = {"name_cn": entry["name_en"], "name_en": entry["name_en"], "type": "line", "unit": ""}
    data = entry.get("data")
    if isinstance(data, list) and data and all(isinstance(point, list) for point in data):
        series["x_axis"] = "step"
    series.update((key, value) for key, value in entry.items())
    return series


def ft_metrics_body(job, snapshot, ran, now):
    """The ft-metrics answer of ``job`` (``ShowFtMetricsResponse``), or the bytes of a scenario's ``answer`` text once the job
    has run; ``errors.ApiError`` for a scenario's fault."""
    if job.ft_metrics_fault == "forbidden":
        raise errors.ApiError(403, "ModelArts.2771", "No permission to perform modelarts:trainJob:get on this training job.")
    answer = isinstance(job.ft_metrics, AnswerText)
    if answer and ran:
        return job.ft_metrics.encode("utf-8")
    series = [_series(entry) for entry in (job.ft_metrics or [])] if ran and not answer else []
    by_name = dict((entry["name_en"], entry.get("data")) for entry in series)
    stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "loss": {"data": by_name.get("train_loss", by_name.get("loss", []))},
        "eval_loss": {"data": by_name.get("eval_loss", [])},
        "training_info": {"remaining_seconds": 0 if snapshot.phase in ("Completed", "Failed", "Terminated", "Abnormal") else None},
        "train_process": 1.0 if snapshot.phase == "Completed" else 0.0,
        "data": {"format_version": "1.0", "timestamp": stamp, "metrics": series},
    }
