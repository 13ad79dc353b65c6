# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The official Huawei Cloud SDK (test-only dependency) cannot tell the emulator from the service."""

import pytest

sdk_core = pytest.importorskip("huaweicloudsdkcore")
# pylint: disable=wrong-import-position,wrong-import-order
from huaweicloudsdkcore.auth.credentials import BasicCredentials  # noqa: E402
from huaweicloudsdkcore.exceptions import exceptions  # noqa: E402
from huaweicloudsdkcore.http.http_config import HttpConfig  # noqa: E402
from huaweicloudsdkcore.region.region import Region  # noqa: E402
from huaweicloudsdkmodelarts.v1 import (  # noqa: E402
    Filter,
    JobSearches,
    ListTrainingJobsRequest,
    ModelArtsClient,
    ShowTrainingJobDetailsRequest,
)

FAILED = "a1000000-0000-4000-8000-000000000002"


def _client(emu, credentials, region=False):
    config = HttpConfig.get_default_config()
    config.timeout = (5, 10)
    if emu.ca_file:
        config.ssl_ca_cert = emu.ca_file
    else:
        config.ignore_ssl_verification = True
    builder = ModelArtsClient.new_builder().with_credentials(credentials).with_http_config(config)
    builder = builder.with_region(Region(emu.region, emu.url)) if region else builder.with_endpoint(emu.url)
    return builder.build()


def _exercise(client):
    job = client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    assert job.metadata.id == FAILED and job.metadata.name == "phase-failed"
    assert job.status.phase == "Failed"
    assert {t.task: t.exit_code for t in job.status.task_statuses} == {"worker-0": 143, "worker-1": 2}
    assert job.status.running_records[0].end_reason == "exit with 2"
    assert job.spec.resource.main_container_allocated_resources.accelerator_type == "nvidia-v100-pcie32"
    assert job.spec.custom_metrics[1].http_get.port == 10001
    assert job.endpoints.jupyter_lab.url.startswith("https://")
    listing = client.list_training_jobs(
        ListTrainingJobsRequest(body=JobSearches(offset=1, limit=50, filters=[Filter(key="name", operator="like", value=["shared-name"])]))
    )
    assert (listing.total, listing.count, len(listing.items)) == (60, 10, 10)
    assert all(item.metadata.name == "shared-name" for item in listing.items)
    completed = client.list_training_jobs(
        ListTrainingJobsRequest(body=JobSearches(offset=0, limit=10, filters=[Filter(key="phase", operator="in", value=["Completed"])]))
    )
    assert completed.count == 10 and {i.status.phase for i in completed.items} == {"Completed"}


def test_sdk_with_aksk_over_tls(tls_emu):
    _exercise(_client(tls_emu, BasicCredentials(tls_emu.ak, tls_emu.sk, tls_emu.project_id)))


def test_sdk_with_temporary_credentials_over_tls(tls_emu):
    credentials = BasicCredentials(tls_emu.temp_ak, tls_emu.temp_sk, tls_emu.project_id).with_security_token(tls_emu.security_token)
    _exercise(_client(tls_emu, credentials))
    logged = [e for e in tls_emu.requests() if e["caller"]]
    assert logged and all(e["caller"]["temporary"] for e in logged)


def test_sdk_resolves_the_project_through_iam(emu):
    credentials = BasicCredentials(emu.ak, emu.sk).with_iam_endpoint(emu.url)
    _exercise(_client(emu, credentials, region=True))
    assert any(e["path"] == "/v3/projects" and e["status"] == 200 for e in emu.requests())


def test_sdk_with_wrong_secret_key_is_rejected(tls_emu):
    client = _client(tls_emu, BasicCredentials(tls_emu.ak, "X" * 40, tls_emu.project_id))
    with pytest.raises(exceptions.ClientRequestException) as info:
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    assert info.value.status_code == 401
    assert info.value.error_code == "APIG.0301"
    assert info.value.request_id


