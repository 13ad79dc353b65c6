# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Normalisation of v2/v1 documents into items, phase tables and build_item.

The v1 table's rendering for the docs is tested in test_docs_sync.py."""

from __future__ import annotations

import copy
import datetime
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.modelarts.training.plugins.module_utils.job import jobs
from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import (
    ITEM_KEYS,
    V1_ITEM_KEYS,
    build_item,
    epoch_ms_to_iso,
    normalise_v1,
    normalise_v2,
)
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import (
    DEFAULT_FAIL_ON,
    DEFAULT_WAIT_FOR,
    PHASES,
    TERMINAL_PHASES,
    V1_STATUS_NAMES,
    V1_STATUS_PHASES,
)
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import SchemaValidationError, validate_document


def v2_doc(phase="Running", **status):
    status.update({"phase": phase})
    return {"kind": "job", "metadata": {"id": "job-1", "name": "train-1", "create_time": 1714566896000}, "status": status}


def error_paths(item):
    return [error["path"] for error in item["schema_errors"]]


# -- constants and the v1 table ------------------------------------------------------------


def test_phase_constants():
    assert PHASES == ("Creating", "Pending", "Running", "Failed", "Completed", "Terminating", "Terminated", "Abnormal")
    assert TERMINAL_PHASES == ("Failed", "Completed", "Terminated", "Abnormal")
    assert DEFAULT_WAIT_FOR == ("Completed",)
    assert DEFAULT_FAIL_ON == ("Failed", "Abnormal", "Terminated")


SERVICE_STATUS_NAMES = (
    "UNKNOWN INIT IMAGE_CREATING IMAGE_FAILED SUBMIT_TRYING SUBMIT_FAILED DELETE_FAILED WAITING RUNNING KILLING "
    "COMPLETED FAILED KILLED CANCELED LOST SCALING SUBMIT_MODEL_FAILED DEPLOY_SERVICE_FAILED CHECK_INIT "
    "CHECK_RUNNING CHECK_RUNNING_COMPLETED CHECK_FAILED MOUNT_FAILED"
).split()


def test_v1_table_covers_statuses_0_to_22_with_the_service_names():
    assert sorted(V1_STATUS_PHASES) == list(range(23))
    assert [V1_STATUS_NAMES[code] for code in range(23)] == SERVICE_STATUS_NAMES
    assert set(V1_STATUS_PHASES.values()) <= set(PHASES)


def test_only_completed_maps_to_completed():
    assert [code for code, phase in V1_STATUS_PHASES.items() if phase == "Completed"] == [10]


def test_no_failure_status_can_open_a_gate():
    failing = [code for code, name in V1_STATUS_NAMES.items() if "FAILED" in name or name in ("UNKNOWN", "LOST")]
    assert failing == [0, 3, 5, 6, 11, 14, 16, 17, 21, 22]
    assert all(V1_STATUS_PHASES[code] in DEFAULT_FAIL_ON for code in failing)


@pytest.mark.parametrize(
    "code, phase",
    [
        (0, "Abnormal"),
        (7, "Pending"),
        (8, "Running"),
        (9, "Terminating"),
        (10, "Completed"),
        (11, "Failed"),
        (12, "Terminated"),
        (13, "Terminated"),
        (14, "Abnormal"),
        (15, "Running"),
        (20, "Pending"),
    ],
)
def test_v1_mapping_of_notable_statuses(code, phase):
    assert V1_STATUS_PHASES[code] == phase


# -- time conversion --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, expected",
    [
        (1636447346315, "2021-11-09T08:42:26Z"),
        (1714566896000, "2024-05-01T12:34:56Z"),
        (1714566896999, "2024-05-01T12:34:56Z"),  # milliseconds are floored, never rounded up
        (1, "1970-01-01T00:00:00Z"),
        (1000, "1970-01-01T00:00:01Z"),
        (951782400000, "2000-02-29T00:00:00Z"),
        (253402300799999, "9999-12-31T23:59:59Z"),
        (1714566896000.0, "2024-05-01T12:34:56Z"),
        (0, None),
    ],
)
def test_epoch_ms_to_iso(value, expected):
    assert epoch_ms_to_iso(value) == expected


