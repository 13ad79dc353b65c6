# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a fifth newcomer met (issue 60), met through ``ansible-rulebook`` and ``ansible-playbook`` against the emulator:
an event source that read a 401 as a filter it could fall back from, a source silent at ansible-rulebook's default
verbosity, a misspelt name that held the runner for the whole timeout without a word, and a record without the job's end.

Each test fails on the code before the issue; docs/troubleshooting.md quotes the new messages.
"""

import json
import re
import uuid

import pytest
import yaml

from conftest import emulator_connection
from documented import assert_documented
from eda_helpers import run_rulebook, unique_id

SOURCE = "modelarts.training.training_job_phase"
MODULE = "modelarts.training.modelarts_training_job_info"
ROLE = "modelarts.training.training_job_gate"
PRINT_EVENTS = [
    {
        "name": "Print every event",
        "condition": "event.modelarts is defined",
        "action": {"debug": {"msg": "EVENT|{{ event.modelarts.training_job.id }}|{{ event.modelarts.phase }}"}},
    }
]


def workspace():
    """A workspace of the test's own (32 hex digits): the emulator is shared by the session, a search there sees only these jobs."""
    return uuid.uuid4().hex


def rulebook(tmp_path, arguments, until=None):
    """A rulebook file: the source with ``arguments`` printing every event; with ``until`` (a job id), a second source
    watches that job and ends when it is finished, which stops ansible-rulebook (a search never ends)."""
    path = tmp_path / "rulebook.yml"
    sources = [{"name": "jobs", SOURCE: arguments}]
    if until is not None:
        sources.append({"name": "until", SOURCE: {"training_job_ids": [until], "interval": 0.3, "stop_when_done": True}})
    book = [{"name": "Watch", "hosts": "all", "match_multiple_rules": True, "sources": sources, "rules": PRINT_EVENTS}]
    path.write_text(yaml.safe_dump(book, sort_keys=False))
    return str(path)


def ending_job(emu, polls=12):
    """A job that completes after a few polls: the ``until`` of :func:`rulebook`."""
    job = unique_id("i60-until")
    emu.add_jobs([{"id": job, "name": "i60-until", "timeline": [{"phase": "Running", "polls": polls}, "Completed"]}])
    return job


def log_lines(text, logger=SOURCE):
    """``(level, message)`` of each line ansible-rulebook logged for ``logger`` and its children (its LOG_FORMAT:
    ``time - name - LEVEL - message``)."""
    found = []
    for line in text.splitlines():
        match = re.match(r"^\S+ \S+ - (%s(?:\.\w+)?) - ([A-Z]+) - (.*)$" % re.escape(logger), line)
        if match:
            found.append((match.group(2), match.group(3)))
    return found


# -- item 4: a 401 at start stops the source with its message alone --------------------------------------------------


@pytest.mark.parametrize("startup", ["changes", "all"])
def test_wrong_credentials_stop_a_name_watch_at_start_with_the_401_alone(emulator, ansible_env, tmp_path, startup):
    name = unique_id("i60-creds")
    emulator.add_jobs([{"id": str(uuid.uuid4()), "name": name, "phase": "Completed"}])
    arguments = dict(emulator.connection("aksk"), name=name, startup=startup, interval=0.2, secret_key="not-the-secret-%s" % emulator.sk[:4])
    result = run_rulebook(ansible_env, tmp_path, rulebook(tmp_path, arguments), timeout=120)
    output = result.stdout + result.stderr
    assert "Traceback (most recent call last)" not in output or "SourceError" in output, output[-4000:]
    assert "HTTP 401" in output and "APIG.0301" in output, output[-4000:]
    # Not a filter the service does not take: no fallback to listing every job, no second request's warning.
    assert "was refused" not in output and "the first round lists every job" not in output, output[-4000:]
    assert "EVENT|" not in result.stdout
    assert emulator.sk not in output


# -- item 6: one line at start at the default verbosity; "not fit to ship" a WARNING ---------------------------------------------------