def test_sdk_sees_modelarts_errors(emu):
    client = _client(emu, BasicCredentials(emu.ak, emu.sk, emu.project_id))
    with pytest.raises(exceptions.ClientRequestException) as info:
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id="00000000-0000-4000-8000-000000000000"))
    assert (info.value.status_code, info.value.error_code, info.value.error_msg) == (400, "ModelArts.2775", "Training job not found.")
    emu.add_fault(type="throttle", count=1, retry_after=1)
    with pytest.raises(exceptions.ClientRequestException) as throttled:
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    assert throttled.value.status_code == 429  # the SDK's urllib3 layer reports 429 itself (no body code)
    emu.add_fault(type="error", status=503, count=1)
    with pytest.raises(exceptions.ServerResponseException) as unavailable:
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    assert unavailable.value.status_code == 503


# -- credential exchanges: the SDK's own providers against the emulator ------------------------------------------


def test_sdk_federated_identity_obtains_credentials_from_the_emulator(tls_emu, tmp_path):
    """The SDK's FederalAccessor: id token -> IAM token -> temporary AK/SK, then ModelArts calls signed with them."""
    token_file = tmp_path / "id-token"
    token_file.write_text(tls_emu.id_token())
    credentials = BasicCredentials().with_idp_id("emulator-idp").with_id_token_file(str(token_file))
    credentials = credentials.with_iam_endpoint(tls_emu.url).with_project_id(tls_emu.project_id)
    _exercise(_client(tls_emu, credentials))
    issued = [entry for entry in tls_emu.requests() if entry.get("issued")]
    assert [entry["path"] for entry in issued] == ["/v3.0/OS-AUTH/id-token/tokens", "/v3.0/OS-CREDENTIAL/securitytokens"]
    assert issued[0]["headers"].get("X-Idp-Id") == "emulator-idp"


def test_sdk_instance_metadata_obtains_credentials_from_the_emulator(tls_emu, monkeypatch):
    """The SDK's MetadataAccessor (its hard-coded 169.254.169.254 pointed at the emulator's plain-HTTP listener)."""
    from huaweicloudsdkcore.auth import internal  # pylint: disable=import-outside-toplevel

    monkeypatch.setattr(internal.MetadataAccessor, "_METADATA_ENDPOINT", tls_emu.http_listener())
    _exercise(_client(tls_emu, BasicCredentials(project_id=tls_emu.project_id)))
    paths = [entry["path"] for entry in tls_emu.requests() if entry.get("issued") or entry["path"].startswith("/meta-data")]
    assert paths[:2] == ["/meta-data/latest/api/token", "/openstack/latest/securitykey"]


def _exchange(emu, path, body, headers=None):
    import json  # pylint: disable=import-outside-toplevel
    import ssl  # pylint: disable=import-outside-toplevel
    import urllib.request  # pylint: disable=import-outside-toplevel

    request = urllib.request.Request(
        emu.url + path, data=json.dumps(body).encode(), method="POST", headers=dict({"Content-Type": "application/json"}, **(headers or {}))
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=emu.ca_file)))
    with opener.open(request, timeout=10) as response:
        return response.headers, json.loads(response.read())


def test_expired_issued_credentials_are_refused_by_the_gateway(tls_emu):
    tls_emu.settings(credential_lifetime=30)
    headers, _body = _exchange(tls_emu, "/v3.0/OS-AUTH/id-token/tokens", {"auth": {"id_token": {"id": tls_emu.id_token()}}}, {"X-Idp-Id": "emulator-idp"})
    _headers, body = _exchange(
        tls_emu, "/v3.0/OS-CREDENTIAL/securitytokens", {"auth": {"identity": {"methods": ["token"], "token": {"id": headers["X-Subject-Token"]}}}}
    )
    issued = body["credential"]
    assert issued["expires_at"].endswith("Z") and "." in issued["expires_at"]
    client = _client(tls_emu, BasicCredentials(issued["access"], issued["secret"], tls_emu.project_id).with_security_token(issued["securitytoken"]))
    client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    tls_emu.advance_clock(31)
    with pytest.raises(exceptions.ClientRequestException) as caught:
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    assert caught.value.status_code == 401