@pytest.mark.parametrize("value", [-1, 253402300800000, 1.5, True, "1714566896000", None, float("nan"), float("inf")])
def test_epoch_ms_to_iso_rejects(value):
    with pytest.raises(ValueError):
        epoch_ms_to_iso(value)


@given(st.integers(min_value=1, max_value=253402300799999))
def test_epoch_ms_to_iso_matches_datetime(value):
    expected = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=value)
    assert epoch_ms_to_iso(value) == expected.replace(microsecond=0).isoformat() + "Z"


# -- v2 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", PHASES)
def test_v2_each_phase(phase):
    item = normalise_v2(v2_doc(phase, secondary_phase=phase))
    assert item["phase"] == phase
    assert item["terminal"] is (phase in TERMINAL_PHASES)
    assert item["completed"] is (phase == "Completed")
    assert item["failed"] is (phase in DEFAULT_FAIL_ON)
    assert (item["failure_reason"] is not None) is (phase in DEFAULT_FAIL_ON)
    assert item["schema_errors"] == []


def test_v2_item_from_documented_example(v2):
    original = copy.deepcopy(v2)
    item = normalise_v2(v2)
    assert list(item) == list(ITEM_KEYS)
    assert item["id"] == "3faf5c03-aaa1-4cbe-879d-24b05d997347"
    assert item["name"] == "trainjob--py14_mem06-108"
    assert item["api_version"] == "v2"
    assert item["phase"] == "Abnormal" and item["secondary_phase"] == "CreateFailed"
    assert (item["terminal"], item["completed"], item["failed"]) == (True, False, True)
    assert item["create_time"] == "2021-11-09T08:42:26Z"
    assert item["start_time"] is None  # 0: never started
    assert item["duration_seconds"] == 0.0
    assert item["failure_reason"] == "run ended: exit with 127 (task worker-2)"
    assert item["details"] is v2 and v2 == original


def test_v2_times_and_duration():
    item = normalise_v2(v2_doc("Completed", start_time=1714566900123, duration=532003))
    assert item["create_time"] == "2024-05-01T12:34:56Z"
    assert item["start_time"] == "2024-05-01T12:35:00Z"
    assert item["duration_seconds"] == 532.003


def test_custom_fail_on():
    item = normalise_v2(v2_doc("Terminated", secondary_phase="Terminated"), fail_on=["Failed"])
    assert item["failed"] is False and item["terminal"] is True and item["failure_reason"] is None
    item = normalise_v2(v2_doc("Abnormal", secondary_phase="Lost"), fail_on=["Failed"])
    assert item["failed"] is False and item["failure_reason"] == "secondary phase Lost"
    item = normalise_v2(v2_doc("Running"), fail_on="Running")
    assert item["failed"] is True
    assert normalise_v2(v2_doc("Failed"), fail_on=None)["failed"] is True


# -- failure_reason precedence ---------------------------------------------------------------

TASKS = [{"task": "worker-0", "exit_code": 0}, {"task": "worker-1", "exit_code": 137, "message": "OOMKilled"}, {"task": "worker-2", "exit_code": 1}]
RECORDS = [{"end_reason": "exit with 127", "end_related_task": "worker-2"}, {"end_reason": "job failed"}]


