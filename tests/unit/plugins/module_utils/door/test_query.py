# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door (query.py): selection, Query.run over a scripted transport, endpoint tokens, name search, warnings."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.text import MASK
from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_KEYWORD, LEVEL_OPTION
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.items import mask_endpoint_tokens
from ansible_collections.modelarts.training.plugins.module_utils.door.query import (
    MissingLibraryError,
    Query,
    Selection,
    query_jobs,
    select,
    v1_key,
    v1_selection_key,
)
from ansible_collections.modelarts.training.tests.unit.plugins.module_utils.fakes import FakeClock, FakeResponse, FakeSession

PROJECT = "0" * 32
CONNECTION = {"region": "cn-north-4", "project_id": PROJECT, "auth_token": "tok-SECRET-0123456789", "backoff_retries": 0}
TOKENS = {"jupyter_lab": "JL-TOKEN-0123456789abcdef", "tensorboard": "TB-TOKEN-0123456789abcdef", "mindstudio_insight": "MS-TOKEN-0123456789"}


def document(job_id="job-1", phase="Completed", name="train"):
    endpoints = dict((key, {"url": "https://%s.example.invalid" % key, "token": token}) for key, token in TOKENS.items())
    endpoints["future_console"] = {"url": "https://future.example.invalid", "nested": {"token": "FUTURE-TOKEN-0123456789"}}
    return {"metadata": {"id": job_id, "name": name}, "status": {"phase": phase}, "endpoints": endpoints}


def make_query(session, selection, levels=None, **options):
    clock = FakeClock()
    levels = levels or [(LEVEL_OPTION, dict(CONNECTION, **options))]
    return Query(levels, selection, environ={}, clock=clock, sleeper=clock.sleep, session=session, sleep=clock.sleep, utcnow=clock.utcnow)


# -- selection --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values,keys,single,name",
    [
        ({"training_job_id": "a"}, ["a"], True, None),
        ({"job_id": 10, "version_id": 2}, [("v1", 10, 2)], True, None),
        ({"training_job_ids": ["a", "b"], "v1_jobs": [{"job_id": 1, "version_id": 2}]}, ["a", "b", ("v1", 1, 2)], False, None),
        ({"name": "nightly"}, [], False, "nightly"),
    ],
)
def test_select(values, keys, single, name):
    selection = select(values)
    assert (selection.keys, selection.single, selection.name) == (keys, single, name)


@pytest.mark.parametrize(
    "values,fragment",
    [
        ({}, "one of training_job_id"),
        ({"training_job_id": "a", "name": "n"}, "mutually exclusive"),
        ({"training_job_id": " "}, "training_job_id must not be empty"),
        ({"training_job_ids": ["a", ""]}, r"training_job_ids\[1\] must not be empty"),
        ({"job_id": 1}, "job_id needs version_id"),
        ({"v1_jobs": [{"job_id": -1, "version_id": 1}]}, r"v1_jobs\[0\]\.job_id must not be negative"),
        ({"name": " "}, "name must not be empty"),
    ],
)
def test_select_refuses(values, fragment):
    with pytest.raises(ConnectionConfigError, match=fragment):
        select(values)


# -- the v1 rule shared by the module and the lookup (issue 20, item 11) ----------------------------


@pytest.mark.parametrize(
    "values,key",
    [
        ({"job_id": 10, "version_id": 2}, ("v1", 10, 2)),
        ({"job_id": 0, "version_id": 0}, ("v1", 0, 0)),
        # templated values are text
        ({"job_id": "10", "version_id": "2"}, ("v1", 10, 2)),
        ({"job_id": "007", "version_id": 1}, ("v1", 7, 1)),
    ],
)
def test_v1_selection_key_takes_ints_and_decimal_text(values, key):
    assert v1_selection_key(values, "term 0: ") == key


@pytest.mark.parametrize(
    "values,message",
    [
        ({"job_id": 10.9, "version_id": 1}, "term 0: job_id must be an integer, got 10.9"),
        ({"job_id": 10.0, "version_id": 1}, "term 0: job_id must be an integer, got 10.0"),
        ({"job_id": True, "version_id": 1}, "term 0: job_id must be an integer, got true"),
        ({"job_id": 10, "version_id": False}, "term 0: version_id must be an integer, got false"),
        ({"job_id": -3, "version_id": 1}, "term 0: job_id must not be negative, got -3"),
        ({"job_id": "-3", "version_id": 1}, "term 0: job_id must not be negative, got '-3'"),
        ({"job_id": "10.9", "version_id": 1}, "term 0: job_id must be an integer, got '10.9'"),
        ({"job_id": " 10", "version_id": 1}, "term 0: job_id must be an integer, got ' 10'"),
        ({"job_id": "1e3", "version_id": 1}, "term 0: job_id must be an integer, got '1e3'"),
        ({"job_id": "\u00b2", "version_id": 1}, "term 0: job_id must be an integer, got '\u00b2'"),
        ({"job_id": "", "version_id": 1}, "term 0: job_id must be an integer, got ''"),
        ({"job_id": None, "version_id": 1}, "term 0: job_id must be an integer, got null"),
        ({"job_id": [1], "version_id": 1}, "term 0: job_id must be an integer, got an array of 1 item"),
        ({"job_id": float("nan"), "version_id": 1}, "term 0: job_id must be an integer, got nan"),
    ],
)
def test_v1_selection_key_refuses_without_coercing(values, message):
    with pytest.raises(ConnectionConfigError) as info:
        v1_selection_key(values, "term 0: ")
    assert str(info.value) == message


