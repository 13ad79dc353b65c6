# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Selecting jobs the way teams run them (issue 30), through ansible-playbook and ansible-rulebook against the HTTPS
emulator's ``nightly`` scenario: the newest run of a reused name (``latest``), TMS tags, and a workspace other than
the default one - with the emulator's request log as the witness of what each call asked.

The scenario (docs/emulator.md): ``nightly-train`` failed 3, 2 and 1 days ago (...001-...003), was just created
(...004: Creating, Running for 2 polls, then Completed), ran 40 days ago (...005, outside a tag search's 31-day window)
and 1 hour ago in workspace 0123456789abcdef0123456789abcdef (...006); ``speech-train`` (...007) is tagged
``{pipeline: nightly, team: speech}``, ``adhoc-train`` (...008) ``{team: vision}``, ``untagged-train`` (...009) nothing;
the ``nightly-train`` jobs are tagged ``{pipeline: nightly, team: vision}``.
"""

import asyncio
import collections
import json
import os
import subprocess
import time

import pytest

from conftest import block_play, emulator_connection
from eda_helpers import BIN, RULEBOOKS, event_lines

WORKSPACE = "0123456789abcdef0123456789abcdef"
MODULE = "modelarts.training.modelarts_training_job_info"


def job(number):
    return "b1000000-0000-4000-8000-%012d" % number


FAILED = [job(1), job(2), job(3)]
NEWEST = job(4)


@pytest.fixture
def nightly(modelarts_emulator):
    """The emulator with the nightly scenario loaded, its request log empty (the fixture resets it afterwards)."""
    modelarts_emulator.reset("nightly")
    modelarts_emulator.clear_requests()
    return modelarts_emulator


def run_tasks(run_playbook, tmp_path, emu, tasks, connection=True):
    """Run each of ``tasks`` (module options) in one play, registering every result (failures included); return them."""
    steps = []
    for index, options in enumerate(tasks):
        options = dict(emulator_connection(emu), **options) if connection else options
        steps.append({MODULE: options, "register": "result_%d" % index, "ignore_errors": True})
    results = "[%s]" % ", ".join("result_%d" % index for index in range(len(tasks)))
    steps.append({"ansible.builtin.copy": {"content": "{{ %s | to_json }}" % results, "dest": str(tmp_path / "results.json")}})
    process = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": steps}], verbosity=3)
    assert process.returncode == 0, process.stdout[-4000:] + process.stderr[-4000:]
    return json.loads((tmp_path / "results.json").read_text())


def ids_of(result):
    return sorted(item["id"] for item in result["training_jobs"])


def searches(emu):
    """The bodies of the search requests the emulator received."""
    return [entry.get("body") or {} for entry in emu.requests(path="/training-job-searches")]


def test_latest_waits_on_the_newest_run_of_a_name_while_older_runs_failed(nightly, run_playbook, tmp_path):
    fast = dict(name="nightly-train", wait=True, wait_sleep=0.05, wait_sleep_max=0.05, wait_timeout=60, diagnostics=False)
    latest, every = run_tasks(run_playbook, tmp_path, nightly, [dict(fast, latest=True), fast])
    # The newest run only: Creating, Running for 2 polls, then Completed - the failed runs of the name do not count.
    assert not latest.get("failed"), latest.get("msg")
    assert ids_of(latest) == [NEWEST] and latest["training_job"]["id"] == NEWEST and latest["training_job"]["phase"] == "Completed"
    assert [step["phase"] for step in latest["training_job"]["phase_history"]][-1] == "Completed"
    # Without latest every job that ever had the name is waited on, and a failed one ends the wait (as documented).
    assert every.get("failed") and "Failed" in every["msg"]
    assert set(FAILED) <= set(ids_of(every)) and "training_job" not in every


@pytest.mark.parametrize(
    "options,expected",
    [
        ({"tags": {"team": "speech"}}, [7]),
        ({"tags": {"team": ["speech", "vision"]}}, [1, 2, 3, 4, 7, 8]),
        ({"tags": {"pipeline": "nightly", "team": "vision"}}, [1, 2, 3, 4]),
        ({"tags": {"pipeline": None}}, [1, 2, 3, 4, 7]),
        ({"tags": {"pipeline": []}}, [1, 2, 3, 4, 7]),
        ({"tags": {"team": "vision"}, "name": "adhoc-train"}, [8]),
        ({"tags": {"team": ["vision", "speech"]}, "latest": True}, [4]),
        ({"tags": {"team": "vision"}, "name": "nightly-train", "latest": True}, [4]),
    ],
    ids=["one-value", "any-of-values", "several-keys", "key-any-value-null", "key-any-value-list", "with-name", "with-latest", "name-tags-latest"],
)
def test_tags_select_jobs(nightly, run_playbook, tmp_path, options, expected):
    (result,) = run_tasks(run_playbook, tmp_path, nightly, [options])
    assert not result.get("failed"), result.get("msg")
    assert ids_of(result) == [job(number) for number in expected]
    bodies = searches(nightly)
    assert bodies and all(body.get("tags") for body in bodies)


def test_workspace_id_finds_a_job_the_default_workspace_does_not_show(nightly, run_playbook, tmp_path):
    default, other = run_tasks(run_playbook, tmp_path, nightly, [{"name": "nightly-train"}, {"name": "nightly-train", "workspace_id": WORKSPACE}])
    assert job(6) not in ids_of(default)
    assert ids_of(other) == [job(6)]
    bodies = searches(nightly)
    assert [body.get("workspace_id") for body in bodies][-1] == WORKSPACE


def test_every_search_of_a_call_in_a_workspace_carries_it(nightly, run_playbook, tmp_path):
    """Waiting on jobs found in a workspace: the tag search and every search by id that polls them look in it."""
    nightly.add_jobs(
        [
            {
                "name": "ws-train-%d" % index,
                "created_ago": 0,
                "workspace_id": WORKSPACE,
                "tags": {"sweep": "ws"},
                "timeline": ["Running", "Running", "Completed"],
            }
            for index in range(3)
        ]
    )
    nightly.clear_requests()
    (result,) = run_tasks(
        run_playbook, tmp_path, nightly, [{"tags": {"sweep": "ws"}, "workspace_id": WORKSPACE, "wait": True, "wait_sleep": 0.05, "wait_sleep_max": 0.05}]
    )
    assert not result.get("failed"), result.get("msg")
    assert len(result["training_jobs"]) == 3 and all(item["phase"] == "Completed" for item in result["training_jobs"])
    bodies = searches(nightly)
    by_id = [body for body in bodies if any(spec.get("key") == "id" for spec in body.get("filters") or [])]
    assert by_id, "the jobs were polled through searches by id"
    assert all(body.get("workspace_id") == WORKSPACE for body in bodies)


@pytest.mark.parametrize(
    "options,message",
    [
        ({"tags": {"team": "a#b"}}, "tags.team: 'a#b' is not a tag value"),
        ({"tags": {"k%d" % index: "v" for index in range(11)}}, "tags: at most 10 tag keys, got 11"),
        ({"tags": {" team": "vision"}}, "no leading or trailing space"),
        ({"tags": {"team": ["a"] * 2}}, "tags.team: a value is given twice"),
        ({"training_job_id": job(4), "latest": True}, "latest needs name or tags"),
        ({"latest": True, "training_job_ids": [job(4), job(7)]}, "latest needs name or tags"),
        ({"name": "nightly-train", "workspace_id": "workspace-1"}, "workspace_id: 'workspace-1' is not a workspace id"),
    ],
    ids=["bad-value", "eleven-keys", "spaced-key", "twice", "latest-with-id", "latest-with-ids", "workspace"],
)
def test_bad_selectors_fail_before_any_request(nightly, run_playbook, tmp_path, options, message):
    (result,) = run_tasks(run_playbook, tmp_path, nightly, [options])
    assert result.get("failed") and message in result["msg"]
    assert nightly.requests() == [], "the emulator saw a request"


def role_play(emu, **variables):
    block = [
        {"ansible.builtin.include_role": {"name": "modelarts.training.training_job_gate"}, "vars": variables},
        {"ansible.builtin.debug": {"msg": "GATE-OPEN {{ modelarts_training_jobs | map(attribute='id') | join(',') }}"}},
    ]
    return block_play(emu, block, [{"ansible.builtin.debug": {"msg": "GATE-CLOSED {{ ansible_failed_result.msg }}"}}])


def test_the_role_gates_on_the_newest_run_of_a_name(nightly, run_playbook):
    common = dict(training_job_gate_name="nightly-train", training_job_gate_poll=0.05, training_job_gate_diagnostics=False, training_job_gate_timeout=60)
    process = run_playbook(role_play(nightly, training_job_gate_latest=True, **common))
    assert process.returncode == 0, process.stdout[-4000:]
    assert "GATE-OPEN %s" % NEWEST in process.stdout and "GATE-CLOSED" not in process.stdout
    nightly.reset("nightly")
    process = run_playbook(role_play(nightly, **common))
    assert process.returncode == 0, process.stdout[-4000:]
    assert "GATE-CLOSED training_job_gate: closed" in process.stdout and "GATE-OPEN" not in process.stdout
    assert any(job_id in process.stdout for job_id in FAILED)


def test_the_role_warns_about_no_search_variable_and_lists_them(nightly, run_playbook):
    process = run_playbook(role_play(nightly, training_job_gate_tags={"team": "speech"}, training_job_gate_workspace_id="0", training_job_gate_poll=0.05))
    assert process.returncode == 0, process.stdout[-4000:]
    assert "GATE-OPEN %s" % job(7) in process.stdout
    assert "training_job_gate_tags" not in process.stderr and "training_job_gate_workspace_id" not in process.stderr


def test_the_event_source_watching_tags_emits_every_matching_job_and_only_those(nightly, ansible_env, tmp_path):
    """Through ansible-rulebook: jobs tagged pipeline=nightly in the default workspace and the 31-day window, one of them
    created after the source started (the rulebook stops on its Completed event)."""
    vars_file = tmp_path / "vars.yml"
    vars_file.write_text("interval: 0.3\n")
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n")
    command = [os.path.join(BIN, "ansible-rulebook"), "--rulebook", os.path.join(RULEBOOKS, "observe_tags.yml"), "-i", str(inventory)]
    command += ["--vars", str(vars_file), "--shutdown-delay", "2"]
    env = dict(ansible_env, **nightly.env())
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen(command, env=env, cwd=str(tmp_path), stdout=stdout, stderr=stderr)
        try:
            # The job is created once the source has listed the tagged jobs: after it started.
            deadline = time.monotonic() + 600  # a bound for a hang: ansible-rulebook starts slowly on a loaded machine
            while not any((body.get("tags") for body in searches(nightly))) and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            late = nightly.add_job(name="late-train", created_ago=0, tags={"pipeline": "nightly"}, timeline=[{"phase": "Running", "polls": 4}, "Completed"])
            process.wait(timeout=600)
        finally:
            if process.poll() is None:
                process.kill()
    text = out.read_text()
    assert process.returncode == 0, text[-4000:] + err.read_text()[-4000:]
    events = event_lines(text)
    assert {event[0] for event in events} == {job(1), job(2), job(3), job(4), job(7), late}
    assert (late, "Running", "Completed") in events and (job(4), "Running", "Completed") in events
    assert sorted(event for event in events if event[0] in FAILED) == [(job_id, "None", "Failed") for job_id in FAILED]


def test_the_event_source_does_not_page_through_finished_jobs_every_round(nightly, collection_root):
    """Through the source's ``main()``: 120 long-finished jobs of a tag take 3 pages to list once; every later round
    asks one page for what is new and reads the one running job by id - never the 3 pages again, and each finished job
    by its own GET once, for its one event (a search never decides an event)."""
    from eda_helpers import load_source  # pylint: disable=import-outside-toplevel

    src = load_source(collection_root)
    tag = {"sweep": "cost"}
    nightly.add_jobs([{"name": "sweep-{n:03d}", "count": 120, "created_ago": "1h", "stagger": "10m", "phase": "Completed", "tags": tag}])
    running = nightly.add_job(name="sweep-live", created_ago=0, tags=tag, timeline=[{"phase": "Running", "polls": 4}, "Completed"])
    nightly.clear_requests()

    async def watch():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(src["main"](queue, dict(nightly.connection("aksk"), tags=tag, interval=0.2)))
        events = []
        try:
            while not any(e["modelarts"]["training_job"]["id"] == running and e["modelarts"]["phase"] == "Completed" for e in events):
                events.append(await queue.get())
        finally:
            task.cancel()
        return events

    events = asyncio.run(asyncio.wait_for(watch(), 60))
    assert len({e["modelarts"]["training_job"]["id"] for e in events}) == 121
    tagged = [body for body in searches(nightly) if body.get("tags")]
    assert [body["offset"] for body in tagged[:3]] == [0, 1, 2], "the first round lists every page"
    later = tagged[3:]
    assert len(later) >= 4 and all(body["offset"] == 0 for body in later), "each later round asks one page"
    assert not [spec for body in later for spec in body.get("filters") or [] if spec.get("key") == "create_time"], "no window of its own"
    gets = collections.Counter(entry["path"].rsplit("/", 1)[-1] for entry in nightly.requests(path="/training-jobs/") if entry["method"] == "GET")
    # A search never decides an event: each finished job the first listing shows is read once with its own GET
    # before its Completed event, and never again; only the running job is read round after round.
    finished = set(gets) - {running}
    assert len(finished) == 120 and all(gets[job_id] == 1 for job_id in finished), "each finished job read once by id"
    assert gets[running] >= 1
