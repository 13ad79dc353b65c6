# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters gate_options and gate_variables on the gate role's own argument spec and types (issue 56 item 10, issue 60 items 1, 3)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.modelarts.training.plugins.filter.gate_variables import OMIT_PREFIX, gate_options, gate_variables

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles", "training_job_gate")
PREFIX = "training_job_gate_"


def types():
    with open(os.path.join(ROLE, "vars", "main.yml")) as handle:
        return yaml.safe_load(handle)["training_job_gate_types"]


def check(**given):
    values = dict((name, None) for name in gate_options(ROLE))
    values.update((PREFIX + name, value) for name, value in given.items())
    return gate_variables(values, ROLE, types(), prefix=PREFIX)


def test_an_option_missing_from_the_input_is_an_error():
    with pytest.raises(AnsibleFilterError, match="lacks the options training_job_gate_v1_jobs, "):
        gate_variables({"training_job_gate_ids": ["a"]}, ROLE, types())


def test_options_are_the_specs():
    names = gate_options(ROLE)
    assert "training_job_gate_ids" in names and "training_job_gate_metrics" in names
    assert set(types()) <= set(names)


def test_defaults_and_omit():
    answer = check(ids=["a"], name=OMIT_PREFIX + "0123", timeout=OMIT_PREFIX + "4567", connection={"region": OMIT_PREFIX + "89"})
    assert answer["problem"] == ""
    assert answer["args"]["name"] is None and answer["args"]["timeout"] == 3600 and answer["args"]["connection"] == {}
    assert answer["args"]["ids"] == ["a"] and answer["args"]["require"] == ["Completed"]


@pytest.mark.parametrize(
    "given, problem",
    [
        ({"timeout": "soon"}, "training_job_gate_timeout: expected an integer, got string 'soon'"),
        ({"latest": "maybe"}, "training_job_gate_latest: expected a boolean, got string 'maybe'"),
        ({"tags": ["x"]}, "training_job_gate_tags: expected a dict, got an array of 1 item"),
        ({"require": ["Complete"]}, "(Complete: did you mean Completed?)"),
        ({"metrics": [{"name": "acc", "min_improvment": 0}]}, "training_job_gate_metrics[0]: unknown key min_improvment (did you mean min_improvement?)"),
        ({"metrics": [{"name": "acc", "min": "high"}]}, "training_job_gate_metrics[0] (acc): "),
        ({"baseline": {"tag": {}}}, "training_job_gate_baseline: unknown key tag (did you mean tags?)"),
        ({"v1_jobs": [{"job_id": 1}]}, "training_job_gate_v1_jobs: expected a list of dicts, got an array of 1 item (missing required arguments: version_id"),
    ],
)
def test_problems(given, problem):
    answer = check(ids=["a"], **given)
    assert problem in answer["problem"], answer["problem"]
    assert "\n" not in answer["problem"]


def test_right_values_pass():
    answer = check(ids="a,b", timeout="30", poll=1, latest="yes", metrics=[{"name": "acc", "min_improvement": 0}], baseline={"tags": {"stage": "p"}})
    assert answer["problem"] == "", answer["problem"]
    # The values as given (the role's own rules read them), not converted.
    assert answer["args"]["ids"] == "a,b" and answer["args"]["timeout"] == "30"