@pytest.mark.parametrize(
    "status, expected",
    [
        # The task the last running record blames comes first: it is the root cause.
        ({"task_statuses": TASKS, "running_records": RECORDS, "secondary_phase": "Failed"}, "task worker-2 exited with code 1 (and 1 more failed task)"),
        ({"task_statuses": TASKS, "secondary_phase": "Failed"}, "task worker-1 exited with code 137: OOMKilled (and 1 more failed task)"),
        (
            {
                "task_statuses": [
                    {"task": "worker-0", "exit_code": 143, "message": "Stopped because worker-1 ended"},
                    {"task": "worker-1", "exit_code": 2, "message": "ModuleNotFoundError"},
                ],
                "running_records": [{"end_reason": "exit with 2", "end_related_task": "worker-1"}],
            },
            "task worker-1 exited with code 2: ModuleNotFoundError (and 1 more failed task)",
        ),
        ({"task_statuses": TASKS[2:], "running_records": RECORDS}, "task worker-2 exited with code 1"),
        ({"task_statuses": [{"exit_code": 2}, {"exit_code": 3}, {"exit_code": 4}]}, "a task exited with code 2 (and 2 more failed tasks)"),
        ({"task_statuses": [{"task": "worker-0", "exit_code": 0}, {"task": "worker-1", "message": "image pull failed"}]}, "task worker-1: image pull failed"),
        ({"task_statuses": TASKS[:1], "running_records": RECORDS, "secondary_phase": "Failed"}, "run ended: exit with 127 (task worker-2)"),
        ({"running_records": RECORDS[1:] + [{"start_at": 1}], "secondary_phase": "Failed"}, "run ended: job failed"),
        ({"running_records": [{"end_reason": "a"}, {"end_reason": "b"}]}, "run ended: b"),
        ({"running_records": [{"start_at": 1}], "secondary_phase": "CreateFailed"}, "secondary phase CreateFailed"),
        ({}, None),
    ],
)
def test_failure_reason_precedence(status, expected):
    assert normalise_v2(v2_doc("Failed", **status))["failure_reason"] == expected


def test_failure_reason_only_for_failing_phases():
    status = {"task_statuses": TASKS, "secondary_phase": "Completed"}
    assert normalise_v2(v2_doc("Completed", **status))["failure_reason"] is None
    assert normalise_v2(v2_doc("Running", **status))["failure_reason"] is None


def test_failure_reason_with_absurd_exit_code():
    # %d of an int over 4300 digits raises ValueError on current Pythons.
    item = normalise_v2(v2_doc("Failed", task_statuses=[{"task": "w", "exit_code": 10**5000}]))
    assert item["failure_reason"] == "task w exited with code an integer of 16610 bits"


def test_failure_reason_is_bounded():
    item = normalise_v2(v2_doc("Failed", task_statuses=[{"task": "w", "exit_code": 1, "message": "x" * 100000}]))
    assert len(item["failure_reason"]) == jobs.MAX_REASON_CHARS and item["failure_reason"].endswith("...")


def test_failure_reason_skips_malformed_entries_and_reports_them():
    item = normalise_v2(
        v2_doc(
            "Failed",
            secondary_phase="Failed",
            task_statuses=["oops", {"task": 5, "exit_code": "1"}, {"task": "w", "exit_code": 9}],
            running_records={"end_reason": "x"},
        )
    )
    assert item["failure_reason"] == "task w exited with code 9"
    assert error_paths(item) == [
        "$.status.running_records",
        "$.status.task_statuses[0]",
        "$.status.task_statuses[1].task",
        "$.status.task_statuses[1].exit_code",
    ]
    item = normalise_v2(v2_doc("Failed", secondary_phase="Failed", task_statuses="boom", running_records=[None, 3]))
    assert item["failure_reason"] == "secondary phase Failed"
    assert error_paths(item) == ["$.status.running_records[1]", "$.status.running_records[0]", "$.status.task_statuses"]


# -- wrong types degrade to null with an error at the path -------------------------------------


@pytest.mark.parametrize("status", ["Running", ["Running"], None, 5, {"phase": None}, {"phase": "Done"}, {"phase": "completed"}, {}])
def test_v2_unusable_status_gives_phase_none(status):
    doc = v2_doc()
    doc["status"] = status
    item = normalise_v2(doc)
    assert item["phase"] is None
    assert (item["terminal"], item["completed"], item["failed"], item["failure_reason"]) == (False, False, False, None)
    assert error_paths(item) in (["$.status"], ["$.status.phase"])


@pytest.mark.parametrize(
    "field, value",
    [("create_time", "1714566896000"), ("create_time", -5), ("create_time", 10**30), ("create_time", 1.5), ("create_time", True), ("id", 42), ("name", ["n"])],
)
def test_v2_wrong_metadata_types(field, value):
    doc = v2_doc("Completed")
    doc["metadata"][field] = value
    item = normalise_v2(doc)
    assert item["phase"] == "Completed"
    assert item[field] is None
    assert error_paths(item) == ["$.metadata." + field]


