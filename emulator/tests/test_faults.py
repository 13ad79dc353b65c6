# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every injected fault, global and per job, from the control API and from scenarios."""

import http.client
import json

import pytest
import requests

from modelarts_emulator.launcher import running_emulator, wait_until

from .helpers import SignedClient

JOB = "a1000000-0000-4000-8000-000000000001"
OTHER = "a1000000-0000-4000-8000-000000000002"


def test_throttle_n_times_with_retry_after(emu, client):
    emu.add_fault(type="throttle", count=2, retry_after=3)
    for _attempt in range(2):
        response = client.job(JOB)
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "3"
        body = response.json()
        assert body["error_code"] == "APIG.0308" and body["request_id"] == response.headers["X-Request-Id"]
    assert client.job(JOB).status_code == 200


def test_throttle_every_nth_request(emu, client):
    emu.add_fault(type="throttle", every=3, retry_after=0)
    statuses = [client.job(JOB).status_code for _attempt in range(9)]
    assert statuses == [200, 200, 429] * 3
    assert emu.faults()[0]["remaining"] is None  # every implies count: always


def test_every_must_be_positive(emu):
    for bad in (0, -2, "often"):
        with pytest.raises(Exception):
            emu.add_fault(type="throttle", every=bad)


@pytest.mark.parametrize(
    "status, code, shape", [(500, "ModelArts.0010", "v2"), (502, "APIG.0202", "apigw"), (503, "ModelArts.0003", "v2"), (504, "APIG.0201", "apigw")]
)
def test_server_errors(emu, client, status, code, shape):
    emu.add_fault(type="error", status=status)
    response = client.job(JOB)
    assert response.status_code == status
    body = response.json()
    assert body["error_code"] == code
    assert ("request_id" in body) == (shape == "apigw")
    assert client.job(JOB).status_code == 200


def test_server_error_on_v1_uses_v1_shape(emu, client):
    emu.add_fault(type="error", status=500, target="v1")
    body = client.v1_job(1001, 1).json()
    assert body["is_success"] is False and body["error_code"] == "ModelArts.0010" and "error_message" in body


def test_connection_reset(emu, client):
    emu.add_fault(type="reset")
    with pytest.raises(requests.exceptions.ConnectionError):
        client.job(JOB)
    assert client.job(JOB).status_code == 200
    assert emu.requests()[-2]["fault"] == "reset"


