# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 48, the event source: ``metrics`` and ``baseline`` arguments; an event into ``Completed`` carries the item's
``metrics`` and ``metrics_ok``.  Through the staged source's ``main()`` against the emulator (ansible-rulebook with
event_source.md's rulebook: test_docs_pages.py)."""

import asyncio
import uuid

import pytest

from eda_helpers import connection_args, load_source, source_events

ACC = "val_accuracy=([0-9.]+)"


@pytest.fixture
def src(collection_root):
    return load_source(collection_root)


def epochs(*values):
    return ["EVAL epoch %d: val_accuracy=%.4f" % (index + 1, value) for index, value in enumerate(values)]


def run(coroutine, limit=300):
    return asyncio.run(asyncio.wait_for(coroutine, limit))


def by_phase(events):
    return dict(((e["modelarts"]["training_job"]["id"], e["modelarts"]["phase"]), e["modelarts"]["training_job"]) for e in events)


def test_events_into_completed_carry_metrics_judged_against_the_baseline_and_fail_closed(src, modelarts_emulator):
    emulator = modelarts_emulator
    stage, pool = "production-%s" % uuid.uuid4().hex[:8], {"pool": uuid.uuid4().hex[:8]}
    prod, better, worse, silent, live = (str(uuid.uuid4()) for _number in range(5))
    emulator.add_jobs(
        [
            {"id": prod, "name": "prod", "phase": "Completed", "created_ago": "2d", "tags": {"stage": stage}, "metric_lines": epochs(0.8, 0.88)},
            {"id": better, "name": "better", "phase": "Completed", "created_ago": "1h", "tags": pool, "metric_lines": epochs(0.7, 0.91)},
            {"id": worse, "name": "worse", "phase": "Completed", "created_ago": "1h", "tags": pool, "metric_lines": epochs(0.9, 0.85)},
            # No metric line at all: fail closed, never fit.
            {"id": silent, "name": "silent", "phase": "Completed", "created_ago": "1h", "tags": pool},
            {
                "id": live,
                "name": "live",
                "created_ago": "5m",
                "tags": pool,
                "metric_lines": epochs(0.95),
                "timeline": [{"phase": "Running", "polls": 2}, "Completed"],
            },
        ]
    )
    metrics = [{"name": "val_accuracy", "regex": ACC, "min_improvement": 0}]
    args = dict(connection_args(emulator), tags=pool, interval=0.3, metrics=metrics, baseline={"tags": {"stage": stage}})
    events = run(source_events(src, args, lambda events: (live, "Completed") in by_phase(events)))
    items = by_phase(events)
    assert items[(better, "Completed")]["metrics_ok"] is True
    assert items[(better, "Completed")]["metrics"]["val_accuracy"] == {
        "value": 0.91,
        "source": "log",
        "ok": True,
        "problems": [],
        "baseline_value": 0.88,
        "improvement": 0.03,
    }
    unfit = items[(worse, "Completed")]
    assert unfit["metrics_ok"] is False and unfit["metrics"]["val_accuracy"]["value"] == 0.85
    assert "less than min_improvement 0" in " ".join(unfit["metrics"]["val_accuracy"]["problems"])
    unread = items[(silent, "Completed")]
    assert unread["metrics_ok"] is False and unread["metrics"]["val_accuracy"]["value"] is None
    assert unread["metrics"]["val_accuracy"]["problems"], "a metric with no value says why"
    # The job that ran: its Running event carries no metrics; its Completed one does, read when it completed.
    assert items[(live, "Running")]["metrics"] is None and items[(live, "Running")]["metrics_ok"] is None
    assert items[(live, "Completed")]["metrics_ok"] is True and items[(live, "Completed")]["metrics"]["val_accuracy"]["value"] == 0.95
    # The baseline is never a candidate's event, and it was read by its own GET, not reported.
    assert all(key[0] != prod for key in items)


def test_metrics_arguments_are_checked_before_any_request(src, modelarts_emulator):
    emulator = modelarts_emulator
    emulator.clear_requests()
    args = dict(connection_args(emulator), training_job_ids=[str(uuid.uuid4())], metrics=[{"name": "acc", "regx": ACC}])
    with pytest.raises(Exception, match=r"regx \(did you mean regex\?\)"):
        run(src["main"](asyncio.Queue(), args))
    assert not [entry for entry in emulator.requests() if "/v2/" in entry["path"]]


def test_without_metrics_events_are_as_before(src, modelarts_emulator):
    emulator = modelarts_emulator
    job = emulator.add_job(name="plain", phase="Completed", metric_lines=epochs(0.9))
    events = run(source_events(src, dict(connection_args(emulator), training_job_ids=[job], stop_when_done=True), bool))
    item = events[0]["modelarts"]["training_job"]
    assert "metrics" not in item and "metrics_ok" not in item
