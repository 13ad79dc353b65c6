# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Null in optional fields (issue 13): a service built on the SDK's models sends null for what it has not set.

Over the documented examples and a document with every SDK field set: any subset of the optional
fields set to null validates under ``strict`` (by the pre-check and by jsonschema alike), and the item
is the one built from the same document with those fields left out: null means "not set".
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.modelarts.training.plugins.module_utils.job import validation
from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import build_item
from ansible_collections.modelarts.training.plugins.module_utils.job.schemas import V1_JOB_VERSION_SCHEMA, V2_TRAINING_JOB_SCHEMA
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fixture_files import load
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.sdk_documents import (
    V1_REQUIRED,
    V2_REQUIRED,
    full_document,
    optional_field_paths,
    set_null,
)

SOURCES = ["v2_example_rst.json", "v2_example_latest.json", "v2_example_older.json", "v1_example.json", "sdk_full_document"]
SDK_DOCUMENT = full_document()


def source_document(source):
    """``(api_version, document, schema, required paths)`` of a source, freshly copied."""
    if source == "sdk_full_document":
        return "v2", copy.deepcopy(SDK_DOCUMENT), V2_TRAINING_JOB_SCHEMA, V2_REQUIRED
    if source.startswith("v1"):
        return "v1", load(source), V1_JOB_VERSION_SCHEMA, V1_REQUIRED
    return "v2", load(source), V2_TRAINING_JOB_SCHEMA, V2_REQUIRED


def without(doc, paths):
    """``doc`` with the fields of ``paths`` left out (a path under one already left out is skipped)."""
    for path in sorted(paths, key=len):
        target = doc
        for part in path[:-1]:
            target = target.get(part) if isinstance(target, dict) else target[part]
            if target is None:
                break
        if isinstance(target, dict):
            target.pop(path[-1], None)
    return doc


def item_without_details(item):
    return {key: value for key, value in item.items() if key != "details"}


def check_nulls(source, chosen):
    api_version, doc, schema, _required = source_document(source)
    nulled = set_null(copy.deepcopy(doc), chosen)
    # Valid for the pre-check that every poll uses, and for jsonschema itself.
    assert validation.validate_document(nulled, schema) == []
    assert validation._all_errors(validation.get_validator(schema), nulled) == []
    item = build_item(nulled, api_version, validate="strict")
    assert item["schema_errors"] == [] and item["phase"] is not None and item["id"] is not None
    assert item["details"] is nulled or api_version == "v1"
    # Null means the same as not set.
    assert item_without_details(item) == item_without_details(build_item(without(copy.deepcopy(doc), chosen), api_version))
    return item


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), source=st.sampled_from(SOURCES), density=st.sampled_from([0.01, 0.05, 0.2, 0.5, 0.9, 1.0]))
def test_any_subset_of_optional_fields_null_is_valid_under_strict(data, source, density):
    _api, doc, _schema, required = source_document(source)
    candidates = optional_field_paths(doc, required)
    pick = data.draw(st.randoms(use_true_random=False))
    chosen = [path for path in candidates if density == 1.0 or pick.random() < density]
    check_nulls(source, chosen)


@pytest.mark.parametrize("source", SOURCES)
def test_every_optional_field_null_at_once(source):
    _api, doc, _schema, required = source_document(source)
    item = check_nulls(source, optional_field_paths(doc, required))
    assert item["name"] is None and item["create_time"] is None and item["duration_seconds"] is None


@pytest.mark.parametrize("source", SOURCES)
def test_each_optional_field_null_alone(source):
    _api, doc, _schema, required = source_document(source)
    for path in optional_field_paths(doc, required):
        check_nulls(source, [path])


def test_the_sdk_document_covers_the_whole_field_tree():
    paths = optional_field_paths(SDK_DOCUMENT, V2_REQUIRED)
    assert len(paths) > 450
    for path in [
        ("metadata", "description"),
        ("metadata", "annotations"),
        ("status", "task_statuses"),
        ("endpoints",),
        ("endpoints", "jupyter_lab", "token"),
        ("status", "task_statuses", 0, "exit_code"),
        ("ftjob_config",),
    ]:
        assert path in paths


@pytest.mark.parametrize(
    "path, item_field",
    [
        (("metadata", "name"), "name"),
        (("metadata", "create_time"), "create_time"),
        (("status", "start_time"), "start_time"),
        (("status", "duration"), "duration_seconds"),
        (("status", "secondary_phase"), "secondary_phase"),
    ],
)
def test_a_null_field_of_the_item_is_a_null_item_field(path, item_field):
    assert build_item(SDK_DOCUMENT, "v2")[item_field] is not None
    assert check_nulls("sdk_full_document", [path])[item_field] is None


def test_null_task_lists_give_the_next_failure_reason():
    assert build_item(SDK_DOCUMENT, "v2")["failure_reason"].startswith("task task-value exited with code")
    item = check_nulls("sdk_full_document", [("status", "task_statuses")])
    assert item["failure_reason"] == "run ended: end_reason-value (task end_related_task-value)"
    item = check_nulls("sdk_full_document", [("status", "task_statuses"), ("status", "running_records")])
    assert item["failure_reason"] == "secondary phase Failed"
