# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The /_emulator/ control API: admin token, request log redaction, jobs, settings, reset."""

import json

import pytest

from .helpers import SignedClient, token_for

JOB = "a1000000-0000-4000-8000-000000000001"


@pytest.mark.parametrize("headers", [{}, {"X-Emulator-Admin-Token": "wrong"}])
def test_control_needs_the_admin_token(client, headers):
    for method, path in (
        ("GET", "/_emulator/state"),
        ("POST", "/_emulator/reset"),
        ("GET", "/_emulator/requests"),
        ("POST", "/_emulator/faults"),
        ("PUT", "/_emulator/settings"),
    ):
        response = client.unsigned(method, path, headers=headers, body={"type": "reset"})
        assert response.status_code == 403, path
        assert response.json()["error"] == "forbidden"
        assert response.headers["X-Request-Id"]
    assert client.unsigned("GET", "/_emulator/health").json()["status"] == "ok"
    assert client.job(JOB).status_code == 200  # nothing was injected


def test_request_log_redacts_secrets(emu, client):
    token = token_for(emu, client)
    client.with_token("GET", "/v2/%s/training-jobs/%s" % (emu.project_id, JOB), token)
    client.job(JOB)
    with SignedClient(emu.url, emu.temp_ak, emu.temp_sk, emu.project_id, security_token=emu.security_token) as temp:
        temp.job(JOB)
    raw = json.dumps(emu.requests())
    for secret in (token, emu.password, emu.sk, emu.temp_sk, emu.security_token, emu.admin_token):
        assert secret not in raw
    entries = emu.requests()
    iam = [e for e in entries if e["path"] == "/v3/auth/tokens"][0]
    assert iam["body"]["auth"]["identity"]["password"]["user"]["password"] == "***"
    assert iam["body"]["auth"]["identity"]["password"]["user"]["name"] == emu.username
    signed = [e for e in entries if e["caller"] and e["caller"]["kind"] == "aksk"][0]
    assert signed["headers"]["Authorization"].endswith("Signature=***")
    assert "Access=%s" % emu.ak in signed["headers"]["Authorization"]
    assert [e for e in entries if e["caller"] and e["caller"]["kind"] == "token"][0]["headers"]["X-Auth-Token"] == "***"
    temporary = [e for e in entries if e["caller"] and e["caller"].get("temporary")][0]
    assert temporary["headers"]["X-Security-Token"] == "***"


def test_request_log_filters(emu, client):
    client.job(JOB)
    client.search({})
    entries = emu.requests()
    assert [e["status"] for e in entries] == [200, 200]
    assert entries[0]["job"] == JOB and entries[0]["project_id"] == emu.project_id
    assert len(emu.requests(since=entries[0]["seq"])) == 1
    assert len(emu.requests(path="training-job-searches")) == 1
    emu.control("DELETE", "/requests")
    assert emu.requests() == []


def test_jobs_api(emu, client):
    jobs = emu.control("GET", "/jobs")["jobs"]
    assert len(jobs) > 300
    added = emu.add_jobs([{"name": "ctl-{n}", "count": 3, "phase": "Running"}])["added"]
    assert [a["name"] for a in added] == ["ctl-1", "ctl-2", "ctl-3"]
    assert client.job(added[0]["id"]).json()["status"]["phase"] == "Running"
    emu.control("DELETE", "/jobs/" + added[0]["id"])
    assert client.job(added[0]["id"]).status_code == 400
    replaced = emu.add_jobs([{"id": JOB, "name": "phase-completed", "phase": "Failed"}])
    assert replaced["added"][0]["id"] == JOB
    assert client.job(JOB).json()["status"]["phase"] == "Failed"
    emu.add_jobs([{"name": "only-one", "phase": "Completed"}], replace=True)
    assert len(emu.control("GET", "/jobs")["jobs"]) == 1
    with pytest.raises(RuntimeError, match="HTTP 400"):
        emu.add_jobs([{"name": "bad", "phase": "Exploded"}])


def test_settings_and_state(emu):
    settings = emu.settings(token_lifetime=5, clock_skew_tolerance=30)
    assert settings["token_lifetime"] == 5 and settings["clock_skew_tolerance"] == 30
    state = emu.control("GET", "/state")
    assert state["settings"]["token_lifetime"] == 5
    assert emu.sk not in json.dumps(state) and emu.password not in json.dumps(state)
    with pytest.raises(RuntimeError, match="HTTP 400"):
        emu.settings(colour="blue")
    emu.reset()
    assert emu.control("GET", "/settings")["token_lifetime"] == 86400


def test_reset_to_another_scenario(emu, client):
    emu.reset({"jobs": [{"id": "b0000000-0000-4000-8000-000000000001", "name": "fresh", "phase": "Pending"}]})
    try:
        assert client.job("b0000000-0000-4000-8000-000000000001").json()["status"]["phase"] == "Pending"
        assert client.job(JOB).status_code == 400
    finally:
        emu.reset()
    assert client.job(JOB).status_code == 200  # a plain reset returns to the startup scenario


def test_unknown_control_route(emu):
    with pytest.raises(RuntimeError, match="HTTP 404"):
        emu.control("GET", "/nothing")


def test_a_job_can_be_tagged_moved_and_renamed_after_its_creation(emu, client):
    job = emu.add_job(name="retag-me", created_ago="2h", timeline=[{"phase": "Running", "polls": 2}, "Completed"])

    def found(body):
        answer = client.search(dict({"offset": 0, "limit": 50}, **body)).json()
        return [item["metadata"]["id"] for item in answer["items"]]

    tagged = {"tags": [{"key": "release", "values": ["2.4"]}]}
    assert job not in found(tagged)
    summary = emu.update_job(job, tags={"release": "2.4"})
    assert summary["tags"] == {"release": "2.4"} and summary["id"] == job
    assert job in found(tagged)
    workspace = "0123456789abcdef0123456789abcdef"
    emu.update_job(job, workspace_id=workspace, name="renamed")
    assert job not in found(tagged) and job in found(dict(tagged, workspace_id=workspace))
    assert client.job(job).json()["metadata"]["name"] == "renamed"
    assert client.job(job).json()["status"]["phase"] == "Running", "the lifecycle goes on"
    with pytest.raises(RuntimeError, match="HTTP 400"):
        emu.update_job(job, workspace_id="nope")
    with pytest.raises(RuntimeError, match="HTTP 400"):
        emu.update_job(job, colour="blue")
    with pytest.raises(RuntimeError, match="HTTP 404"):
        emu.update_job("no-such-job", name="x")


def test_a_clock_mover_moves_the_clock_one_step_per_poll_of_its_job(emu, client):
    """``ClockMover`` with ``per_poll``: the clock moves ``step`` seconds for each GET of the job, none for other requests."""
    from modelarts_emulator.client import ClockMover  # pylint: disable=import-outside-toplevel
    from modelarts_emulator.launcher import wait_until  # pylint: disable=import-outside-toplevel

    start = emu.state()["clock_offset"]
    with ClockMover(emu, JOB, per_poll=True, step=60, wait_first=False) as mover:
        client.search({})
        assert client.job(JOB).status_code == 200 and client.job(JOB).status_code == 200
        assert wait_until(lambda: emu.state()["clock_offset"] - start == 120, timeout=10), emu.state()["clock_offset"] - start
    assert mover.longest in (1, 2)
    client.job(JOB)
    assert emu.state()["clock_offset"] - start == 120, "a stopped mover moves nothing"