def test_the_source_says_what_it_watches_at_the_default_verbosity_and_warns_what_is_not_fit(emulator, ansible_env, tmp_path):
    pool = unique_id("i60-pool")
    done, running, unfit = (str(uuid.uuid4()) for _number in range(3))
    emulator.add_jobs(
        [
            {"id": done, "name": "i60-done", "phase": "Completed", "created_ago": "1h", "tags": {"pool": pool}, "metric_lines": ["val_accuracy=0.95"]},
            {"id": unfit, "name": "i60-unfit", "phase": "Completed", "created_ago": "1h", "tags": {"pool": pool}, "metric_lines": ["val_accuracy=0.5"]},
            {"id": running, "name": "i60-running", "created_ago": "5m", "tags": {"pool": pool}, "timeline": [{"phase": "Running", "polls": 400}, "Completed"]},
        ]
    )
    until = ending_job(emulator)
    state = tmp_path / "state" / "watch.json"
    arguments = {
        "tags": {"pool": pool},
        "interval": 0.3,
        "state_file": str(state),
        "metrics": [{"name": "val_accuracy", "regex": "val_accuracy=([0-9.]+)", "min": 0.9}],
    }
    result = run_rulebook(dict(ansible_env, **emulator.env("aksk")), tmp_path, rulebook(tmp_path, arguments, until=until), timeout=120)
    output = result.stdout + result.stderr
    assert "EVENT|%s|Completed" % until in result.stdout, output[-4000:]
    lines = log_lines(result.stderr)
    started = [message for level, message in lines if message.startswith("watching training jobs tagged pool=%s" % pool)]
    assert len(started) == 1, lines
    assert ("(startup: all; state file: %s): the first round found 3 jobs, 1 still watched" % state) in started[0], started
    # The other source (ids) says its own line.
    assert any(message.startswith("watching training job %s " % until) and "startup: all; state file: none" in message for _level, message in lines), lines
    # ansible-rulebook's default shows WARNING and above: the job that is not fit is said without -v.
    unfit_lines = [(level, message) for level, message in lines if message.startswith("not fit to ship: ")]
    assert unfit_lines and all(level == "WARNING" for level, _message in unfit_lines), lines
    assert any(unfit in message for _level, message in unfit_lines), unfit_lines


# -- item 5: a name that matches nothing says so at once, with the names that come closest -------------------------


@pytest.fixture
def churn(emulator):
    """A workspace of its own holding 'churn-model' (twice), 'churn-model-v2' and an unrelated job: what a newcomer
    misspells as 'churn-modle'."""
    space = workspace()
    emulator.add_jobs(
        [
            {"id": str(uuid.uuid4()), "name": name, "phase": "Completed", "workspace_id": space, "created_ago": ago}
            for name, ago in (("churn-model", "2h"), ("churn-model", "1h"), ("churn-model-v2", "30m"), ("resnet50-nightly", "10m"))
        ]
    )
    return space


def still_waiting(space):
    return (
        "no training job named 'churn-modle' in workspace %s: still waiting (a job may be submitted later); closest names: 'churn-model', 'churn-model-v2'"
        % space
    )


def warning_count(text, warning):
    """How many times ``warning`` was shown as a ``[WARNING]:`` line (ansible-core before 2.19 may wrap it)."""
    return re.sub(r"\s+", " ", text).count("[WARNING]: " + warning)


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "module"])
def test_a_misspelt_name_warns_while_waiting_with_the_closest_names_and_the_failure_keeps_them(emulator, run_playbook, tmp_path, churn, in_process):
    task = dict(emulator_connection(emulator), name="churn-modle", workspace_id=churn, wait=True, wait_timeout=3, wait_sleep=0.5, wait_sleep_max=0.5)
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {"modelarts_training_in_process": in_process},
            "tasks": [
                {"name": "wait", MODULE: task, "register": "job", "ignore_errors": True},
                {"ansible.builtin.copy": {"content": "{{ job | to_json }}", "dest": str(tmp_path / "result.json"), "mode": "0600"}},
            ],
        }
    ]
    result = run_playbook(play)
    output = result.stdout + result.stderr
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["failed"], saved
    # The warning is the task's, and the failure keeps the names.
    assert saved["warnings"] == [still_waiting(churn)], saved
    assert saved["msg"].startswith("no training job named 'churn-modle' in workspace %s was found after waiting" % churn), saved["msg"]
    assert saved["msg"].endswith("; closest names: 'churn-model', 'churn-model-v2'"), saved["msg"]
    # In the controller's worker the task shows it at once, while it waits (and again with the task's warnings at its end);
    # the module can only hand it back with its result.
    assert warning_count(output, still_waiting(churn)) == (2 if in_process else 1), output[-4000:]
    assert_documented(still_waiting(churn))
    assert_documented(saved["msg"])