def test_v1_selection_key_refuses_text_past_the_digit_limit():
    with pytest.raises(ConnectionConfigError, match=r"^job_id must be an integer, got '1111.*\(5000 characters\)$"):
        v1_selection_key({"job_id": "1" * 5000, "version_id": 1}, "")


@pytest.mark.parametrize("value", [10.9, True, -3])
def test_select_applies_the_same_rule_as_the_lookup(value):
    with pytest.raises(ConnectionConfigError) as info:
        select({"v1_jobs": [{"job_id": value, "version_id": 1}]})
    with pytest.raises(ConnectionConfigError) as direct:
        v1_selection_key({"job_id": value, "version_id": 1}, "v1_jobs[0].")
    assert str(info.value) == str(direct.value)


# -- endpoint tokens --------------------------------------------------------------------------------


def test_mask_endpoint_tokens_masks_every_token_under_endpoints_only():
    doc = document()
    doc["metadata"]["token"] = "not-under-endpoints"
    found = mask_endpoint_tokens(doc)
    assert sorted(found) == sorted(list(TOKENS.values()) + ["FUTURE-TOKEN-0123456789"])
    assert all(entry.get("token", MASK) == MASK for entry in doc["endpoints"].values())
    assert doc["endpoints"]["future_console"]["nested"]["token"] == MASK
    assert doc["metadata"]["token"] == "not-under-endpoints"
    assert mask_endpoint_tokens({"endpoints": None}) == [] and mask_endpoint_tokens(None) == []


def test_run_masks_tokens_unless_asked_and_validation_saw_the_raw_document():
    session = FakeSession(**{"training-jobs": lambda method, url, kwargs: FakeResponse(200, document())})
    result = make_query(session, select({"training_job_id": "job-1"})).run()
    assert result.ok and result.single
    endpoints = result.items[0]["details"]["endpoints"]
    assert endpoints["jupyter_lab"]["token"] == MASK and endpoints["tensorboard"]["token"] == MASK
    assert result.items[0]["schema_errors"] == []
    opened = make_query(session, select({"training_job_id": "job-1"}), include_endpoint_tokens=True).run()
    assert opened.items[0]["details"]["endpoints"]["jupyter_lab"]["token"] == TOKENS["jupyter_lab"]


def test_the_door_keeps_each_endpoint_token_once_and_builds_its_masking_once_per_change():
    # Issue 28, item 5: reading the same jobs again does not grow what the door keeps, nor rebuild how it masks.
    session = FakeSession(**{"training-jobs": lambda method, url, kwargs: FakeResponse(200, document())})
    query = make_query(session, select({"training_job_id": "job-1"}))
    for _round in range(50):
        assert isinstance(query.fetch(["job-1"])["job-1"], dict)
    assert sorted(query.endpoint_tokens) == sorted(list(TOKENS.values()) + ["FUTURE-TOKEN-0123456789"])
    masking = query.masking_secrets()
    assert query.masking_secrets() is masking and set(query.endpoint_tokens) <= set(masking)
    query.endpoint_tokens["another-token-value"] = None
    assert query.masking_secrets() is not masking and "another-token-value" in query.masking_secrets()


def test_a_token_quoted_by_a_schema_error_is_masked_in_the_message():
    doc = document()
    doc["endpoints"]["jupyter_lab"]["url"] = 12345  # breaks the schema next to the token
    doc["status"]["phase"] = TOKENS["tensorboard"]  # a phase that quotes a token value
    session = FakeSession(**{"training-jobs": FakeResponse(200, doc)})
    result = make_query(session, select({"training_job_id": "job-1"})).run()
    assert not result.ok
    # Messages, errors and the item's own fields never quote a token (details keeps the document, tokens masked).
    shown = [dict((key, value) for key, value in item.items() if key != "details") for item in result.items]
    text = repr(result.msg) + repr(result.job_messages) + repr(shown) + repr(result.failure_fields())
    assert result.items[0]["details"]["endpoints"]["tensorboard"]["token"] == MASK
    for token in TOKENS.values():
        assert token not in text


# -- the name search --------------------------------------------------------------------------------


def test_one_bad_document_in_a_name_search_does_not_hide_the_others():
    good = document("job-good", "Running", "nightly")
    bad = copy.deepcopy(document("job-bad", "Completed", "nightly"))
    bad["status"]["start_time"] = "yesterday"
    session = FakeSession(
        **{
            "training-job-searches": FakeResponse(200, {"total": 2, "items": [good, bad]}),
            "training-jobs__job-good": FakeResponse(200, good),
            "training-jobs__job-bad": FakeResponse(200, bad),
        }
    )
    query = make_query(session, select({"name": "nightly"}))
    keys, found = query.search("nightly")
    assert keys == ["job-good", "job-bad"]
    assert found["job-good"]["phase"] == "Running"
    assert type(found["job-bad"]).__name__ == "SchemaValidationError" and "$.status.start_time" in str(found["job-bad"])
    result = query.run()
    assert not result.ok and "job-bad" in result.msg and "$.status.start_time" in result.msg
    assert [item["id"] for item in result.items] == ["job-good", "job-bad"]
    # The search only chose the jobs: each was read by its own GET (the bad document's, too: its GET has the last word).
    assert sorted(call["url"].rsplit("/", 1)[1] for call in session.calls if call["method"] == "GET") == ["job-bad", "job-good"]


