# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""metrics.py: the options checked before any request, the verdict (fail closed), the baseline, the one call."""

from __future__ import annotations

import threading
import time

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks
from ansible_collections.modelarts.training.plugins.module_utils.results import metrics as metrics_mod
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.results.metric_reads import Reading
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import Response
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import Connection

JOB = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
OTHER = "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81"
PROD = "4c8e2a10-7b3d-4f5e-9a1c-2d3e4f5a6b02"


# -- the options, before any request ------------------------------------------------------------


def test_a_regex_shared_by_two_metrics_is_one_pattern_and_auto_reads_the_log_of_a_v2_job():
    checked = metric_checks.plan(
        [
            {"name": "last_acc", "regex": r"acc=([\d.]+)"},
            {"name": "best_acc", "regex": r"acc=([\d.]+)", "pick": "max"},
            {"name": "loss", "source": "log", "regex": r"loss=([\d.]+)"},
        ]
    )
    assert checked.patterns == [r"acc=([\d.]+)", r"loss=([\d.]+)"]
    assert [metric.pattern for metric in checked.metrics] == [0, 0, 1]
    assert checked.metrics[0].source_for("v2") == "log" and checked.metrics[0].source_for("v1") == "v1"


# -- the verdict --------------------------------------------------------------------------------


def metric(**entry):
    entry.setdefault("name", "acc")
    return metric_checks.check_metric(entry, 0, True)


def reading(value=None, problem=None, source="log"):
    return Reading(source, value, [problem] if problem else [])


def test_bounds_hold_and_break_inclusively():
    entry, broken = metrics_mod.judge(metric(min=0.9, max=0.95), reading(0.9), None, None)
    assert (entry["ok"], broken) == (True, [])
    entry, broken = metrics_mod.judge(metric(min=0.9), reading(0.89), None, None)
    assert entry["ok"] is False and broken == ["acc is 0.89, below min 0.9"] and entry["problems"] == broken
    entry, broken = metrics_mod.judge(metric(max=0.4, goal="min"), reading(0.5), None, None)
    assert broken == ["acc is 0.5, above max 0.4"]


def test_no_bound_reports_without_a_verdict_even_without_a_value():
    entry, broken = metrics_mod.judge(metric(), reading(None, "log of task worker-0: no line matched"), None, None)
    assert entry == {
        "value": None,
        "source": "log",
        "ok": None,
        "problems": ["log of task worker-0: no line matched"],
        "baseline_value": None,
        "improvement": None,
    }
    assert broken == []


@pytest.mark.parametrize(
    "why",
    [
        "log of task worker-0: no line matched regex 'acc=(.*)' in the 1000 newest lines scanned",
        "log of task worker-0: the newest line matching regex 'acc=(.*)' captured 'nan' is NaN or infinite",
        "ft-metrics: HTTP 403 ModelArts.2771: No permission (the credentials need the IAM permission modelarts:trainJob:get)",
        "log of task worker-0: the log is not ready yet (HTTP 204 with no body)",
    ],
)
def test_a_bounded_metric_with_no_value_fails_closed(why):
    entry, broken = metrics_mod.judge(metric(min=0.5), reading(None, why), None, None)
    assert entry["ok"] is False
    assert broken == ["acc has no value, so its bounds fail: %s" % why]


def test_improvement_against_the_baseline_in_the_direction_of_the_goal():
    base = reading(0.86)
    entry, broken = metrics_mod.judge(metric(min_improvement=0.01), reading(0.91), base, "found")
    assert (entry["ok"], entry["improvement"], entry["baseline_value"], broken) == (True, 0.05, 0.86, [])
    entry, broken = metrics_mod.judge(metric(min_improvement=0.0), reading(0.81), base, "found")
    assert entry["ok"] is False and entry["improvement"] == -0.05
    assert broken == ["acc is 0.81, improving on the baseline's 0.86 by -0.05 (-5.814%), less than min_improvement 0 (goal max)"]
    # goal min: a lower loss is better.
    entry, broken = metrics_mod.judge(metric(goal="min", min_relative_improvement=0.1), reading(0.45), reading(0.5), "found")
    assert (entry["ok"], entry["improvement"]) == (True, 0.05)
    entry, broken = metrics_mod.judge(metric(goal="min", min_relative_improvement=0.2), reading(0.45), reading(0.5), "found")
    assert broken == ["acc is 0.45, improving on the baseline's 0.5 by 0.05 (10%), less than min_relative_improvement 0.2 (20%, goal min)"]


def test_a_difference_is_compared_to_twelve_digits_not_to_the_last_bit():
    # 0.3 - 0.2 is 0.09999999999999998 in binary floating point.
    entry, broken = metrics_mod.judge(metric(min_improvement=0.1), reading(0.3), reading(0.2), "found")
    assert (entry["ok"], entry["improvement"], broken) == (True, 0.1, [])


