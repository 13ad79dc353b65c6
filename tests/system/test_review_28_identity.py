# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 28, items 2 and 10: a server's document is checked against the question, server text never becomes
a template, and the event source's log lines cannot be forged.

Met the way users meet them: the shipped gate playbook at -vvv, the shipped rulebook and a rule writer's own
rulebook in the real ansible-rulebook, and the event source's ``main()``, all against the HTTPS emulator,
whose ``wrong_job`` fault answers a GET of one job with another job's document.
"""

import asyncio
import json
import logging
import os
import random
import sys

import pytest

from eda_helpers import RULEBOOKS, connection_args, load_source, run_rulebook, source_events, unique_id

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
GATE_PLAYBOOK = os.path.join(ROOT, "playbooks", "gate_deployment.yml")
NAME_RULEBOOK = os.path.join(RULEBOOKS, "deploy_with_name.yml")
NAME_PLAYBOOK = os.path.join(RULEBOOKS, "write_name.yml")
LOGGER = "modelarts.training.training_job_phase"


def touching(path):
    """A Jinja template that creates ``path`` on the host that renders it."""
    return "{{ lookup('ansible.builtin.pipe', 'touch %s') }}" % path


def gate(ansible_env, emulator, tmp_path, extra_vars):
    """The shipped gate playbook at -vvv, its connection from HUAWEICLOUD_* variables and its releases under ``tmp_path``."""
    import subprocess  # pylint: disable=import-outside-toplevel

    env = dict(ansible_env, TMPDIR=str(tmp_path), **emulator.env())
    variables = dict({"gate_timeout": 20, "gate_poll": 1}, **extra_vars)
    command = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", GATE_PLAYBOOK, "-vvv", "-e", json.dumps(variables)]
    return subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=180, check=False)


def releases(tmp_path):
    return list((tmp_path / "modelarts-releases").glob("release-*.json"))


# -- item 2: the document answers for the job asked -------------------------------------------------------------


def test_gate_stays_closed_when_a_get_answers_another_jobs_document(ansible_env, emulator, tmp_path):
    asked, other = unique_id("id28-asked"), unique_id("id28-other")
    emulator.add_jobs([{"id": asked, "name": "id28-asked", "phase": "Running"}, {"id": other, "name": "id28-other", "phase": "Completed"}])
    # Every GET of the running job answers with the completed job's document.
    emulator.add_fault(type="wrong_job", job=asked, answer_with=other, count="always")
    result = gate(ansible_env, emulator, tmp_path, {"training_job_ids": [asked]})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-4000:]
    assert not releases(tmp_path)
    assert "training_job_gate: closed: 1 of 1 training jobs could not be read" in output, output[-4000:]
    text = "get training job %s: the service answered with the document of another job (metadata.id '%s'), so nothing in it is taken for this job"
    assert text % (asked, other) in output, output[-4000:]


def test_gate_stays_closed_when_a_v1_get_answers_another_versions_document(ansible_env, emulator, tmp_path):
    job_id = random.randint(10**6, 10**9)
    emulator.add_jobs(
        [
            {"name": "id28-v1-asked", "api": "v1", "job_id": job_id, "version_id": 1, "phase": "Running"},
            {"name": "id28-v1-other", "api": "v1", "job_id": job_id, "version_id": 2, "phase": "Completed"},
        ]
    )
    emulator.add_fault(type="wrong_job", job="%d/1" % job_id, answer_with="%d/2" % job_id, count="always")
    result = gate(ansible_env, emulator, tmp_path, {"training_v1_jobs": [{"job_id": job_id, "version_id": 1}]})
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-4000:]
    assert not releases(tmp_path)
    assert "training_job_gate: closed: 1 of 1 training jobs could not be read" in output, output[-4000:]
    text = "get training job %d version 1: the service answered with the document of another job (job_id %d, version_id 2)" % (job_id, job_id)
    assert text in output, output[-4000:]


def test_gate_stays_closed_when_a_search_by_id_answers_with_another_job(ansible_env, emulator, tmp_path):
    """Two jobs are polled through the search by id; an answer holding a job not asked for answers for neither."""
    first, second, other = unique_id("id28-s1"), unique_id("id28-s2"), unique_id("id28-s-other")
    emulator.add_jobs([{"id": job, "name": job, "phase": "Running"} for job in (first, second)] + [{"id": other, "name": "id28-s-other", "phase": "Completed"}])
    fault = emulator.add_fault(type="wrong_job", target="search", answer_with=other, count="always")
    try:
        result = gate(ansible_env, emulator, tmp_path, {"training_job_ids": [first, second], "gate_timeout": 3})
    finally:
        emulator.control("DELETE", "/faults/%d" % fault)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-4000:]
    assert not releases(tmp_path)
    assert "training_job_gate: closed: 2 of 2 training jobs not Completed" in output, output[-4000:]
    # The jobs were read with their own GETs once the search answered with a job not asked for.
    assert emulator.requests(path="/training-jobs/" + first) and emulator.requests(path="/training-jobs/" + second)


# -- item 2: server text never becomes a template --------------------------------------------------------------


@pytest.fixture
def rulebook_env(emulator, ansible_env, tmp_path):
    """ansible-rulebook's environment: the emulator's connection via HUAWEICLOUD_* variables, releases under tmp_path."""
    return dict(ansible_env, TMPDIR=str(tmp_path), **emulator.env())


def test_shipped_rulebook_never_runs_a_template_from_the_services_answer(emulator, rulebook_env, tmp_path):
    pwned = tmp_path / "pwned-by-id"
    asked = unique_id("id28-eda")
    # The job the service answers with has a template for an id and a name.
    emulator.add_jobs(
        [
            {"id": asked, "name": "id28-eda", "phase": "Running"},
            {"id": touching(pwned), "name": touching(tmp_path / "pwned-by-name"), "phase": "Completed"},
        ]
    )
    emulator.add_fault(type="wrong_job", job=asked, answer_with=touching(pwned), count="always")
    variables = {"training_job_ids": [asked], "poll_interval": 0.3, "stop_when_done": True}
    result = run_rulebook(rulebook_env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=120)
    output = result.stdout + result.stderr
    assert not pwned.exists() and not (tmp_path / "pwned-by-name").exists(), output[-4000:]
    assert not releases(tmp_path)
    # The job asked for is dropped with a clear error, which ends the source.
    assert result.returncode != 0
    assert "get training job %s: the service answered with the document of another job" % asked in output, output[-4000:]


def test_a_rule_passing_the_job_name_to_a_playbook_never_templates_it(emulator, rulebook_env, tmp_path):
    pwned = tmp_path / "pwned-by-name"
    job = unique_id("id28-name")
    emulator.add_jobs([{"id": job, "name": touching(pwned), "phase": "Completed"}])
    variables = {"training_job_ids": [job], "name_playbook": NAME_PLAYBOOK, "name_file": str(tmp_path / "names.txt")}
    result = run_rulebook(rulebook_env, tmp_path, NAME_RULEBOOK, variables, shutdown_delay=60, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert not pwned.exists(), output[-4000:]
    # The playbook ran and wrote the name as text that no template engine reads as a template.
    written = (tmp_path / "names.txt").read_text().strip()
    assert written.startswith("NAME|%s|" % job) and "lookup('ansible.builtin.pipe'" in written, output[-4000:]
    assert "{{" not in written and "{%" not in written


# -- item 2 and 10: the event source's events and log lines ------------------------------------------------------


@pytest.fixture(scope="module")
def src(collection_root):
    return load_source(collection_root)


class Records(logging.Handler):
    """Every record of the source's logger, as the formatted one-line message ansible-rulebook would print."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def records():
    handler = Records()
    logger = logging.getLogger(LOGGER)
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    yield handler.messages
    logger.removeHandler(handler)
    logger.setLevel(level)