def test_a_search_without_wait_returns_the_jobs_own_gets_not_the_searchs_documents():
    searched = document("job-1", "Completed", "nightly")
    session = FakeSession(
        **{
            "training-job-searches": FakeResponse(200, {"total": 1, "items": [searched]}),
            "training-jobs__job-1": FakeResponse(200, document("job-1", "Running", "nightly")),
        }
    )
    result = make_query(session, select({"name": "nightly", "latest": True})).run()
    assert result.ok and [item["phase"] for item in result.items] == ["Running"]
    assert [call["method"] for call in session.calls] == ["POST", "GET"]


def test_a_name_that_matches_nothing_is_an_empty_success():
    session = FakeSession(**{"training-job-searches": FakeResponse(200, {"total": 0, "items": []})})
    result = make_query(session, select({"name": "nobody"})).run()
    assert result.ok and result.items == [] and not result.single


# -- warnings, settings, libraries ------------------------------------------------------------------


def test_validate_warn_returns_one_warning_per_schema_error_and_certs_off_one_warning():
    doc = document()
    doc["metadata"]["create_time"] = "not a time"
    session = FakeSession(**{"training-jobs": FakeResponse(200, doc)})
    result = make_query(session, select({"training_job_id": "job-1"}), validate="warn", validate_certs=False).run()
    assert result.ok
    assert sum("validate_certs is false" in warning for warning in result.warnings) == 1
    assert any("$.metadata.create_time" in warning for warning in result.warnings)


def test_settings_come_from_the_levels():
    session = FakeSession()
    query = make_query(session, Selection(["a"]), levels=[(LEVEL_KEYWORD, dict(CONNECTION, max_concurrency="3", wait="yes"))])
    assert query.settings.max_concurrency == 3 and query.settings.wait is True
    assert query.secrets() == [CONNECTION["auth_token"]]


def test_missing_jsonschema_is_named(monkeypatch):
    from ansible_collections.modelarts.training.plugins.module_utils.door import query as query_module

    monkeypatch.setattr(query_module, "HAS_JSONSCHEMA", False)
    with pytest.raises(MissingLibraryError) as info:
        make_query(FakeSession(), Selection(["a"]))
    assert info.value.library == "jsonschema" and "validate to off" in str(info.value)
    make_query(FakeSession(), Selection(["a"]), validate="off").close()


def test_query_jobs_without_wait_keeps_order_and_reports_each_error():
    session = FakeSession(
        **{
            "training-jobs/a": FakeResponse(200, document("a")),
            "training-jobs/b": FakeResponse(400, {"error_code": "ModelArts.2775", "error_msg": "Training job not found."}),
        }
    )
    query = make_query(session, Selection(["b", "a"]))
    result = query_jobs(query.client, ["b", "a", "b"])
    assert not result.ok and [item["id"] for item in result.items] == ["b", "a"]
    assert "ModelArts.2775" in result.items[0]["error"] and result.failure_fields()["error_code"] == "ModelArts.2775"


def test_v1_keys_fetch_the_v1_route():
    v1 = {"job_id": 10, "version_id": 2, "status": 10, "job_name": "legacy"}
    session = FakeSession(**{"training-jobs/10/versions/2": FakeResponse(200, v1)})
    result = make_query(session, Selection([v1_key(10, 2)], single=True)).run()
    assert result.ok and result.items[0]["phase"] == "Completed" and result.items[0]["api_version"] == "v1"


# -- details_paths ----------------------------------------------------------------------------------


def test_keep_paths_keeps_only_the_asked_paths_nested_as_in_the_document():
    from ansible_collections.modelarts.training.plugins.module_utils.job.items import keep_paths  # pylint: disable=import-outside-toplevel

    doc = {"status": {"duration": 5, "phase": "Completed"}, "algorithm": {"outputs": [{"name": "m"}]}, "spec": {}}
    assert keep_paths(doc, ["status.duration", "algorithm.outputs", "missing.path", "spec.resource"]) == {
        "status": {"duration": 5},
        "algorithm": {"outputs": [{"name": "m"}]},
    }
    assert keep_paths(doc, []) == {} and keep_paths(None, ["a"]) == {}


def test_run_trims_details_but_not_the_item():
    session = FakeSession(**{"training-jobs": lambda method, url, kwargs: FakeResponse(200, document())})
    result = make_query(session, select({"training_job_id": "job-1"}), details_paths=["metadata.name", "endpoints.jupyter_lab"]).run()
    item = result.items[0]
    assert result.ok and item["phase"] == "Completed" and item["name"] == "train"
    assert item["details"] == {"metadata": {"name": "train"}, "endpoints": {"jupyter_lab": {"url": "https://jupyter_lab.example.invalid", "token": MASK}}}
    whole = make_query(session, select({"training_job_id": "job-1"})).run()
    assert set(whole.items[0]["details"]) == {"metadata", "status", "endpoints"}
    empty = make_query(session, select({"training_job_id": "job-1"}), details_paths=[]).run()
    assert empty.items[0]["details"] == {}


# -- waiting by name (issue 20) ------------------------------------------------------------------------


def search_page(*documents):
    return FakeResponse(200, {"total": len(documents), "count": len(documents), "items": list(documents)})


