# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The v2/v1 JSON schemas: documented examples, SDK coverage, generated docs copies."""

from __future__ import annotations

import ast
import copy
import importlib.util
import json
import os

import pytest
from jsonschema import Draft202012Validator

from ansible_collections.modelarts.training.plugins.module_utils.job import jobs, schema_data
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import PHASES, V1_STATUS_PHASES
from ansible_collections.modelarts.training.plugins.module_utils.job.schemas import (
    MAX_DURATION_MS,
    MAX_EPOCH_MS,
    V1_JOB_VERSION_SCHEMA,
    V2_TRAINING_JOB_SCHEMA,
    with_nullable_optionals,
)
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import validate_document
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fixture_files import load

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))

V2_EXAMPLES = ("v2_example_rst.json", "v2_example_latest.json", "v2_example_older.json")


def non_null_branch(node):
    """The typed branch of a nullable reference (``anyOf: [{$ref}, {type: null}]``), else ``node``."""
    branches = [branch for branch in node.get("anyOf", []) if branch != {"type": "null"}]
    return branches[0] if len(branches) == 1 and len(node["anyOf"]) == 2 else node


def resolve(node, root):
    """Follow local $refs (``#/$defs/x``), through nullable wrappers, until a concrete subschema."""
    node = non_null_branch(node)
    while "$ref" in node:
        node = non_null_branch(root["$defs"][node["$ref"].rsplit("/", 1)[-1]])
    return node


def types_of(node):
    kind = node.get("type")
    return set(kind) if isinstance(kind, list) else {kind}


@pytest.mark.parametrize("schema", [V2_TRAINING_JOB_SCHEMA, V1_JOB_VERSION_SCHEMA], ids=["v2", "v1"])
def test_schema_is_valid_draft_2020_12(schema):
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("https://modelarts.training/schemas/")
    assert schema["title"] and schema["description"]


@pytest.mark.parametrize("name", V2_EXAMPLES)
def test_every_documented_v2_example_validates(name):
    assert validate_document(load(name), V2_TRAINING_JOB_SCHEMA) == []


def test_documented_v1_example_validates_with_its_quirks():
    doc = load("v1_example.json")
    # The quirks the schema must tolerate are really in the fixture.
    assert isinstance(doc["parameter"][0]["value"], float)
    assert isinstance(doc["core"], int) and isinstance(doc["cpu"], int)
    assert isinstance(doc["model_metric_list"], str)
    assert validate_document(doc, V1_JOB_VERSION_SCHEMA) == []


def test_v2_examples_differ_in_custom_metrics_shape_and_both_validate():
    rst = load("v2_example_rst.json")["spec"]["custom_metrics"]
    latest = load("v2_example_latest.json")["spec"]["custom_metrics"]
    assert set(rst[0]) == {"metrics_url", "metrics_port"}
    assert {key for entry in latest for key in entry} == {"exec", "http_get"}


def test_custom_metrics_fields_are_typed_in_both_shapes():
    doc = load("v2_example_rst.json")
    doc["spec"]["custom_metrics"] = [{"metrics_url": 1, "metrics_port": "x"}, {"http_get": {"port": "80"}}]
    paths = [error["path"] for error in validate_document(doc, V2_TRAINING_JOB_SCHEMA)]
    assert paths == [
        "$.spec.custom_metrics[0].metrics_port",
        "$.spec.custom_metrics[0].metrics_url",
        "$.spec.custom_metrics[1].http_get.port",
    ]


# Fields only some editions of the v2 page document: the schema is their union.
EDITION_FIELDS = [
    ("rst", ("spec", "custom_metrics", "[]", "metrics_url")),
    ("rst", ("spec", "custom_metrics", "[]", "metrics_port")),
    ("rst+latest", ("status", "running_records", "[]", "end_recover_before_downgrade")),
    ("rst+latest", ("endpoints", "mindstudio_insight", "token")),
    ("rst+latest", ("algorithm", "summary", "data_sources", "[]", "job", "job_id")),
    ("rst+latest", ("spec", "schedule_policy", "required_affinity", "affinity_group_size")),
    ("latest", ("spec", "custom_metrics", "[]", "exec", "command")),
    ("latest", ("spec", "custom_metrics", "[]", "http_get", "port")),
    ("latest", ("spec", "resource", "main_container_allocated_resources", "accelerator_type")),
    ("latest", ("algorithm", "inputs", "[]", "access_method")),
    ("all", ("status", "task_statuses", "[]", "exit_code")),
    ("all", ("tasks", "[]", "task_resource", "flavor_info", "disk", "size")),
    ("all", ("spec", "resource", "flavor_detail", "flavor_info", "npu", "unit_num")),
]


def walk(root, parts):
    node = resolve(root, root)
    for part in parts:
        node = resolve(node["items"] if part == "[]" else node["properties"][part], root)
    return node


@pytest.mark.parametrize("edition, parts", EDITION_FIELDS, ids=[".".join(p) for _e, p in EDITION_FIELDS])
def test_schema_holds_fields_of_every_doc_edition(edition, parts):
    assert walk(V2_TRAINING_JOB_SCHEMA, parts)["type"]


