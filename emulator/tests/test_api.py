# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ModelArts API behaviour: documents, error shapes, request ids, search paging and filters."""

import json
import os
import socket

import pytest
import requests

from modelarts_emulator import routes
from modelarts_emulator.app import Emulator
from modelarts_emulator.client import ControlError

from .helpers import V2_JOB, SignedClient

FIELDS = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "v2_doc_fields.json"), encoding="utf-8"))
COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
ABNORMAL = "a1000000-0000-4000-8000-000000000003"
TERMINATED = "a1000000-0000-4000-8000-000000000004"
RUNNING = "a1000000-0000-4000-8000-000000000005"


def _paths(doc, prefix=""):
    paths = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            path = prefix + key
            paths.add(path)
            paths |= _paths(value, path + ".")
    elif isinstance(doc, list):
        for item in doc:
            paths |= _paths(item, prefix)
    return paths


def test_v2_document_is_complete(client):
    seen = set()
    for job in (
        COMPLETED,
        FAILED,
        RUNNING,
        "a1000000-0000-4000-8000-000000000015",
        "a1000000-0000-4000-8000-000000000030",
        "a1000000-0000-4000-8000-000000000031",
        "a1000000-0000-4000-8000-000000000032",
    ):
        for _attempt in range(5):
            response = client.job(job)
            assert response.status_code == 200
            seen |= _paths(response.json())
    missing = sorted(set(FIELDS["union_of_doc_editions"]) - seen)
    assert not missing, missing


def test_v2_document_values_are_consistent(client):
    doc = client.job(COMPLETED).json()
    status = doc["status"]
    assert doc["kind"] == "job" and doc["metadata"]["workspace_id"] == "0"
    assert status["phase"] == "Completed" and status["secondary_phase"] == "Completed"
    assert doc["metadata"]["create_time"] < status["start_time"]
    record = status["running_records"][0]
    assert record["start_at"] == status["start_time"] // 1000
    assert (record["end_at"] - record["start_at"]) * 1000 == pytest.approx(status["duration"], abs=1000)
    assert record["end_reason"] == "job completed"
    assert status["task_statuses"] == [{"task": "worker-0", "exit_code": 0, "message": ""}]
    assert status["tasks"] == ["worker-0"]
    assert doc["algorithm"]["outputs"][0]["remote"]["obs"]["obs_url"].startswith("obs://ml-team-bucket/output/")
    assert doc["spec"]["resource"]["main_container_allocated_resources"]["accelerator_type"] == "nvidia-v100-pcie32"


def test_failed_abnormal_terminated_documents(client):
    failed = client.job(FAILED).json()["status"]
    assert failed["phase"] == "Failed"
    bad = [t for t in failed["task_statuses"] if t["task"] == "worker-1"][0]
    assert bad == {"task": "worker-1", "exit_code": 2, "message": "ModuleNotFoundError: No module named 'torchvision'"}
    assert failed["running_records"][-1]["end_reason"] == "exit with 2"
    assert failed["running_records"][-1]["end_related_task"] == "worker-1"
    abnormal = client.job(ABNORMAL).json()["status"]
    assert (abnormal["phase"], abnormal["secondary_phase"], abnormal["start_time"], abnormal["duration"]) == ("Abnormal", "CreateFailed", 0, 0)
    assert abnormal["task_statuses"][0]["message"] == "Failed to pull image: manifest unknown"
    terminated = client.job(TERMINATED).json()["status"]
    assert terminated["phase"] == "Terminated" and terminated["task_statuses"][0]["exit_code"] == 143
    running = client.job(RUNNING).json()["status"]
    assert running["phase"] == "Running" and running["task_statuses"] == [] and "end_at" not in running["running_records"][0]


def test_custom_metrics_shapes(client):
    assert client.job(COMPLETED).json()["spec"]["custom_metrics"][0] == {"exec": {"command": ["cat", "/home/ma-user/modelarts/metrics/custom.prom"]}}
    assert client.job("a1000000-0000-4000-8000-000000000030").json()["spec"]["custom_metrics"] == [{"metrics_url": "/metrics", "metrics_port": 9100}]


def test_every_response_has_a_request_id(client, emu):
    responses = [
        client.job(COMPLETED),
        client.job("nope"),
        client.unsigned("GET", "/nothing/here"),
        client.search({}),
        client.v1_job(1001, 1),
        client.unsigned("GET", "/_emulator/state"),
    ]
    ids = [r.headers.get("X-Request-Id") for r in responses]
    assert all(ids) and len(set(ids)) == len(ids)
    logged = {entry["request_id"] for entry in emu.requests()}
    assert set(ids[:5]) <= logged