def test_waiting_by_a_name_no_job_has_keeps_looking_and_fails_at_the_deadline():
    """A misspelt name must never open a gate: no job of that name is not "every job completed"."""
    session = FakeSession(*[search_page() for _round in range(20)])
    query = make_query(session, Selection(name="nightly-typo"), wait=True, wait_timeout=30, wait_sleep=5)
    result = query.run()
    assert not result.ok and result.items == []
    assert "no training job named 'nightly-typo' was found after waiting 30.0s (wait_timeout 30, " in result.msg
    assert len(session.calls) > 2, "the search is repeated while waiting"
    assert query.clock() - 1000.0 == 30.0, "and it ends at the deadline"


def named(name, job_id):
    document_ = document(job_id, "Completed", name)
    document_["metadata"]["create_time"] = 1700000000000
    return document_


def test_a_name_that_matches_nothing_warns_once_with_the_closest_names_while_the_wait_goes_on():
    """Issue 60, item 5: at the first search that finds no job, one list of the workspace's newest names (no filter, one
    page); the warning is handed at once to ``notify`` and kept in the result's warnings, the failure keeps the names."""
    listed = search_page(named("churn-model", "a1"), named("churn-model", "a2"), named("churn-model-v2", "a3"), named("resnet50", "a4"))
    session = FakeSession()
    session.routes["training-job-searches"] = lambda method, url, kwargs: listed if closest_lookup(kwargs) else search_page()
    query = make_query(session, Selection(name="churn-modle"), wait=True, wait_timeout=30, wait_sleep=5)
    told = []
    query.notify = told.append
    result = query.run()
    warning = (
        "no training job named 'churn-modle' in the default workspace: still waiting (a job may be submitted later); "
        "closest names: 'churn-model', 'churn-model-v2'"
    )
    assert told == [warning] and result.warnings == [warning]
    assert not result.ok and result.msg.endswith(
        "(wait_timeout 30, %d searches); closest names: 'churn-model', 'churn-model-v2'" % len(named_searches(session))
    )
    lookups = [call for call in session.calls if closest_lookup(call)]
    assert len(lookups) == 1 and b'"limit":50' in lookups[0]["data"], "one request, one page"


def test_the_closest_names_look_in_the_search_s_workspace_and_a_failed_look_offers_none():
    session = FakeSession()
    session.routes["training-job-searches"] = lambda method, url, kwargs: (
        FakeResponse(403, {"error_code": "ModelArts.0204", "error_msg": "denied"}) if closest_lookup(kwargs) else search_page()
    )
    workspace = "0123456789abcdef0123456789abcdef"
    query = make_query(session, select(dict(name="churn-modle", workspace_id=workspace)), wait=True, wait_timeout=10, wait_sleep=5)
    result = query.run()
    lookup = [call for call in session.calls if closest_lookup(call)]
    assert len(lookup) == 1 and ('"workspace_id":"%s"' % workspace).encode() in lookup[0]["data"]
    assert result.warnings == ["no training job named 'churn-modle' in workspace %s: still waiting (a job may be submitted later)" % workspace]
    assert "closest" not in result.msg and "comes close" not in result.msg


def test_waiting_by_name_follows_a_job_that_appears_later():
    session = FakeSession(
        search_page(), search_page(), search_page(document("j1", "Running", "nightly")), FakeResponse(200, document("j1", "Completed", "nightly"))
    )
    result = make_query(session, Selection(name="nightly"), wait=True, wait_timeout=60, wait_sleep=5).run()
    assert result.ok, result.msg
    assert [item["id"] for item in result.items] == ["j1"] and result.items[0]["phase"] == "Completed"


def test_waiting_by_name_tolerates_a_transient_search_error():
    session = FakeSession(
        FakeResponse(503, {"error_code": "ModelArts.0001", "error_msg": "busy"}),
        search_page(document("j1", "Completed", "nightly")),
        FakeResponse(200, document("j1", "Completed", "nightly")),
    )
    result = make_query(session, Selection(name="nightly"), wait=True, wait_timeout=60, wait_sleep=5).run()
    assert result.ok, result.msg


@pytest.mark.parametrize("phase,ok", [("Completed", True), ("Running", False), ("Failed", False)])
def test_wait_timeout_0_by_name_looks_once_like_by_id(phase, ok):
    """One look: one search, then the job's own GET (its whole document, and for Completed the gate's confirmation)."""
    session = FakeSession(search_page(document("j1", phase, "nightly")), FakeResponse(200, document("j1", phase, "nightly")))
    # diagnostics false: the failed job's events and logs would be more requests, the subject of the tests below.
    result = make_query(session, Selection(name="nightly"), wait=True, wait_timeout=0, diagnostics=False).run()
    assert result.ok is ok, result.msg
    assert len(session.calls) == 2 and "deadline passed" not in (result.msg or "")
    assert session.calls[1]["data"] is None, "the second call is the job's GET"


@pytest.mark.parametrize("wait_timeout", [0, 60])
def test_a_name_search_saying_completed_opens_no_gate_the_jobs_own_get_denies(wait_timeout):
    """The search's word is not the gate's: a job it lists as Completed whose own document says Failed fails the wait."""
    session = FakeSession(search_page(document("j1", "Completed", "nightly")), FakeResponse(200, document("j1", "Failed", "nightly")))
    result = make_query(session, Selection(name="nightly"), wait=True, wait_timeout=wait_timeout, diagnostics=False).run()
    assert not result.ok and "reached phase Failed" in result.msg
    assert result.items[0]["phase"] == "Failed" and len(session.calls) == 2


def test_without_wait_a_name_no_job_has_is_an_empty_answer():
    result = make_query(FakeSession(search_page()), Selection(name="nightly")).run()
    assert result.ok and result.items == []