def test_v2_wrong_status_types():
    item = normalise_v2(v2_doc("Completed", secondary_phase=1, start_time="x", duration=-1))
    assert (item["secondary_phase"], item["start_time"], item["duration_seconds"]) == (None, None, None)
    assert error_paths(item) == ["$.status.secondary_phase", "$.status.start_time", "$.status.duration"]
    assert normalise_v2(v2_doc("Completed", duration=10**400))["duration_seconds"] is None


# -- null optional fields are null item fields, without an error -------------------------------


def test_v2_null_optional_fields_give_null_item_fields(v2):
    v2["metadata"].update(name=None, create_time=None, description=None, annotations=None)
    v2["status"].update(secondary_phase=None, start_time=None, duration=None)
    v2["endpoints"] = None
    item = build_item(v2, "v2")
    assert item["id"] == "3faf5c03-aaa1-4cbe-879d-24b05d997347" and item["phase"] == "Abnormal"
    assert (item["name"], item["create_time"], item["secondary_phase"], item["start_time"], item["duration_seconds"]) == (None,) * 5
    assert item["schema_errors"] == []


def test_v2_null_lists_count_as_empty():
    item = build_item(v2_doc("Failed", secondary_phase="Failed", task_statuses=None, running_records=None), "v2")
    assert item["failure_reason"] == "secondary phase Failed" and item["schema_errors"] == []
    item = build_item(v2_doc("Failed", secondary_phase=None, task_statuses=None, running_records=None), "v2")
    assert item["failure_reason"] is None and item["failed"] is True and item["schema_errors"] == []


def test_v2_null_fields_inside_entries():
    status = {
        "task_statuses": [{"task": None, "exit_code": 2, "message": None}, {"task": "w", "exit_code": None, "message": None}],
        "running_records": [{"end_reason": "exit with 2", "end_related_task": None}, {"end_reason": None}],
    }
    item = build_item(v2_doc("Failed", **status), "v2")
    assert item["failure_reason"] == "a task exited with code 2" and item["schema_errors"] == []
    del status["task_statuses"]
    assert build_item(v2_doc("Failed", **status), "v2")["failure_reason"] == "run ended: exit with 2"


@pytest.mark.parametrize(
    "path, error_path",
    [(("metadata", "id"), "$.metadata.id"), (("metadata",), "$.metadata"), (("status",), "$.status"), (("status", "phase"), "$.status.phase")],
)
def test_v2_null_required_field_still_fails_strict(v2, path, error_path):
    target = v2
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = None
    with pytest.raises(SchemaValidationError) as info:
        build_item(v2, "v2")
    assert [error["path"] for error in info.value.errors] == [error_path]
    assert "null is not of type" in str(info.value)


def test_v1_null_optional_fields_give_null_item_fields(v1):
    v1.update(pre_version_id=None, job_name=None, create_time=None, start_time=None, duration=None, model_metric_list=None)
    item = build_item(v1, "v1")
    assert (item["id"], item["version_id"], item["phase"]) == (10, 10, "Completed")
    assert (item["name"], item["create_time"], item["start_time"], item["duration_seconds"]) == (None,) * 4
    assert item["details"]["metrics"] is None and item["schema_errors"] == []


@pytest.mark.parametrize("field", ["job_id", "version_id", "status"])
def test_v1_null_required_field_still_fails_strict(v1, field):
    v1[field] = None
    with pytest.raises(SchemaValidationError, match=r"\$\.%s: null is not" % field):
        build_item(v1, "v1")


@pytest.mark.parametrize("doc", [None, [], "job", 5, True])
def test_v2_document_that_is_not_an_object(doc):
    item = normalise_v2(doc)
    assert item["phase"] is None and item["id"] is None and item["details"] is doc
    assert error_paths(item) == ["$"]
    assert item["schema_errors"][0]["message"].startswith("expected object, got ")


