# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""metric_reads.py: each source read the way the API gives it, and every way it fails named in a problem line."""

from __future__ import annotations

import json
import threading
import time

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.results import metric_reads
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.results.matching import Matcher
from ansible_collections.modelarts.training.plugins.module_utils.door.metric_checks import plan
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import Response

JOB = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
WINDOW = 64 * 1024


def denied(what):
    return ModelArtsError(
        "%s: HTTP 403 ModelArts.2771: No permission" % what, operation=what, status=403, error_code="ModelArts.2771", error_msg="No permission"
    )


class LogClient(object):
    """The AOM log of each task (oldest line first), served newest first 500 lines a call and paged by base_line as the
    service does; the preview as the client reads it (consume); ft-metrics answers."""

    def __init__(self, logs=None, aom_error=None, preview_error=None, ft=None, end_lines=True):
        self.logs = logs or {}
        self.aom_error = aom_error
        self.preview_error = preview_error
        self.ft = ft
        self.end_lines = end_lines
        self.calls = []
        self.lock = threading.Lock()

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None, base_line=None):
        with self.lock:
            self.calls.append(("aom", task_id, lines, base_line))
        if isinstance(self.aom_error, BaseException):
            raise self.aom_error
        if self.aom_error == "204":
            return Response(None, 204, "r", {})
        assert 1 <= lines <= 500
        log = self.logs[task_id]
        end = len(log) if base_line is None else int(base_line) - 1
        numbers = list(range(end, max(0, end - lines), -1))
        data = {"lines": len(numbers), "content": "\n".join(log[n - 1] for n in numbers)}
        if self.end_lines:
            data.update(start_line=str(numbers[0]) if numbers else "", end_line=str(numbers[-1]) if numbers else "")
        return Response(data, 200, "r", {})

    def get_task_log_preview(self, job_id, task_id, deadline=None, consume=None):
        with self.lock:
            self.calls.append(("preview", task_id))
        if self.preview_error is not None:
            raise self.preview_error
        text = "\n".join(self.logs[task_id]) + "\n"
        body = json.dumps({"content": text, "current_size": len(text), "full_size": len(text)}).encode("utf-8")
        return Response(consume(body[start : start + 1000] for start in range(0, len(body), 1000)), 200, "r", {})

    def get_ft_metrics(self, job_id, deadline=None, max_bytes=None):
        with self.lock:
            self.calls.append(("ft", job_id))
        if isinstance(self.ft, BaseException):
            raise self.ft
        return Response(self.ft, 200, "r", {})


def training_log(total, every=100, name="val_accuracy", first=0.5, step=0.01):
    """``total`` lines; each ``every``-th is an epoch's metric line, rising by ``step``."""
    lines = []
    epoch = 0
    for index in range(1, total + 1):
        if index % every == 0:
            epoch += 1
            lines.append("epoch %d %s=%.4f" % (epoch, name, first + epoch * step))
        else:
            lines.append("step %d loss 0.1" % index)
    return lines


def v2_item(tasks=("worker-0",)):
    return {"id": JOB, "api_version": "v2", "phase": "Completed", "details": {"status": {"tasks": list(tasks)}}}


def read(client, metrics, item=None, deadline=None, secrets=()):
    checked = plan(metrics)
    matcher = Matcher(checked.patterns) if checked.patterns else None
    try:
        readings = metric_reads.read_job(client, item or v2_item(), checked.metrics, matcher, secrets, deadline or time.monotonic() + 60, WINDOW)
    finally:
        if matcher is not None:
            matcher.close()
    return dict((name, (reading.value, reading.source, reading.problems)) for name, reading in readings.items())


ACC = r"val_accuracy=([0-9.]+)"


# -- the log --------------------------------------------------------------------------------------


def test_last_takes_the_newest_match_from_the_first_page_only():
    client = LogClient({"worker-0": training_log(5000)})
    assert read(client, [{"name": "acc", "regex": ACC}]) == {"acc": (0.5 + 50 * 0.01, "log", [])}
    assert client.calls == [("aom", "worker-0", 500, None)]


def test_max_reads_every_line_of_lines_page_by_page_from_newest_to_oldest():
    client = LogClient({"worker-0": training_log(5000, name="val_accuracy")})
    values = read(client, [{"name": "best", "regex": ACC, "pick": "max", "lines": 1200}, {"name": "worst", "regex": ACC, "pick": "min", "lines": 1200}])
    # The 1200 newest lines hold epochs 39 to 50: the lowest there is epoch 39's.
    assert values["best"][0] == pytest.approx(1.0) and values["worst"][0] == pytest.approx(0.5 + 39 * 0.01)
    # One scan for both, paged by base_line: 500, 500, then the 200 still wanted.
    assert client.calls == [("aom", "worker-0", 500, None), ("aom", "worker-0", 500, "4501"), ("aom", "worker-0", 200, "4001")]


