# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36, item 3: a search never reports a job's phase.

The search API's index may lag behind the jobs.  Before the fix, a task selecting jobs by ``name``, ``tags`` or
``latest`` without ``wait`` returned items built from the search's documents alone, so a gate written as
``when: r.training_job is modelarts.training.completed`` opened on a search saying ``Completed`` while the job's own GET
said ``Running`` (the emulator's ``stale`` fault: every search answer reports one phase, each job's GET the truth).  Now
the search only chooses the jobs: each is read by its own GET before it is returned (for ``latest``, one GET), with
``max_concurrency`` GETs at a time; a name matching nothing still returns ``[]`` without a GET.  The role waits, and
its gate was already opened on GETs only: it is checked here all the same, with ``training_job_gate_timeout: 0``.
"""

import json

import pytest

from conftest import emulator_connection
from eda_helpers import unique_id

MODULE = "modelarts.training.modelarts_training_job_info"
ROLE = "modelarts.training.training_job_gate"


def add_jobs(emulator, prefix, count, phase):
    """``count`` jobs in ``phase`` sharing a new name and a new tag value; ``(name, tag value, ids)``."""
    name, tag = unique_id(prefix), unique_id("tag")
    ids = [unique_id("%s-%d" % (prefix, index)) for index in range(count)]
    emulator.add_jobs([{"id": job, "name": name, "phase": phase, "tags": {"r36-batch": tag}} for job in ids])
    return name, tag, ids


def selector_options(selector, name, tag):
    return {"name": {"name": name}, "tags": {"tags": {"r36-batch": tag}}, "latest": {"name": name, "latest": True}}[selector]


def gets(emulator, ids):
    """How many GETs of each of ``ids`` the emulator received."""
    return dict((job, len([e for e in emulator.requests(path="/training-jobs/%s" % job) if e["method"] == "GET"])) for job in ids)


def gate_play(emulator, options, tmp_path):
    """The user's gate: read the jobs a search selects, then deploy when they are Completed."""
    task = dict(emulator_connection(emulator), **options)
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"name": "Read the jobs", MODULE: task, "register": "r"},
                {
                    "name": "Deploy",
                    "ansible.builtin.debug": {"msg": "DEPLOYED"},
                    "when": "r.training_jobs | length > 0 and r.training_jobs | reject('modelarts.training.completed') | list | length == 0",
                },
                {
                    "name": "Deploy the newest",
                    "ansible.builtin.debug": {"msg": "NEWEST DEPLOYED"},
                    "when": "r.training_job is defined and r.training_job is modelarts.training.completed",
                },
                {"ansible.builtin.copy": {"content": "{{ r | to_json }}", "dest": str(tmp_path / "result.json")}},
            ],
        }
    ]


@pytest.mark.parametrize("selector", ["name", "tags", "latest"])
def test_a_gate_on_a_search_without_wait_never_opens_on_the_searchs_word(emulator, run_playbook, stale_search, tmp_path, selector):
    name, tag, ids = add_jobs(emulator, "r36-stale", 3, "Running")
    stale_search("Completed")
    emulator.clear_requests()
    result = run_playbook(gate_play(emulator, dict(selector_options(selector, name, tag), max_concurrency=2), tmp_path))
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "DEPLOYED" not in result.stdout, "the search's Completed opened the gate while each job's GET says Running"
    registered = json.loads((tmp_path / "result.json").read_text())
    expected = [max(ids)] if selector == "latest" else sorted(ids)
    assert sorted(job["id"] for job in registered["training_jobs"]) == expected
    assert all(job["phase"] == "Running" and job["completed"] is False for job in registered["training_jobs"])
    # One GET per job returned, and none of the jobs latest leaves out.
    assert gets(emulator, ids) == dict((job, 1 if job in expected else 0) for job in ids)


def test_a_search_without_wait_returns_what_the_jobs_own_gets_say(emulator, run_info_task):
    # The other way round: the search lags behind jobs that have completed.
    name, _tag, ids = add_jobs(emulator, "r36-behind", 2, "Completed")
    emulator.add_fault(type="stale", phase="Running", count=1)
    result = run_info_task(dict(emulator_connection(emulator), name=name))[0]
    assert not result.get("failed"), result.get("msg")
    assert sorted(job["id"] for job in result["training_jobs"]) == sorted(ids)
    assert all(job["phase"] == "Completed" and job["completed"] is True for job in result["training_jobs"])


def test_a_name_matching_nothing_still_returns_an_empty_list_without_a_get(emulator, run_info_task):
    emulator.clear_requests()
    result = run_info_task(dict(emulator_connection(emulator), name=unique_id("r36-nobody")))[0]
    assert not result.get("failed") and result["training_jobs"] == [] and "warnings" not in result, result
    assert [e["path"] for e in emulator.requests() if "/training-jobs/" in e["path"]] == []


def test_the_role_opens_its_gate_on_the_jobs_own_gets_only(emulator, run_playbook, stale_search):
    name, _tag, ids = add_jobs(emulator, "r36-role", 2, "Running")
    stale_search("Completed")
    role_vars = {"training_job_gate_name": name, "training_job_gate_timeout": 0, "training_job_gate_connection": emulator_connection(emulator)}
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "block": [
                        {"ansible.builtin.include_role": {"name": ROLE}, "vars": role_vars},
                        {"ansible.builtin.debug": {"msg": "GATE OPENED"}},
                    ],
                    "rescue": [{"ansible.builtin.debug": {"msg": "GATE CLOSED {{ training_job_gate_messages | join(' / ') }}"}}],
                }
            ],
        }
    ]
    result = run_playbook(play)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "GATE OPENED" not in output and "GATE CLOSED" in output, output[-4000:]
    assert all(job in output for job in ids) and "last phase seen Running" in output, output[-4000:]