def test_v2_missing_metadata_and_status():
    item = normalise_v2({"kind": "job"})
    assert error_paths(item) == ["$.metadata", "$.status"]
    assert item["schema_errors"][0]["message"] == "required field is missing"


def test_schema_errors_are_merged_without_duplicates():
    doc = v2_doc()
    doc["status"]["phase"] = "Done"
    errors = validate_document(doc, jobs.V2_TRAINING_JOB_SCHEMA)
    item = normalise_v2(doc, schema_errors=errors)
    assert item["schema_errors"] == errors and len(errors) == 1
    del doc["status"]["phase"]
    errors = validate_document(doc, jobs.V2_TRAINING_JOB_SCHEMA)
    assert error_paths(normalise_v2(doc, schema_errors=errors)) == ["$.status"]


def test_schema_errors_argument_is_copied():
    errors = [{"path": "$.kind", "message": "m"}]
    item = normalise_v2(v2_doc(), schema_errors=errors)
    item["schema_errors"][0]["message"] = "changed"
    assert errors == [{"path": "$.kind", "message": "m"}]


# -- v1 ---------------------------------------------------------------------------------------


def test_v1_item_from_documented_example(v1):
    original = copy.deepcopy(v1)
    item = normalise_v1(v1)
    assert list(item) == list(V1_ITEM_KEYS)
    assert (item["id"], item["version_id"], item["name"]) == (10, 10, "TestModelArtsJob")
    assert (item["api_version"], item["phase"], item["status_code"], item["secondary_phase"]) == ("v1", "Completed", 10, "COMPLETED")
    assert (item["terminal"], item["completed"], item["failed"], item["failure_reason"]) == (True, True, False, None)
    assert item["create_time"] == "2018-04-20T02:06:30Z"
    assert item["start_time"] == "2019-07-15T06:32:42Z"
    assert item["duration_seconds"] == 532.003
    assert item["details"]["metrics"]["total_metric"]["total_metric_values"]["accuracy"] == 0.000937
    assert item["details"]["metrics"]["metric"][0]["metric_meta"] == {"class_name": 0, "class_id": 0}
    assert {k: v for k, v in item["details"].items() if k != "metrics"} == original
    assert v1 == original and "metrics" not in v1
    assert item["schema_errors"] == []


@pytest.mark.parametrize("code", range(23))
def test_v1_each_status(v1, code):
    v1["status"] = code
    item = normalise_v1(v1)
    phase = V1_STATUS_PHASES[code]
    assert (item["phase"], item["status_code"], item["secondary_phase"]) == (phase, code, V1_STATUS_NAMES[code])
    assert item["completed"] is (code == 10)
    assert item["failed"] is (phase in DEFAULT_FAIL_ON)
    assert item["terminal"] is (phase in TERMINAL_PHASES)
    if phase in DEFAULT_FAIL_ON:
        assert item["failure_reason"] == "v1 status %d (%s)" % (code, V1_STATUS_NAMES[code])
    else:
        assert item["failure_reason"] is None


@pytest.mark.parametrize("status", [23, -1, 99, "10", True, None, 10.5, [10]])
def test_v1_unknown_status_gives_phase_none_and_an_error(v1, status):
    v1["status"] = status
    item = normalise_v1(v1)
    assert (item["phase"], item["secondary_phase"], item["terminal"], item["completed"], item["failed"]) == (None, None, False, False, False)
    assert error_paths(item) == ["$.status"]
    assert item["status_code"] == (status if status in (23, -1, 99) else None)


def test_v1_integral_float_status(v1):
    v1["status"] = 10.0
    item = normalise_v1(v1)
    assert item["phase"] == "Completed" and item["status_code"] == 10 and isinstance(item["status_code"], int)


