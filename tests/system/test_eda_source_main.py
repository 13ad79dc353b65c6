# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source's ``main()`` against the HTTPS emulator, loaded the way ansible-rulebook loads it.

The source is loaded from the staged collection with ``runpy.run_path``, as ansible-rulebook does,
so these tests also prove that its ``ansible_collections`` imports resolve without any help.  Its
pure logic (arguments, change detection, verdicts) is tested without I/O in
tests/unit/plugins/event_source/test_training_job_phase.py.
"""

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from eda_helpers import SOURCE_PATH, connection_args, load_source, unique_id

LOGGER = "modelarts.training.training_job_phase"


@pytest.fixture(scope="module")
def src(collection_root):
    """The source module's globals."""
    return load_source(collection_root)


def run(coro, timeout=30):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def collect(src, args, queue=None, until=None, react=None):
    """Run main() until it returns (or ``until(events)`` is true, then cancel it); return the events.

    ``react(events)``, a coroutine function, is awaited after each event (to move the emulator's clock, say).
    """
    queue = queue or asyncio.Queue()
    task = asyncio.ensure_future(src["main"](queue, args))
    events = []
    while True:
        getter = asyncio.ensure_future(queue.get())
        done, _pending = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            events.append(getter.result())
            if react:
                await react(events)
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


# A timed step of the jobs below lasts this long: longer than any test runs, so that only the emulator's clock,
# moved by the test when the source has reported what it waits for, takes a job on (never the source's speed).
STEP = 3600


def seen(events):
    """The (job id, phase) of each event."""
    return {(e["modelarts"]["training_job"]["id"], e["modelarts"]["phase"]) for e in events}


def clock_driver(emulator, *stages):
    """A ``react`` for :func:`collect`: moves the emulator's clock on by STEP each time every (job id, phase) of the next
    stage has been an event."""
    waiting = [set(stage) for stage in stages]

    async def react(events):
        while waiting and waiting[0] <= seen(events):
            waiting.pop(0)
            await asyncio.to_thread(emulator.advance_clock, STEP)

    return react


# -- main() against the emulator ---------------------------------------------------------------


def test_main_time_driven_job_gives_each_phase_once_in_order(src, modelarts_emulator):
    emulator = modelarts_emulator  # reset after the test: the clock moved here moves no other test's jobs
    job = unique_id("logic-time")
    emulator.add_jobs(
        [{"id": job, "name": "logic-time", "timeline": [{"phase": "Pending", "seconds": STEP}, {"phase": "Running", "seconds": STEP}, "Completed"]}]
    )
    react = clock_driver(emulator, [(job, "Pending")], [(job, "Running")])
    events = run(collect(src, dict(connection_args(emulator), training_job_ids=[job], interval=0.2, stop_when_done=True), react=react))
    assert phases(events) == [(job, None, "Pending"), (job, "Pending", "Running"), (job, "Running", "Completed")]
    finished = events[-1]["modelarts"]["training_job"]
    assert finished["completed"] is True and finished["terminal"] is True and finished["api_version"] == "v2"
    assert finished["details"]["metadata"]["id"] == job


def test_main_reads_connection_from_environment(src, emulator, monkeypatch):
    for name, value in emulator.env().items():
        monkeypatch.setenv(name, value)
    # Without a project id the source looks it up in IAM (from the region) before the first poll.
    monkeypatch.delenv("HUAWEICLOUD_SDK_PROJECT_ID")
    since = emulator.mark()
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
    polls = [entry for entry in requests if entry["path"].rstrip("/").endswith(job)]
    assert len(polls) == 1  # a finished job is never polled again
    # Its diagnostics were read once, when its event was made: the events and worker-0's log.
    assert sorted(entry["path"].rsplit("/", 1)[-1] for entry in requests if entry not in polls) == ["events", "worker-0"]
    assert event["modelarts"]["training_job"]["diagnostics"]["tasks"][0]["task_id"] == "worker-0"