def test_unknown_v2_job(client):
    response = client.job("00000000-0000-4000-8000-00000000dead")
    assert response.status_code == 400
    assert response.json() == {"error_code": "ModelArts.2775", "error_msg": "Training job not found."}


def test_unknown_v1_job_and_bad_ids(client):
    response = client.v1_job(999, 1)
    assert response.status_code == 400
    assert response.json() == {"is_success": False, "error_code": "ModelArts.2775", "error_message": "Training job not found."}
    bad = client.v1_job("abc", 1)
    assert bad.status_code == 400 and bad.json()["error_code"] == "ModelArts.0101" and bad.json()["is_success"] is False


def test_unknown_route_is_a_gateway_404(client):
    response = client.request("GET", "/v2/%s/notebooks" % client.project_id)
    assert response.status_code == 404
    assert response.json()["error_code"] == "APIG.0101"
    assert client.request("DELETE", V2_JOB.format(project=client.project_id, job=COMPLETED)).status_code == 404


def test_v1_document(client):
    response = client.v1_job(1001, 1)
    doc = response.json()
    assert response.status_code == 200
    assert doc["is_success"] is True and doc["job_id"] == 1001 and doc["version_id"] == 1 and doc["status"] == 10
    metrics = json.loads(doc["model_metric_list"])
    assert set(metrics) == {"metric", "total_metric"}
    assert doc["duration"] > 0 and doc["start_time"] > doc["create_time"]
    assert set(FIELDS["v1_fields"]) <= set(doc)
    failed = client.v1_job(1002, 4).json()
    assert failed["status"] == 11 and json.loads(failed["model_metric_list"]) == {}


def test_v1_model_metric_list_from_the_scenario_is_served_as_given(emu, client):
    # A loss that went to NaN: the text reaches the client unchanged (json.dumps would write NaN too).
    text = '{"total_metric": {"total_metric_values": {"loss": NaN, "grad_norm": Infinity}}}'
    emu.add_job(name="legacy-nan", api="v1", job_id=1901, version_id=1, phase="Completed", model_metric_list=text)
    emu.add_job(name="legacy-nan-running", api="v1", job_id=1902, version_id=1, phase="Running", model_metric_list="{}")
    assert client.v1_job(1901, 1).json()["model_metric_list"] == text
    assert client.v1_job(1902, 1).json()["model_metric_list"] == "{}"
    with pytest.raises(ControlError, match="model_metric_list is the v1 document's JSON text, a string"):
        emu.add_job(name="legacy-bad", api="v1", job_id=1903, version_id=1, model_metric_list={"loss": 1})


def test_v1_twin_matches_v2(client):
    v2 = client.job(COMPLETED).json()
    v1 = client.v1_job(2001, 1).json()
    assert v1["job_name"] == v2["metadata"]["name"]
    assert v1["create_time"] == v2["metadata"]["create_time"]
    assert v1["start_time"] == v2["status"]["start_time"]
    assert v1["duration"] == v2["status"]["duration"]
    assert v1["status"] == 10 and v2["status"]["phase"] == "Completed"
    assert v1["worker_server_num"] == v2["spec"]["resource"]["node_count"]


def _search(client, **body):
    response = client.search(body)
    assert response.status_code == 200, response.text
    return response.json()


def test_search_pages_by_page_index(client):
    name = [{"key": "name", "operator": "like", "value": ["shared-name"]}]
    first = _search(client, offset=0, limit=50, filters=name)
    second = _search(client, offset=1, limit=50, filters=name)
    third = _search(client, offset=2, limit=50, filters=name)
    assert (first["total"], first["count"], second["count"], third["count"]) == (60, 50, 10, 0)
    assert (second["offset"], second["limit"], second["sort_by"], second["order"]) == (1, 50, "create_time", "desc")
    ids = [j["metadata"]["id"] for j in first["items"] + second["items"]]
    assert len(set(ids)) == 60
    times = [j["metadata"]["create_time"] for j in first["items"] + second["items"]]
    assert times == sorted(times, reverse=True)
    ascending = _search(client, offset=0, limit=5, order="asc", filters=name)
    assert [j["metadata"]["create_time"] for j in ascending["items"]] == sorted(times)[:5]


def _shared_name_ids(client, offset, limit=50):
    name = [{"key": "name", "operator": "like", "value": ["shared-name"]}]
    return [j["metadata"]["id"] for j in _search(client, offset=offset, limit=limit, filters=name)["items"]]