def test_no_match_in_the_lines_scanned_names_the_regex_and_how_many_lines():
    client = LogClient({"worker-0": training_log(3000, every=2000)})
    assert read(client, [{"name": "acc", "regex": ACC, "lines": 700}])["acc"] == (
        None,
        "log",
        ["log of task worker-0: no line matched regex 'val_accuracy=([0-9.]+)' in the 700 newest lines scanned"],
    )
    short = LogClient({"worker-0": ["INFO start", "INFO end"]})
    assert read(short, [{"name": "acc", "regex": ACC}])["acc"][2] == [
        "log of task worker-0: no line matched regex 'val_accuracy=([0-9.]+)' in the 2 newest lines scanned (the whole log)"
    ]


@pytest.mark.parametrize(
    "line, pick, expected",
    [
        ("val_accuracy=1.2.3", "last", "the newest line matching regex 'val_accuracy=([0-9.]+)' captured '1.2.3' is not a number"),
        ("val_accuracy=.", "max", "a line matching regex 'val_accuracy=([0-9.]+)' captured '.' is not a number"),
    ],
)
def test_a_match_that_is_not_a_number_fails_closed_never_skipped_for_an_older_one(line, pick, expected):
    client = LogClient({"worker-0": ["val_accuracy=0.9", line]})
    value, _source, problems = read(client, [{"name": "acc", "regex": ACC, "pick": pick}])["acc"]
    assert value is None and problems == ["log of task worker-0: " + expected]


def test_nan_and_infinity_in_a_log_are_no_value():
    client = LogClient({"worker-0": ["loss=nan"]})
    assert read(client, [{"name": "loss", "regex": r"loss=(\S+)"}])["loss"][2] == [
        "log of task worker-0: the newest line matching regex 'loss=(\\S+)' captured 'nan' is NaN or infinite"
    ]


def test_captured_log_text_is_masked_and_no_template():
    client = LogClient({"worker-0": ["acc={{ lookup('pipe', 'id') }}s3cr3t-token"]})
    problems = read(client, [{"name": "acc", "regex": r"acc=(.*)"}], secrets=("s3cr3t-token",))["acc"][2]
    assert problems == ["log of task worker-0: the newest line matching regex 'acc=(.*)' captured '{ { lookup('pipe', 'id') }}********' is not a number"]


def test_a_line_over_the_limit_is_matched_by_its_end_and_never_passed_over_for_an_older_one():
    # Issue 56: its end (the newest text) is matched; an older line's value is never taken in its place.
    client = LogClient({"worker-0": ["val_accuracy=0.7", "x" * 5000 + " val_accuracy=0.99"]})
    assert read(client, [{"name": "acc", "regex": ACC}])["acc"][0] == 0.99
    client = LogClient({"worker-0": ["val_accuracy=0.7", "val_accuracy=0.99 " + "x" * 5000]})
    assert read(client, [{"name": "acc", "regex": ACC}])["acc"][2] == [
        "log of task worker-0: line 1 from the log's end ('val_accuracy=0.99 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...') is 5018"
        " characters long, over 4096: its last 4096 are one token, cut where it starts, so none is matched, with no match of regex"
        " 'val_accuracy=([0-9.]+)', and an older line's value is never taken in place of what its start may hold"
    ]


def test_metrics_of_two_tasks_read_their_own_logs_and_task_defaults_to_the_first():
    client = LogClient({"worker-0": ["val_accuracy=0.9"], "worker-1": ["val_accuracy=0.8"]})
    values = read(client, [{"name": "a0", "regex": ACC}, {"name": "a1", "regex": ACC, "task": "worker-1"}], item=v2_item(("worker-0", "worker-1")))
    assert (values["a0"][0], values["a1"][0]) == (0.9, 0.8)


def test_the_preview_serves_when_the_aom_call_is_refused():
    client = LogClient({"worker-0": training_log(3000)}, aom_error=denied("read the log"))
    assert read(client, [{"name": "acc", "regex": ACC, "pick": "max", "lines": 1000}])["acc"][0] == pytest.approx(0.8)
    assert client.calls == [("aom", "worker-0", 500, None), ("preview", "worker-0")]