@pytest.mark.parametrize("validate", ["strict", "warn", "off"])
def test_a_search_result_without_an_id_is_reported_under_every_validate_mode(validate):
    anonymous = document("x", "Failed", "nightly")
    del anonymous["metadata"]["id"]
    session = FakeSession(search_page(document("j1", "Completed", "nightly"), anonymous))
    result = make_query(session, Selection(name="nightly"), validate=validate).run()
    assert not result.ok, "a job that cannot be identified must not vanish from a gate's view"
    assert len(result.items) == 2 and result.items[1]["phase"] == "Failed" and result.items[1]["error"]
    assert "search result 1" in result.msg
    if validate != "strict":
        assert any("no readable metadata.id" in warning for warning in result.warnings)


# -- diagnostics: the door reads them for failed v2 items only -------------------------------------------


def failed_document(job_id="job-1"):
    doc = document(job_id, "Failed")
    doc["status"].update(tasks=["worker-0"], task_statuses=[{"task": "worker-0", "exit_code": 137, "message": "OOMKilled"}])
    return doc


def test_a_completed_job_costs_no_diagnostics_call():
    session = FakeSession(FakeResponse(200, document("job-1", "Completed")))
    result = make_query(session, Selection(["job-1"]), wait=True).run()
    assert result.ok and len(session.calls) == 1
    assert result.items[0]["diagnostics"] is None


def test_a_failed_job_gets_its_events_and_log_tail_in_the_item_and_the_message():
    events = {"events": [{"time": "2026-11-25T18:00:05+08:00", "level": "Error", "message": "Failed to run the training job."}], "total": 1}
    log = {"lines": 2, "content": "[ModelArts Service Log]Training end with return code: 137\nCUDA out of memory with %s" % TOKENS["jupyter_lab"]}
    session = FakeSession(
        FakeResponse(200, failed_document()),
        **{"job-1__events": FakeResponse(200, events), "job-1__logs__worker-0": FakeResponse(200, log)},
    )
    result = make_query(session, Selection(["job-1"], single=True), wait=True, log_lines=2).run()
    assert not result.ok and result.items[0]["phase"] == "Failed"
    found = result.items[0]["diagnostics"]
    assert found["events"] == [{"time": "2026-11-25T10:00:05Z", "level": "Error", "message": "Failed to run the training job."}]
    assert found["tasks"][0]["log_tail"][-1] == "[ModelArts Service Log]Training end with return code: 137"
    assert TOKENS["jupyter_lab"] not in repr(found), "the job's endpoint tokens are masked in its logs"
    assert "last error event at 2026-11-25T10:00:05Z" in result.msg and "return code: 137" in result.msg
    assert "return code: 137" in result.job_messages[0]
    urls = [call["url"] for call in session.calls]
    assert any("/events?" in url and "level=Error" in url for url in urls) and any("/logs/worker-0?" in url and "lines=2" in url for url in urls)


def test_diagnostics_false_makes_no_extra_call():
    session = FakeSession(FakeResponse(200, failed_document()))
    result = make_query(session, Selection(["job-1"]), wait=True, diagnostics=False).run()
    assert not result.ok and len(session.calls) == 1 and result.items[0]["diagnostics"] is None


def test_diagnostics_that_cannot_be_read_never_change_the_verdict():
    denied = FakeResponse(403, {"error_code": "ModelArts.2771", "error_msg": "No permission"})
    session = FakeSession(FakeResponse(200, failed_document()), **{"job-1__events": denied, "job-1__logs": denied, "job-1__tasks": denied})
    result = make_query(session, Selection(["job-1"])).run()
    assert result.ok, "without wait a failed job is an answer, not a failure"
    errors = result.items[0]["diagnostics"]["errors"]
    assert len(errors) == 3 and all("HTTP 403 ModelArts.2771" in line for line in errors)


@pytest.mark.parametrize("value", ["perhaps", 2, [True]])
def test_diagnostics_is_a_boolean_or_an_error_naming_it(value):
    with pytest.raises(ConnectionConfigError, match=r"^diagnostics \(task option\) must be a boolean"):
        make_query(FakeSession(), Selection(["job-1"]), diagnostics=value)


@pytest.mark.parametrize("value", [-1, 10001, "many"])
def test_log_lines_out_of_bounds_is_an_error_naming_it(value):
    with pytest.raises(ConnectionConfigError, match=r"^log_lines \(task option\) must be"):
        make_query(FakeSession(), Selection(["job-1"]), log_lines=value)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit, RuntimeError])
def test_a_query_left_by_an_exception_abandons_its_client_and_a_clean_exit_does_not(interrupt):
    # Issue 36: a task's timeout in the controller's process leaves requests in flight in other threads; the door ends
    # them (client.abandon) as the exception leaves it, instead of anything waiting for them.
    query = make_query(FakeSession(FakeResponse(200, document())), select(dict(training_job_id="job-1")))
    calls = []
    query.client.abandon = lambda: calls.append("abandon")
    with pytest.raises(interrupt):
        with query:
            raise interrupt()
    assert calls == ["abandon"]
    clean = make_query(FakeSession(FakeResponse(200, document())), select(dict(training_job_id="job-1")))
    clean.client.abandon = lambda: calls.append("clean")
    with clean:
        clean.run()
    assert calls == ["abandon"]