def test_delay_beyond_client_timeout(emu, client):
    emu.add_fault(type="delay", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.job(JOB, timeout=(10, 0.3))
    assert client.job(JOB, timeout=5).status_code == 200
    # The stalled request finishes server-side later; wait for it so it cannot leak into the next test's log.
    assert wait_until(lambda: any(e["fault"] == "delay" for e in emu.requests()), timeout=5)


def test_a_request_held_across_a_reset_is_not_recorded_in_the_new_log(emu, client):
    """A test's delayed request that ends after the fixture's reset never lands in the next test's request log."""
    emu.add_fault(type="delay", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.job(JOB, timeout=(10, 0.3))  # held until after the reset
    emu.reset()
    emu.add_fault(type="delay", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.search({}, timeout=(10, 0.3))  # held too, arrived after the reset: it ends after the first one
    assert wait_until(lambda: any("searches" in e["path"] for e in emu.requests()), timeout=30)
    assert [e["path"].rsplit("/", 1)[-1] for e in emu.requests()] == ["training-job-searches"], "only the request that arrived after the reset"


def test_a_request_held_across_a_clear_of_the_log_is_not_recorded(emu, client):
    """``clear_requests``: the log then holds only the requests that arrive after it - not one an earlier test (or
    a client killed mid-request) still had held, which would otherwise land in the next test's count."""
    emu.add_fault(type="delay", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.job(JOB, timeout=(10, 0.3))  # held until after the clear
    emu.clear_requests()
    emu.add_fault(type="delay", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.search({}, timeout=(10, 0.3))  # arrived after the clear, ends after the first one
    assert wait_until(lambda: any("searches" in e["path"] for e in emu.requests()), timeout=30)
    assert [e["path"].rsplit("/", 1)[-1] for e in emu.requests()] == ["training-job-searches"]


def test_a_mark_counts_the_requests_sent_after_it_and_none_held_across_it(emu, client):
    """``requests(since=emu.mark())``: a record's ``seq`` is its request's number when it arrived, so a request held
    across the mark (it ends after it) is not counted, and every request sent after the mark is."""
    emu.add_fault(type="delay", seconds=1.0)
    with pytest.raises(requests.exceptions.ReadTimeout):
        client.job(JOB, timeout=(10, 0.3))  # arrived before the mark, ends after it
    mark = emu.mark()
    assert client.search({}).status_code == 200
    assert wait_until(lambda: any(e["fault"] == "delay" for e in emu.requests()), timeout=30)
    held = [e for e in emu.requests() if e["fault"] == "delay"][0]
    assert held["seq"] < mark
    assert [e["path"].rsplit("/", 1)[-1] for e in emu.requests(since=mark)] == ["training-job-searches"]
    assert emu.mark() > max(e["seq"] for e in emu.requests())


def test_truncated_json(emu, client):
    emu.add_fault(type="truncate")
    response = client.job(JOB)
    assert response.status_code == 200
    with pytest.raises(ValueError):
        json.loads(response.content)
    assert int(response.headers["Content-Length"]) == len(response.content)


def test_truncated_short_read(emu, client):
    emu.add_fault(type="truncate", mode="short_read")
    with pytest.raises((requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError, http.client.IncompleteRead)):
        client.job(JOB)
    assert client.job(JOB).status_code == 200


def test_html_gateway_page(emu, client):
    emu.add_fault(type="html", count=1)
    response = client.job(JOB)
    assert response.status_code == 502
    assert response.headers["Content-Type"] == "text/html"
    assert "<title>502 Bad Gateway</title>" in response.text
    assert response.headers["X-Request-Id"]
    emu.add_fault(type="html", status=200)
    ok_but_html = client.job(JOB)
    assert ok_but_html.status_code == 200 and ok_but_html.text.startswith("<html>")


def test_drift_extra_fields(emu, client):
    emu.add_fault(type="drift", mode="extra")
    doc = client.job(JOB).json()
    assert doc["x_emulator_extra"]["emulator_drift"] is True and "x_emulator_extra" in doc["status"]


def test_drift_missing_fields(emu, client):
    emu.add_fault(type="drift", mode="missing", paths=["status.phase", "metadata.name"])
    doc = client.job(JOB).json()
    assert "phase" not in doc["status"] and "name" not in doc["metadata"] and doc["metadata"]["id"] == JOB


def test_drift_wrong_types(emu, client):
    emu.add_fault(type="drift", mode="wrong_types")
    doc = client.job(JOB).json()
    assert isinstance(doc["status"]["duration"], str)
    assert isinstance(doc["metadata"]["create_time"], str)
    assert isinstance(doc["spec"]["resource"]["node_count"], str)
    emu.add_fault(type="drift", mode="wrong_types", target="v1")
    v1 = client.v1_job(1001, 1).json()
    assert v1["status"] == "10"


def test_drift_set_gives_paths_the_values_given(emu, client):
    emu.add_fault(type="drift", mode="set", values={"status.tasks": "worker-0", "status.task_statuses": 7, "status.running_records": {"a": 1}})
    doc = client.job(OTHER).json()
    assert doc["status"]["tasks"] == "worker-0" and doc["status"]["task_statuses"] == 7 and doc["status"]["running_records"] == {"a": 1}
    assert doc["metadata"]["id"] == OTHER


def test_drift_in_search_results(emu, client):
    emu.add_fault(type="drift", mode="missing", paths=["status"], target="search")
    body = client.search({"limit": 3}).json()
    assert body["count"] == 3 and all("status" not in item for item in body["items"])


def test_stale_search_reports_a_phase_the_jobs_own_documents_do_not(emu, client):
    pending, completed = "s0000000-0000-4000-8000-000000000001", "s0000000-0000-4000-8000-000000000002"
    emu.add_jobs([{"id": pending, "name": "stale-index", "phase": "Pending"}, {"id": completed, "name": "stale-index", "phase": "Completed"}])
    by_name = {"limit": 10, "filters": [{"key": "name", "operator": "in", "value": ["stale-index"]}]}
    by_id = {"limit": 10, "filters": [{"key": "id", "operator": "in", "value": [pending, completed]}]}
    emu.add_fault(type="stale", phase="Running", count="always")
    for query in (by_name, by_id):
        body = client.search(query).json()
        assert body["count"] == 2 and [item["status"]["phase"] for item in body["items"]] == ["Running", "Running"]
    # Each job's own GET still says where it is; only the search answers are stale.
    assert client.job(pending).json()["status"]["phase"] == "Pending"
    assert client.job(completed).json()["status"]["phase"] == "Completed"
    emu.clear_faults()
    emu.add_fault(type="stale", phase="Failed")  # count 1: one search answer, then the truth again
    assert [item["status"]["phase"] for item in client.search(by_id).json()["items"]] == ["Failed", "Failed"]
    assert sorted(item["status"]["phase"] for item in client.search(by_id).json()["items"]) == ["Completed", "Pending"]


def test_stale_faults_need_a_phase_and_the_search(emu):
    for bad in ({"type": "stale"}, {"type": "stale", "phase": "Sleeping"}, {"type": "stale", "phase": "Running", "target": "v2"}):
        with pytest.raises(RuntimeError, match="HTTP 400"):
            emu.control("POST", "/faults", bad)


def _keys_nulled(node, keep, path=""):
    """Assert every key of ``node`` not in ``keep`` (nested dict of kept keys) is None; return how many were nulled."""
    nulled = 0
    for key, value in node.items():
        where = path + key
        if key in keep:
            assert value is not None, where
            if keep[key]:
                nulled += _keys_nulled(value, keep[key], where + ".")
        else:
            assert value is None, where
            nulled += 1
    return nulled


def test_nulls_v2_keeps_only_the_required_keys(emu, client):
    full = client.job(OTHER).json()
    emu.add_fault(type="nulls")
    doc = client.job(OTHER).json()
    assert set(doc) == set(full) and set(doc["metadata"]) == set(full["metadata"]) and set(doc["status"]) == set(full["status"])
    assert doc["metadata"]["id"] == OTHER and doc["status"]["phase"] == "Failed"
    expected = (len(full) - 2) + (len(full["metadata"]) - 1) + (len(full["status"]) - 1)
    assert _keys_nulled(doc, {"metadata": {"id": {}}, "status": {"phase": {}}}) == expected
    assert doc["algorithm"] is None and doc["metadata"]["name"] is None and doc["status"]["task_statuses"] is None
    assert client.job(OTHER).json() == full  # count 1: the next answer is whole again


def test_nulls_v1_keeps_only_the_required_keys(emu, client):
    emu.add_fault(type="nulls", target="v1")
    doc = client.v1_job(1001, 1).json()
    assert doc["job_id"] == 1001 and doc["version_id"] == 1 and doc["status"] == 10
    assert _keys_nulled(doc, {"job_id": {}, "version_id": {}, "status": {}}) == len(doc) - 3 > 20
    assert doc["is_success"] is None and doc["job_name"] is None and doc["duration"] is None


def test_nulls_in_search_results_and_per_job_from_a_scenario(emu, client):
    emu.add_fault(type="nulls", target="search")
    body = client.search({"limit": 3}).json()
    assert body["count"] == 3 and body["total"] > 3  # the envelope is untouched
    assert all(item["metadata"]["id"] and item["metadata"]["name"] is None and item["status"]["phase"] for item in body["items"])
    emu.add_jobs([{"id": "n0000000-0000-4000-8000-000000000001", "name": "all-nulls", "phase": "Running", "faults": [{"type": "nulls", "count": "always"}]}])
    for _poll in range(2):
        doc = client.job("n0000000-0000-4000-8000-000000000001").json()
        assert doc["status"] == {**{k: None for k in doc["status"] if k != "phase"}, "phase": "Running"}
    assert client.job(JOB).json()["metadata"]["name"] == "phase-completed"


def test_wrong_job_answers_a_get_with_another_jobs_document(emu, client):
    emu.add_fault(type="wrong_job", job=JOB, answer_with=OTHER)
    doc = client.job(JOB).json()
    assert doc["metadata"]["id"] == OTHER and doc["metadata"]["name"] == "phase-failed" and doc["status"]["phase"] == "Failed"
    assert client.job(JOB).json()["metadata"]["id"] == JOB  # count 1: the next answer is the job's own
    assert [entry["fault"] for entry in emu.requests(path="/training-jobs/" + JOB)] == ["wrong_job", None]


def test_wrong_job_on_v1_and_in_search_results(emu, client):
    emu.add_fault(type="wrong_job", job="1001/1", answer_with="1002/4")
    doc = client.v1_job(1001, 1).json()
    assert (doc["job_id"], doc["version_id"], doc["job_name"]) == (1002, 4, "legacy-failed")
    assert client.v1_job(1001, 1).json()["job_id"] == 1001
    emu.add_fault(type="wrong_job", target="search", answer_with=OTHER)
    body = client.search({"limit": 2, "filters": [{"key": "id", "operator": "in", "value": [JOB]}]}).json()
    assert body["count"] == 1 and [item["metadata"]["id"] for item in body["items"]] == [OTHER]
    # A job without a document of the API asked (v1 only, or no such job) leaves the answer as it was.
    emu.add_fault(type="wrong_job", job=JOB, answer_with="1001/1")
    assert client.job(JOB).json()["metadata"]["id"] == JOB


def test_wrong_job_needs_answer_with(emu):
    with pytest.raises(Exception, match="answer_with"):
        emu.add_fault(type="wrong_job", job=JOB)


def test_per_job_fault_only_hits_that_job(emu, client):
    emu.add_fault(type="error", status=503, job=OTHER, count=2)
    assert client.job(JOB).status_code == 200
    assert client.search({}).status_code == 200
    assert [client.job(OTHER).status_code for _attempt in range(3)] == [503, 503, 200]


def test_fault_after_lets_requests_through_first(emu, client):
    emu.add_fault(type="throttle", after=2, count=1)
    assert [client.job(JOB).status_code for _attempt in range(4)] == [200, 200, 429, 200]


def test_always_fault_and_removal(emu, client):
    fault_id = emu.add_fault(type="error", status=500, count="always")
    assert [client.job(JOB).status_code for _attempt in range(3)] == [500, 500, 500]
    listed = emu.control("GET", "/faults")["faults"]
    assert listed[0]["id"] == fault_id and listed[0]["remaining"] is None and listed[0]["hits"] == 3
    emu.control("DELETE", "/faults/%d" % fault_id)
    assert client.job(JOB).status_code == 200


def test_iam_target(emu, client):
    emu.add_fault(type="error", status=503, target="iam")
    assert client.job(JOB).status_code == 200
    response = client.iam_token(emu.username, emu.password, emu.domain_name, emu.region)
    assert response.status_code == 503 and "error" in response.json()


def test_faulted_request_does_not_advance_a_poll_lifecycle(emu, client):
    job = "a1000000-0000-4000-8000-000000000010"
    emu.add_fault(type="error", status=503, job=job)
    assert client.job(job).status_code == 503
    assert client.job(job).json()["status"]["phase"] == "Creating"


def test_bad_fault_specs_are_refused(emu):
    for bad in (
        {"type": "meteor"},
        {"type": "error", "status": 418},
        {"type": "drift", "mode": "sideways"},
        {"type": "drift", "mode": "set"},
        {"type": "drift", "mode": "set", "values": ["status.tasks"]},
        {"type": "throttle", "count": "many"},
        {"type": "reset", "target": "moon"},
    ):
        with pytest.raises(RuntimeError, match="HTTP 400"):
            emu.control("POST", "/faults", bad)


def test_faults_from_a_scenario_file(tmp_path):
    scenario = tmp_path / "faulty.json"
    scenario.write_text(
        json.dumps(
            {
                "jobs": [
                    {
                        "id": "f0000000-0000-4000-8000-000000000001",
                        "name": "flaky",
                        "phase": "Completed",
                        "faults": [{"type": "error", "status": 502, "count": 1}],
                    },
                    {"id": "f0000000-0000-4000-8000-000000000002", "name": "steady", "phase": "Running"},
                ],
                "faults": [{"type": "throttle", "count": 1, "retry_after": 2}],
            }
        )
    )
    with running_emulator(scenario=str(scenario)) as emu:
        with SignedClient(emu.url, emu.ak, emu.sk, emu.project_id) as client:
            assert client.job("f0000000-0000-4000-8000-000000000002").status_code == 429
            assert client.job("f0000000-0000-4000-8000-000000000001").status_code == 502
            assert client.job("f0000000-0000-4000-8000-000000000001").status_code == 200
            emu.reset()
            assert client.job("f0000000-0000-4000-8000-000000000002").status_code == 429


def test_transport_faults_over_tls(tls_emu):
    with SignedClient(tls_emu.url, tls_emu.ak, tls_emu.sk, tls_emu.project_id, ca_file=tls_emu.ca_file) as client:
        tls_emu.add_fault(type="reset")
        with pytest.raises(requests.exceptions.ConnectionError):
            client.job(JOB)
        tls_emu.add_fault(type="truncate", mode="short_read")
        with pytest.raises((requests.exceptions.ChunkedEncodingError, requests.exceptions.ConnectionError)):
            client.job(JOB)
        assert client.job(JOB).status_code == 200  # a fresh connection, so only the read can time out
        tls_emu.add_fault(type="delay", seconds=0.6)
        with pytest.raises(requests.exceptions.ReadTimeout):
            client.job(JOB, timeout=(10, 0.2))
        assert wait_until(lambda: any(e["fault"] == "delay" for e in tls_emu.requests()), timeout=5)
        assert client.job(JOB).status_code == 200
