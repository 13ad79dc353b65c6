# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source's own logic: arguments, change detection, error policy, secrets, and ``main()`` against the emulator.

The source is loaded from the staged collection with ``runpy.run_path``, as ansible-rulebook does,
so these tests also prove that its ``ansible_collections`` imports resolve without any help.
"""

import asyncio
import logging
import re
import time

import pytest

from eda_helpers import connection_args, load_source, unique_id

LOGGER = "modelarts.training.training_job_phase"


@pytest.fixture(scope="module")
def src(collection_root):
    """The source module's globals."""
    return load_source(collection_root)


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


def item(key, phase, terminal=None):
    return {"id": key, "name": "job-" + key, "phase": phase, "terminal": phase in ("Completed", "Failed", "Terminated", "Abnormal")
            if terminal is None else terminal, "schema_errors": []}


def watcher(src, args=None, clock=None, **kwargs):
    settings = src["Settings"](dict({"training_job_ids": ["a", "b"], "interval": 2}, **(args or {})))
    return src["Watcher"](settings, clock=clock or FakeClock(), **kwargs)


def run(coro, timeout=30):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def collect(src, args, queue=None, until=None):
    """Run main() until it returns (or ``until(events)`` is true, then cancel it); return the events."""
    queue = queue or asyncio.Queue()
    task = asyncio.ensure_future(src["main"](queue, args))
    events = []
    while True:
        getter = asyncio.ensure_future(queue.get())
        done, _pending = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            events.append(getter.result())
            if until and until(events):
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                return events
            continue
        getter.cancel()
        while not queue.empty():
            events.append(queue.get_nowait())
        task.result()
        return events


def phases(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events]


# -- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    ({}, "exactly one of training_job_ids or name"),
    ({"training_job_ids": ["a"], "name": "n"}, "exactly one of training_job_ids or name"),
    ({"training_job_ids": " , "}, "holds no job id"),
    ({"training_job_ids": {"a": 1}}, "list of job ids"),
    ({"name": "n", "interval": 0}, "interval must be a number of seconds greater than 0"),
    ({"name": "n", "interval": -1}, "greater than 0"),
    ({"name": "n", "interval": "soon"}, "interval must be a number"),
    ({"name": "n", "interval": True}, "interval must be a number"),
    ({"name": "n", "validate": "loose"}, "validate must be one of strict, warn, off"),
    ({"name": "n", "fail_on": ["Broken"]}, "unknown phases Broken"),
    ({"name": "n", "max_concurrency": 0}, "max_concurrency must be at least 1"),
    ({"name": "n", "stop_when_done": "perhaps"}, "stop_when_done must be a boolean"),
    ({"name": "n", "intervall": 3}, "unknown arguments intervall"),
])
def test_bad_arguments_are_refused_before_any_request(src, args, message):
    with pytest.raises(src["SourceConfigError"], match=message):
        src["Settings"](args)


def test_arguments_from_rulebook_strings(src):
    settings = src["Settings"]({"training_job_ids": "a, b,,a", "interval": "0.5", "max_concurrency": "4", "stop_when_done": "true",
                                "fail_on": "Failed,Abnormal", "eda_feedback_queue": object()})
    assert settings.ids == ["a", "b"]
    assert settings.interval == 0.5 and settings.max_concurrency == 4 and settings.stop_when_done is True
    assert settings.fail_on == ("Failed", "Abnormal")
    defaults = src["Settings"]({"name": "n"})
    assert defaults.interval == 10.0 and defaults.validate == "strict" and defaults.stop_when_done is False
    assert defaults.fail_on == ("Failed", "Abnormal", "Terminated")


def test_connection_options_fall_back_to_the_shared_environment_variables(src):
    table = src["CONNECTION_OPTIONS"]
    environ = {table[name][1]: value for name, value in (
        ("region", "cn-north-4"), ("access_key", "AK-ENV"), ("secret_key", "SK-ENV"), ("validate_certs", "false"), ("ca_bundle", "~/ca.pem"))}
    params = src["connection_params"]({"access_key": "AK-ARG", "backoff_retries": "2", "request_timeout": 7}, environ)
    assert params["access_key"] == "AK-ARG"          # an argument wins over its variable
    assert params["secret_key"] == "SK-ENV" and params["region"] == "cn-north-4"
    assert params["validate_certs"] is False and params["backoff_retries"] == 2 and params["request_timeout"] == 7.0
    assert params["ca_bundle"].endswith("/ca.pem") and not params["ca_bundle"].startswith("~")
    # Every option with a variable is read from it: the table is the only list of names.
    every = dict((env, "x") for _name, (_spec, env) in table.items() if env)
    every["HUAWEICLOUD_VALIDATE_CERTS"] = "yes"
    assert set(src["connection_params"]({}, every)) == set(name for name, (_spec, env) in table.items() if env)