def test_a_search_the_deadline_left_unsent_is_not_a_failed_search():
    """Issue 38, item 1: every search answered, none matched; a round whose sleep ended just past the deadline (a
    sleeper overshoots) sent nothing, and the message must not say the last search failed."""
    session = FakeSession(*[search_page() for _round in range(20)])
    query = make_query(session, Selection(name="nightly-typo"), wait=True, wait_timeout=2, wait_sleep=1.5)
    sleep = query.sleeper

    def overshooting(seconds):
        # The first nap (1.5 s) ends 0.6 s late, past the deadline: the round's search cannot be sent.
        sleep(seconds + 0.6)

    query.sleeper = overshooting
    result = query.run()
    assert not result.ok and result.items == []
    assert "no training job named 'nightly-typo' was found after waiting" in result.msg
    assert "failed" not in result.msg and "deadline passed" not in result.msg, result.msg
    assert "(wait_timeout 2, 1 search)" in result.msg and len(named_searches(session)) == 1, "a search never sent is not counted"


def closest_lookup(kwargs):
    """Whether a request is the one list of a workspace's newest names (no filter) a name that matches nothing makes."""
    return b'"filters":[]' in (kwargs.get("data") or b"")


def named_searches(session):
    """The requests of ``session`` that were the wait's searches (not the closest names' list)."""
    return [call for call in session.calls if not closest_lookup(call)]


def searches_ending(query, *endings):
    """A route for the search URL that answers each search as ``endings`` say: ``"none"`` (an empty page),
    ``"unavailable"`` (HTTP 503, before the wait's deadline) or ``"cut"`` (the deadline the client was given ended it:
    the read times out after the read timeout it was given, the time left to that deadline)."""
    import requests  # pylint: disable=import-outside-toplevel

    script = list(endings)

    def answer(method, url, kwargs):
        if closest_lookup(kwargs):
            return search_page()
        ending = script.pop(0)
        if ending == "none":
            return search_page()
        if ending == "unavailable":
            return FakeResponse(503, {"error_code": "ModelArts.0503", "error_msg": "busy"})
        if ending == "cut":
            query.clock.now += kwargs["timeout"][1]
        return requests.exceptions.ReadTimeout("read timed out")

    return answer


@pytest.mark.parametrize(
    "endings,counted,said",
    [
        # the wait ran out during the third search: the two before it answered, and nothing failed
        (["none", "none", "cut"], 3, None),
        # a search that failed before it stands: the one the deadline cut does not replace it
        (["none", "unavailable", "cut"], 3, "the last search failed: search training jobs named 'nightly-typo' (offset 0): HTTP 503"),
        # no search ever ended on its own: the one the deadline cut is all there is to say
        (["cut"], 1, "the last search failed: search training jobs named 'nightly-typo' (offset 0): ReadTimeout: read timed out"),
        # the last search had a request_timeout past the deadline: cut short there, it failed
        (["none", "none", "none", "cut"], 4, "the last search failed: search training jobs named 'nightly-typo' (offset 0): ReadTimeout"),
    ],
)
def test_a_search_the_deadline_cut_short_is_the_wait_running_out_not_a_failed_search(endings, counted, said):
    """Issue 41: on a loaded machine the search under way when a name wait ran out was cut by its deadline, and the
    gate's message said the last search had failed (the deadline passed while waiting for the headers) although every
    search before it had answered that no job had the name."""
    session = FakeSession()
    query = make_query(session, Selection(name="nightly-typo"), wait=True, wait_timeout=2, wait_sleep=0.5)
    session.routes["training-job-searches"] = searches_ending(query, *endings)
    result = query.run()
    assert not result.ok and result.items == []
    waited = "2.0s" if len(endings) < 4 else "32.0s"  # the last search may run request_timeout (30 s) past the deadline
    assert "no training job named 'nightly-typo' was found after waiting %s (wait_timeout 2, %d search" % (waited, counted) in result.msg, result.msg
    if said is None:
        assert "failed" not in result.msg and "deadline" not in result.msg, result.msg
    else:
        assert said in result.msg, result.msg
    assert len(named_searches(session)) == len(endings)


def test_a_reused_name_that_closes_a_wait_says_how_many_jobs_matched_and_points_to_latest():
    """Issue 38, item 2."""
    session = FakeSession(
        search_page(document("j1", "Failed", "nightly"), document("j2", "Completed", "nightly")),
        FakeResponse(200, document("j1", "Failed", "nightly")),
        FakeResponse(200, document("j2", "Completed", "nightly")),
    )
    result = make_query(session, Selection(name="nightly"), wait=True, wait_timeout=0, diagnostics=False).run()
    assert not result.ok
    assert result.msg.endswith("; the search named 'nightly' matched 2 jobs and each was waited on: set latest: true to wait on the newest only"), result.msg


# -- metrics: what a job produced ---------------------------------------------------------------


def ft_page(value):
    return FakeResponse(200, {"data": {"format_version": "1.0", "metrics": [{"name_en": "acc", "group": "validation", "data": [0.5, value]}]}})


@pytest.mark.parametrize(
    "options, fragment",
    [
        ({"metrics": [{"name": "acc", "regx": "a=(.*)"}]}, "metrics[0]: unknown key regx (did you mean regex?)"),
        ({"metrics": [{"name": "acc", "regex": "a=(.*"}]}, "metrics[0] (acc): regex 'a=(.*' does not compile"),
        ({"metrics": [{"name": "acc", "min_improvement": 0}], "baseline": {}}, "min_improvement compares with a baseline job"),
        ({"metrics": [{"name": "acc"}], "baseline": {"required": False}}, "baseline selects no job"),
        ({"metrics": [{"name": "acc"}], "baseline": {"training_job_id": "job-1"}}, "baseline: job-1 is also a job this call selects"),
        ({"metrics": "acc"}, "metrics must be a list of dicts"),
    ],
)
def test_metrics_and_baseline_are_checked_before_any_request(options, fragment):
    session = FakeSession()
    with pytest.raises(ConnectionConfigError) as raised:
        make_query(session, Selection(["job-1"]), **options)
    assert fragment in str(raised.value)
    assert session.calls == []


