# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""validate_document: every error, by JSON path, with bounded messages."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.modelarts.training.plugins.module_utils.job import validation
from ansible_collections.modelarts.training.plugins.module_utils.job.schemas import (
    V1_JOB_VERSION_SCHEMA,
    V2_TRAINING_JOB_SCHEMA,
)
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import (
    MissingJsonSchemaError,
    SchemaValidationError,
    get_validator,
    json_path,
    validate_document,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_value as excerpt
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fixture_files import load


def paths(errors):
    return [error["path"] for error in errors]


def test_guarded_import_flags():
    assert validation.HAS_JSONSCHEMA is True
    assert validation.JSONSCHEMA_IMPORT_ERROR is None


def test_guarded_import_without_jsonschema(monkeypatch):
    # None in sys.modules makes "import jsonschema" raise ImportError.
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    spec = importlib.util.spec_from_file_location("validation_without_jsonschema", validation.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.HAS_JSONSCHEMA is False
    assert "No module named 'jsonschema'" in module.JSONSCHEMA_IMPORT_ERROR
    with pytest.raises(module.MissingJsonSchemaError, match="validate=off"):
        module.validate_document({}, V2_TRAINING_JOB_SCHEMA)


def test_broken_jsonschema_is_found_at_first_use(monkeypatch, v2):
    """Present but failing to import: reported, with the traceback, when errors must be listed."""
    spec = importlib.util.spec_from_file_location("validation_broken_jsonschema", validation.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.HAS_JSONSCHEMA is True
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(module.MissingJsonSchemaError, match="validate=off"):
        module.validate_document({"kind": 5}, V2_TRAINING_JOB_SCHEMA)
    assert module.HAS_JSONSCHEMA is False and "Traceback" in module.JSONSCHEMA_IMPORT_ERROR


def test_valid_documents_never_import_jsonschema(v2, v1):
    """Importing jsonschema costs tens of milliseconds per module run; the pre-check alone accepts valid documents."""
    spec = importlib.util.spec_from_file_location("validation_lazy", validation.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.validate_document(v2, V2_TRAINING_JOB_SCHEMA) == []
    assert module.validate_document(v1, V1_JOB_VERSION_SCHEMA) == []
    assert module.Draft202012Validator is None
    assert module.validate_document({"kind": 5}, V2_TRAINING_JOB_SCHEMA) != []
    assert module.Draft202012Validator is not None


def test_missing_library_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(validation, "HAS_JSONSCHEMA", False)
    with pytest.raises(MissingJsonSchemaError):
        validate_document({}, V2_TRAINING_JOB_SCHEMA)


def test_valid_document_has_no_errors(v2, v1):
    assert validate_document(v2, V2_TRAINING_JOB_SCHEMA) == []
    assert validate_document(v1, V1_JOB_VERSION_SCHEMA) == []


@pytest.mark.parametrize(
    "mutate, path",
    [
        (lambda d: d["status"].__setitem__("phase", 5), "$.status.phase"),
        (lambda d: d["status"].__setitem__("phase", "Done"), "$.status.phase"),
        (lambda d: d["status"].__setitem__("phase", None), "$.status.phase"),
        (lambda d: d["metadata"].__setitem__("create_time", "1636447346315"), "$.metadata.create_time"),
        (lambda d: d["metadata"].__setitem__("create_time", -1), "$.metadata.create_time"),
        (lambda d: d["status"].__setitem__("duration", 1.5), "$.status.duration"),
        (lambda d: d["status"].__setitem__("task_statuses", {"task": "worker-0"}), "$.status.task_statuses"),
        (lambda d: d["status"].__setitem__("task_statuses", [{}, {"exit_code": True}]), "$.status.task_statuses[1].exit_code"),
        (lambda d: d["status"]["running_records"][1].__setitem__("end_reason", ["x"]), "$.status.running_records[1].end_reason"),
        (
            lambda d: d["spec"]["resource"]["flavor_detail"]["flavor_info"]["cpu"].__setitem__("core_num", "8"),
            "$.spec.resource.flavor_detail.flavor_info.cpu.core_num",
        ),
        (lambda d: d["metadata"].__setitem__("annotations", {"fault-tolerance/job-retry-num": 3}), "$.metadata.annotations['fault-tolerance/job-retry-num']"),
        (lambda d: d.__setitem__("status", "Running"), "$.status"),
        (lambda d: d["metadata"].pop("id"), "$.metadata"),
    ],
)
def test_wrong_types_are_reported_at_their_json_path(v2, mutate, path):
    mutate(v2)
    assert paths(validate_document(v2, V2_TRAINING_JOB_SCHEMA)) == [path]


# -- null: accepted for every optional field, an error for a required one -------------------

V2_NULLABLE = [
    ("metadata", "description"),
    ("metadata", "annotations"),
    ("metadata", "name"),
    ("metadata", "create_time"),
    ("status", "task_statuses"),
    ("status", "running_records"),
    ("status", "secondary_phase"),
    ("status", "start_time"),
    ("status", "duration"),
    ("status", "node_count_metrics"),
    ("endpoints",),
    ("algorithm",),
    ("spec",),
    ("kind",),
    ("spec", "resource", "flavor_detail"),
    ("spec", "custom_metrics", 0, "metrics_port"),
    ("status", "running_records", 0, "end_reason"),
]


def _set(doc, path, value):
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize("path", V2_NULLABLE, ids=[".".join(map(str, p)) for p in V2_NULLABLE])
def test_null_is_accepted_for_optional_v2_fields(v2, path):
    v2["endpoints"] = {"tensorboard": {"url": "u", "token": "t"}}
    assert validate_document(_set(v2, path, None), V2_TRAINING_JOB_SCHEMA) == []


@pytest.mark.parametrize(
    "field", ["pre_version_id", "job_name", "job_desc", "model_metric_list", "create_time", "duration", "parameter", "core", "system_metric_list", "volumes"]
)
def test_null_is_accepted_for_optional_v1_fields(v1, field):
    v1[field] = None
    assert validate_document(v1, V1_JOB_VERSION_SCHEMA) == []


def test_null_is_accepted_inside_maps_and_nested_objects(v2):
    v2["metadata"]["annotations"] = {"job_template": None}
    v2["endpoints"] = {"jupyter_lab": {"url": None, "token": None}, "ssh": None}
    v2["status"]["task_statuses"] = [{"task": "worker-0", "exit_code": None, "message": None}]
    assert validate_document(v2, V2_TRAINING_JOB_SCHEMA) == []


@pytest.mark.parametrize(
    "path, message",
    [
        (("metadata", "id"), "null is not of type 'string'"),
        (("metadata",), "null is not of type 'object'"),
        (("status",), "null is not of type 'object'"),
        (("status", "phase"), "null is not of type 'string'"),
    ],
)
def test_null_is_an_error_for_required_v2_fields(v2, path, message):
    assert validate_document(_set(v2, path, None), V2_TRAINING_JOB_SCHEMA) == [{"path": json_path(path), "message": message}]


@pytest.mark.parametrize("field", ["job_id", "version_id", "status"])
def test_null_is_an_error_for_required_v1_fields(v1, field):
    v1[field] = None
    assert paths(validate_document(v1, V1_JOB_VERSION_SCHEMA)) == ["$." + field]


def test_array_elements_are_not_nullable(v2):
    v2["status"]["task_statuses"] = [None]
    v2["status"]["tasks"] = ["worker-0", None]
    assert paths(validate_document(v2, V2_TRAINING_JOB_SCHEMA)) == ["$.status.task_statuses[0]", "$.status.tasks[1]"]


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("metadata", "annotations"), 5, "5 is not of type 'object'"),
        (("endpoints",), "none", "'none' is not of type 'object'"),
        (("metadata", "create_time"), -1, "-1 is less than the minimum of 0"),
        (("metadata", "create_time"), "1636447346315", "'1636447346315' is not of type 'integer'"),
        (("metadata", "description"), 5, "5 is not of type 'string'"),
        (("status", "duration"), "8000", "'8000' is not of type 'integer'"),
    ],
)
def test_a_wrong_value_in_a_nullable_field_is_one_error_at_its_path(v2, path, value, message):
    # The failed null branch of a nullable reference would only repeat the error; it is left out.
    assert validate_document(_set(v2, path, value), V2_TRAINING_JOB_SCHEMA) == [{"path": json_path(path), "message": message}]


def test_nested_error_under_a_nullable_reference_names_the_leaf(v2):
    v2["endpoints"] = {"tensorboard": {"url": "u", "token": 7}}
    assert validate_document(v2, V2_TRAINING_JOB_SCHEMA) == [{"path": "$.endpoints.tensorboard.token", "message": "7 is not of type 'string'"}]


def test_documents_with_nulls_never_import_jsonschema(v2, v1):
    spec = importlib.util.spec_from_file_location("validation_lazy_nulls", validation.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    v2["metadata"].update(description=None, annotations=None)
    v2["status"]["task_statuses"] = None
    v2["endpoints"] = None
    v1["pre_version_id"] = None
    assert module.validate_document(v2, V2_TRAINING_JOB_SCHEMA) == []
    assert module.validate_document(v1, V1_JOB_VERSION_SCHEMA) == []
    assert module.Draft202012Validator is None


# -- the pre-check applies every keyword of a node ---------------------------------------------

PRECHECK_SCHEMAS = [
    # Draft 2020-12 applies the keywords beside $ref (earlier drafts ignored them).
    {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "enum": ["a", "b"]},
    {"$defs": {"n": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/n", "minimum": 3}}},
    {"anyOf": [{"type": "string"}, {"type": "integer", "maximum": 5}]},
    {"properties": {"x": {"anyOf": [{"$ref": "#/$defs/o"}, {"type": "null"}]}}, "$defs": {"o": {"type": "object", "required": ["k"]}}},
]
PRECHECK_VALUES = ["a", "c", 2, 7, None, {}, {"x": 1}, {"x": 4}, {"x": None}, {"x": {}}, {"x": {"k": 1}}, {"x": "a"}, [], 5.0]


@pytest.mark.parametrize("schema", PRECHECK_SCHEMAS)
def test_precheck_decides_like_jsonschema_for_ref_siblings_and_any_of(schema):
    assert validation._fast_supported(schema, schema)
    validator = get_validator(schema)
    assert [validation._fast_valid(schema, value, schema) for value in PRECHECK_VALUES] == [
        validation._all_errors(validator, value) == [] for value in PRECHECK_VALUES
    ]


def test_precheck_rejects_by_a_keyword_beside_ref():
    schema = PRECHECK_SCHEMAS[0]
    assert validation._fast_valid(schema, "a", schema) is True
    assert validation._fast_valid(schema, "c", schema) is False
    assert validate_document("c", schema) == [{"path": "$", "message": "'c' is not one of ['a', 'b']"}]


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("Done", "is not one of"),
        ("completed", "is not one of"),
        (["Completed"], "is not of type 'string'"),
    ],
)
def test_phase_enum_is_enforced(v2, value, fragment):
    v2["status"]["phase"] = value
    errors = validate_document(v2, V2_TRAINING_JOB_SCHEMA)
    assert any(fragment in error["message"] for error in errors)


@pytest.mark.parametrize("status", [-1, 23, "10", True, 10.5, None])
def test_v1_status_outside_the_table_is_an_error(v1, status):
    v1["status"] = status
    assert paths(validate_document(v1, V1_JOB_VERSION_SCHEMA)) == ["$.status"]


def test_v1_integral_float_is_an_integer(v1):
    # Draft 2020-12: 10.0 is an integer.
    v1["status"] = 10.0
    assert validate_document(v1, V1_JOB_VERSION_SCHEMA) == []


def test_v1_required_fields(v1):
    del v1["job_id"], v1["status"]
    errors = validate_document(v1, V1_JOB_VERSION_SCHEMA)
    assert errors == [{"path": "$", "message": "'job_id' is a required property"}, {"path": "$", "message": "'status' is a required property"}]


def test_all_errors_are_collected_and_sorted_with_numeric_indexes(v2):
    v2["status"]["task_statuses"] = [{"exit_code": "x"} for _index in range(12)]
    v2["metadata"]["name"] = 1
    v2["kind"] = 2
    got = paths(validate_document(v2, V2_TRAINING_JOB_SCHEMA))
    assert got[:2] == ["$.kind", "$.metadata.name"]
    assert got[2:] == ["$.status.task_statuses[%d].exit_code" % i for i in range(12)]


def test_document_that_is_not_an_object():
    assert validate_document([], V2_TRAINING_JOB_SCHEMA) == [{"path": "$", "message": "an array of 0 items is not of type 'object'"}]
    assert paths(validate_document(None, V1_JOB_VERSION_SCHEMA)) == ["$"]


def test_huge_values_are_not_quoted_in_full(v2):
    v2["status"]["phase"] = "x" * 1000000
    v2["metadata"]["id"] = 10**5000
    v2["status"]["tasks"] = [["nested"] * 100000]
    errors = validate_document(v2, V2_TRAINING_JOB_SCHEMA)
    assert paths(errors) == ["$.metadata.id", "$.status.phase", "$.status.tasks[0]"]
    assert all(len(error["message"]) < 200 for error in errors)
    assert "(1000000 characters)" in errors[1]["message"]
    assert "an integer of" in errors[0]["message"]


def test_deeply_nested_value_in_a_typed_field(v2):
    deep = "leaf"
    for _level in range(5000):
        deep = [deep]
    v2["status"]["phase"] = deep
    v2["unknown"] = deep
    errors = validate_document(v2, V2_TRAINING_JOB_SCHEMA)
    assert errors == [{"path": "$.status.phase", "message": "an array of 1 item is not of type 'string'"}]


def test_compiled_validator_is_cached():
    assert get_validator(V2_TRAINING_JOB_SCHEMA) is get_validator(V2_TRAINING_JOB_SCHEMA)
    assert get_validator(V1_JOB_VERSION_SCHEMA) is not get_validator(V2_TRAINING_JOB_SCHEMA)


def test_cache_tells_equal_schemas_apart():
    first = {"type": "string"}
    second = {"type": "integer"}
    assert validate_document(1, first) and not validate_document(1, second)


@pytest.mark.parametrize(
    "parts, expected",
    [
        ([], "$"),
        (["status", "phase"], "$.status.phase"),
        (["status", "task_statuses", 0, "exit_code"], "$.status.task_statuses[0].exit_code"),
        (["annotations", "job-retry/num"], "$.annotations['job-retry/num']"),
        (["a", "it's"], "$.a['it\\'s']"),
        (["a", "1abc"], "$.a['1abc']"),
        (["a", ""], "$.a['']"),
        (["k" * 500], "$['" + "k" * 61 + "...']"),
    ],
)
def test_json_path_rendering(parts, expected):
    assert json_path(parts) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (5, "5"),
        (1.5, "1.5"),
        ("ab", "'ab'"),
        ({}, "an object with 0 keys"),
        ({"a": 1}, "an object with 1 key"),
        ([1, 2], "an array of 2 items"),
    ],
)
def test_excerpt(value, expected):
    assert excerpt(value) == expected