def test_main_name_search_picks_up_jobs_created_later(src, modelarts_emulator):
    emulator = modelarts_emulator
    name = unique_id("logic-name")
    first = unique_id("logic-name-a")
    emulator.add_jobs([{"id": first, "name": name, "timeline": [{"phase": "Running", "seconds": STEP}, "Completed"]}])
    later = unique_id("logic-name-b")

    async def scenario():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(src["main"](queue, dict(connection_args(emulator), name=name, interval=0.2)))
        events = [await asyncio.wait_for(queue.get(), 30)]
        await asyncio.to_thread(emulator.advance_clock, STEP)
        events.append(await asyncio.wait_for(queue.get(), 30))
        await asyncio.to_thread(emulator.add_jobs, [{"id": later, "name": name, "timeline": [{"phase": "Pending", "seconds": STEP}, "Failed"]}])
        events.append(await asyncio.wait_for(queue.get(), 30))
        await asyncio.to_thread(emulator.advance_clock, STEP)
        events.append(await asyncio.wait_for(queue.get(), 30))
        await asyncio.sleep(0.6)
        extra = queue.qsize()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return events, extra

    events, extra = run(scenario(), timeout=120)
    assert phases(events) == [(first, None, "Running"), (first, "Running", "Completed"), (later, None, "Pending"), (later, "Pending", "Failed")]
    assert extra == 0


def test_main_name_search_survives_a_503_burst(src, modelarts_emulator, caplog):
    emulator = modelarts_emulator
    caplog.set_level(logging.INFO, LOGGER)
    name = unique_id("logic-search-503")
    job = unique_id("logic-search-503-job")
    emulator.add_jobs([{"id": job, "name": name, "timeline": [{"phase": "Running", "seconds": STEP}, "Completed"]}])
    emulator.add_fault(type="error", status=503, count=3, after=1, target="search")

    def burst_over():
        # The three searches after the first were answered 503: the job completes only after the burst.
        while len([entry for entry in emulator.requests(path="/training-job-searches") if entry["status"] == 503]) < 3:
            time.sleep(0.05)
        emulator.advance_clock(STEP)

    async def react(events):
        if len(events) == 1:
            await asyncio.wait_for(asyncio.to_thread(burst_over), 60)

    events = run(
        collect(
            src,
            dict(connection_args(emulator), name=name, interval=0.1, backoff_retries=0),
            until=lambda events: events[-1]["modelarts"]["phase"] == "Completed",
            react=react,
        ),
        timeout=120,
    )
    assert phases(events) == [(job, None, "Running"), (job, "Running", "Completed")]
    # Each 503 is logged once, whichever of a round's searches it answered (the search for new jobs warns, the search for
    # the unfinished ones says at INFO that it failed this round): count them at INFO.
    assert caplog.text.count("HTTP 503") == 3


def test_main_ends_when_every_job_is_unreadable(src, emulator):
    missing = unique_id("logic-missing")
    with pytest.raises(src["SourceError"], match="could not be read.*%s" % missing):
        run(collect(src, dict(connection_args(emulator), training_job_ids=[missing], interval=0.05)))


def test_main_never_blocks_the_event_loop(src, modelarts_emulator):
    # modelarts_emulator: its reset after the test forgets the stalled request (not written into a later test's log).
    emulator = modelarts_emulator
    job = unique_id("logic-stall")
    emulator.add_jobs([{"id": job, "name": "logic-stall", "phase": "Running"}])
    fault = emulator.add_fault(type="delay", seconds=3, count=1, job=job)

    def stalled():
        # The emulator has received the GET it stalls (the fault was hit): that request is now in flight.
        while not [entry for entry in emulator.faults() if entry["id"] == fault and entry["hits"]]:
            time.sleep(0.02)

    async def scenario():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(src["main"](queue, dict(connection_args(emulator), training_job_ids=[job], interval=0.2)))
        # This coroutine runs on while the stalled request is in flight only if the loop keeps turning: a source that
        # made the request on the loop's thread would hold it until the answer came, and its event with it.
        await asyncio.wait_for(asyncio.to_thread(stalled), 30)
        answered_before_the_loop_turned = not queue.empty()
        event = await asyncio.wait_for(queue.get(), 30)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return answered_before_the_loop_turned, event

    answered_before_the_loop_turned, event = run(scenario(), timeout=60)
    assert not answered_before_the_loop_turned
    assert event["modelarts"]["phase"] == "Running"  # ... and the stalled request did give its event