def test_a_completed_job_that_breaks_a_bound_fails_a_wait_and_only_reports_without_one():
    for wait in (True, False):
        session = FakeSession(FakeResponse(200, document("job-1", "Completed")), ft_page(0.8))
        result = make_query(session, Selection(["job-1"], single=True), wait=wait, metrics=[{"name": "acc", "min": 0.9}]).run()
        item = result.items[0]
        assert item["metrics"]["acc"]["value"] == 0.8 and item["metrics_ok"] is False
        assert result.measured is not None and result.measured.baseline is None
        assert [call["url"].rsplit("/", 1)[-1] for call in session.calls] == ["job-1", "ft-metrics"]
        if wait:
            assert not result.ok
            assert result.msg == "1 Completed training job did not meet its metric bounds: training job job-1 (train): acc is 0.8, below min 0.9"
            assert result.job_messages == ["training job job-1 (train): acc is 0.8, below min 0.9"]
        else:
            assert result.ok and result.msg is None


def test_a_job_that_is_not_completed_is_never_read_and_a_fit_one_opens_the_wait():
    session = FakeSession(FakeResponse(200, document("job-1", "Running")))
    result = make_query(session, Selection(["job-1"]), metrics=[{"name": "acc", "min": 0.9}]).run()
    assert result.ok and result.items[0]["metrics"] is None and result.items[0]["metrics_ok"] is None and len(session.calls) == 1
    session = FakeSession(FakeResponse(200, document("job-1", "Completed")), ft_page(0.95))
    result = make_query(session, Selection(["job-1"]), wait=True, metrics=[{"name": "acc", "min": 0.9}]).run()
    assert result.ok and result.items[0]["metrics_ok"] is True


def test_metrics_are_read_before_details_paths_trims_the_document():
    session = FakeSession(FakeResponse(200, document("job-1", "Completed")), ft_page(0.95))
    result = make_query(session, Selection(["job-1"]), details_paths=[], metrics=[{"name": "acc"}]).run()
    assert result.items[0]["details"] == {} and result.items[0]["metrics"]["acc"]["value"] == 0.95


def test_a_failed_wait_adds_the_metric_lines_after_its_own():
    v1_failed = {"job_id": 10, "version_id": 1, "job_name": "legacy", "status": 11, "create_time": 1700000000000}
    session = FakeSession(
        **{
            "job-1__ft-metrics": ft_page(0.5),
            "training-jobs__job-1": FakeResponse(200, document("job-1", "Completed")),
            "versions__1": FakeResponse(200, v1_failed),
        }
    )
    selection = Selection(["job-1", ("v1", 10, 1)])
    result = make_query(session, selection, wait=True, metrics=[{"name": "acc", "min": 0.9}]).run()
    assert not result.ok
    assert "training job 10 version 1 (legacy) reached phase Failed" in result.msg
    assert result.msg.endswith("; 1 Completed training job did not meet its metric bounds: training job job-1 (train): acc is 0.5, below min 0.9")
    assert result.job_messages[-1] == "training job job-1 (train): acc is 0.5, below min 0.9"
    # The v1 job was never asked for metrics: it is not Completed.
    assert result.items[1]["metrics"] is None


# -- a value that cannot be an id (issue 50) --------------------------------------------------------------------

UUID = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
NOT_FOUND = {"error_code": "ModelArts.2775", "error_msg": "Training job not found."}


def not_found_session(job_id, status=400, body=None):
    body = NOT_FOUND if body is None else body
    return FakeSession(**{"training-jobs/" + job_id: FakeResponse(status, body, headers={"X-Request-Id": "r-1"})})


@pytest.mark.parametrize("job_id", ["nightly-resnet50", "train", "3f7a1c2e", UUID + "0"])
def test_a_not_found_value_that_cannot_be_an_id_says_so_and_ends_a_wait_at_once(job_id):
    session = not_found_session(job_id)
    query = make_query(session, Selection([job_id], single=True), wait=True, wait_timeout=60)
    result = query.run()
    hint = "(not a training job id, which is a UUID such as %s: to select jobs by their name, use name) [request id r-1]" % UUID
    assert not result.ok and result.msg.endswith(hint), result.msg
    assert "check project_id" not in result.msg and "not found after" not in result.msg
    assert len(session.calls) == 1 and result.items[0]["polls"] == 1
    # Still the service's "not found" (error_code, status), and final: no job just created is behind it.
    error = result.first_error()
    assert error.not_found and error.not_an_id and error.error_code == "ModelArts.2775"


@pytest.mark.parametrize("job_id", [UUID, UUID.upper(), UUID.replace("-", "")])
def test_a_not_found_uuid_is_tolerated_as_a_job_just_created(job_id):
    session = not_found_session(job_id)
    query = make_query(session, Selection([job_id], single=True), wait=True, wait_timeout=60, wait_sleep=1)
    result = query.run()
    assert "not found after 4 polls" in result.msg and "check project_id (HUAWEICLOUD_SDK_PROJECT_ID) and region" in result.msg, result.msg
    assert "not a training job id" not in result.msg and len(session.calls) == 4