SDK_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def expected_json_type(sdk_type):
    if sdk_type in SDK_TYPES:
        return SDK_TYPES[sdk_type]
    if sdk_type.startswith("list["):
        return "array"
    return "object"  # dict(str, str) and every model class


def compatible(expected, node):
    found = types_of(node)
    return expected in found or (expected == "integer" and "number" in found)


def sdk_mismatches(sdk_node, schema_node, path, root, problems):
    """Collect every SDK field missing from the schema or typed incompatibly."""
    schema_node = resolve(schema_node, root)
    expected = expected_json_type(sdk_node["type"])
    if not compatible(expected, schema_node):
        problems.append("%s: SDK %s, schema %s" % (path, sdk_node["type"], schema_node.get("type")))
        return
    for key, child in sdk_node.get("fields", {}).items():
        wire = child["json_key"]
        if wire not in schema_node.get("properties", {}):
            problems.append("%s.%s: missing from the schema" % (path, wire))
            continue
        sdk_mismatches(child, schema_node["properties"][wire], "%s.%s" % (path, wire), root, problems)
    if "items" in sdk_node:
        sdk_mismatches(sdk_node["items"], schema_node.get("items", {}), path + "[]", root, problems)
    if "values" in sdk_node:
        sdk_mismatches(sdk_node["values"], schema_node.get("additionalProperties", {}), path + "{}", root, problems)


def test_v2_schema_covers_every_sdk_field_with_a_compatible_type():
    sdk = load("sdk_v2_response_fields.json")
    root = {"type": "ShowTrainingJobDetailsResponse", "fields": sdk["fields"]}
    problems = []
    sdk_mismatches(root, V2_TRAINING_JOB_SCHEMA, "$", V2_TRAINING_JOB_SCHEMA, problems)
    assert problems == []


def test_sdk_walk_detects_a_missing_and_a_mistyped_field():
    # Guards the coverage test itself against passing vacuously.
    schema = copy.deepcopy(V2_TRAINING_JOB_SCHEMA)
    del schema["$defs"]["task_status"]["properties"]["message"]
    schema["$defs"]["status"]["properties"]["duration"] = {"type": "string"}
    sdk = load("sdk_v2_response_fields.json")
    problems = []
    sdk_mismatches({"type": "Resp", "fields": sdk["fields"]}, schema, "$", schema, problems)
    assert problems == ["$.status.duration: SDK int, schema string", "$.status.task_statuses[].message: missing from the schema"]


def test_phase_enum_is_the_phase_set():
    assert tuple(walk(V2_TRAINING_JOB_SCHEMA, ("status", "phase"))["enum"]) == PHASES


def test_v1_status_enum_is_the_status_table():
    assert V1_JOB_VERSION_SCHEMA["properties"]["status"]["enum"] == sorted(V1_STATUS_PHASES)


@pytest.mark.parametrize("schema, name", [(V2_TRAINING_JOB_SCHEMA, "v2_example_rst.json"), (V1_JOB_VERSION_SCHEMA, "v1_example.json")], ids=["v2", "v1"])
def test_unknown_fields_are_accepted_everywhere(schema, name):
    doc = load(name)
    doc["brand_new_field"] = {"anything": [1, "two", None]}
    if "status" in doc and isinstance(doc["status"], dict):
        doc["status"]["new_status_field"] = None
        doc["metadata"]["annotations"] = {"k": "v"}
        doc["spec"]["resource"]["flavor_detail"]["flavor_info"]["tpu"] = {"count": 8}
    else:
        doc["volumes"][0]["nfs"]["new_option"] = True
    assert validate_document(doc, schema) == []


def accepts_null(node, root):
    """Whether the schema node accepts null by its own keywords (a nullable type or a null anyOf branch)."""
    if {"type": "null"} in node.get("anyOf", []):
        return True
    return "null" in types_of(resolve(node, root)) if "type" in resolve(node, root) else False


def members(node, root, path="$"):
    """``(path, schema node, required)`` for every object member the schema describes, arrays included."""
    node = resolve(node, root)
    required = node.get("required", [])
    for name, sub in node.get("properties", {}).items():
        yield "%s.%s" % (path, name), sub, name in required
        yield from members(sub, root, "%s.%s" % (path, name))
    if isinstance(node.get("additionalProperties"), dict):
        yield path + "{}", node["additionalProperties"], False
        yield from members(node["additionalProperties"], root, path + "{}")
    if isinstance(node.get("items"), dict):
        yield from members(node["items"], root, path + "[]")


@pytest.mark.parametrize("schema", [V2_TRAINING_JOB_SCHEMA, V1_JOB_VERSION_SCHEMA], ids=["v2", "v1"])
def test_every_optional_member_accepts_null_and_no_required_one_does(schema):
    found = list(members(schema, schema))
    assert len(found) > (300 if schema is V2_TRAINING_JOB_SCHEMA else 60)
    assert [path for path, node, required in found if not required and not accepts_null(node, schema)] == []
    assert sorted(path for path, node, required in found if required) == (
        ["$.metadata", "$.metadata.id", "$.status", "$.status.phase"] if schema is V2_TRAINING_JOB_SCHEMA else ["$.job_id", "$.status", "$.version_id"]
    )
    assert [path for path, node, required in found if required and accepts_null(node, schema)] == []