def test_excerpt_is_bounded():
    assert len(excerpt("y" * 10**6)) < 100
    assert excerpt(2**1000) == "an integer of 1001 bits"


def test_schema_validation_error_names_job_and_paths_and_is_bounded():
    errors = [{"path": "$.status.task_statuses[%d].exit_code" % i, "message": "m" * 1000} for i in range(100)]
    error = SchemaValidationError("3faf5c03 (trainjob-1)", errors, api_version="v2", item={"id": "3faf5c03"})
    text = str(error)
    assert text.startswith("training job 3faf5c03 (trainjob-1): the response does not match the v2 schema (100 errors): ")
    assert "$.status.task_statuses[9].exit_code" in text and "[10]" not in text
    assert text.endswith("... and 90 more")
    assert len(text) < 3000
    assert error.errors == errors and error.job_ref == "3faf5c03 (trainjob-1)" and error.item == {"id": "3faf5c03"}


def test_schema_validation_error_single():
    text = str(SchemaValidationError("job 10 version 2", [{"path": "$.status", "message": "23 is not one of [0]"}]))
    assert text == "training job job 10 version 2: the response does not match its schema (1 error): $.status: 23 is not one of [0]"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=30,
)
FIELD_NAMES = st.sampled_from(
    [
        "metadata",
        "status",
        "phase",
        "id",
        "task_statuses",
        "exit_code",
        "create_time",
        "spec",
        "resource",
        "annotations",
        "job_id",
        "version_id",
        "parameter",
        "value",
    ]
)
JSONISH = st.recursive(
    JSON,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(FIELD_NAMES | st.text(max_size=8), children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=JSONISH, schema=st.sampled_from([V2_TRAINING_JOB_SCHEMA, V1_JOB_VERSION_SCHEMA]))
def test_validation_never_raises_and_errors_are_well_formed(doc, schema):
    errors = validate_document(doc, schema)
    for error in errors:
        assert set(error) == {"path", "message"}
        assert error["path"].startswith("$")
        assert len(error["message"]) <= validation.MAX_MESSAGE_CHARS
    assert len(errors) == len({(e["path"], e["message"]) for e in errors})


def _leaf_paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaf_paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _leaf_paths(child, prefix + (index,))


def _replace(doc, path, value):
    if not path:
        return value
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return doc


EDGE_VALUES = st.sampled_from(
    [None, True, False, 0, -1, 1.0, 1.5, 10**20, float("nan"), "", "Completed", "x" * 300, [], [1], {}, {"task": "w"}, 253402300799999, 253402300800000]
)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), name=st.sampled_from(["v2_example_rst.json", "v2_example_latest.json", "v1_example.json"]))
def test_fast_precheck_agrees_with_jsonschema(data, name):
    doc = load(name)
    schema = V1_JOB_VERSION_SCHEMA if name.startswith("v1") else V2_TRAINING_JOB_SCHEMA
    paths_in_doc = list(_leaf_paths(doc))
    for _round in range(data.draw(st.integers(min_value=1, max_value=3))):
        path = data.draw(st.sampled_from(paths_in_doc))
        try:
            doc = _replace(doc, path, data.draw(EDGE_VALUES | JSON))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier replacement removed this path
    full = validation._all_errors(get_validator(schema), doc)
    assert validation._fast_valid(schema, doc, schema) == (full == [])
    assert validate_document(doc, schema) == full