def test_a_bare_404_of_a_name_gets_the_hint_before_its_request_id():
    session = not_found_session("nightly", status=404, body={})
    result = make_query(session, Selection(["nightly"])).run()
    assert result.msg.endswith(
        "HTTP 404 with an unrecognised error body: '{}' (not a training job id, which is a UUID such as %s: "
        "to select jobs by their name, use name) [request id r-1]" % UUID
    ), result.msg


def test_the_lookups_selection_points_to_the_modules_name_option():
    result = make_query(not_found_session("nightly"), Selection(["nightly"], name_option=None)).run()
    assert result.msg.endswith(
        "(not a training job id, which is a UUID such as %s: the lookup reads jobs by id; "
        "modelarts_training_job_info's name finds a name's jobs) [request id r-1]" % UUID
    ), result.msg


def test_other_errors_of_a_name_given_as_an_id_are_left_as_they_are():
    forbidden = {"error_code": "ModelArts.2771", "error_msg": "No permission."}
    result = make_query(not_found_session("nightly", status=403, body=forbidden), Selection(["nightly"])).run()
    assert "ModelArts.2771" in result.msg and "not a training job id" not in result.msg


# -- a region that names nothing in the call (issue 50) ---------------------------------------------------------

EMULATOR = "https://127.0.0.1:8443"
AKSK = {"access_key": "HPUA0000000000000001", "secret_key": "secret-0123456789"}
EXPORTED = {
    "HUAWEICLOUD_MODELARTS_ENDPOINT": EMULATOR,
    "HUAWEICLOUD_SDK_PROJECT_ID": PROJECT,
    "HUAWEICLOUD_SDK_AK": AKSK["access_key"],
    "HUAWEICLOUD_SDK_SK": AKSK["secret_key"],
}


def region_warnings(task, environ=None):
    query = Query([(LEVEL_OPTION, task)], Selection(["a"]), environ=environ or {}, session=FakeSession())
    query.close()
    return [text for text in query.warnings if text.startswith("region")]


def test_a_task_region_over_an_exported_endpoint_and_project_is_said_to_be_unused():
    warnings = region_warnings({"region": "eu-west-101"}, dict(EXPORTED, HUAWEICLOUD_SDK_REGION="cn-north-4"))
    assert warnings == [
        "region eu-west-101 (task option) is not used: endpoint (environment variable HUAWEICLOUD_MODELARTS_ENDPOINT) names the host and "
        "project_id (environment variable HUAWEICLOUD_SDK_PROJECT_ID) the project, and no request carries a region (the AK/SK signature "
        "does not include one); to call eu-west-101, set endpoint and project_id for it (or leave them unset), else leave region out"
    ]
    # Exported without a region of its own: given apart from them all the same.
    assert region_warnings({"region": "eu-west-101"}, EXPORTED)


@pytest.mark.parametrize(
    "task,environ",
    [
        # Written together, at one level: the emulator's connection in module_defaults, or its exports.
        (dict(AKSK, region="cn-north-4", endpoint=EMULATOR, project_id=PROJECT), {}),
        ({}, dict(EXPORTED, HUAWEICLOUD_SDK_REGION="cn-north-4")),
        # The task's region is the one exported with the endpoint (the ansible-doc examples against the emulator).
        ({"region": "cn-north-4"}, dict(EXPORTED, HUAWEICLOUD_SDK_REGION="cn-north-4")),
        # The region makes the ModelArts host, or the project is looked up from it.
        (dict(AKSK, region="eu-west-101", project_id=PROJECT), {}),
        ({"region": "eu-west-101"}, dict(EXPORTED, HUAWEICLOUD_SDK_PROJECT_ID="")),
        # A password is exchanged at the IAM of the region; OIDC goes to the STS of the region.
        ({"region": "eu-west-101", "username": "u", "password": "p", "domain_name": "d"}, EXPORTED),
        ({"region": "cn-north-4", "oidc_provider_urn": "p", "oidc_agency_urn": "a", "oidc_id_token": "t"}, EXPORTED),
        # A host that names the same region.
        (dict(AKSK, region="cn-north-4", endpoint="https://modelarts.cn-north-4.myhuaweicloud.com", project_id=PROJECT), {}),
    ],
)
def test_a_region_that_is_used_or_goes_with_its_endpoint_is_not_warned_about(task, environ):
    assert region_warnings(task, environ) == []


def test_a_region_other_than_the_endpoints_host_is_said_to_be_unused_even_beside_it():
    task = dict(AKSK, region="cn-south-1", endpoint="https://modelarts.cn-north-4.myhuaweicloud.com", project_id=PROJECT)
    (warning,) = region_warnings(task)
    assert warning.startswith("region cn-south-1 (task option) is not used: endpoint (task option) names the host") and (
        "; the endpoint's host modelarts.cn-north-4.myhuaweicloud.com is in cn-north-4; to call cn-south-1," in warning
    ), warning


def test_with_a_token_or_a_password_the_warning_does_not_speak_of_signatures():
    (token,) = region_warnings({"region": "eu-west-101", "auth_token": "tok-0123456789"}, EXPORTED)
    environ = dict(EXPORTED, HUAWEICLOUD_SDK_IAM_ENDPOINT=EMULATOR)
    (password,) = region_warnings({"region": "eu-west-101", "username": "u", "password": "p", "domain_name": "d"}, environ)
    for warning in (token, password):
        assert "no request carries a region;" in warning and "signature" not in warning, warning