def test_bad_option_types_name_the_option_never_the_value(src):
    with pytest.raises(src["SourceConfigError"], match="validate_certs must be a boolean"):
        src["connection_params"]({"validate_certs": "maybe"}, {})
    with pytest.raises(src["SourceConfigError"], match="backoff_retries must be an integer"):
        src["connection_params"]({"backoff_retries": "many"}, {})
    with pytest.raises(src["SourceConfigError"]) as caught:
        src["connection_params"]({"secret_key": 12345678987654321}, {})
    assert "12345678987654321" not in str(caught.value) and "secret_key must be a string" in str(caught.value)


def test_credential_problems_end_the_source_with_the_option_names(src):
    with pytest.raises(src["SourceConfigError"], match="no credentials.*HUAWEICLOUD_SDK_AK"):
        run(src["main"](asyncio.Queue(), {"training_job_ids": ["a"], "region": "cn-north-4"}))
    secret = "Conflicting-Secret-Value-1234"
    with pytest.raises(src["SourceConfigError"]) as caught:
        src["build_watcher"]({"training_job_ids": ["a"], "region": "r"}, {"HUAWEICLOUD_SDK_AK": "ak", "HUAWEICLOUD_SDK_SK": secret,
                                                                          "HUAWEICLOUD_SDK_AUTH_TOKEN": secret})
    assert "conflicting credentials" in str(caught.value) and secret not in str(caught.value)


# -- change detection and error policy (fake clock, no I/O) --------------------------------------


def test_one_event_per_phase_change_including_the_first(src):
    w = watcher(src)
    first = w.observe("a", item("a", "Pending"))
    assert first == {"modelarts": {"training_job": item("a", "Pending"), "previous_phase": None, "phase": "Pending"}}
    assert w.observe("a", item("a", "Pending")) is None
    assert w.observe("a", item("a", "Running"))["modelarts"]["previous_phase"] == "Pending"
    assert w.observe("a", item("a", "Running")) is None
    done = w.observe("a", item("a", "Completed"))
    assert (done["modelarts"]["previous_phase"], done["modelarts"]["phase"]) == ("Running", "Completed")
    assert "a" not in w.jobs and w.finished == {"a": "Completed"}
    assert not w.done()
    w.observe("b", item("b", "Failed"))
    assert w.done()


def test_first_observation_of_a_finished_job_is_one_event(src):
    w = watcher(src)
    event = w.observe("a", item("a", "Completed"))
    assert (event["modelarts"]["previous_phase"], event["modelarts"]["phase"]) == (None, "Completed")
    assert "a" in w.finished


def test_an_unreadable_phase_is_no_event(src, caplog):
    w = watcher(src)
    caplog.set_level(logging.WARNING, LOGGER)
    assert w.observe("a", dict(item("a", None), schema_errors=[{"path": "$.status.phase", "message": "missing"}])) is None
    assert "$.status.phase" in caplog.text
    assert w.observe("a", item("a", "Running"))["modelarts"]["previous_phase"] is None


def test_transient_errors_back_off_and_keep_the_job(src, caplog):
    clock = FakeClock()
    w = watcher(src, clock=clock, backoff_cap=5.0)
    caplog.set_level(logging.WARNING, LOGGER)
    delays = []
    for _attempt in range(6):
        w.record_error("a", FakeError("get training job a: HTTP 503", status=503, transient=True))
        delays.append(round(w.jobs["a"].due - clock.now, 3))
    assert delays == [2.0, 3.0, 4.5, 5.0, 5.0, 5.0]     # interval * 1.5^n, capped at max(backoff_max_delay, interval)
    assert "a" in w.jobs and not w.dropped
    assert caplog.text.count("HTTP 503") == 6
    w.observe("a", item("a", "Running"))
    assert w.jobs["a"].failures == 0