@pytest.mark.parametrize("schema", [V2_TRAINING_JOB_SCHEMA, V1_JOB_VERSION_SCHEMA], ids=["v2", "v1"])
def test_array_elements_do_not_accept_null(schema):
    arrays = [resolve(node, schema) for _path, node, _required in members(schema, schema) if "items" in resolve(node, schema)]
    assert len(arrays) >= (20 if schema is V2_TRAINING_JOB_SCHEMA else 5)
    assert [items for items in (array["items"] for array in arrays) if accepts_null(items, schema)] == []


def test_nullable_types_are_written_out_in_the_published_schema():
    metadata = V2_TRAINING_JOB_SCHEMA["$defs"]["metadata"]["properties"]
    assert metadata["description"]["type"] == ["string", "null"]
    assert metadata["annotations"] == {"anyOf": [{"$ref": "#/$defs/string_map"}, {"type": "null"}]}
    assert V2_TRAINING_JOB_SCHEMA["$defs"]["string_map"]["additionalProperties"] == {"type": ["string", "null"]}
    assert V1_JOB_VERSION_SCHEMA["properties"]["pre_version_id"]["type"] == ["integer", "null"]
    assert V2_TRAINING_JOB_SCHEMA["properties"]["metadata"] == {"$ref": "#/$defs/metadata"}


def test_with_nullable_optionals_keeps_enums_consistent_and_leaves_its_input_alone():
    source = {"type": "object", "required": ["a"], "properties": {"a": {"enum": ["x"], "type": "string"}, "b": {"enum": ["x"], "type": "string"}}}
    original = copy.deepcopy(source)
    schema = with_nullable_optionals(source)
    assert source == original
    assert schema["properties"]["a"] == {"enum": ["x"], "type": "string"}
    assert schema["properties"]["b"] == {"enum": ["x", None], "type": ["string", "null"]}
    assert validate_document({"a": "x", "b": None}, schema) == []
    assert [e["path"] for e in validate_document({"a": None, "b": "y"}, schema)] == ["$.a", "$.b"]
    assert with_nullable_optionals(schema) == schema


def test_required_fields_are_only_those_the_item_needs():
    assert V2_TRAINING_JOB_SCHEMA["required"] == ["metadata", "status"]
    assert V2_TRAINING_JOB_SCHEMA["$defs"]["metadata"]["required"] == ["id"]
    assert V2_TRAINING_JOB_SCHEMA["$defs"]["status"]["required"] == ["phase"]
    assert V1_JOB_VERSION_SCHEMA["required"] == ["job_id", "version_id", "status"]


def _generator():
    spec = importlib.util.spec_from_file_location("generate_schemas", os.path.join(ROOT, "hacking", "generate_schemas.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_schema_json_equals_generator_output():
    files = _generator().expected_files()
    assert sorted(files) == [
        "docs/schemas/v1_training_job_version.schema.json",
        "docs/schemas/v2_training_job.schema.json",
        "plugins/module_utils/job/schema_data.py",
    ]
    for relative, content in files.items():
        with open(os.path.join(ROOT, relative), encoding="utf-8") as handle:
            assert handle.read() == content, "%s is stale: run hacking/generate_schemas.py" % relative


def test_generated_json_is_the_python_schema():
    files = _generator().expected_files()
    assert json.loads(files["docs/schemas/v2_training_job.schema.json"]) == V2_TRAINING_JOB_SCHEMA
    assert json.loads(files["docs/schemas/v1_training_job_version.schema.json"]) == V1_JOB_VERSION_SCHEMA
    assert all(content.endswith("}\n") and '\n  "$defs"' in content for path, content in files.items() if path.endswith(".json"))


def test_schema_data_is_the_python_schema():
    # What the module validates with (schema_data.py, generated) is what schemas.py says, in the same order.
    assert schema_data.V2_TRAINING_JOB_SCHEMA == V2_TRAINING_JOB_SCHEMA
    assert schema_data.V1_JOB_VERSION_SCHEMA == V1_JOB_VERSION_SCHEMA
    assert json.dumps(schema_data.V2_TRAINING_JOB_SCHEMA) == json.dumps(V2_TRAINING_JOB_SCHEMA)
    assert (schema_data.MAX_EPOCH_MS, schema_data.MAX_DURATION_MS) == (MAX_EPOCH_MS, MAX_DURATION_MS)
    assert jobs.V2_TRAINING_JOB_SCHEMA is schema_data.V2_TRAINING_JOB_SCHEMA


@pytest.mark.parametrize("name", ["schemas.py", "schema_data.py", "validation.py", "jobs.py", "phases.py"])
def test_module_utils_parse_as_python_3_8(name):
    with open(os.path.join(ROOT, "plugins", "module_utils", "job", name), encoding="utf-8") as handle:
        ast.parse(handle.read(), feature_version=(3, 8))