def test_search_offset_item_reads_offset_as_an_item_offset(emu, client):
    by_page = _shared_name_ids(client, 0) + _shared_name_ids(client, 1)
    assert len(by_page) == 60 and emu.settings()["search_offset"] == "page"
    assert emu.settings(search_offset="item")["search_offset"] == "item"
    assert _shared_name_ids(client, 0) == by_page[:50]
    assert _shared_name_ids(client, 1) == by_page[1:51]
    assert _shared_name_ids(client, 55, limit=10) == by_page[55:]
    assert _shared_name_ids(client, 60) == []
    emu.settings(search_offset="page")
    assert _shared_name_ids(client, 1) == by_page[50:]


def test_search_offset_setting_is_checked_and_comes_from_a_scenario_too(emu, client):
    with pytest.raises(ControlError, match="search_offset must be page or item"):
        emu.settings(search_offset="row")
    emu.reset(scenario={"settings": {"search_offset": "item"}, "jobs": [{"name": "shared-name", "count": 3}]})
    assert emu.settings()["search_offset"] == "item"
    ids = _shared_name_ids(client, 0)
    assert len(ids) == 3 and _shared_name_ids(client, 1, limit=2) == ids[1:]
    with pytest.raises(ControlError, match="search_offset must be page or item"):
        emu.reset(scenario={"settings": {"search_offset": "rows"}})


def test_search_ties_lists_jobs_created_in_the_same_millisecond_by_id_or_as_they_were_added(emu, client):
    # One add_jobs call: the jobs share their creation time to the millisecond; added in an order that is not the ids'.
    ids = ["tie-c", "tie-a", "tie-d", "tie-b"]
    emu.add_jobs([{"id": job, "name": "tied-name", "phase": "Completed"} for job in ids])
    name = [{"key": "name", "operator": "in", "value": ["tied-name"]}]

    def listed(order="desc", limit=50, offset=0):
        items = _search(client, offset=offset, limit=limit, order=order, filters=name)["items"]
        assert len({j["metadata"]["create_time"] for j in items}) <= 1
        return [j["metadata"]["id"] for j in items]

    assert emu.settings()["search_ties"] == "id"
    assert listed() == sorted(ids, reverse=True) and listed("asc") == sorted(ids)
    assert emu.settings(search_ties="added")["search_ties"] == "added"
    assert listed() == ids and listed("asc") == ids
    assert listed(limit=2, offset=1) == ids[2:], "pages follow the same order"
    with pytest.raises(ControlError, match="search_ties must be id or added"):
        emu.settings(search_ties="random")


def test_search_defaults_and_limits(client):
    everything = _search(client)
    assert everything["count"] == 10 and everything["total"] > 280
    for bad in (
        {"limit": 0},
        {"limit": 51},
        {"offset": -1},
        {"order": "sideways"},
        {"filters": "x"},
        {"filters": [{"key": "colour", "operator": "in", "value": ["x"]}]},
        {"filters": [{"key": "name", "operator": "regex", "value": ["x"]}]},
    ):
        response = client.search(bad)
        assert response.status_code == 400, bad
        assert response.json()["error_code"] == "ModelArts.0101"
    assert client.request("POST", "/v2/%s/training-job-searches" % client.project_id, body=b"{nope").status_code == 400


def test_search_filters(client):
    phase = _search(client, limit=50, filters=[{"key": "phase", "operator": "in", "value": ["Failed", "Abnormal"]}])
    assert phase["total"] >= 3 and {j["status"]["phase"] for j in phase["items"]} == {"Failed", "Abnormal"}
    exact = _search(client, filters=[{"key": "name", "operator": "in", "value": ["phase-failed"]}])
    assert [j["metadata"]["id"] for j in exact["items"]] == [FAILED]
    fuzzy = _search(client, limit=50, filters=[{"key": "name", "operator": "like", "value": ["PHASE-"]}])
    assert fuzzy["total"] == 7
    not_completed = _search(client, limit=50, filters=[{"key": "phase", "operator": "not", "value": ["Completed"]}])
    assert all(j["status"]["phase"] != "Completed" for j in not_completed["items"])
    kind = _search(client, filters=[{"key": "kind", "operator": "in", "value": ["autosearch_job"]}])
    assert kind["total"] == 1
    created = client.job(COMPLETED).json()["metadata"]["create_time"]
    window = _search(
        client,
        filters=[{"key": "create_time", "operator": "between", "value": [created, created]}, {"key": "name", "operator": "like", "value": ["phase-completed"]}],
    )
    assert [j["metadata"]["id"] for j in window["items"]] == [COMPLETED]
    none = _search(client, filters=[{"key": "name", "operator": "in", "value": ["no-such-job"]}])
    assert (none["total"], none["count"], none["items"]) == (0, 0, [])