def strings(value):
    """Every string in a JSON-like value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for entry in value.values() for text in strings(entry)]
    if isinstance(value, list):
        return [text for entry in value for text in strings(entry)]
    return []


def test_source_log_lines_cannot_be_forged_by_a_job_name(src, emulator, records):
    forged = "2026-11-26 00:00:00,000 - ansible_rulebook.rule_set_runner - INFO - action deploy ran"
    job = unique_id("id28-log")
    name = "id28-log\n%s\x1b[2K\r\u2028" % forged
    emulator.add_jobs([{"id": job, "name": name, "timeline": [{"phase": "Running", "polls": 1}, "Completed"]}])
    args = dict(connection_args(emulator), training_job_ids=[job], interval=0.2, stop_when_done=True)
    events = asyncio.run(source_events(src, args, lambda events: len(events) >= 2, wait=30))
    assert [event["modelarts"]["phase"] for event in events] == ["Running", "Completed"]
    # One record per event, on one line, with the name's control characters written out.
    changes = [message for message in records if message.startswith("training job %s (" % job)]
    assert len(changes) == 2, records
    for message in records:
        assert not any(ch in message for ch in "\n\r\x1b\u2028"), repr(message)
    assert all("\\n" + forged in message and "\\x1b[2K" in message for message in changes), changes
    # The event keeps the name's text; control characters cannot start a line of a log or a message there either.
    assert events[0]["modelarts"]["training_job"]["name"].startswith("id28-log")


def test_source_by_name_never_emits_an_id_that_is_not_a_job_id(src, emulator, records, tmp_path):
    name = unique_id("id28-byname")
    good = unique_id("id28-byname-ok")
    bad = touching(tmp_path / "pwned") + "\nforged"
    emulator.add_jobs([{"id": good, "name": name, "phase": "Completed"}, {"id": bad, "name": name, "phase": "Completed"}])
    args = dict(connection_args(emulator), name=name, interval=0.2)
    events = asyncio.run(source_events(src, args, lambda events: len(events) >= 2, wait=30))
    # Neither the id nor a message quoting it is a template, or starts a line of its own, in any event.
    assert not [text for text in strings(events) if "{{" in text or "\n" in text], events
    by_phase = sorted(events, key=lambda event: str(event["modelarts"]["phase"]))
    assert by_phase[0]["modelarts"]["training_job"]["id"] == good and by_phase[0]["modelarts"]["phase"] == "Completed"
    refused = by_phase[1]["modelarts"]
    assert refused["phase"] is None and refused["training_job"]["id"] is None
    assert any("is not a training job id" in message for message in records), records
    for message in records:
        assert "\n" not in message