def test_a_missing_baseline_fails_the_improvement_bounds_unless_it_is_not_required():
    entry, broken = metrics_mod.judge(metric(min_improvement=0), reading(0.9), None, "no Completed training job named 'prod' was found")
    assert entry["ok"] is False
    assert broken == ["acc is 0.9, but there is no baseline to compare with for min_improvement: no Completed training job named 'prod' was found"]
    entry, broken = metrics_mod.judge(metric(min_improvement=0), reading(0.9), None, "skipped")
    assert (entry["ok"], broken) == (None, [])
    entry, broken = metrics_mod.judge(metric(min_improvement=0, min=0.5), reading(0.9), None, "skipped")
    assert (entry["ok"], broken) == (True, [])
    # A missing value still fails closed when the bounds were skipped.
    entry, broken = metrics_mod.judge(metric(min_improvement=0), reading(None, "ft-metrics: no series acc"), None, "skipped")
    assert entry["ok"] is False


def test_a_baseline_without_a_value_fails_the_improvement_bounds():
    entry, broken = metrics_mod.judge(metric(min_improvement=0), reading(0.9), reading(None, "ft-metrics: no series acc"), "found")
    assert entry["ok"] is False
    assert broken == ["acc is 0.9, but the baseline's value could not be read for min_improvement: ft-metrics: no series acc"]


def test_metrics_ok_is_false_on_any_failure_true_when_all_hold_null_without_bounds():
    assert metrics_mod.overall({"a": {"ok": True}, "b": {"ok": None}}) is True
    assert metrics_mod.overall({"a": {"ok": True}, "b": {"ok": False}}) is False
    assert metrics_mod.overall({"a": {"ok": None}}) is None
    assert metrics_mod.overall({}) is None


# -- the one call, over a fake door -------------------------------------------------------------


class Settings(object):
    max_concurrency = 4


class FakeClient(object):
    """The reads metrics make: ft-metrics and the AOM log, answered from dicts; every call recorded."""

    def __init__(self, ft=None, logs=None):
        self.ft = ft or {}
        self.logs = logs or {}
        self.calls = []
        self.lock = threading.Lock()
        self.service = Connection(request_timeout=30.0)

    def get_ft_metrics(self, job_id, deadline=None, max_bytes=None):
        with self.lock:
            self.calls.append(("ft", job_id))
        answer = self.ft[job_id]
        if isinstance(answer, BaseException):
            raise answer
        return Response(answer, 200, "r", {})

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None, base_line=None):
        with self.lock:
            self.calls.append(("aom", job_id, task_id, lines, base_line))
        log = self.logs[job_id]
        end = len(log) if base_line is None else int(base_line) - 1
        numbers = list(range(end, max(0, end - lines), -1))
        return Response(
            {
                "start_line": str(numbers[0]) if numbers else "",
                "end_line": str(numbers[-1]) if numbers else "",
                "lines": len(numbers),
                "content": "\n".join(log[n - 1] for n in numbers),
            },
            200,
            "r",
            {},
        )


class FakeQuery(object):
    def __init__(self, client, jobs=None, search=None):
        self.client = client
        self.clock = time.monotonic
        self.settings = Settings()
        self.jobs = jobs or {}
        self.found = search
        self.fetched = []
        self.searched = []

    def masking_secrets(self):
        return ()

    def fetch(self, keys, deadline=None):
        self.fetched.extend(keys)
        return dict((key, self.jobs.get(key) or ModelArtsError("get training job %s: HTTP 404" % key, status=404)) for key in keys)

    def search(self, search, deadline=None):
        self.searched.append(search)
        return list(self.found or []), {}


def job(job_id, phase="Completed", name="candidate", created=None):
    # A search's baseline is created before the candidate (issue 56): PROD a day before the others.
    created = created if created is not None else (1767139200000 if job_id == PROD else 1767225600000)
    details = {"metadata": {"id": job_id, "name": name, "create_time": created}, "status": {"tasks": ["worker-0"]}}
    return {"id": job_id, "name": name, "api_version": "v2", "phase": phase, "details": details}


def series(name, values, group="validation"):
    return {"name_en": name, "group": group, "data": values}


def ft_answer(*entries):
    return {"data": {"format_version": "1.0", "metrics": list(entries)}}


