# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source's own logic, no I/O: arguments handed to the door, change detection, the waiter's verdicts, secrets.

The source is imported as a collection module (ansible-test's loader resolves it); its ``main()`` against
the emulator and inside ansible-rulebook is tested under tests/system.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid

import pytest
import yaml

from ansible_collections.modelarts.training.extensions.eda.plugins.event_source import training_job_phase as source
from ansible_collections.modelarts.training.plugins.doc_fragments.connection import ModuleDocFragment as ConnectionFragment
from ansible_collections.modelarts.training.plugins.doc_fragments.metrics import ModuleDocFragment as MetricsFragment
from ansible_collections.modelarts.training.plugins.doc_fragments.query import ModuleDocFragment as QueryFragment
from ansible_collections.modelarts.training.plugins.doc_fragments.search import ModuleDocFragment as SearchFragment
from ansible_collections.modelarts.training.plugins.module_utils.door.options import CONNECTION_OPTIONS, QUERY_OPTIONS, WAIT_OPTIONS
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import SchemaValidationError
from ansible_collections.modelarts.training.plugins.module_utils.watch.state import event_id

LOGGER = "modelarts.training.training_job_phase"
SECRET = "Unit-Secret-Key-Value-0c1d2e3f"
CONNECTION = {
    "region": "cn-north-4",
    "project_id": "0123456789abcdef0123456789abcdef",
    "endpoint": "https://127.0.0.1:9",
    "access_key": "AK-UNIT",
    "secret_key": SECRET,
}


class FakeClock(object):
    """A monotonic clock the test moves by hand."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class FakeError(Exception):
    """Carries the error flags the source reads, like the client's ModelArtsError."""

    def __init__(self, message, status=None, error_code=None, transient=False, not_found=False):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.transient = transient
        self.not_found = not_found


def item(key, phase, **extra):
    terminal = phase in ("Completed", "Failed", "Terminated", "Abnormal")
    return dict({"id": key, "name": "job-" + key, "phase": phase, "terminal": terminal, "schema_errors": []}, **extra)


def schema_error(key, phase, path="$.metadata.annotations.x-bad", message="12345 is not of type 'string'"):
    errors = [{"path": path, "message": message}]
    return SchemaValidationError(key, errors, "v2", item=item(key, phase, schema_errors=errors))


def watcher(args=None, clock=None, environ=None):
    arguments = dict(CONNECTION, training_job_ids=["a", "b"], interval=2)
    arguments.update(args or {})
    built, _query = source.build_watcher(arguments, environ={} if environ is None else environ, clock=clock or FakeClock())
    return built


def door(args, environ=None):
    """The door's settings for these source arguments (credentials added unless given)."""
    arguments = dict(args)
    if not any(name in arguments for name in ("access_key", "auth_token", "username")) and not environ:
        arguments.update(CONNECTION)
    _watcher, query = source.build_watcher(arguments, environ=environ or {})
    query.close()
    return query


# -- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "exactly one of training_job_ids, or name and/or tags"),
        ({"training_job_ids": ["a"], "name": "n"}, "exactly one of training_job_ids, or name and/or tags"),
        ({"training_job_ids": " , "}, "holds no job id"),
        ({"training_job_ids": {"a": 1}}, "list of job ids"),
        ({"training_job_ids": [True]}, "must hold job id strings, got a bool"),
        ({"name": {"n": 1}}, r"name \(argument\) must be a string"),
        ({"name": "n", "interval": 0}, r"interval \(argument\) must be a number of seconds greater than 0"),
        ({"name": "n", "interval": -1}, "greater than 0"),
        ({"name": "n", "interval": "soon"}, r"interval \(argument\) must be a number"),
        ({"name": "n", "interval": True}, r"interval \(argument\) must be a number"),
        ({"name": "n", "stop_when_done": "perhaps"}, r"stop_when_done \(argument\) must be a boolean"),
        ({"name": "n", "stop_when_done": 2}, r"stop_when_done \(argument\) must be a boolean"),
        ({"name": "n", "intervall": 3}, r"unknown argument intervall \(did you mean interval\?\)"),
        # Waiting is the module's business: the source watches until a final verdict.
        (
            {"name": "n", "wait_for": ["Running"], "wait_timeout": 5},
            r"unknown arguments wait_for \(the source has no wait options; it follows each job to a final phase\), wait_timeout \(the source",
        ),
    ],
)
def test_own_arguments_are_refused_before_any_request(args, message):
    with pytest.raises(source.SourceConfigError, match=message):
        source.Arguments(args)


