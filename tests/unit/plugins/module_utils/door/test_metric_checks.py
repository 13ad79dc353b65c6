# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's check of metrics and baseline (door/metric_checks): what a baseline selects, its max_age_days, each
metric entry refused naming it, what the module fills in read as given."""

from __future__ import annotations

import pytest


from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError


JOB = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
PROD = "4c8e2a10-7b3d-4f5e-9a1c-2d3e4f5a6b02"
PRODUCTION = {"stage": "production"}


def refused(metrics, baseline=None, candidates=()):
    with pytest.raises(ConnectionConfigError) as raised:
        metric_checks.plan(metrics, baseline, candidates)
    return str(raised.value)


@pytest.mark.parametrize("value", [0, -1, 3651, True, 1.5, "abc", "40.0", [40]])
def test_max_age_days_out_of_range_names_the_option_before_any_request(value):
    with pytest.raises(ConnectionConfigError, match=r"^baseline\.max_age_days must be a whole number of days from 1 to 3650 .*, got "):
        metric_checks.check_baseline({"tags": PRODUCTION, "max_age_days": value})
    # Whatever the baseline selects: the module gives its default to every baseline.
    with pytest.raises(ConnectionConfigError, match=r"^baseline\.max_age_days"):
        metric_checks.check_baseline({"training_job_id": PROD, "max_age_days": value})


def test_max_age_days_defaults_to_400_and_takes_templated_text():
    assert metric_checks.check_baseline({"tags": PRODUCTION}).max_age_days == 400
    assert metric_checks.check_baseline({"tags": PRODUCTION, "max_age_days": "40"}).max_age_days == 40
    assert metric_checks.check_baseline({"tags": PRODUCTION, "max_age_days": 3650}).max_age_days == 3650


@pytest.mark.parametrize(
    "metrics, baseline, expected",
    [
        ("val_accuracy", None, "metrics must be a list of dicts (each with at least a name), got 'val_accuracy'"),
        (["val_accuracy"], None, "metrics[0] must be a dict with at least a name, got 'val_accuracy'"),
        ([{"min": 0.9}], None, "metrics[0]: name is required"),
        ([{"name": ""}], None, "metrics[0]: name '' must be 1 to 128 printable characters"),
        ([{"name": "a\nb"}], None, "metrics[0]: name 'a\\nb' must be 1 to 128 printable characters"),
        ([{"name": "acc", "regx": "a=(.*)"}], None, "metrics[0]: unknown key regx (did you mean regex?)"),
        ([{"name": "acc", "minimum": 1}], None, "metrics[0]: unknown key minimum (did you mean min?)"),
        ([{"name": "acc", "source": "logs"}], None, "metrics[0] (acc): source must be one of auto, v1, log, ft_metrics, got 'logs'"),
        ([{"name": "acc", "source": "log"}], None, "metrics[0] (acc): source log needs regex"),
        ([{"name": "acc", "regex": "acc=([0-9.]+"}], None, "metrics[0] (acc): regex 'acc=([0-9.]+' does not compile: missing ), unterminated subpattern"),
        ([{"name": "acc", "regex": "acc=[0-9.]+"}], None, "metrics[0] (acc): regex 'acc=[0-9.]+' has 0 groups: it needs exactly one"),
        (
            [{"name": "acc", "regex": "(acc)=([0-9.]+)"}],
            None,
            "has 2 groups: it needs exactly one, the group that captures the number (write other groups as (?:...))",
        ),
        ([{"name": "acc", "regex": "(x)" * 400}], None, "regex is 1200 characters long, at most 1000"),
        ([{"name": "acc", "source": "v1", "regex": "acc=(.*)"}], None, "metrics[0] (acc): regex is read by source log only"),
        ([{"name": "acc", "source": "ft_metrics", "task": "worker-0"}], None, "task names the log a source log reads"),
        ([{"name": "acc", "regex": "a=(.*)", "task": "../x"}], None, "task '../x' is not a task name such as worker-0"),
        ([{"name": "acc", "source": "log", "regex": "a=(.*)", "group": "validation"}], None, "group picks an ft-metrics series"),
        ([{"name": "acc", "group": "eval"}], None, "group must be one of training, validation, test, got 'eval'"),
        ([{"name": "acc", "lines": 0, "regex": "a=(.*)"}], None, "lines must be an integer from 1 to 100000, got 0"),
        ([{"name": "acc", "lines": 100001, "regex": "a=(.*)"}], None, "lines must be an integer from 1 to 100000, got 100001"),
        ([{"name": "acc", "lines": True, "regex": "a=(.*)"}], None, "lines must be an integer from 1 to 100000, got true"),
        ([{"name": "acc", "pick": "mean"}], None, "pick must be one of last, max, min, got 'mean'"),
        ([{"name": "acc", "goal": "up"}], None, "goal must be one of max, min, got 'up'"),
        ([{"name": "acc", "min": "high"}], None, "metrics[0] (acc): min must be a finite number, got 'high'"),
        ([{"name": "acc", "max": True}], None, "max must be a finite number, got true"),
        ([{"name": "acc", "min": float("nan")}], None, "min must be a finite number, got nan"),
        ([{"name": "acc", "max": "inf"}], None, "max must be a finite number, got 'inf'"),
        ([{"name": "acc", "max": 10**400}], None, "max must be a finite number, got an integer of 1329 bits"),
        ([{"name": "acc", "min_improvement": [1]}], {"training_job_id": PROD}, "min_improvement must be a finite number, got an array of 1 item"),
        ([{"name": "acc", "min": 0.9, "max": 0.5}], None, "metrics[0] (acc): min 0.9 is above max 0.5: no value can meet both"),
        ([{"name": "acc", "min_improvement": 0}], None, "min_improvement compares with a baseline job: set baseline"),
        ([{"name": "acc", "min_relative_improvement": 0.01}], None, "min_relative_improvement compares with a baseline job"),
        ([{"name": "acc"}, {"name": "acc"}], None, "metrics[1]: name 'acc' is given twice (also metrics[0])"),
        ([], {"training_job_id": PROD}, "baseline is set but metrics is empty"),
    ],
)
def test_a_metric_entry_the_service_cannot_answer_is_refused_naming_it(metrics, baseline, expected):
    assert expected in refused(metrics, baseline)


@pytest.mark.parametrize(
    "baseline, expected",
    [
        ("resnet-prod", "baseline must be a dict (training_job_id, job_id with version_id, or name and/or tags), got 'resnet-prod'"),
        ({"nmae": "resnet-prod"}, "baseline: unknown key nmae (did you mean name?)"),
        ({"required": False}, "baseline selects no job: give baseline.training_job_id, baseline.job_id with baseline.version_id, or baseline.name"),
        ({"tags": {}}, "baseline selects no job"),
        ({"workspace_id": "0"}, "baseline.workspace_id refines a search: give baseline.name or baseline.tags"),
        ({"name": "  "}, "baseline.name must be a job name, got '  '"),
        ({"name": "prod", "training_job_id": PROD}, "baseline.training_job_id and baseline.name are mutually exclusive"),
        ({"training_job_id": PROD, "job_id": 10, "version_id": 1}, "baseline.training_job_id and baseline.job_id are mutually exclusive"),
        ({"job_id": 10}, "baseline.version_id must be an integer, got null"),
        ({"job_id": 10, "version_id": 1.5}, "baseline.version_id must be an integer, got 1.5"),
        ({"training_job_id": "../x"}, "baseline.training_job_id: '../x' is not a training job id"),
        ({"tags": {"stage": {"a": 1}}}, "baseline.tags.stage: a tag value must be a string"),
        ({"tags": dict(("k%d" % i, "v") for i in range(11))}, "baseline.tags: at most 10 tag keys, got 11"),
        ({"name": "prod", "workspace_id": "nope"}, "baseline.workspace_id: 'nope' is not a workspace id"),
        ({"name": "prod", "required": "sometimes"}, "baseline.required must be a boolean (true or false), got 'sometimes'"),
    ],
)
def test_a_baseline_that_selects_nothing_a_search_or_a_get_can_find_is_refused(baseline, expected):
    assert expected in refused([{"name": "acc", "min_improvement": 0}], baseline)


def test_a_job_is_never_its_own_baseline():
    text = refused([{"name": "acc", "min_improvement": 0}], {"training_job_id": JOB}, [JOB])
    assert "baseline: %s is also a job this call selects: a job is never its own baseline" % JOB in text
    assert "v1 job 10 version 1 is also a job" in refused([{"name": "acc"}], {"job_id": 10, "version_id": 1}, [("v1", 10, 1)])


def test_what_the_module_fills_in_and_what_a_template_gives_is_read_as_given():
    """The module's argument spec fills every unset suboption with None or its default; a templated number is text."""
    entry = {
        "name": "acc",
        "source": "auto",
        "regex": None,
        "task": None,
        "lines": 1000,
        "pick": "last",
        "group": None,
        "goal": "max",
        "min": "0.9",
        "max": None,
        "min_improvement": None,
        "min_relative_improvement": None,
    }
    base = {"training_job_id": None, "job_id": None, "version_id": None, "name": "resnet-prod", "tags": None, "workspace_id": None, "required": "no"}
    checked = metric_checks.plan([entry], base)
    metric = checked.metrics[0]
    assert (metric.bounds["min"], metric.lines, metric.source_for("v2"), metric.source_for("v1")) == (0.9, 1000, "ft_metrics", "v1")
    assert checked.baseline.required is False and checked.baseline.search.name == "resnet-prod" and checked.baseline.search.phases == ("Completed",)
    assert checked.bounds() == [{"name": "acc", "source": "auto", "pick": "last", "goal": "max", "min": 0.9}]