def test_both_log_calls_refused_name_both_and_the_permission():
    client = LogClient({"worker-0": []}, aom_error=denied("read the log"), preview_error=denied("preview the log"))
    assert read(client, [{"name": "acc", "regex": ACC}])["acc"][2] == [
        "log of task worker-0 (AOM): HTTP 403 ModelArts.2771: No permission (the credentials need the IAM permission modelarts:trainJob:getLogs); "
        "log of task worker-0 (preview): HTTP 403 ModelArts.2771: No permission (the credentials need the IAM permission modelarts:trainJob:getLogs)"
    ]


def test_a_log_not_ready_is_said_once_without_a_fallback():
    client = LogClient({"worker-0": []}, aom_error="204")
    assert read(client, [{"name": "acc", "regex": ACC}])["acc"][2] == ["log of task worker-0: the log is not ready yet (HTTP 204 with no body)"]
    assert client.calls == [("aom", "worker-0", 500, None)]


def test_a_scan_cut_short_never_gives_max_or_min():
    client = LogClient({"worker-0": training_log(3000)}, end_lines=False)
    values = read(client, [{"name": "last", "regex": ACC}, {"name": "best", "regex": ACC, "pick": "max"}])
    assert values["last"][0] == pytest.approx(0.8)
    assert values["best"] == (None, "log", ["log of task worker-0: the AOM answer gave no end_line to read older lines from, after 500 lines were scanned"])


def test_a_catastrophic_regex_ends_at_the_deadline_with_a_problem_line():
    client = LogClient({"worker-0": ["a" * 40 + "b"]})
    value, _source, problems = read(client, [{"name": "acc", "regex": r"(a+)+$"}], deadline=time.monotonic() + 1)["acc"]
    assert value is None and problems == ["log of task worker-0: matching the log's lines did not end by the call's deadline"]


def test_a_v1_job_asked_for_a_log_metric_fails_with_a_reason():
    item = {"id": 10, "version_id": 1, "api_version": "v1", "phase": "Completed", "details": {"metrics": None}}
    assert read(LogClient(), [{"name": "acc", "source": "log", "regex": ACC}], item=item)["acc"] == (
        None,
        "log",
        ["source log reads a v2 job's task log; this is a v1 job"],
    )


# -- ft-metrics -----------------------------------------------------------------------------------


def ft(*series):
    return {"loss": {}, "train_process": 1.0, "data": {"format_version": "1.0", "timestamp": "2026-07-18T10:30:00Z", "metrics": list(series)}}


@pytest.mark.parametrize(
    "data, extra, expected",
    [
        ([0.5, 0.7, 0.9, 0.8], {}, 0.8),
        ([[1, 0.5], [2, 0.9], [3, 0.85]], {}, 0.85),
        ({"step": [1, 2, 3], "value": [0.5, 0.95, 0.9]}, {}, 0.9),
        ({"epoch": [1, 2], "val_accuracy": [0.6, 0.7]}, {}, 0.7),
        ({"iter": [1, 2], "acc": [0.6, 0.75]}, {"x_axis": "iter"}, 0.75),
        ({"step": [1, 2], "values": [0.6, 0.65], "epoch": [1, 1]}, {"x_axis": "step"}, 0.65),
        ([{"step": 2, "value": 0.7}, {"step": 1, "value": 0.9}], {}, 0.7),
    ],
)
def test_each_series_shape_the_api_sends_is_read(data, extra, expected):
    series = dict({"name_en": "val_accuracy", "group": "validation", "data": data}, **extra)
    assert read(LogClient(ft=ft(series)), [{"name": "val_accuracy"}]) == {"val_accuracy": (expected, "ft_metrics", [])}


def test_pick_max_and_min_over_a_series():
    answer = ft({"name_en": "loss", "group": "training", "data": [0.9, 0.2, 0.4]})
    assert read(LogClient(ft=answer), [{"name": "loss", "pick": "min"}])["loss"][0] == 0.2
    assert read(LogClient(ft=answer), [{"name": "loss", "pick": "max"}])["loss"][0] == 0.9


