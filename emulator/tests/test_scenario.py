# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scenario files: the shipped ones load, templates expand, mistakes are reported by job."""

import os

import pytest

from modelarts_emulator.scenario import SCENARIO_DIR, ScenarioError, load_file, resolve_scenario_path, shipped_scenarios
from modelarts_emulator.state import EmulatorState


@pytest.mark.parametrize("name", sorted(os.listdir(SCENARIO_DIR)))
def test_shipped_scenarios_load(name):
    state = EmulatorState(load_file(os.path.join(SCENARIO_DIR, name)))
    assert bool(state.jobs) == (name != "empty.json")


def test_shipped_scenario_names():
    assert shipped_scenarios() == ["demo", "empty", "flaky", "integration", "nightly", "tagged-1000", "tagged-10000"]
    # What a bare start needs loads without PyYAML.
    assert resolve_scenario_path("demo").endswith("demo.json") and resolve_scenario_path("empty").endswith("empty.json")


def test_unknown_scenario_names_the_shipped_ones():
    shipped = "demo, empty, flaky, integration, nightly, tagged-1000, tagged-10000"
    with pytest.raises(ScenarioError, match="scenario file not found: nope .shipped scenarios: %s." % shipped):
        resolve_scenario_path("nope")


def test_demo_scenario_is_what_make_demo_expects():
    state = EmulatorState(load_file(resolve_scenario_path("demo")))
    good = state.v2_job(state.directory.first_project()["id"], "6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60")
    bad = state.v2_job(state.directory.first_project()["id"], "2b7e4d1c-8f3a-4e6b-a0c9-5d1e2f3a4b70")
    legacy = state.v1_job(state.directory.first_project()["id"], 10, 12)
    start = state.now()
    assert [s.phase for s in good.lifecycle.steps] == ["Creating", "Pending", "Running", "Completed"]
    assert good.lifecycle.peek(start + 16).phase == "Completed" and good.lifecycle.peek(start + 1).phase == "Creating"
    assert bad.lifecycle.peek(start + 12).phase == "Failed" and bad.failure["exit_code"] == 137
    assert legacy.lifecycle.peek(start + 13).phase == "Completed"


def test_integration_scenario_sizes():
    state = EmulatorState(load_file(resolve_scenario_path("integration")))
    names = [job.name for job in state.jobs]
    assert names.count("shared-name") == 60
    assert len([n for n in names if n.startswith("bulk-")]) == 220
    assert state.v2_job(state.directory.first_project()["id"], "5e1f0000-0000-4000-8000-000000000220").name == "bulk-220"


def test_templates_expand():
    state = EmulatorState(
        {
            "jobs": [
                {
                    "name": "run-{n:02d}",
                    "id": "00000000-0000-4000-8000-{i:012d}",
                    "count": 3,
                    "api": "v2",
                    "v1": {"job_id": 50, "version_id": 1},
                    "phase": "Running",
                }
            ]
        }
    )
    assert [(j.name, j.v2_id, j.v1_job_id) for j in state.jobs] == [
        ("run-01", "00000000-0000-4000-8000-000000000000", 50),
        ("run-02", "00000000-0000-4000-8000-000000000001", 51),
        ("run-03", "00000000-0000-4000-8000-000000000002", 52),
    ]
    created = [j.lifecycle.created_at for j in state.jobs]
    assert created == sorted(created, reverse=True)


def test_accounts_and_settings_from_a_scenario():
    state = EmulatorState(
        {
            "settings": {"token_lifetime": 60},
            "accounts": [
                {
                    "domain_name": "acme",
                    "users": [{"name": "u", "password": "p"}],
                    "access_keys": [{"ak": "AK", "sk": "SK"}],
                    "projects": [{"id": "p1", "name": "eu-west-101"}],
                }
            ],
            "jobs": [{"name": "j", "project": "eu-west-101"}],
        }
    )
    assert state.settings["token_lifetime"] == 60
    assert state.jobs[0].project_id == "p1" and state.jobs[0].region == "eu-west-101"
    assert state.directory.account_for_ak("AK")[0].domain_name == "acme"


def test_cli_overrides_win_over_defaults():
    state = EmulatorState({}, overrides={"ak": "MYAK", "sk": "MYSK", "project_id": "abc", "region": "ap-southeast-1"})
    account, key = state.directory.account_for_ak("MYAK")
    assert key["sk"] == "MYSK" and account.projects[0] == {"id": "abc", "name": "ap-southeast-1"}


@pytest.mark.parametrize(
    "jobs, message",
    [
        ([{"phase": "Completed"}], "every job needs a name"),
        ([{"name": "x", "colour": "red"}], "job 'x': unknown keys colour"),
        ([{"name": "x", "phase": "Done"}], "job 'x': unknown phase 'Done'"),
        ([{"name": "x", "phase": "Completed", "timeline": ["Completed"]}], "either phase or timeline"),
        ([{"name": "x", "project": "mars-1"}], "unknown project 'mars-1'"),
        ([{"name": "x", "api": "v1"}], "v1 jobs need a numeric job_id"),
        ([{"name": "x", "flavor": "tpu"}], "flavor must be one of"),
        ([{"name": "x", "faults": [{"type": "meteor"}]}], "fault type must be one of"),
        ([{"name": "x", "id": "same"}, {"name": "y", "id": "same"}], "duplicate v2 job id same"),
        ([{"name": "x-{oops}", "count": 2}], "bad template"),
    ],
)
def test_mistakes_are_reported(jobs, message):
    with pytest.raises(ScenarioError, match=message):
        EmulatorState({"jobs": jobs})


def test_unknown_top_level_key():
    with pytest.raises(ScenarioError, match="unknown top-level scenario keys: job"):
        EmulatorState({"job": []})