@pytest.mark.parametrize(
    "raw, metrics, errors",
    [
        ('{"total_metric": {"total_metric_values": {"accuracy": 0.9}}}', {"total_metric": {"total_metric_values": {"accuracy": 0.9}}}, []),
        ("", None, []),
        ("   ", None, []),
        (None, None, []),
        ("{not json", None, ["$.model_metric_list"]),
        ("[" * 100000 + "]" * 100000, None, ["$.model_metric_list"]),
        ({"already": "parsed"}, {"already": "parsed"}, ["$.model_metric_list"]),
        (42, None, ["$.model_metric_list"]),
    ],
)
def test_v1_metrics_parsing(v1, raw, metrics, errors):
    v1["model_metric_list"] = raw
    item = normalise_v1(v1)
    assert item["details"]["metrics"] == metrics
    assert error_paths(item) == errors
    assert item["phase"] == "Completed"


@pytest.mark.parametrize("validate", ["strict", "warn", "off"])
def test_v1_metrics_with_nan_and_infinity_are_parsed_and_valid(v1, validate):
    # A loss that went to NaN: Python's json parses it, the schema asks only for a string (issue 20, item 12).
    v1["model_metric_list"] = '{"total_metric": {"total_metric_values": {"loss": NaN, "grad_norm": Infinity, "lr_floor": -Infinity, "accuracy": 0.9}}}'
    item = build_item(v1, "v1", validate=validate)
    values = item["details"]["metrics"]["total_metric"]["total_metric_values"]
    assert math.isnan(values["loss"]) and values["grad_norm"] == math.inf and values["lr_floor"] == -math.inf and values["accuracy"] == 0.9
    assert item["schema_errors"] == [] and item["phase"] == "Completed" and item["completed"] is True


def test_v1_metrics_absent(v1):
    del v1["model_metric_list"]
    assert normalise_v1(v1)["details"]["metrics"] is None


def test_v1_malformed_metrics_message_is_short(v1):
    v1["model_metric_list"] = "{" + "x" * 10**6
    item = normalise_v1(v1)
    assert item["schema_errors"][0]["message"].startswith("not valid JSON: ")
    assert len(item["schema_errors"][0]["message"]) < 300


def test_v1_wrong_types(v1):
    v1.update({"job_id": "10", "version_id": None, "job_name": 3, "create_time": "x", "duration": "1"})
    item = normalise_v1(v1)
    assert (item["id"], item["version_id"], item["name"], item["create_time"], item["duration_seconds"]) == (None,) * 5
    assert item["phase"] == "Completed"
    assert error_paths(item) == ["$.job_id", "$.version_id", "$.job_name", "$.create_time", "$.duration"]


@pytest.mark.parametrize("doc, message", [(None, "null"), ([], "an array of 0 items"), ("job", "string 'job'"), (5, "integer 5")])
def test_v1_document_that_is_not_an_object(doc, message):
    item = normalise_v1(doc)
    assert item["phase"] is None and item["details"] is doc
    assert item["schema_errors"] == [{"path": "$", "message": "expected object, got " + message}]
    assert list(item) == list(V1_ITEM_KEYS)


# -- build_item -------------------------------------------------------------------------------


def test_build_item_strict_valid(v2, v1):
    assert build_item(v2, "v2")["schema_errors"] == []
    assert build_item(v1, "v1", validate="strict")["phase"] == "Completed"


def test_build_item_strict_raises_with_job_and_paths(v2):
    v2["status"]["phase"] = "Done"
    v2["metadata"]["create_time"] = "yesterday"
    with pytest.raises(SchemaValidationError) as info:
        build_item(v2, "v2")
    error = info.value
    assert error.job_ref == "'trainjob--py14_mem06-108' (3faf5c03-aaa1-4cbe-879d-24b05d997347)"
    assert [e["path"] for e in error.errors] == ["$.metadata.create_time", "$.status.phase"]
    assert error.item["phase"] is None and error.api_version == "v2"
    text = str(error)
    assert "3faf5c03-aaa1-4cbe-879d-24b05d997347" in text and "$.status.phase: 'Done' is not one of" in text


def test_build_item_strict_uses_given_job_ref(v1):
    v1["status"] = 23
    with pytest.raises(SchemaValidationError, match=r"^training job job 10 version 10: .*\$\.status: 23 is not one of"):
        build_item(v1, "v1", job_ref="job 10 version 10")