def test_fast_precheck_is_used_only_for_supported_keywords():
    assert validation._fast_supported(V2_TRAINING_JOB_SCHEMA, V2_TRAINING_JOB_SCHEMA)
    assert validation._fast_supported(V1_JOB_VERSION_SCHEMA, V1_JOB_VERSION_SCHEMA)
    pattern = {"type": "string", "pattern": "^a"}
    assert not validation._fast_supported(pattern, pattern)
    assert paths(validate_document("b", pattern)) == ["$"]


EDGE_LIST = [
    None,
    True,
    False,
    0,
    -1,
    1.0,
    1.5,
    10**20,
    float("nan"),
    "",
    "Completed",
    "Pending2",
    [],
    ["x"],
    [1],
    {},
    {"task": 1},
    253402300799999,
    253402300800000,
    9007199254740992,
]


@pytest.mark.parametrize("name", ["v2_example_rst.json", "v2_example_latest.json", "v1_example.json"])
def test_fast_precheck_agrees_with_jsonschema_at_every_path(name):
    # Exhaustive companion of the property test: every path of the example x every edge value.
    schema = V1_JOB_VERSION_SCHEMA if name.startswith("v1") else V2_TRAINING_JOB_SCHEMA
    validator = get_validator(schema)
    disagreements = []
    for path in list(_leaf_paths(load(name))):
        for value in EDGE_LIST:
            doc = _replace(load(name), path, value)
            if validation._fast_valid(schema, doc, schema) != (validation._all_errors(validator, doc) == []):
                disagreements.append((json_path(path), excerpt(value)))
    assert disagreements == []