@pytest.mark.parametrize(
    "data, expected",
    [
        ([{"step": 1, "value": 0.5}, 0.6], "data mixes shapes: number/object (data[0] is an object with 2 keys, data[1] is number 0.6)"),
        (
            {"step": [1, 2], "values": [0.6, 0.65], "wall": [10, 20]},
            "data is an object (step, values, wall) without exactly one list of values beside its x axis",
        ),
        ([[1, 2, 3]], "data[0] is an array of 3 items, not an [x, y] pair"),
        ({"a": [1], "b": [2], "c": [3]}, "data is an object (a, b, c) without exactly one list of values beside its x axis"),
        ({"step": [1, 2], "value": [0.5]}, "data is an object of lists of different lengths (step: 2, value: 1)"),
        ("0.9", "data is string '0.9', not a list or an object of lists"),
        ([0.5, None], "point 1 of 2 is not a number (null)"),
        ([0.5, "0.9"], "point 1 of 2 is not a number (string '0.9')"),
        ([0.5, float("nan")], "point 1 of 2 is NaN or infinite (number nan)"),
        ([], "data has no point"),
    ],
)
def test_a_series_of_another_shape_is_named_in_a_problem(data, expected):
    answer = ft({"name_en": "acc", "group": "validation", "data": data})
    value, _source, problems = read(LogClient(ft=answer), [{"name": "acc"}])["acc"]
    assert value is None and problems == ["ft-metrics: series acc: %s" % expected]


def test_a_name_in_two_groups_needs_group_and_a_missing_one_lists_what_is_there():
    answer = ft({"name_en": "loss", "group": "training", "data": [0.5]}, {"name_en": "loss", "group": "validation", "data": [0.6]})
    assert read(LogClient(ft=answer), [{"name": "loss"}])["loss"][2] == [
        "ft-metrics: 2 series are named loss (loss (training), loss (validation)): set group to say which"
    ]
    assert read(LogClient(ft=answer), [{"name": "loss", "group": "validation"}])["loss"][0] == 0.6
    assert read(LogClient(ft=answer), [{"name": "acc", "group": "test"}])["acc"][2] == [
        "ft-metrics: no series acc in group test (the job has loss (training), loss (validation))"
    ]


def test_ft_metrics_is_read_once_per_job_and_a_refusal_names_the_permission():
    client = LogClient(ft=ft({"name_en": "a", "data": [1]}, {"name_en": "b", "data": [2]}))
    assert read(client, [{"name": "a"}, {"name": "b"}]) == {"a": (1.0, "ft_metrics", []), "b": (2.0, "ft_metrics", [])}
    assert client.calls == [("ft", JOB)]
    refused = read(LogClient(ft=denied("read the ft-metrics")), [{"name": "a", "min": 0}])["a"]
    assert refused[2] == ["ft-metrics: HTTP 403 ModelArts.2771: No permission (the credentials need the IAM permission modelarts:trainJob:get)"]


@pytest.mark.parametrize(
    "answer, expected",
    [([], "the answer is not an object"), ({}, "it has no data object"), ({"data": {"metrics": "x"}}, "data.metrics is string 'x', not a list")],
)
def test_an_ft_answer_of_another_shape_is_a_problem(answer, expected):
    assert read(LogClient(ft=answer), [{"name": "a"}])["a"][2] == ["ft-metrics: %s" % expected]


# -- v1 -------------------------------------------------------------------------------------------


def v1_item(parsed):
    return {"id": 10, "version_id": 1, "api_version": "v1", "phase": "Completed", "details": {"metrics": parsed}}


@pytest.mark.parametrize(
    "parsed, expected",
    [
        ({"total_metric": {"total_metric_values": {"accuracy": 0.93, "recall": 0.9}}}, (0.93, "v1", [])),
        (None, (None, "v1", ["model_metric_list: the job has none (empty, absent or not JSON: see schema_errors)"])),
        ({"metric": []}, (None, "v1", ["model_metric_list: model_metric_list.total_metric is not an object (absent)"])),
        (
            {"total_metric": {"total_metric_values": {"recall": 0.9}}},
            (None, "v1", ["model_metric_list: no total_metric.total_metric_values.accuracy (the job has recall)"]),
        ),
        (
            {"total_metric": {"total_metric_values": {"accuracy": float("nan")}}},
            (None, "v1", ["model_metric_list: total_metric.total_metric_values.accuracy is NaN or infinite (number nan)"]),
        ),
        (
            {"total_metric": {"total_metric_values": {"accuracy": "0.9"}}},
            (None, "v1", ["model_metric_list: total_metric.total_metric_values.accuracy is not a number (string '0.9')"]),
        ),
    ],
)
def test_a_v1_metric_is_read_from_the_parsed_model_metric_list(parsed, expected):
    client = LogClient()
    assert read(client, [{"name": "accuracy"}], item=v1_item(parsed))["accuracy"] == expected
    assert client.calls == []