def test_an_id_token_the_emulator_did_not_issue_is_refused(tls_emu, tmp_path):
    token_file = tmp_path / "id-token"
    header, claims, _signature = tls_emu.id_token().split(".")
    token_file.write_text("%s.%s.%s" % (header, claims, "Zm9yZ2Vk"))
    credentials = BasicCredentials().with_idp_id("emulator-idp").with_id_token_file(str(token_file))
    client = _client(tls_emu, credentials.with_iam_endpoint(tls_emu.url).with_project_id(tls_emu.project_id))
    with pytest.raises(exceptions.SdkException):
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=FAILED))
    assert [entry["status"] for entry in tls_emu.requests() if entry["path"] == "/v3.0/OS-AUTH/id-token/tokens"] == [400]


# -- events and task logs: what a failed job says, read by the SDK's own client ------------------------------


def _diagnostics_client(emu):
    return _client(emu, BasicCredentials(emu.ak, emu.sk, emu.project_id))


def test_sdk_lists_a_failed_jobs_error_events_newest_first_in_local_time(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ListTrainingJobEventsRequest  # pylint: disable=import-outside-toplevel

    client = _diagnostics_client(tls_emu)
    answer = client.list_training_job_events(ListTrainingJobEventsRequest(training_job_id=FAILED, level="Error", limit=100, offset=0))
    assert answer.total == len(answer.events) == 2
    assert {event.level for event in answer.events} == {"Error"}
    assert answer.events[0].message == "Failed to run the training job."
    assert "ModuleNotFoundError" in answer.events[1].message and answer.events[1].message.startswith("[worker-1]")
    assert all(event.time.endswith("+08:00") for event in answer.events)
    assert answer.events[0].time >= answer.events[1].time, "newest first"
    everything = client.list_training_job_events(ListTrainingJobEventsRequest(training_job_id=FAILED, limit=2, offset=1))
    assert everything.total > 2 and len(everything.events) == 2 and everything.offset == 1
    assert {"Info", "Warning", "Error"} >= {event.level for event in everything.events}


def test_sdk_reads_the_newest_log_lines_through_aom(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowTrainingJobLogsFromAomRequest  # pylint: disable=import-outside-toplevel

    client = _diagnostics_client(tls_emu)
    answer = client.show_training_job_logs_from_aom(ShowTrainingJobLogsFromAomRequest(training_job_id=FAILED, task_id="worker-1", lines=3, order="desc"))
    assert answer.lines == 3
    newest = answer.content.split("\n")
    assert newest[0] == "[ModelArts Service Log]Training end with return code: 2"
    assert newest[1] == "ModuleNotFoundError: No module named 'torchvision'"
    assert int(answer.start_line) == int(answer.end_line) + 2
    older = client.show_training_job_logs_from_aom(
        ShowTrainingJobLogsFromAomRequest(training_job_id=FAILED, task_id="worker-1", lines=2, order="desc", base_line=answer.end_line)
    )
    assert int(older.start_line) == int(answer.end_line) - 1
    with pytest.raises(exceptions.ClientRequestException) as info:
        client.show_training_job_logs_from_aom(ShowTrainingJobLogsFromAomRequest(training_job_id=FAILED, task_id="worker-1", lines=501))
    assert info.value.status_code == 400 and info.value.error_code == "ModelArts.0101"


def test_sdk_previews_the_latest_part_of_a_long_log(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowTrainingJobLogsPreviewRequest  # pylint: disable=import-outside-toplevel

    job_id = "d1a90000-0000-4000-8000-000000000001"
    tls_emu.add_job(id=job_id, name="long-log", phase="Failed", failure={"task": "worker-0", "exit_code": 1, "message": "x"}, log={"lines": 80000})
    answer = _diagnostics_client(tls_emu).show_training_job_logs_preview(ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id="worker-0"))
    assert answer.current_size == 5 * 1024 * 1024 < answer.full_size
    assert len(answer.content.encode("utf-8")) == answer.current_size
    # Exit code 1 with a message naming no exception: the log ends as the task's process did (failures.py).
    assert answer.content.endswith("\nERROR: x\n[ModelArts Service Log]Training end with return code: 1\n")


def test_sdk_meets_logs_not_ready_and_a_permission_fault(tls_emu):
    from huaweicloudsdkmodelarts.v1 import (  # pylint: disable=import-outside-toplevel
        ListTrainingJobEventsRequest,
        ShowTrainingJobLogsFromAomRequest,
        ShowTrainingJobLogsPreviewRequest,
    )

    client = _diagnostics_client(tls_emu)
    pending = "a1000000-0000-4000-8000-000000000006"
    aom = client.show_training_job_logs_from_aom(ShowTrainingJobLogsFromAomRequest(training_job_id=pending, task_id="worker-0", lines=10))
    assert aom.content is None and aom.lines is None, "HTTP 204: no log yet"
    with pytest.raises(exceptions.ClientRequestException) as info:
        client.show_training_job_logs_preview(ShowTrainingJobLogsPreviewRequest(training_job_id=pending, task_id="worker-0"))
    assert info.value.error_code == "ModelArts.2776"
    denied = "d1a90000-0000-4000-8000-000000000002"
    tls_emu.add_job(id=denied, name="no-log-permission", phase="Failed", log={"fault": "forbidden", "events_fault": "forbidden"})
    for call in (
        lambda: client.show_training_job_logs_from_aom(ShowTrainingJobLogsFromAomRequest(training_job_id=denied, task_id="worker-0", lines=10)),
        lambda: client.show_training_job_logs_preview(ShowTrainingJobLogsPreviewRequest(training_job_id=denied, task_id="worker-0")),
        lambda: client.list_training_job_events(ListTrainingJobEventsRequest(training_job_id=denied)),
    ):
        with pytest.raises(exceptions.ClientRequestException) as info:
            call()
        assert info.value.status_code == 403 and info.value.error_code == "ModelArts.2771"


def test_the_log_calls_verify_the_signature(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowTrainingJobLogsPreviewRequest  # pylint: disable=import-outside-toplevel

    client = _client(tls_emu, BasicCredentials(tls_emu.ak, "X" * 40, tls_emu.project_id))
    with pytest.raises(exceptions.ClientRequestException) as info:
        client.show_training_job_logs_preview(ShowTrainingJobLogsPreviewRequest(training_job_id=FAILED, task_id="worker-0"))
    assert info.value.status_code == 401 and info.value.error_code == "APIG.0301"


# -- jobs selected the way teams run them: tags, workspaces, the newest of a reused name (nightly scenario) ------


NIGHTLY = ["b1000000-0000-4000-8000-%012d" % n for n in range(10)]
WORKSPACE = "0123456789abcdef0123456789abcdef"


def _tag_search(client, **body):
    from huaweicloudsdkmodelarts.v1 import ListTagFilter  # pylint: disable=import-outside-toplevel

    tags = body.pop("tags", None)
    if tags is not None:
        body["tags"] = [ListTagFilter(key=key, values=values) for key, values in tags]
    return client.list_training_jobs(ListTrainingJobsRequest(body=JobSearches(**body)))


def test_sdk_searches_by_tags_name_and_workspace(tls_emu):
    tls_emu.reset(scenario="nightly")
    client = _client(tls_emu, BasicCredentials(tls_emu.ak, tls_emu.sk, tls_emu.project_id))
    by_tag = _tag_search(client, tags=[("pipeline", ["nightly"])])
    assert [item.metadata.id for item in by_tag.items] == [NIGHTLY[4], NIGHTLY[7], NIGHTLY[3], NIGHTLY[2], NIGHTLY[1]]
    assert by_tag.workspace_id == "0" and by_tag.total == 5
    any_team = _tag_search(client, tags=[("team", None), ("pipeline", ["nightly", "weekly"])])
    assert [item.metadata.id for item in any_team.items] == [NIGHTLY[4], NIGHTLY[7], NIGHTLY[3], NIGHTLY[2], NIGHTLY[1]]
    name = Filter(key="name", operator="in", value=["nightly-train"])
    newest = _tag_search(client, limit=1, sort_by="create_time", order="desc", filters=[name], tags=[("team", ["vision"])])
    assert [(item.metadata.id, item.status.phase) for item in newest.items] == [(NIGHTLY[4], "Creating")] and newest.total == 4
    other = _tag_search(client, workspace_id=WORKSPACE, filters=[name], tags=[("team", [])])
    assert [(item.metadata.id, item.metadata.workspace_id) for item in other.items] == [(NIGHTLY[6], WORKSPACE)]
    assert other.workspace_id == WORKSPACE
    from huaweicloudsdkmodelarts.v1 import ShowTrainJobTagsRequest  # pylint: disable=import-outside-toplevel

    tags = client.show_train_job_tags(ShowTrainJobTagsRequest(training_job_id=NIGHTLY[6]))
    assert [(tag.key, tag.value) for tag in tags.tags] == [("pipeline", "nightly"), ("team", "vision")]


def test_sdk_tag_search_window_and_limits(tls_emu):
    import time  # pylint: disable=import-outside-toplevel

    tls_emu.reset(scenario="nightly")
    client = _client(tls_emu, BasicCredentials(tls_emu.ak, tls_emu.sk, tls_emu.project_id))
    now = int(time.time() * 1000)
    day = 86400 * 1000

    def window(start, end):
        return [Filter(key="create_time", operator="between", value=[str(start), str(end)])]

    old = _tag_search(client, filters=window(now - 45 * day, now - 14 * day), tags=[("pipeline", ["nightly"])])
    assert [item.metadata.id for item in old.items] == [NIGHTLY[5]]
    refused = [
        {"filters": window(now - 31 * day - 1, now), "tags": [("pipeline", ["nightly"])]},
        {"filters": window(now, now - day), "tags": [("pipeline", ["nightly"])]},
        {"tags": [("k%d" % i, ["v"]) for i in range(11)]},
        {"tags": [("team", None), ("team", ["vision"])]},
        {"tags": [("team", ["v%d" % i for i in range(11)])]},
        {"tags": [("team", ["vision", "vision"])]},
        {"tags": [("k" * 129, None)]},
        {"tags": [("a/b", None)]},
        {"tags": [("team", ["v" * 256])]},
        {"tags": [("team", ["a#b"])]},
        {"workspace_id": "not-a-workspace"},
    ]
    for body in refused:
        with pytest.raises(exceptions.ClientRequestException) as info:
            _tag_search(client, **body)
        assert (info.value.status_code, info.value.error_code) == (400, "ModelArts.0101"), body
        assert info.value.error_msg.startswith("Invalid parameter: ")


# -- what a job produced: ft-metrics and metric lines, read by the SDK's own client ---------------------------------

FT_JOB = "f7000000-0000-4000-8000-000000000001"
SERIES = [
    {"name_en": "train_loss", "group": "training", "data": [[1, 2.1], [2, 1.4], [3, 0.9]], "unit": ""},
    {"name_en": "val_accuracy", "group": "validation", "data": [0.61, 0.74, 0.82], "x_axis": "epoch"},
    {"name_en": "eval_loss", "group": "validation", "data": {"step": [100, 200], "value": [1.2, 0.8]}},
]


def _plain(value):
    """The SDK reads a JSON number of an ``object`` field as a Decimal: compared here as the float it is."""
    import decimal  # pylint: disable=import-outside-toplevel

    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return dict((key, _plain(item)) for key, item in value.items())
    return value


def test_sdk_show_ft_metrics_parses_the_emulators_answer(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowFtMetricsRequest  # pylint: disable=import-outside-toplevel

    tls_emu.add_job(id=FT_JOB, name="finetune-metrics", phase="Completed", ft_metrics=SERIES)
    answer = _diagnostics_client(tls_emu).show_ft_metrics(ShowFtMetricsRequest(training_job_id=FT_JOB))
    assert answer.train_process == 1.0 and answer.data.format_version == "1.0" and answer.data.timestamp.endswith("Z")
    series = dict((metric.name_en, metric) for metric in answer.data.metrics)
    assert sorted(series) == ["eval_loss", "train_loss", "val_accuracy"]
    assert series["train_loss"].group == "training" and series["train_loss"].x_axis == "step"
    assert _plain(series["train_loss"].data) == [[1, 2.1], [2, 1.4], [3, 0.9]]
    assert _plain(series["val_accuracy"].data) == [0.61, 0.74, 0.82] and series["val_accuracy"].x_axis == "epoch" and series["val_accuracy"].type == "line"
    assert _plain(series["eval_loss"].data) == {"step": [100, 200], "value": [1.2, 0.8]}
    assert _plain(answer.loss) == {"data": [[1, 2.1], [2, 1.4], [3, 0.9]]} and _plain(answer.eval_loss) == {"data": {"step": [100, 200], "value": [1.2, 0.8]}}


def test_sdk_sees_a_refused_ft_metrics_call(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowFtMetricsRequest  # pylint: disable=import-outside-toplevel

    tls_emu.add_job(id=FT_JOB, name="finetune-metrics", phase="Completed", ft_metrics={"metrics": SERIES, "fault": "forbidden"})
    with pytest.raises(exceptions.ClientRequestException) as info:
        _diagnostics_client(tls_emu).show_ft_metrics(ShowFtMetricsRequest(training_job_id=FT_JOB))
    assert (info.value.status_code, info.value.error_code) == (403, "ModelArts.2771")


def test_sdk_pages_a_jobs_metric_lines_newest_first_through_aom(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowTrainingJobLogsFromAomRequest  # pylint: disable=import-outside-toplevel

    lines = ["EVAL epoch %d val_accuracy=0.%d" % (epoch, 70 + epoch) for epoch in range(1, 6)]
    tls_emu.add_job(id=FT_JOB, name="metric-lines", phase="Completed", metric_lines=lines, log={"lines": 1000})
    client = _diagnostics_client(tls_emu)
    seen, base = [], None
    while True:
        answer = client.show_training_job_logs_from_aom(
            ShowTrainingJobLogsFromAomRequest(training_job_id=FT_JOB, task_id="worker-0", lines=500, order="desc", base_line=base)
        )
        seen.extend(answer.content.split("\n") if answer.content else [])
        if answer.lines < 500:
            break
        base = answer.end_line
    assert [line for line in seen if "val_accuracy" in line] == list(reversed(lines))
    # The last metric line comes right after the last training line, before the log's end.
    assert seen[0] == "[ModelArts Service Log]Training completed." and seen[2] == lines[-1]


# -- task metrics: whether a job makes progress, read by the SDK's own client ------------------------------------


def test_sdk_reads_a_tasks_one_minute_averages(tls_emu):
    from huaweicloudsdkmodelarts.v1 import ShowTrainingJobMetricsRequest  # pylint: disable=import-outside-toplevel

    job_id = "d1a90000-0000-4000-8000-000000000059"
    tls_emu.add_job(
        id=job_id,
        name="hangs-at-5m",
        created_ago=0,
        node_count=2,
        timeline=[{"phase": "Running", "seconds": 86400}, "Completed"],
        activity={"hang_at": "5m", "samples": "gaps"},
    )
    tls_emu.advance_clock(600)
    client = _diagnostics_client(tls_emu)
    answer = client.show_training_job_metrics(ShowTrainingJobMetricsRequest(training_job_id=job_id, task_id="worker-1"))
    assert answer.status_code == 200
    series = {entry.metric: entry.value for entry in answer.metrics}
    assert list(series) == ["cpuUsage", "memUsage", "gpuUtil", "gpuMemUsage"]
    util = series["gpuUtil"]
    assert len(util) == 10 and [index for index, value in enumerate(util) if value == -1] == [1, 4, 7]
    assert min(value for value in util[:5] if value != -1) > 80 and max(util[5:]) <= 0.3
    with pytest.raises(exceptions.ClientRequestException) as info:
        client.show_training_job_metrics(ShowTrainingJobMetricsRequest(training_job_id=job_id, task_id="worker-2"))
    assert (info.value.status_code, info.value.error_code) == (404, "ModelArts.2778")