def test_a_cancelled_source_abandons_the_request_in_flight(src, modelarts_emulator):
    """ansible-rulebook cancels its sources at shutdown.  A request a worker thread has in flight then is abandoned (its
    socket shut, no retry): neither the thread nor ``asyncio.run``'s shutdown of the default executor waits for the
    answer, which the emulator stalls far longer than the test waits."""
    emulator = modelarts_emulator  # its reset after the test forgets the request the delay fault holds for 600 s
    job = unique_id("logic-cancel")
    emulator.add_jobs([{"id": job, "name": "logic-cancel", "phase": "Running"}])
    fault = emulator.add_fault(type="delay", seconds=600, count=1, job=job)

    def stalled():
        while not [entry for entry in emulator.faults() if entry["id"] == fault and entry["hits"]]:
            time.sleep(0.02)

    async def scenario():
        queue = asyncio.Queue()
        args = dict(connection_args(emulator), training_job_ids=[job], interval=0.2, request_timeout=900, backoff_retries=0)
        task = asyncio.ensure_future(src["main"](queue, args))
        await asyncio.wait_for(asyncio.to_thread(stalled), 30)
        task.cancel()
        outcome = await asyncio.gather(task, return_exceptions=True)
        return queue.empty(), outcome

    ended = []
    # asyncio.run waits for the default executor's threads as it ends: it returns only once the worker thread that ran
    # the stalled round has returned too.
    runner = threading.Thread(target=lambda: ended.append(asyncio.run(scenario())), name="cancelled-source", daemon=True)
    runner.start()
    runner.join(120)
    assert not runner.is_alive(), "the cancelled source's worker thread still waits for the answer the emulator stalls for 600 s"
    empty, outcome = ended[0]
    assert empty and isinstance(outcome[0], asyncio.CancelledError), outcome


def test_no_secret_in_events_or_logs_with_password_auth_and_errors(src, emulator, caplog):
    caplog.set_level(logging.DEBUG)
    job = unique_id("logic-secret")
    emulator.add_jobs([{"id": job, "name": "logic-secret", "timeline": [{"phase": "Running", "polls": 2}, "Completed"]}])
    emulator.add_fault(type="error", status=503, count=2, job=job)
    args = {
        "region": emulator.region,
        "endpoint": emulator.url,
        "iam_endpoint": emulator.url,
        "ca_bundle": emulator.ca_file,
        "username": emulator.username,
        "password": emulator.password,
        "domain_name": emulator.domain_name,
        "training_job_ids": [job],
        "interval": 0.1,
        "backoff_retries": 0,
        "stop_when_done": True,
    }
    events = run(collect(src, args))
    assert phases(events)[-1] == (job, "Running", "Completed")
    assert emulator.requests(path="/v3/auth/tokens"), "password auth must have fetched an IAM token"
    text = repr(events) + "\n".join(record.getMessage() for record in caplog.records)
    assert "HTTP 503" in text
    assert emulator.password not in text
    assert not re.search(r"MII[A-Za-z0-9+/]{40,}", text)  # the emulator's IAM tokens look like this

    wrong = "Wr0ng-Secret-Key-Never-Shown-9d1e"
    caplog.clear()
    with pytest.raises(src["SourceError"]) as caught:
        run(collect(src, dict(connection_args(emulator), secret_key=wrong, training_job_ids=[job], interval=0.1)))
    assert "APIG.0301" in str(caught.value)
    assert wrong not in str(caught.value) and wrong not in caplog.text


# -- how ansible-rulebook loads it ----------------------------------------------------------------