def test_build_item_strict_default_ref_for_v1(v1):
    v1["status"] = 23
    with pytest.raises(SchemaValidationError) as info:
        build_item(v1, "v1")
    assert info.value.job_ref == "'TestModelArtsJob' (job 10 version 10)"


def test_build_item_strict_rejects_malformed_metrics(v1):
    v1["model_metric_list"] = "{"
    with pytest.raises(SchemaValidationError, match=r"\$\.model_metric_list: not valid JSON"):
        build_item(v1, "v1")


def test_build_item_warn_returns_errors(v2):
    v2["status"]["phase"] = "Done"
    v2["algorithm"]["code_dir"] = 5
    item = build_item(v2, "v2", validate="warn")
    assert item["phase"] is None
    assert error_paths(item) == ["$.algorithm.code_dir", "$.status.phase"]


def test_build_item_off_skips_schema_but_reports_reading_problems(v2):
    v2["algorithm"]["code_dir"] = 5
    assert build_item(v2, "v2", validate="off")["schema_errors"] == []
    v2["status"]["phase"] = "Done"
    assert error_paths(build_item(v2, "v2", validate="off")) == ["$.status.phase"]


@pytest.mark.parametrize("kwargs", [{"api_version": "v3"}, {"api_version": "v2", "validate": "loud"}])
def test_build_item_rejects_bad_arguments(v2, kwargs):
    with pytest.raises(ValueError):
        build_item(v2, **kwargs)


# -- properties: never an unhandled exception --------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=25,
)
STATUS_VALUES = st.one_of(JSON, st.sampled_from(PHASES), st.integers(min_value=-5, max_value=30))
V2_STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": STATUS_VALUES,
        "secondary_phase": JSON,
        "duration": JSON | st.integers(),
        "start_time": JSON,
        "task_statuses": JSON | st.lists(st.fixed_dictionaries({}, optional={"task": JSON, "exit_code": JSON | st.integers(), "message": JSON}), max_size=3),
        "running_records": JSON | st.lists(st.fixed_dictionaries({}, optional={"end_reason": JSON, "end_related_task": JSON}), max_size=3),
    },
)
V2_DOCS = JSON | st.fixed_dictionaries(
    {},
    optional={
        "metadata": JSON | st.fixed_dictionaries({}, optional={"id": JSON, "name": JSON, "create_time": JSON | st.integers()}),
        "status": JSON | V2_STATUS,
        "spec": JSON,
    },
)
V1_DOCS = JSON | st.fixed_dictionaries(
    {},
    optional={
        "job_id": JSON,
        "version_id": JSON,
        "job_name": JSON,
        "status": STATUS_VALUES,
        "create_time": JSON | st.integers(),
        "start_time": JSON,
        "duration": JSON,
        "model_metric_list": JSON | st.sampled_from(["{}", '{"a": [1, 2]}', "{", "NaN", ""]),
    },
)
FAIL_ON = st.none() | st.lists(st.sampled_from(PHASES + ("Other",)), max_size=4)


def check_item(item, keys):
    assert list(item) == list(keys)
    assert item["phase"] is None or item["phase"] in PHASES
    assert item["terminal"] is (item["phase"] in TERMINAL_PHASES)
    assert item["completed"] is (item["phase"] == "Completed")
    assert isinstance(item["failed"], bool)
    assert item["failure_reason"] is None or len(item["failure_reason"]) <= jobs.MAX_REASON_CHARS
    for error in item["schema_errors"]:
        assert set(error) == {"path", "message"} and error["path"].startswith("$")
    for key in ("create_time", "start_time"):
        assert item[key] is None or (len(item[key]) == 20 and item[key].endswith("Z"))


@settings(max_examples=300, deadline=None)
@given(doc=V2_DOCS, fail_on=FAIL_ON, validate=st.sampled_from(["warn", "off"]))
def test_v2_never_raises(doc, fail_on, validate):
    snapshot = json.dumps(doc, sort_keys=True, default=repr)
    item = build_item(doc, "v2", validate=validate, fail_on=fail_on)
    check_item(item, ITEM_KEYS)
    assert json.dumps(doc, sort_keys=True, default=repr) == snapshot
    if validate == "warn" and not item["schema_errors"]:
        assert item["phase"] in PHASES