def test_the_gate_given_a_misspelt_name_says_which_names_come_closest(emulator, run_playbook, churn):
    gate = {
        "training_job_gate_name": "churn-modle",
        "training_job_gate_workspace_id": churn,
        "training_job_gate_timeout": 2,
        "training_job_gate_poll": 0.5,
        "training_job_gate_connection": emulator_connection(emulator),
    }
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "block": [{"ansible.builtin.include_role": {"name": ROLE}, "vars": gate}],
                    "rescue": [{"ansible.builtin.debug": {"msg": "GATE CLOSED {{ ansible_failed_result.msg }}"}}],
                }
            ],
        }
    ]
    result = run_playbook(play)
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "GATE CLOSED" in output, output[-4000:]
    assert warning_count(output, still_waiting(churn)) >= 1, output[-4000:]
    assert "closest names: 'churn-model', 'churn-model-v2'" in output.split("GATE CLOSED", 1)[1], output[-4000:]


def test_a_name_no_job_comes_close_to_says_so(emulator, run_playbook, tmp_path, churn):
    task = dict(emulator_connection(emulator), name="zzzz-qqqq", workspace_id=churn, wait=True, wait_timeout=0)
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {"name": "wait", MODULE: task, "register": "job", "ignore_errors": True},
                {"ansible.builtin.copy": {"content": "{{ job | to_json }}", "dest": str(tmp_path / "result.json"), "mode": "0600"}},
            ],
        }
    ]
    run_playbook(play)
    saved = json.loads((tmp_path / "result.json").read_text())
    # wait_timeout 0: one search, so no "still waiting"; the failure says that nothing comes close.
    assert "warnings" not in saved or not any("still waiting" in line for line in saved["warnings"]), saved
    assert saved["msg"].endswith("; no name of the 50 newest jobs in workspace %s comes close" % churn), saved["msg"]


# -- item 7: the record gives the job's own end time -------------------------------------------------------------------------


def test_the_gate_record_gives_each_job_s_own_end_time(emulator, run_playbook, tmp_path):
    import datetime  # pylint: disable=import-outside-toplevel

    job = str(uuid.uuid4())
    emulator.add_jobs([{"id": job, "name": unique_id("i60-ended"), "phase": "Completed", "created_ago": "2h"}])
    connection = emulator_connection(emulator)
    record = tmp_path / "record.json"
    tasks = [
        {"name": "read", MODULE: dict(connection, training_job_id=job), "register": "read"},
        {"ansible.builtin.copy": {"content": "{{ read.training_job | to_json }}", "dest": str(tmp_path / "item.json"), "mode": "0600"}},
        {
            "ansible.builtin.include_role": {"name": ROLE},
            "vars": {
                "training_job_gate_ids": [job],
                "training_job_gate_timeout": 30,
                "training_job_gate_connection": connection,
                "training_job_gate_record": str(record),
            },
        },
    ]
    result = run_playbook([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}])
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    item = json.loads((tmp_path / "item.json").read_text())
    made = json.loads(record.read_text())
    # status.duration is the running duration in milliseconds (the v2 reference): the job ended at start_time + duration.
    started = datetime.datetime.strptime(item["start_time"], "%Y-%m-%dT%H:%M:%SZ")
    assert item["duration_seconds"] > 0 and started > datetime.datetime.strptime(item["create_time"], "%Y-%m-%dT%H:%M:%SZ"), item
    expected = (started + datetime.timedelta(seconds=item["duration_seconds"])).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [entry["end_time"] for entry in made["jobs"]] == [expected], made["jobs"]
