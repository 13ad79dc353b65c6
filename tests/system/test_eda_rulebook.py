# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source inside the real ansible-rulebook (Drools on Java 17) against the HTTPS emulator.

Jobs use poll-driven timelines: each GET of the job advances it, so the sequence of phases the
source sees does not depend on how long the JVM takes to start.
"""

import os

import pytest

from eda_helpers import RULEBOOKS, event_lines, run_rulebook, unique_id

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OBSERVE = os.path.join(RULEBOOKS, "observe_phases.yml")
WITH_PLAYBOOK = os.path.join(RULEBOOKS, "deploy_with_marker.yml")
MARKER_PLAYBOOK = os.path.join(RULEBOOKS, "write_marker.yml")


def observe_vars(ids, tmp_path, interval=0.3, backoff_retries=0):
    return {
        "training_job_ids": ids,
        "interval": interval,
        "backoff_retries": backoff_retries,
        "marker_playbook": MARKER_PLAYBOOK,
        "marker_file": str(tmp_path / "deployed.txt"),
    }


def deployed(tmp_path):
    path = tmp_path / "deployed.txt"
    return [line.split("|")[1:] for line in path.read_text().splitlines()] if path.exists() else []


def assert_ran(result):
    assert result.returncode == 0, "ansible-rulebook failed:\n%s\n%s" % (result.stdout[-4000:], result.stderr[-4000:])


@pytest.fixture
def rulebook_env(emulator, ansible_env):
    """ansible-rulebook's environment: the emulator's connection via HUAWEICLOUD_* variables."""
    return dict(ansible_env, **emulator.env())


def test_pending_running_completed_fires_deploy_once(emulator, rulebook_env, tmp_path):
    job = unique_id("eda-ok")
    emulator.add_jobs([{"id": job, "name": "eda-ok", "timeline": [{"phase": "Pending", "polls": 2}, {"phase": "Running", "polls": 2}, "Completed"]}])
    # The source ends right after the Completed event, while the playbook runs: ansible-rulebook
    # lets a running action finish within the shutdown delay before it exits.
    result = run_rulebook(rulebook_env, tmp_path, WITH_PLAYBOOK, observe_vars([job], tmp_path), shutdown_delay=30)
    assert_ran(result)
    assert event_lines(result.stdout) == [(job, "None", "Pending"), (job, "Pending", "Running"), (job, "Running", "Completed")]
    # The playbook ran once, with the job id from the event and the Completed event itself.
    assert [line[:2] for line in deployed(tmp_path)] == [[job, "Completed"]]
    assert event_lines(result.stdout, "FAILURE") == []


def test_completed_and_failed_jobs_fire_their_rules_once(emulator, rulebook_env, tmp_path):
    ok, bad = unique_id("eda-two-ok"), unique_id("eda-two-failed")
    emulator.add_jobs(
        [
            {"id": ok, "name": "eda-two", "timeline": [{"phase": "Running", "polls": 3}, "Completed"]},
            {
                "id": bad,
                "name": "eda-two",
                "timeline": [{"phase": "Pending", "polls": 1}, {"phase": "Running", "polls": 1}, "Failed"],
                "failure": {"task": "worker-0", "exit_code": 137, "message": "OOMKilled"},
            },
        ]
    )
    # Ids as one comma-separated string, as --env-vars would give them.
    result = run_rulebook(rulebook_env, tmp_path, OBSERVE, observe_vars("%s,%s" % (ok, bad), tmp_path))
    assert_ran(result)
    events = event_lines(result.stdout)
    assert [e for e in events if e[0] == ok] == [(ok, "None", "Running"), (ok, "Running", "Completed")]
    assert [e for e in events if e[0] == bad] == [(bad, "None", "Pending"), (bad, "Pending", "Running"), (bad, "Running", "Failed")]
    assert event_lines(result.stdout, "DEPLOY") == [(ok, "Completed")]
    failures = event_lines(result.stdout, "FAILURE")
    assert [line[:2] for line in failures] == [(bad, "Failed")]
    assert "137" in failures[0][2] and "OOMKilled" in failures[0][2]


def test_503_burst_does_not_end_the_source(emulator, rulebook_env, tmp_path):
    job = unique_id("eda-503")
    emulator.add_jobs([{"id": job, "name": "eda-503", "timeline": [{"phase": "Pending", "polls": 1}, {"phase": "Running", "polls": 1}, "Completed"]}])
    # Let the first read through, then fail the next five: the source logs, backs off and carries on.
    emulator.add_fault(type="error", status=503, count=5, after=1, job=job)
    result = run_rulebook(rulebook_env, tmp_path, OBSERVE, observe_vars([job], tmp_path, interval=0.2))
    assert_ran(result)
    assert event_lines(result.stdout) == [(job, "None", "Pending"), (job, "Pending", "Running"), (job, "Running", "Completed")]
    assert event_lines(result.stdout, "DEPLOY") == [(job, "Completed")]
    assert result.stderr.count("HTTP 503") + result.stdout.count("HTTP 503") >= 5
    faults = [entry for entry in emulator.requests(path="/v2/%s/training-jobs/%s" % (emulator.project_id, job)) if entry.get("status") == 503]
    assert len(faults) == 5


def test_wrong_secret_key_ends_the_source_and_never_shows_it(ansible_env, emulator, tmp_path):
    secret = "Wr0ngSecretKey-visible-if-leaked-7f3a9c"
    env = dict(emulator.env(), HUAWEICLOUD_SDK_SK=secret)
    job = unique_id("eda-auth")
    emulator.add_jobs([{"id": job, "name": "eda-auth", "phase": "Running"}])
    result = run_rulebook(dict(ansible_env, **env), tmp_path, OBSERVE, observe_vars([job], tmp_path), timeout=45, verbosity=2)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "APIG.0301" in output
    assert secret not in output
    assert event_lines(result.stdout) == []


def test_shipped_rulebook_notifies_on_failure(emulator, rulebook_env, tmp_path):
    """The shipped rulebook loads, resolves the source by FQCN and runs its notification rule (no deployment)."""
    job = unique_id("eda-shipped")
    emulator.add_jobs([{"id": job, "name": "eda-shipped", "timeline": [{"phase": "Running", "polls": 1}, "Terminated"]}])
    # By FQCN: ansible-rulebook finds it in the staged collection, as users would run it.
    variables = {"training_job_ids": [job], "poll_interval": 0.3, "stop_when_done": True}
    result = run_rulebook(rulebook_env, tmp_path, "modelarts.training.deploy_on_completed", variables)
    assert_ran(result)
    assert "%s" % job in result.stdout
    assert "Terminated" in result.stdout
    # The notification quotes the stopped job's last log line, from the event's diagnostics.
    assert "Last log line: [ModelArts Service Log]Training end with return code: 143. Nothing is deployed." in result.stdout, result.stdout[-3000:]


def test_shipped_rulebook_reports_a_document_that_breaks_the_schema(emulator, rulebook_env, tmp_path):
    """A document that breaks the schema fires the shipped rulebook's schema rule once, never a phase rule; the job stays watched."""
    job = unique_id("eda-schema")
    # Its first three answers carry an annotation as a number (the v2 schema wants strings); then it is Terminated.
    emulator.add_jobs(
        [
            {
                "id": job,
                "name": "eda-schema",
                "annotations": {"x-strict-breaker": "1"},
                "timeline": [{"phase": "Completed", "polls": 3}, "Terminated"],
                "faults": [{"type": "drift", "mode": "wrong_types", "paths": ["metadata.annotations.x-strict-breaker"], "count": 3}],
            }
        ]
    )
    variables = {"training_job_ids": [job], "poll_interval": 0.3, "stop_when_done": True}
    # A deployment wrongly started would have the shutdown delay to write its release file under $TMPDIR.
    env = dict(rulebook_env, TMPDIR=str(tmp_path))
    result = run_rulebook(env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=120)
    assert_ran(result)
    assert result.stdout.count("returned a document that breaks the JSON schema") == 1, result.stdout[-3000:]
    assert "x-strict-breaker" in result.stdout
    # The invalid "Completed" never deployed anything; the valid Terminated answer after it was notified.
    assert "Terminated" in result.stdout
    assert not list((tmp_path / "modelarts-releases").glob("release-*.json"))


def test_shipped_rulebook_deploys_through_the_gate_playbook(emulator, rulebook_env, tmp_path):
    """The shipped rulebook's deploy rule runs playbooks/gate_deployment.yml, which writes the release manifest."""
    job = unique_id("eda-deploy")
    emulator.add_jobs([{"id": job, "name": "eda-deploy", "timeline": ["Running", "Completed"]}])
    variables = {"training_job_ids": [job], "poll_interval": 0.3, "stop_when_done": True}
    # The playbook writes under $TMPDIR/modelarts-releases by default.
    env = dict(rulebook_env, TMPDIR=str(tmp_path))
    result = run_rulebook(env, tmp_path, "modelarts.training.deploy_on_completed", variables, shutdown_delay=60, timeout=120)
    assert_ran(result)
    releases = list((tmp_path / "modelarts-releases").glob("release-*.json"))
    assert len(releases) == 1, result.stdout[-3000:]
    assert job in releases[0].read_text()