def test_schema_errors_are_retried_not_fatal(src, collection_root):
    validation = load_module_utils(collection_root, "validation")
    w = watcher(src)
    w.record_error("a", validation["SchemaValidationError"]("a", [{"path": "$.status", "message": "is not an object"}], "v2"))
    assert "a" in w.jobs and w.jobs["a"].failures == 1


def load_module_utils(collection_root, name):
    import importlib  # pylint: disable=import-outside-toplevel
    module = importlib.import_module("ansible_collections.modelarts.training.plugins.module_utils." + name)
    return vars(module)


def test_not_found_is_tolerated_only_right_after_creation(src):
    w = watcher(src)
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


def test_permission_error_drops_one_job_credential_error_ends_the_source(src, caplog):
    w = watcher(src)
    caplog.set_level(logging.ERROR, LOGGER)
    w.record_error("a", FakeError("get training job a: HTTP 403 ModelArts.2771: no permission", status=403, error_code="ModelArts.2771"))
    assert "a" in w.dropped and "b" in w.jobs
    assert "no longer watched" in caplog.text
    with pytest.raises(src["SourceError"], match="APIG.0301"):
        w.record_error("b", FakeError("get training job b: HTTP 401 APIG.0301: bad signature", status=401, error_code="APIG.0301"))


def test_dropped_jobs_end_the_source_with_an_error_naming_them(src):
    w = watcher(src)
    w.observe("a", item("a", "Completed"))
    w.record_error("b", FakeError("get training job b: HTTP 403 forbidden", status=403))
    assert w.done()
    with pytest.raises(src["SourceError"], match="1 training job.*b: get training job b: HTTP 403"):
        w._finish()  # pylint: disable=protected-access


def test_events_and_messages_are_scrubbed_of_secrets(src):
    secret = "S3cret-Value-In-A-Document"

    def redact(text):
        return text.replace(secret, "********")

    w = watcher(src, redact=redact)
    event = w.observe("a", dict(item("a", "Running"), details={"spec": {"env": ["TOKEN=" + secret]}}))
    assert secret not in repr(event) and "********" in repr(event)
    w.record_error("b", FakeError("failed with " + secret, status=403))
    assert secret not in w.dropped["b"]


# -- main() against the emulator ---------------------------------------------------------------


def test_main_time_driven_job_gives_each_phase_once_in_order(src, emulator):
    job = unique_id("logic-time")
    emulator.add_jobs([{"id": job, "name": "logic-time", "timeline": [
        {"phase": "Pending", "seconds": 1.0}, {"phase": "Running", "seconds": 1.0}, "Completed"]}])
    events = run(collect(src, dict(connection_args(emulator), training_job_ids=[job], interval=0.2, stop_when_done=True)))
    assert phases(events) == [(job, None, "Pending"), (job, "Pending", "Running"), (job, "Running", "Completed")]
    finished = events[-1]["modelarts"]["training_job"]
    assert finished["completed"] is True and finished["terminal"] is True and finished["api_version"] == "v2"
    assert finished["details"]["metadata"]["id"] == job


def test_main_reads_connection_from_environment(src, emulator, monkeypatch):
    for name, value in emulator.env().items():
        monkeypatch.setenv(name, value)
    # Without a project id the source looks it up in IAM (from the region) before the first poll.
    monkeypatch.delenv("HUAWEICLOUD_SDK_PROJECT_ID")
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    job = unique_id("logic-env")
    emulator.add_jobs([{"id": job, "name": "logic-env", "phase": "Completed"}])
    events = run(collect(src, {"training_job_ids": job, "interval": 0.2, "stop_when_done": True}))
    assert phases(events) == [(job, None, "Completed")]
    paths = [entry["path"] for entry in emulator.requests(since=since)]
    assert paths[0].startswith("/v3/projects") and any(job in path for path in paths[1:])


def test_main_idles_after_the_last_job_unless_told_to_stop(src, emulator):
    job = unique_id("logic-idle")
    emulator.add_jobs([{"id": job, "name": "logic-idle", "phase": "Failed"}])

    async def scenario():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(src["main"](queue, dict(connection_args(emulator), training_job_ids=[job], interval=0.1)))
        event = await asyncio.wait_for(queue.get(), 10)
        await asyncio.sleep(0.5)
        running = not task.done()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return event, running, emulator.requests(path="/training-jobs/%s" % job)

    event, running, requests = run(scenario())
    assert event["modelarts"]["phase"] == "Failed" and running
    assert len(requests) == 1          # a finished job is never polled again


