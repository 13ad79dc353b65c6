# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad inputs (docs/reliability.md): wrong JSON types in every normalised field, v1 statuses outside 0-22,
hostile job ids, and property tests over generated valid documents."""

from __future__ import annotations

import copy
import json
import os
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient
from ansible_collections.modelarts.training.plugins.module_utils.service.endpoints import escape
from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import ITEM_KEYS, V1_ITEM_KEYS, build_item
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import PHASES, TERMINAL_PHASES, V1_STATUS_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.job.schemas import V1_JOB_VERSION_SCHEMA, V2_TRAINING_JOB_SCHEMA
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import SchemaValidationError, validate_document
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse, FakeSession, client_parts

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "fixtures"))
PROJECT = "0123456789abcdef0123456789abcdef"


def load(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return json.load(handle)


V2_EXAMPLES = [load(name) for name in ("v2_example_rst.json", "v2_example_latest.json", "v2_example_older.json")]
V1_EXAMPLE = load("v1_example.json")

# Every value a wrong JSON type (or an absurd value of the right type) can take after json.loads.
WRONG_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**64,
    -(2**63),
    1e308,
    float("nan"),
    float("inf"),
    "",
    "x" * 100000,
    "\u8bad\u7ec3\U0001f680",
    "Completed",
    [],
    ["Completed"],
    {},
    {"phase": "Completed"},
    [[[[[[]]]]]],
]

# Every field the normalisers read (dotted, numbers index lists).
V2_FIELDS = [
    "metadata",
    "status",
    "metadata.id",
    "metadata.name",
    "metadata.create_time",
    "status.phase",
    "status.secondary_phase",
    "status.start_time",
    "status.duration",
    "status.task_statuses",
    "status.task_statuses.0",
    "status.task_statuses.0.task",
    "status.task_statuses.0.exit_code",
    "status.task_statuses.0.message",
    "status.running_records",
    "status.running_records.0",
    "status.running_records.0.end_reason",
    "status.running_records.0.end_related_task",
]
V1_FIELDS = ["job_id", "version_id", "job_name", "status", "create_time", "start_time", "duration", "model_metric_list"]


def failing_v2():
    """A Failed v2 document with task statuses and running records, so every reason field is read."""
    doc = copy.deepcopy(V2_EXAMPLES[0])
    doc["status"]["phase"] = "Failed"
    doc["status"]["task_statuses"] = [{"task": "worker-0", "exit_code": 137, "message": "OOMKilled"}]
    doc["status"]["running_records"] = [{"end_reason": "exit 137", "end_related_task": "worker-0"}]
    return doc


def put(doc, dotted, value):
    """Set ``dotted`` inside ``doc`` to ``value`` (creating nothing: the path must exist up to its parent)."""
    parts = [int(p) if p.isdigit() else p for p in dotted.split(".")]
    node = doc
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value
    return doc


def check_item(item, keys, expected_phase=None):
    assert list(item) == list(keys)
    assert item["phase"] is None or item["phase"] in PHASES
    assert item["completed"] is (item["phase"] == "Completed")
    assert item["terminal"] is (item["phase"] in TERMINAL_PHASES)
    for error in item["schema_errors"]:
        assert error["path"].startswith("$") and len(error["message"]) <= 1000
    json.dumps(item, default=repr)
    if expected_phase is not None:
        assert item["phase"] == expected_phase


def assert_strict_agrees(doc, api):
    """strict refuses exactly the documents for which warn reports schema errors (some "wrong" values are valid)."""
    warned = build_item(doc, api, validate="warn")["schema_errors"]
    try:
        item = build_item(doc, api, validate="strict")
    except SchemaValidationError as error:
        assert error.errors == warned and len(str(error)) < 3000
    else:
        assert warned == [] and item["phase"] in PHASES


def phase_field(api, field, value):
    """Whether ``value`` breaks the phase of the document (some values in WRONG_VALUES are valid phases)."""
    if api == "v2":
        valid = (field == "status.phase" and value == "Completed") or (field == "status" and value == {"phase": "Completed"})
        return field in ("status", "status.phase") and not valid
    return field == "status" and not (type(value) is int and value == 0)  # pylint: disable=unidiomatic-typecheck


@pytest.mark.parametrize("field", V2_FIELDS)
@pytest.mark.parametrize("value", WRONG_VALUES, ids=lambda v: type(v).__name__ + ":" + repr(v)[:12])
def test_v2_wrong_type_in_every_normalised_field(field, value):
    """Never an exception but SchemaValidationError; a broken phase field is never a success."""
    doc = put(failing_v2(), field, copy.deepcopy(value))
    for validate in ("warn", "off"):
        item = build_item(doc, "v2", validate=validate)
        broken = phase_field("v2", field, value)
        check_item(item, ITEM_KEYS, None if broken or field in ("status", "status.phase") else "Failed")
        if broken:
            assert item["phase"] is None and item["schema_errors"], (field, value, item["phase"])
    assert_strict_agrees(doc, "v2")


@pytest.mark.parametrize("field", V1_FIELDS)
@pytest.mark.parametrize("value", WRONG_VALUES, ids=lambda v: type(v).__name__ + ":" + repr(v)[:12])
def test_v1_wrong_type_in_every_normalised_field(field, value):
    """The same for v1: ``status`` broken means phase null, never Completed."""
    doc = copy.deepcopy(V1_EXAMPLE)
    doc["status"] = 10
    put(doc, field, copy.deepcopy(value))
    for validate in ("warn", "off"):
        item = build_item(doc, "v1", validate=validate)
        check_item(item, V1_ITEM_KEYS, None if field == "status" else "Completed")
        if phase_field("v1", field, value):
            assert item["phase"] is None and not item["completed"]
    assert_strict_agrees(doc, "v1")


@pytest.mark.parametrize(
    "status",
    [-1, 23, 24, 99, 255, 2**31, 2**63, -(2**63), 10.5, 22.000001, float("nan"), float("inf"), 1e308, True, False, "10", "COMPLETED", None, [10], {"code": 10}],
)
def test_v1_status_outside_0_to_22(status):
    """Outside the table: phase null, not completed, a schema error at $.status; strict refuses it."""
    doc = dict(V1_EXAMPLE, status=status)
    item = build_item(doc, "v1", validate="warn")
    assert item["phase"] is None and item["completed"] is False and item["terminal"] is False
    assert "$.status" in [error["path"] for error in item["schema_errors"]]
    with pytest.raises(SchemaValidationError):
        build_item(doc, "v1", validate="strict")


# -- property tests over generated valid documents ----------------------------------------------

TEXT = st.text(max_size=40)
MS = st.integers(min_value=0, max_value=4102444800000)


@st.composite
def valid_v2(draw):
    """A schema-valid v2 document: an example with its phase and readable leaves redrawn, optional keys dropped."""
    doc = copy.deepcopy(draw(st.sampled_from(V2_EXAMPLES)))
    status, metadata = doc["status"], doc["metadata"]
    status["phase"] = draw(st.sampled_from(PHASES))
    metadata["id"] = draw(TEXT)
    for key, strategy in (("name", TEXT), ("create_time", MS)):
        if key in metadata:
            value = draw(st.none() | strategy)
            if value is None:
                del metadata[key]
            else:
                metadata[key] = value
    for key, strategy in (("secondary_phase", TEXT), ("duration", MS), ("start_time", MS)):
        if key in status:
            value = draw(st.none() | strategy)
            if value is None:
                del status[key]
            else:
                status[key] = value
    if draw(st.booleans()):
        status["task_statuses"] = draw(
            st.lists(
                st.fixed_dictionaries({}, optional={"task": TEXT, "exit_code": st.integers(min_value=-(2**31), max_value=2**31), "message": TEXT}), max_size=3
            )
        )
    return doc


@st.composite
def valid_v1(draw):
    """A schema-valid v1 document: any status 0-22 and redrawn readable leaves."""
    doc = copy.deepcopy(V1_EXAMPLE)
    doc["status"] = draw(st.integers(min_value=0, max_value=22))
    doc["job_id"] = draw(st.integers(min_value=0, max_value=2**53))
    doc["version_id"] = draw(st.integers(min_value=0, max_value=2**53))
    doc["job_name"] = draw(TEXT)
    doc["duration"] = draw(MS)
    return doc


@settings(max_examples=300, deadline=None)
@given(doc=valid_v2(), fail_on=st.lists(st.sampled_from(PHASES), max_size=3))
def test_valid_v2_document_always_yields_its_phase(doc, fail_on):
    """A document the schema accepts is never refused and always yields its phase, under every mode."""
    assert validate_document(doc, V2_TRAINING_JOB_SCHEMA) == []
    for validate in ("strict", "warn", "off"):
        item = build_item(doc, "v2", validate=validate, fail_on=fail_on)
        assert item["phase"] == doc["status"]["phase"] and item["phase"] in PHASES
        assert item["schema_errors"] == []
        assert item["failed"] is (item["phase"] in fail_on)


@settings(max_examples=300, deadline=None)
@given(doc=valid_v1())
def test_valid_v1_document_always_yields_a_phase(doc):
    """Every v1 status 0-22 maps to a phase of the phase set; only 10 means Completed."""
    assert validate_document(doc, V1_JOB_VERSION_SCHEMA) == []
    for validate in ("strict", "warn", "off"):
        item = build_item(doc, "v1", validate=validate)
        assert item["phase"] == V1_STATUS_PHASES[doc["status"]] and item["phase"] in PHASES
        assert item["completed"] is (doc["status"] == 10)
        assert item["schema_errors"] == []


# -- hostile ids --------------------------------------------------------------------------------

HOSTILE_IDS = [
    "../other",
    "..",
    ".",
    "a/b",
    "a/../../v3/projects",
    "a?x=1",
    "a#frag",
    "100%",
    "%2e%2e",
    "%2F",
    "a b",
    "a\r\nX-Injected: 1",
    "\u8bad\u7ec3-\u30b8\u30e7\u30d6-\U0001f680",
    "x" * 5000,
    "..%2f..%2fv3",
    "a;b",
    "@evil.example.com",
    "\\..\\x",
]


def make_client():
    clock = FakeClock()
    session = FakeSession(FakeResponse(404, {"error_code": "ModelArts.2775", "error_msg": "not found"}))
    params = {"region": "cn-north-4", "project_id": PROJECT, "access_key": "AK", "secret_key": "SK", "backoff_retries": 0}
    return ModelArtsClient(*client_parts(params), session=session, clock=clock, sleep=clock.sleep, utcnow=clock.utcnow), session


def assert_one_segment(url, job_id):
    parts = urlsplit(url)
    assert parts.netloc == "modelarts.cn-north-4.myhuaweicloud.com" and not parts.query and not parts.fragment
    segments = parts.path.split("/")
    assert segments[:4] == ["", "v2", PROJECT, "training-jobs"] and len(segments) == 5, segments
    assert unquote(segments[4]) == job_id
    assert segments[4] not in ("", ".", "..") and "/" not in segments[4] and "?" not in segments[4] and "#" not in segments[4]


@pytest.mark.parametrize("job_id", HOSTILE_IDS, ids=lambda v: repr(v)[:20])
def test_hostile_ids_stay_one_path_segment(job_id):
    """The request goes to exactly /v2/{project}/training-jobs/<escaped id>: no other URL, no query, no header injection."""
    client, session = make_client()
    with pytest.raises(Exception) as info:
        client.get_training_job(job_id)
    if not job_id.strip("."):
        # "." and "..": percent-encoding does not protect them (decoded back into a parent path), so no request.
        assert type(info.value).__name__ == "ConnectionConfigError" and not session.calls
        return
    assert type(info.value).__name__ == "ModelArtsError" and info.value.not_found
    assert_one_segment(session.calls[0]["url"], job_id)
    assert all("\n" not in value and "\r" not in value for value in session.calls[0]["headers"].values())


@settings(max_examples=300, deadline=None)
@given(job_id=st.text(min_size=1, max_size=60))
def test_any_id_stays_one_path_segment(job_id):
    """Property: for any text, the escaped id decodes back to itself and never leaves its path segment."""
    client, session = make_client()
    try:
        client.get_training_job(job_id)
    except Exception as error:  # pylint: disable=broad-except
        assert type(error).__name__ == ("ConnectionConfigError" if not job_id.strip(".") else "ModelArtsError")
    if not job_id.strip("."):
        assert not session.calls
        return
    assert_one_segment(session.calls[0]["url"], job_id)
    assert unquote(escape(job_id)) == job_id