def test_only_completed_jobs_are_read_each_once_and_the_baseline_by_search_is_the_newest_completed_non_candidate():
    client = FakeClient(
        ft={JOB: ft_answer(series("acc", [0.7, 0.93]), series("loss", [0.4, 0.2])), PROD: ft_answer(series("acc", [0.9]), series("loss", [0.3]))}
    )
    running = job(OTHER, phase="Running")
    candidate = job(JOB)
    query = FakeQuery(client, jobs={PROD: job(PROD, name="resnet-prod")}, search=[JOB, PROD])
    checked = metric_checks.plan([{"name": "acc", "min": 0.9, "min_improvement": 0.01}, {"name": "loss", "goal": "min", "max": 0.5}], {"name": "resnet"})
    measured = checked.measure(query, [candidate, running])
    assert sorted(client.calls) == [("ft", JOB), ("ft", PROD)]
    assert running["metrics"] is None and running["metrics_ok"] is None
    assert candidate["metrics_ok"] is True
    assert candidate["metrics"]["acc"] == {"value": 0.93, "source": "ft_metrics", "ok": True, "problems": [], "baseline_value": 0.9, "improvement": 0.03}
    assert candidate["metrics"]["loss"]["improvement"] == 0.1
    assert measured.baseline["id"] == PROD and measured.baseline["metrics"]["acc"]["value"] == 0.9 and measured.baseline["metrics_ok"] is None
    # The candidate is never its own baseline, though the search offered it first; the baseline was read by its GET.
    assert query.fetched == [PROD] and query.searched[0].phases == ("Completed",)
    assert measured.unfit == [] and measured.warnings == []


def test_an_unfit_job_gets_one_line_per_broken_bound_and_the_message_names_value_bound_and_baseline():
    client = FakeClient(ft={JOB: ft_answer(series("acc", [0.81]), series("f1", [0.7])), PROD: ft_answer(series("acc", [0.86]), series("f1", [0.8]))})
    candidate = job(JOB)
    query = FakeQuery(client, jobs={PROD: job(PROD, name="resnet-prod")})
    checked = metric_checks.plan([{"name": "acc", "min": 0.9, "min_improvement": 0.0}, {"name": "f1", "min": 0.5}], {"training_job_id": PROD})
    measured = checked.measure(query, [candidate])
    assert candidate["metrics_ok"] is False and candidate["metrics"]["f1"]["ok"] is True
    assert measured.job_messages() == [
        "training job %s (candidate): acc is 0.81, below min 0.9 (the baseline's is 0.86)" % JOB,
        "training job %s (candidate): acc is 0.81, improving on the baseline's 0.86 by -0.05 (-5.814%%), less than min_improvement 0 (goal max)" % JOB,
    ]
    assert measured.message().startswith(
        "1 Completed training job did not meet its metric bounds (baseline training job %s (resnet-prod)): training job %s" % (PROD, JOB)
    )


@pytest.mark.parametrize(
    "jobs, required, expected_ok, warning",
    [
        ({}, True, False, None),
        ({PROD: job(PROD, phase="Running")}, True, False, None),
        # A job given that cannot be read fails closed whatever required says (issue 56): only a selection that matched
        # no job at all may skip.
        ({}, False, False, None),
    ],
)
def test_a_baseline_that_cannot_be_read_fails_closed_unless_not_required(jobs, required, expected_ok, warning):
    client = FakeClient(ft={JOB: ft_answer(series("acc", [0.95]))})
    candidate = job(JOB)
    checked = metric_checks.plan([{"name": "acc", "min_improvement": 0}], {"training_job_id": PROD, "required": required})
    measured = checked.measure(FakeQuery(client, jobs=jobs), [candidate])
    assert candidate["metrics_ok"] is expected_ok
    assert measured.baseline is None
    assert measured.warnings == ([warning] if warning else [])
    if expected_ok is False:
        assert "there is no baseline to compare with for min_improvement: training job %s" % PROD in candidate["metrics"]["acc"]["problems"][0]


def test_a_baseline_search_that_finds_no_completed_job_says_what_it_searched():
    client = FakeClient(ft={JOB: ft_answer(series("acc", [0.95]))})
    candidate = job(JOB)
    checked = metric_checks.plan([{"name": "acc", "min_improvement": 0}], {"name": "resnet-prod", "tags": {"stage": "production"}})
    checked.measure(FakeQuery(client, search=[JOB]), [candidate])
    assert candidate["metrics"]["acc"]["problems"] == [
        "acc is 0.95, but there is no baseline to compare with for min_improvement: no Completed training job named 'resnet-prod' tagged stage=production"
        " was found that is not a job this call selects; the tag search looked at the jobs created up to 400 days before 2026-01-01 00:00:00 UTC, the newest"
        " candidate's creation (baseline.max_age_days; 14 searches: a tag search covers 31 days a request)"
    ]


def test_a_read_that_raises_unexpectedly_fails_closed_for_that_job_only():
    client = FakeClient(ft={JOB: ft_answer(series("acc", [0.95])), OTHER: RuntimeError("boom")})
    first, second = job(JOB), job(OTHER)
    metric_checks.plan([{"name": "acc", "min": 0.5}]).measure(FakeQuery(client), [first, second])
    assert first["metrics_ok"] is True
    assert second["metrics_ok"] is False and "boom" in second["metrics"]["acc"]["problems"][0]