def test_main_name_search_picks_up_jobs_created_later(src, emulator):
    name = unique_id("logic-name")
    first = unique_id("logic-name-a")
    emulator.add_jobs([{"id": first, "name": name, "timeline": [{"phase": "Running", "seconds": 0.6}, "Completed"]}])
    later = unique_id("logic-name-b")

    async def scenario():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(src["main"](queue, dict(connection_args(emulator), name=name, interval=0.2)))
        events = [await asyncio.wait_for(queue.get(), 10) for _index in range(2)]
        await asyncio.to_thread(emulator.add_jobs, [{"id": later, "name": name, "timeline": [{"phase": "Pending", "seconds": 0.6}, "Failed"]}])
        events += [await asyncio.wait_for(queue.get(), 10) for _index in range(2)]
        await asyncio.sleep(0.6)
        extra = queue.qsize()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return events, extra

    events, extra = run(scenario())
    assert phases(events) == [(first, None, "Running"), (first, "Running", "Completed"), (later, None, "Pending"), (later, "Pending", "Failed")]
    assert extra == 0


def test_main_name_search_survives_a_503_burst(src, emulator, caplog):
    caplog.set_level(logging.WARNING, LOGGER)
    name = unique_id("logic-search-503")
    job = unique_id("logic-search-503-job")
    emulator.add_jobs([{"id": job, "name": name, "timeline": [{"phase": "Running", "seconds": 0.8}, "Completed"]}])
    emulator.add_fault(type="error", status=503, count=3, after=1, target="search")
    events = run(collect(src, dict(connection_args(emulator), name=name, interval=0.1, backoff_retries=0),
                         until=lambda events: events[-1]["modelarts"]["phase"] == "Completed"))
    assert phases(events) == [(job, None, "Running"), (job, "Running", "Completed")]
    assert caplog.text.count("HTTP 503") == 3


def test_main_ends_when_every_job_is_unreadable(src, emulator):
    missing = unique_id("logic-missing")
    with pytest.raises(src["SourceError"], match="could not be read.*%s" % missing):
        run(collect(src, dict(connection_args(emulator), training_job_ids=[missing], interval=0.05)))


def test_main_never_blocks_the_event_loop(src, emulator):
    job = unique_id("logic-stall")
    emulator.add_jobs([{"id": job, "name": "logic-stall", "phase": "Running"}])
    emulator.add_fault(type="delay", seconds=1.5, count=1, job=job)

    async def scenario():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(src["main"](queue, dict(connection_args(emulator), training_job_ids=[job], interval=0.2)))
        gaps = []
        last = time.monotonic()
        while queue.empty():
            await asyncio.sleep(0.02)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return gaps

    gaps = run(scenario())
    assert sum(gaps) >= 1.4            # the stalled request did take its time ...
    assert max(gaps) < 0.3             # ... while the loop kept turning


def test_no_secret_in_events_or_logs_with_password_auth_and_errors(src, emulator, caplog):
    caplog.set_level(logging.DEBUG)
    job = unique_id("logic-secret")
    emulator.add_jobs([{"id": job, "name": "logic-secret", "timeline": [{"phase": "Running", "polls": 2}, "Completed"]}])
    emulator.add_fault(type="error", status=503, count=2, job=job)
    args = {"region": emulator.region, "endpoint": emulator.url, "iam_endpoint": emulator.url, "ca_bundle": emulator.ca_file,
            "username": emulator.username, "password": emulator.password, "domain_name": emulator.domain_name,
            "training_job_ids": [job], "interval": 0.1, "backoff_retries": 0, "stop_when_done": True}
    events = run(collect(src, args))
    assert phases(events)[-1] == (job, "Running", "Completed")
    assert emulator.requests(path="/v3/auth/tokens"), "password auth must have fetched an IAM token"
    text = repr(events) + "\n".join(record.getMessage() for record in caplog.records)
    assert "HTTP 503" in text
    assert emulator.password not in text
    assert not re.search(r"MII[A-Za-z0-9+/]{40,}", text)     # the emulator's IAM tokens look like this

    wrong = "Wr0ng-Secret-Key-Never-Shown-9d1e"
    caplog.clear()
    with pytest.raises(src["SourceError"]) as caught:
        run(collect(src, dict(connection_args(emulator), secret_key=wrong, training_job_ids=[job], interval=0.1)))
    assert "APIG.0301" in str(caught.value)
    assert wrong not in str(caught.value) and wrong not in caplog.text