@pytest.mark.parametrize(
    "args, message",
    [
        ({"validate": "loose"}, r"validate \(argument\) must be one of strict, warn, off"),
        ({"fail_on": ["Broken"]}, "unknown phase 'Broken'"),
        ({"max_concurrency": 0}, r"max_concurrency \(argument\) must be between 1 and 256"),
        ({"max_concurrency": 257}, "between 1 and 256"),
        ({"include_endpoint_tokens": "maybe"}, r"include_endpoint_tokens \(argument\) must be a boolean"),
        ({"request_timeout": 0}, r"request_timeout \(argument\) must be greater than 0"),
    ],
)
def test_door_arguments_are_checked_by_the_door(args, message):
    with pytest.raises(source.SourceConfigError, match=message):
        door(dict(args, name="n"))


def test_arguments_from_rulebook_strings():
    arguments = source.Arguments({"training_job_ids": "a, b,,a", "interval": "0.5", "stop_when_done": "true", "eda_feedback_queue": object()})
    assert arguments.ids == ["a", "b"] and arguments.interval == 0.5 and arguments.stop_when_done is True
    defaults = source.Arguments({"name": "n"})
    assert defaults.interval == 10.0 and defaults.stop_when_done is False and defaults.name == "n"
    settings = door({"name": "n", "max_concurrency": "4", "fail_on": "Failed,Abnormal", "include_endpoint_tokens": "yes"}).settings
    assert settings.max_concurrency == 4 and settings.fail_on == ["Failed", "Abnormal"] and settings.include_endpoint_tokens is True
    defaults = door({"name": "n"}).settings
    assert defaults.validate == "strict" and defaults.fail_on == ["Failed", "Abnormal", "Terminated"]
    assert defaults.include_endpoint_tokens is False and defaults.max_concurrency == 16


def test_connection_options_come_from_arguments_then_environment():
    environ = {
        CONNECTION_OPTIONS[name][1]: value
        for name, value in (
            ("region", "cn-north-4"),
            ("access_key", "AK-ENV"),
            ("secret_key", "SK-ENV"),
            ("validate_certs", "false"),
            ("ca_bundle", "~/ca.pem"),
            ("endpoint", "https://env.example.invalid"),
        )
    }
    settings = door({"name": "n", "backoff_retries": "2", "request_timeout": 7, "endpoint": "https://arg.example.invalid"}, environ).settings
    connection = settings.connection
    assert connection["endpoint"] == "https://arg.example.invalid"  # an argument wins over its variable
    assert connection["access_key"] == "AK-ENV" and connection["secret_key"] == "SK-ENV" and connection["region"] == "cn-north-4"
    assert connection["validate_certs"] is False and connection["backoff_retries"] == 2 and connection["request_timeout"] == 7.0
    assert connection["ca_bundle"].endswith("/ca.pem") and not connection["ca_bundle"].startswith("~")


def test_credentials_given_as_arguments_replace_the_environments_kind():
    environ = {"HUAWEICLOUD_SDK_REGION": "cn-north-4", "HUAWEICLOUD_SDK_PROJECT_ID": "p", "HUAWEICLOUD_SDK_AK": "AK-CI", "HUAWEICLOUD_SDK_SK": "SK-CI"}
    settings = door({"name": "n", "auth_token": "token-from-an-argument"}, environ).settings
    assert settings.kind == "auth_token" and settings.connection["access_key"] is None
    assert settings.origins["auth_token"] == "argument" and settings.origins["region"] == "environment"