def test_loaded_like_ansible_rulebook_the_source_adds_one_path_entry_only_when_it_must(collection_root, tmp_path):
    """ansible-rulebook runs the file with runpy.run_path() and nothing on sys.path: the source appends its own tree, once."""
    path = os.path.join(collection_root, "ansible_collections", "modelarts", "training", *SOURCE_PATH)
    code = (
        "import json, runpy, sys; before = list(sys.path); module = runpy.run_path(sys.argv[1]); "
        "print(json.dumps({'added': [p for p in sys.path if p not in before], 'last': sys.path[-1], 'main': callable(module['main'])}))"
    )
    env = dict((key, value) for key, value in os.environ.items() if key != "PYTHONPATH")

    def load(extra_env):
        result = subprocess.run(
            [sys.executable, "-c", code, path], env=dict(env, **extra_env), cwd=str(tmp_path), capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    alone = load({})
    assert alone == {"added": [collection_root], "last": collection_root, "main": True}
    # Importable already (PYTHONPATH, ansible-test, a site-packages install): sys.path is left alone.
    assert load({"PYTHONPATH": collection_root})["added"] == []


# -- what the service says, as events -------------------------------------------------------------


def test_main_masks_endpoint_tokens_unless_asked(src, emulator, caplog):
    caplog.set_level(logging.DEBUG)
    job = unique_id("logic-tokens")
    emulator.add_jobs([{"id": job, "name": "logic-tokens", "phase": "Completed"}])
    args = dict(connection_args(emulator), training_job_ids=[job], interval=0.1, stop_when_done=True)
    opted_in = run(collect(src, dict(args, include_endpoint_tokens=True)))
    endpoints = opted_in[0]["modelarts"]["training_job"]["details"]["endpoints"]
    tokens = [endpoints[name]["token"] for name in ("jupyter_lab", "tensorboard", "mindstudio_insight")]
    assert all(token and token != "********" for token in tokens)
    masked = run(collect(src, args))
    endpoints = masked[0]["modelarts"]["training_job"]["details"]["endpoints"]
    assert [endpoints[name]["token"] for name in ("jupyter_lab", "tensorboard", "mindstudio_insight")] == ["********"] * 3
    assert endpoints["jupyter_lab"]["url"].startswith("https://")  # the rest of the document is untouched
    text = json.dumps(masked) + "\n".join(record.getMessage() for record in caplog.records)
    assert not [token for token in tokens if token in text]
    # Opting in puts the tokens in events only: never in a log line.
    assert not [token for token in tokens if token in caplog.text]


def test_main_null_filled_documents_give_their_events(src, emulator):
    """Documents with null for every optional field (the emulator's nulls fault) are valid under strict and give every event."""
    job = unique_id("logic-nulls")
    emulator.add_jobs(
        [
            {
                "id": job,
                "name": "logic-nulls",
                "faults": [{"type": "nulls", "count": -1}],
                "timeline": [{"phase": "Pending", "polls": 1}, {"phase": "Running", "polls": 1}, "Completed"],
            }
        ]
    )
    events = run(collect(src, dict(connection_args(emulator), training_job_ids=[job], interval=0.1, stop_when_done=True)))
    assert phases(events) == [(job, None, "Pending"), (job, "Pending", "Running"), (job, "Running", "Completed")]
    last = events[-1]["modelarts"]["training_job"]
    assert last["schema_errors"] == [] and last["details"]["endpoints"] is None and last["name"] is None


def test_main_name_watch_reports_a_bad_document_once_and_keeps_the_others(src, modelarts_emulator, caplog):
    emulator = modelarts_emulator
    caplog.set_level(logging.WARNING, LOGGER)
    name = unique_id("logic-bad-doc")
    first, second, bad = unique_id("logic-bad-doc-a"), unique_id("logic-bad-doc-b"), unique_id("logic-bad-doc-x")
    emulator.add_jobs(
        [
            {"id": first, "name": name, "timeline": [{"phase": "Pending", "seconds": STEP}, {"phase": "Running", "seconds": STEP}, "Completed"]},
            {"id": second, "name": name, "timeline": [{"phase": "Running", "seconds": STEP}, "Failed"]},
            {"id": bad, "name": name, "phase": "Running", "annotations": {"x-strict-breaker": "1"}},
        ]
    )
    # Every search answer carries the bad job's annotation as a number: it breaks the v2 schema (a map of strings).
    fault = emulator.add_fault(type="drift", mode="wrong_types", paths=["metadata.annotations.x-strict-breaker"], target="search", count=-1)
    try:
        finished = {first: "Completed", second: "Failed"}

        def both_finished(events):
            return sum(1 for e in events if finished.get(e["modelarts"]["training_job"]["id"], "-") == e["modelarts"]["phase"]) == 2

        react = clock_driver(emulator, [(first, "Pending"), (second, "Running")], [(first, "Running"), (second, "Failed")])
        events = run(collect(src, dict(connection_args(emulator), name=name, interval=0.2), until=both_finished, react=react), timeout=120)
    finally:
        emulator.control("DELETE", "/faults/%s" % fault)
    assert [e for e in phases(events) if e[0] == first] == [(first, None, "Pending"), (first, "Pending", "Running"), (first, "Running", "Completed")]
    assert [e for e in phases(events) if e[0] == second] == [(second, None, "Running"), (second, "Running", "Failed")]
    reported = [e["modelarts"] for e in events if e["modelarts"]["training_job"]["id"] == bad]
    # The listing's bad document is reported once; after the first listing the watched jobs are read by id (issue 30),
    # and the bad job's own GET document, which the fault leaves valid, may then give its phase - never a search's.
    assert reported[0]["phase"] is None and reported[0]["previous_phase"] is None
    assert [(e["previous_phase"], e["phase"]) for e in reported[1:]] in ([], [(None, "Running")])
    assert reported[0]["training_job"]["phase"] == "Running"
    assert [error["path"] for error in reported[0]["schema_errors"] if "x-strict-breaker" in error["path"]]
    warnings = [record.getMessage() for record in caplog.records if bad in record.getMessage()]
    assert len(warnings) == 1 and "x-strict-breaker" in warnings[0]