def test_prepare_compiles_the_pre_check_once_so_that_no_document_compiles_it(monkeypatch):
    """Issue 51: job_info.prepare (in the controller's main process) compiles the schemas' pre-checks; a task forked
    from it validates without compiling anything (each task paid that compilation before: docs/performance.md)."""
    import copy  # pylint: disable=import-outside-toplevel

    from ansible_collections.modelarts.training.plugins.module_utils.job import jobs

    schema = copy.deepcopy(jobs.V2_TRAINING_JOB_SCHEMA)  # one no other test compiled
    compiled = []
    original = validation._FastChecker.compile  # pylint: disable=protected-access

    def counted(checker, node):
        if node is schema:
            compiled.append(node)
        return original(checker, node)

    monkeypatch.setattr(validation._FastChecker, "compile", counted)  # pylint: disable=protected-access
    validation.prepare(schema)
    assert len(compiled) == 1
    document = load("v2_example_latest.json")
    assert validate_document(document, schema) == [] and validate_document(document, schema) == []
    assert len(compiled) == 1, "validation compiles nothing once prepared"
    jobs.prepare()
    for known in (jobs.V2_TRAINING_JOB_SCHEMA, jobs.V1_JOB_VERSION_SCHEMA):
        assert validation._FAST_CACHE[id(known)][0] is known  # pylint: disable=protected-access