def test_search_is_per_project(emu, client):
    east = emu.second_project["project_id"]
    assert client.search({}, project=east).status_code == 404  # X-Project-Id names the primary project
    response = client.search({}, project=east, send_project=False)
    assert response.status_code == 200
    assert [j["metadata"]["name"] for j in response.json()["items"]] == ["east-project-job"]


def test_search_hides_jobs_not_yet_visible(client):
    name = [{"key": "name", "operator": "in", "value": ["not-found-twice"]}]
    assert _search(client, filters=name)["total"] == 0
    client.job("a1000000-0000-4000-8000-000000000014")
    client.job("a1000000-0000-4000-8000-000000000014")
    assert _search(client, filters=name)["total"] == 1


def test_protocol_level_errors_have_request_ids(emu):
    head = requests.head(emu.url + "/v2/x/training-jobs/y", timeout=5)
    assert head.status_code == 501 and head.headers["X-Request-Id"]
    options = requests.options(emu.url + "/v2/x/training-jobs/y", timeout=5)
    assert options.status_code == 501 and options.json()["error_code"] == "APIG.0101"
    host, port = emu.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        answer = sock.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 400")
    assert "X-Request-Id: " in answer and "Traceback" not in answer


def test_oversized_body_is_refused(client):
    response = client.unsigned(
        "POST", "/v2/%s/training-job-searches" % client.project_id, body=b"x" * (1024 * 1024 + 1), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413 and response.headers["Connection"] == "close"
    assert client.job("a1000000-0000-4000-8000-000000000001").status_code == 200


def test_search_by_algorithm_name(client):
    body = client.search({"filters": [{"key": "algorithm_name", "operator": "like", "value": ["market-"]}]}).json()
    assert [j["metadata"]["name"] for j in body["items"]] == ["variety-subscription"]
    assert body["items"][0]["algorithm"]["name"] == "market-resnet50"


def test_internal_errors_are_generic(monkeypatch):
    def explode(job, snapshot):
        raise RuntimeError("boom with details %s %s" % (job.name, snapshot.phase))

    emulator = Emulator(scenario={"jobs": [{"id": COMPLETED, "name": "in-process"}]}).start()
    try:
        monkeypatch.setattr(routes.documents, "v2_document", explode)
        with SignedClient(emulator.url, "HPUAMAEMULATOR000001", "MaEmulatorSecretKey000000000000000000001", "c2078239586c89f12689d89fd66e9f9b") as client:
            response = client.job(COMPLETED)
            assert response.status_code == 500
            assert response.json() == {"error_code": "ModelArts.0010", "error_msg": "Internal server error. Please try again later."}
            assert "Traceback" not in response.text and "boom" not in response.text
            v1 = client.v1_job(1, 1)
            assert v1.status_code == 400 and v1.json()["is_success"] is False
    finally:
        emulator.stop()


def test_search_by_id_takes_at_most_ten_values(client):
    ids = ["a1000000-0000-4000-8000-0000000000%02d" % n for n in range(1, 8)] + [COMPLETED, FAILED, "no-such-id"]
    body = _search(client, limit=50, filters=[{"key": "id", "operator": "in", "value": ids}])
    found = {item["metadata"]["id"] for item in body["items"]}
    assert COMPLETED in found and FAILED in found and "no-such-id" not in found and found <= set(ids)
    response = client.search({"limit": 50, "filters": [{"key": "id", "operator": "in", "value": ids + ["eleven"]}]})
    assert response.status_code == 400
    assert response.json()["error_code"] == "ModelArts.0101" and "at most 10 values, got 11" in response.json()["error_msg"]


def test_search_order_follows_jobs_added_and_removed_after_a_search(emu, client):
    # The project's jobs are kept in creation order between searches: a job added (older than those listed) or removed
    # after a search shows in the next one at its place.
    name = [{"key": "name", "operator": "in", "value": ["kept-order"]}]
    emu.add_jobs([{"id": "kept-%d" % n, "name": "kept-order", "created_ago": "%dm" % (10 * n), "phase": "Completed"} for n in (1, 3)])

    def listed(order="desc"):
        return [j["metadata"]["id"] for j in _search(client, limit=50, order=order, filters=name)["items"]]

    assert listed() == ["kept-1", "kept-3"] and listed("asc") == ["kept-3", "kept-1"]
    emu.add_jobs([{"id": "kept-2", "name": "kept-order", "created_ago": "20m", "phase": "Completed"}])
    emu.add_jobs([{"id": "kept-4", "name": "kept-order", "created_ago": "40m", "phase": "Completed"}])
    assert listed() == ["kept-1", "kept-2", "kept-3", "kept-4"]
    assert emu.remove_job("kept-3")
    assert listed("asc") == ["kept-4", "kept-2", "kept-1"]