@settings(max_examples=300, deadline=None)
@given(doc=V1_DOCS, fail_on=FAIL_ON, validate=st.sampled_from(["warn", "off"]))
def test_v1_never_raises(doc, fail_on, validate):
    snapshot = json.dumps(doc, sort_keys=True, default=repr)
    item = build_item(doc, "v1", validate=validate, fail_on=fail_on)
    check_item(item, V1_ITEM_KEYS)
    assert json.dumps(doc, sort_keys=True, default=repr) == snapshot
    if validate == "warn" and not item["schema_errors"]:
        assert item["phase"] in PHASES and item["status_code"] in V1_STATUS_PHASES


@settings(max_examples=200, deadline=None)
@given(doc=V2_DOCS | V1_DOCS, api_version=st.sampled_from(["v2", "v1"]))
def test_strict_raises_only_schema_validation_error(doc, api_version):
    try:
        item = build_item(doc, api_version)
    except SchemaValidationError as error:
        assert error.errors and len(str(error)) < 3000
    else:
        assert item["schema_errors"] == [] and item["phase"] in PHASES


def test_valid_documents_always_have_a_phase(v2, v1):
    for phase in PHASES:
        v2["status"]["phase"] = phase
        assert build_item(v2, "v2")["phase"] == phase
    for code in range(23):
        v1["status"] = code
        assert build_item(v1, "v1")["phase"] == V1_STATUS_PHASES[code]


def test_huge_and_deep_values(v2):
    deep = "leaf"
    for _level in range(3000):
        deep = {"k": deep}
    v2["metadata"]["name"] = "n" * 10**6
    v2["status"]["task_statuses"] = [{"task": "w", "exit_code": 1, "message": deep}]
    v2["status"]["phase"] = "Failed"
    v2["anything"] = deep
    item = build_item(v2, "v2", validate="warn")
    assert item["name"] == "n" * 10**6
    assert item["failure_reason"] == "task w exited with code 1"
    assert error_paths(item) == ["$.status.task_statuses[0].message"]
    assert all(len(error["message"]) < 300 for error in item["schema_errors"])


# -- the document answers for the job asked (issue 28) ---------------------------------------


@pytest.mark.parametrize("validate", ["strict", "warn", "off"])
def test_a_document_of_another_job_is_never_an_item(validate):
    doc = v2_doc("Completed")
    assert build_item(doc, "v2", validate=validate, expect="job-1")["phase"] == "Completed"
    for other in ("job-2", "{{ lookup('pipe', 'id') }}\nforged", None, 12, ""):
        doc["metadata"]["id"] = other
        with pytest.raises(jobs.WrongJobError) as raised:
            build_item(doc, "v2", validate=validate, expect="job-1", operation="get training job job-1", request_id="r-1")
        text = str(raised.value)
        assert text.startswith("get training job job-1: the service answered with the document of another job (metadata.id ")
        assert "\n" not in text and text.endswith("[request id r-1]")
        assert not raised.value.transient and not raised.value.not_found
    with pytest.raises(jobs.WrongJobError, match=r"\(metadata.id null\)"):
        build_item({"status": {"phase": "Completed"}}, "v2", validate=validate, expect="job-1")


def test_a_v1_document_of_another_version_is_never_an_item():
    doc = {"job_id": 10, "version_id": 2, "status": 10, "job_name": "legacy"}
    assert build_item(doc, "v1", validate="off", expect=(10, 2))["phase"] == "Completed"
    for job_id, version_id in ((10, 3), (11, 2), ("10", 2), (True, 2), (None, None)):
        with pytest.raises(jobs.WrongJobError, match="another job"):
            build_item(dict(doc, job_id=job_id, version_id=version_id), "v1", validate="off", expect=(10, 2))
    with pytest.raises(jobs.WrongJobError, match=r"\(job_id 11, version_id 2\)"):
        build_item(dict(doc, job_id=11), "v1", validate="strict", expect=(10, 2))