def test_bad_values_name_the_option_and_where_it_came_from_never_the_value():
    with pytest.raises(source.SourceConfigError, match=r"validate_certs \(argument\) must be a boolean"):
        door({"name": "n", "validate_certs": "maybe"})
    # A typo in the environment never turns TLS verification off.
    with pytest.raises(source.SourceConfigError, match=r"validate_certs \(environment variable HUAWEICLOUD_VALIDATE_CERTS\) must be a boolean"):
        door({"name": "n"}, {"HUAWEICLOUD_VALIDATE_CERTS": "ture", "HUAWEICLOUD_SDK_REGION": "r", "HUAWEICLOUD_SDK_AK": "a", "HUAWEICLOUD_SDK_SK": "s"})
    with pytest.raises(source.SourceConfigError, match=r"backoff_retries \(argument\) must be an integer"):
        door({"name": "n", "backoff_retries": "many"})
    with pytest.raises(source.SourceConfigError) as caught:
        door({"name": "n", "secret_key": 12345678987654321, "access_key": "ak", "region": "r"})
    assert "12345678987654321" not in str(caught.value) and "secret_key (argument) must be a string" in str(caught.value)


def test_credential_problems_end_the_source_with_the_option_names(monkeypatch):
    for name in [name for name in os.environ if name.startswith("HUAWEICLOUD_")]:
        monkeypatch.delenv(name)
    # Nothing given anywhere: the default chain looks (a closed loopback port stands in for the metadata service).
    monkeypatch.setenv("HOME", os.path.join(os.sep, "nonexistent-home"))
    monkeypatch.setenv("HUAWEICLOUD_METADATA_ENDPOINT", "http://127.0.0.1:9")
    for name in ("HC_CONTAINER_CREDENTIALS_FULL_URI", "HC_CONTAINER_AUTHORIZATION_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(source.SourceError, match="no credentials were given and none were found.*credentials file.*CCE pod identity.*instance metadata"):
        asyncio.run(source.main(asyncio.Queue(), {"training_job_ids": ["a"], "region": "cn-north-4", "project_id": "p"}))
    secret = "Conflicting-Secret-Value-1234"
    with pytest.raises(source.SourceConfigError) as caught:
        source.build_watcher(
            {"training_job_ids": ["a"], "region": "r"}, {"HUAWEICLOUD_SDK_AK": "ak", "HUAWEICLOUD_SDK_SK": secret, "HUAWEICLOUD_SDK_AUTH_TOKEN": secret}
        )
    assert "conflicting credentials" in str(caught.value) and secret not in str(caught.value)


def test_http_pool_holds_max_concurrency_connections():
    """The door sizes the pool to max_concurrency and the source passes nothing smaller (was 16 whatever the concurrency)."""
    for concurrency in (40, 256, 3):
        query = door({"name": "n", "max_concurrency": concurrency})
        adapter = query.client._session.get_adapter("https://127.0.0.1:9/")  # pylint: disable=protected-access
        assert adapter.poolmanager.connection_pool_kw["maxsize"] == concurrency


def test_documentation_lists_exactly_the_accepted_arguments():
    doc = yaml.safe_load(source.DOCUMENTATION)
    options = dict(doc["options"])
    fragments = {
        "modelarts.training.connection": ConnectionFragment.DOCUMENTATION,
        "modelarts.training.query": QueryFragment.DOCUMENTATION,
        "modelarts.training.search.plugins": SearchFragment.PLUGINS,
        "modelarts.training.metrics": MetricsFragment.DOCUMENTATION,
    }
    assert doc["extends_documentation_fragment"] == list(fragments)
    for text in fragments.values():
        options.update(yaml.safe_load(text)["options"])
    assert set(options) == set(source.SOURCE_ARGUMENTS) | set(source.DOOR_ARGUMENTS)
    assert options["interval"]["default"] == source.DEFAULT_INTERVAL
    assert options["fail_on"]["default"] == WAIT_OPTIONS["fail_on"]["default"] and options["fail_on"]["choices"] == WAIT_OPTIONS["fail_on"]["choices"]
    for name, spec in QUERY_OPTIONS.items():
        assert options[name].get("default") == spec["default"], name
    for example in yaml.safe_load(source.EXAMPLES):
        assert list(example) == ["modelarts.training.training_job_phase"]
        source.Arguments(_rendered(example["modelarts.training.training_job_phase"]))


def _rendered(value):
    # ansible-rulebook renders the rulebook's variables before the source sees its arguments.
    if isinstance(value, dict):
        return dict((key, _rendered(entry)) for key, entry in value.items())
    if isinstance(value, list):
        return [_rendered(entry) for entry in value]
    return "a1000000-0000-4000-8000-000000000001" if isinstance(value, str) and "{{" in value else value


# -- change detection and the waiter's verdicts (fake clock, no I/O) -----------------------------


def test_one_event_per_phase_change_including_the_first():
    w = watcher()
    first = w.observe("a", item("a", "Pending"))
    identity = event_id("a", None, "Pending")
    assert first == {"modelarts": {"training_job": item("a", "Pending"), "previous_phase": None, "phase": "Pending", "event_id": identity}}
    assert uuid.UUID(identity).version == 5
    assert w.observe("a", item("a", "Pending")) is None
    assert w.observe("a", item("a", "Running"))["modelarts"]["previous_phase"] == "Pending"
    assert w.observe("a", item("a", "Running")) is None
    done = w.observe("a", item("a", "Completed"))
    assert (done["modelarts"]["previous_phase"], done["modelarts"]["phase"]) == ("Running", "Completed")
    assert "a" not in w.jobs and w.finished == {"a": "Completed"}
    assert not w.done()
    w.observe("b", item("b", "Failed"))
    assert w.done()


def test_first_observation_of_a_finished_job_is_one_event():
    w = watcher()
    event = w.observe("a", item("a", "Completed"))
    assert (event["modelarts"]["previous_phase"], event["modelarts"]["phase"]) == (None, "Completed")
    assert "a" in w.finished


def test_every_final_verdict_ends_the_watch():
    """DONE (Completed), FAILED (a fail_on phase) and UNREACHABLE (terminal outside fail_on) all end the watch after their event."""
    w = watcher({"training_job_ids": ["a", "b", "c"], "fail_on": ["Failed", "Abnormal", "Running"]})
    assert w.observe("a", item("a", "Pending")) and "a" in w.jobs  # waiting: still watched
    assert w.observe("a", item("a", "Running")) and "a" not in w.jobs  # a fail_on phase, terminal or not
    assert w.observe("b", item("b", "Terminated")) and "b" not in w.jobs  # terminal but not in fail_on
    assert w.observe("c", item("c", "Completed")) and w.done()
    assert w.finished == {"a": "Running", "b": "Terminated", "c": "Completed"}


def test_an_unreadable_phase_is_no_event_and_warns_once(caplog):
    w = watcher({"validate": "warn"})
    caplog.set_level(logging.WARNING, LOGGER)
    unreadable = item("a", None, schema_errors=[{"path": "$.status.phase", "message": "missing"}])
    assert w.observe("a", unreadable) is None
    assert w.observe("a", unreadable) is None
    assert caplog.text.count("$.status.phase") == 1
    assert w.observe("a", item("a", "Running"))["modelarts"]["previous_phase"] is None


def test_validate_warn_gives_events_and_one_warning_per_change_of_the_problems(caplog):
    w = watcher({"validate": "warn"})
    caplog.set_level(logging.INFO, LOGGER)
    drifted = [{"path": "$.status.duration", "message": "'12' is not of type 'integer'"}]
    assert w.observe("a", item("a", "Running", schema_errors=drifted))["modelarts"]["phase"] == "Running"
    w.observe("a", item("a", "Running", schema_errors=drifted))
    assert caplog.text.count("$.status.duration") == 1 and "training job a" in caplog.text
    w.observe("a", item("a", "Running"))
    assert "matches the JSON schema again" in caplog.text


def test_transient_errors_back_off_and_keep_the_job(caplog):
    clock = FakeClock()
    w = watcher({"backoff_max_delay": 5}, clock=clock)
    caplog.set_level(logging.WARNING, LOGGER)
    delays = []
    for _attempt in range(6):
        w.record_error("a", FakeError("get training job a: HTTP 503", status=503, transient=True))
        delays.append(round(w.jobs["a"].due - clock.now, 3))
    assert delays == [2.0, 3.0, 4.5, 5.0, 5.0, 5.0]  # interval * 1.5^n, capped at max(backoff_max_delay, interval)
    assert "a" in w.jobs and not w.dropped
    assert caplog.text.count("HTTP 503") == 6
    w.observe("a", item("a", "Running"))
    assert w.jobs["a"].failures == 0


def test_schema_errors_under_strict_are_reported_once_retried_and_give_one_event_per_change(caplog):
    clock = FakeClock()
    w = watcher(clock=clock)
    caplog.set_level(logging.DEBUG, LOGGER)
    assert w.observe("a", item("a", "Running"))
    event = w.record_error("a", schema_error("a", "Running"))["modelarts"]
    assert event["phase"] is None and event["previous_phase"] == "Running"
    assert event["schema_errors"] == [{"path": "$.metadata.annotations.x-bad", "message": "12345 is not of type 'string'"}]
    assert event["training_job"]["id"] == "a" and event["training_job"]["phase"] == "Running"
    assert event["training_job"]["schema_errors"] == event["schema_errors"]
    assert "a" in w.jobs and w.jobs["a"].failures == 1 and w.jobs["a"].due == clock.now + 2.0  # retried with backoff
    for _again in range(3):
        assert w.record_error("a", schema_error("a", "Running")) is None
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and "training job a" in warnings[0] and "$.metadata.annotations.x-bad" in warnings[0]
    # Another phase in the bad document is another event (and warning); never a phase-change event.
    later = w.record_error("a", schema_error("a", "Completed"))
    assert later["modelarts"]["phase"] is None and later["modelarts"]["training_job"]["phase"] == "Completed"
    assert "a" in w.jobs
    # Valid again: a phase change against the last accepted phase, Running.
    assert w.observe("a", item("a", "Running")) is None
    assert w.observe("a", item("a", "Completed"))["modelarts"]["previous_phase"] == "Running"


def test_not_found_is_tolerated_only_right_after_creation():
    w = watcher()
    missing = FakeError("get training job a: HTTP 404", status=404, not_found=True)
    for _attempt in range(3):
        w.record_error("a", missing)
        assert "a" in w.jobs
    w.record_error("a", missing)
    assert "a" not in w.jobs and "HTTP 404" in w.dropped["a"]
    # A job seen once and then not found was deleted: no tolerance.
    w.observe("b", item("b", "Running"))
    w.record_error("b", FakeError("get training job b: HTTP 404", status=404, not_found=True))
    assert "b" not in w.jobs and "b" in w.dropped


def test_a_name_given_as_an_id_is_not_waited_for_as_a_job_just_created(caplog):
    """Issue 50: a "not found" for a value that cannot be an id (ModelArtsError.not_an_id) is final at the first poll."""
    w = watcher()
    caplog.set_level(logging.ERROR, LOGGER)
    missing = FakeError("get training job a: HTTP 400 ModelArts.2775: ... (not a training job id, ...)", status=400, not_found=True)
    missing.not_an_id = True
    w.record_error("a", missing)
    assert "a" not in w.jobs and "not a training job id" in w.dropped["a"] and "no longer watched" in caplog.text


def test_permission_error_drops_one_job_credential_error_ends_the_source(caplog):
    w = watcher()
    caplog.set_level(logging.ERROR, LOGGER)
    w.record_error("a", FakeError("get training job a: HTTP 403 ModelArts.2771: no permission", status=403, error_code="ModelArts.2771"))
    assert "a" in w.dropped and "b" in w.jobs
    assert "no longer watched" in caplog.text
    with pytest.raises(source.SourceError, match="APIG.0301"):
        w.record_error("b", FakeError("get training job b: HTTP 401 APIG.0301: bad signature", status=401, error_code="APIG.0301"))


def test_dropped_jobs_end_the_source_with_an_error_naming_them():
    w = watcher()
    w.observe("a", item("a", "Completed"))
    w.record_error("b", FakeError("get training job b: HTTP 403 forbidden", status=403))
    assert w.done()
    with pytest.raises(source.SourceError, match="1 training job.*b: get training job b: HTTP 403"):
        w.finish()


def test_events_and_messages_are_scrubbed_of_secrets(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    w = watcher()
    event = w.observe("a", item("a", "Running", details={"spec": {"env": ["TOKEN=" + SECRET]}}))
    assert SECRET not in repr(event) and "********" in repr(event)
    w.record_error("b", FakeError("failed with " + SECRET, status=403))
    assert SECRET not in w.dropped["b"] and SECRET not in caplog.text


# -- watching by name ----------------------------------------------------------------------------


def test_one_bad_document_in_a_name_search_does_not_stall_the_others(caplog):
    w = watcher({"training_job_ids": None, "name": "shared"})
    caplog.set_level(logging.WARNING, LOGGER)
    found = {
        "a": item("a", "Running"),
        "bad": schema_error("bad", "Running"),
        ("search", 2): SchemaValidationError("search result 2", [{"path": "$.metadata.id", "message": "None is not of type 'string'"}], "v2"),
    }
    events = w.searched(list(found), found)
    assert [(e["modelarts"]["training_job"]["id"], e["modelarts"]["phase"]) for e in events] == [("a", "Running"), ("bad", None), (None, None)]
    assert events[1]["modelarts"]["schema_errors"][0]["path"] == "$.metadata.annotations.x-bad"
    # The next searches: the good job keeps producing events, the bad ones stay quiet while unchanged.
    found["a"] = item("a", "Completed")
    events = w.searched(list(found), found)
    assert [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events] == [
        ("a", "Running", "Completed")
    ]
    assert w.searched(list(found), found) == []
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "training job bad" in warnings[0] and "$.metadata.annotations.x-bad" in warnings[0]
    assert "search result 2" in warnings[1] and "$.metadata.id" in warnings[1]
    # The bad job is still watched and reported again when its document changes.
    found["bad"] = item("bad", "Completed")
    assert [e["modelarts"]["phase"] for e in w.searched(list(found), found)] == ["Completed"]
    assert "bad" in w.finished and not w.done()


def test_a_name_watch_judges_a_failed_get_like_a_polls_error(caplog):
    # Issue 28: a job the name search shows in a final phase is answered by its GET (Query.settle); a GET that fails is
    # tolerated (transient) or drops the job (for good), never taken for an invalid document nor for the search's phase.
    w = watcher({"training_job_ids": None, "name": "shared"})
    caplog.set_level(logging.WARNING, LOGGER)
    found = {"a": item("a", "Running"), "b": FakeError("get training job b: HTTP 503", status=503, transient=True)}
    events = w.searched(list(found), found)
    assert [(e["modelarts"]["training_job"]["id"], e["modelarts"]["phase"]) for e in events] == [("a", "Running")]
    assert "b" in w.jobs and not w.jobs["b"].seen and w.jobs["b"].failures == 1
    found["b"] = FakeError("get training job b: HTTP 403 ModelArts.0100", status=403)
    assert w.searched(list(found), found) == []
    assert "b" in w.dropped and "b" not in w.jobs
    assert w.searched(list(found), found) == [] and "b" not in w.jobs  # a dropped job is not watched again


def test_a_job_the_search_no_longer_returns_is_forgotten():
    w = watcher({"training_job_ids": None, "name": "shared"})
    w.searched(["a", "b"], {"a": item("a", "Running"), "b": item("b", "Pending")})
    w.searched(["a"], {"a": item("a", "Running")})
    assert list(w.jobs) == ["a"]


def test_watching_by_name_polls_once_per_interval():
    """Only the search is scheduled: a job seen by it must not make the next search due at once."""
    clock = FakeClock()
    w = watcher({"training_job_ids": None, "name": "shared"}, clock=clock)
    w.searched(["a"], {"a": item("a", "Running")})
    w.search_state.due = w._next_round(clock.now)  # pylint: disable=protected-access
    assert w.next_due() == clock.now + 2.0


def test_search_errors_are_judged_like_poll_errors():
    w = watcher({"training_job_ids": None, "name": "shared"})
    w.record_search_error(FakeError("search: HTTP 503", status=503, transient=True))
    assert w.search_state.failures == 1
    with pytest.raises(source.SourceError, match="HTTP 403"):
        w.record_search_error(FakeError("search: HTTP 403 forbidden", status=403))


# -- diagnostics ----------------------------------------------------------------------------------


def test_events_ask_the_door_for_diagnostics_except_for_untrusted_documents():
    built = watcher()
    asked = []
    built.query.diagnose = lambda items, deadline=None: asked.extend(items) or {}
    failed = built.observe("a", item("a", "Failed", api_version="v2"))
    invalid = built.invalid("b", schema_error("b", "Failed"))
    events = built.diagnosed([failed, invalid])
    assert [entry["id"] for entry in asked] == ["a"], "the invalid document's phase is not trusted"
    assert events[1]["modelarts"]["training_job"]["diagnostics"] is None
    assert events[0]["modelarts"]["training_job"] is asked[0]


# -- bulk rounds ----------------------------------------------------------------------------------


def many(count):
    return ["job-%03d" % index for index in range(count)]


def test_many_jobs_are_read_in_batches_whose_first_polls_spread_over_one_interval():
    clock = FakeClock()
    built = watcher({"training_job_ids": many(35), "interval": 4}, clock=clock)
    assert built.source.batch == 10
    dues = sorted(set(state.due - clock() for state in built.jobs.values()))
    assert dues == [0.0, 1.0, 2.0, 3.0]  # four batches, a quarter of an interval apart
    assert sum(1 for state in built.jobs.values() if state.due == clock()) == 10


def test_a_round_fills_its_last_batch_with_the_jobs_due_soonest_and_never_one_in_backoff():
    clock = FakeClock()
    built = watcher({"training_job_ids": many(25), "interval": 3}, clock=clock)
    keys = list(built.jobs)
    for index, key in enumerate(keys):
        built.jobs[key].due = clock() + (0 if index < 13 else index)
    built.jobs[keys[13]].failures = 1  # backing off after an error: not pulled early
    picked = built.round_keys(clock())
    assert len(picked) == 20 and picked[:13] == keys[:13]
    assert picked[13:] == keys[14:21]


def test_one_job_is_one_get_a_round():
    built = watcher({"training_job_ids": ["only"]})
    assert built.source.batch == 1 and built.round_keys(built.clock()) == ["only"]


def test_the_jobs_of_a_throttled_round_are_polled_one_interval_later():
    clock = FakeClock()
    built = watcher({"training_job_ids": many(3), "interval": 4}, clock=clock)
    keys = list(built.jobs)
    built._schedule(clock(), keys)  # pylint: disable=protected-access
    assert all(built.jobs[key].due == clock() + 4 for key in keys)
    built.query.client._throttled += 2  # pylint: disable=protected-access  # two 429 answers during the next round
    built._schedule(clock(), keys)  # pylint: disable=protected-access
    assert all(built.jobs[key].due == clock() + 8 for key in keys)
    built._schedule(clock(), keys)  # pylint: disable=protected-access
    assert all(built.jobs[key].due == clock() + 4 for key in keys)  # no 429 since: back to the interval
