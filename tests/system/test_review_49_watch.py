# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 49: the size of the history never delays the news.  Through the staged source's ``main()`` against the
emulator, counting what the emulator's request log says went out (counts, not timings)."""

import asyncio
import math
import threading
import time
import uuid

import pytest

from eda_helpers import connection_args, load_source, source_events


@pytest.fixture
def src(collection_root):
    return load_source(collection_root)


def run(coroutine, limit=900):
    return asyncio.run(asyncio.wait_for(coroutine, limit))


def transitions(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"]) for e in events]


def modelarts_requests(emulator, since):
    return [entry for entry in emulator.requests(since=since) if "/training-job" in entry["path"]]


def test_startup_changes_over_20000_finished_jobs_reports_a_completion_after_a_few_requests(src, modelarts_emulator):
    """20,000 matching finished jobs and 3 running ones: the first round follows the unfinished jobs (a search with a
    phase filter) and the newest; the completion of a running job just after it (the emulator's clock moved once the
    first round's searches went out) gives the first event after at most ceil(U/50) + 10 ModelArts requests (U = 3), and
    no finished job gives an event."""
    emulator = modelarts_emulator
    tag = {"review49": uuid.uuid4().hex[:8]}
    emulator.add_jobs([{"name": "history-{n:05d}", "count": 20000, "created_ago": "2h", "stagger": "0.3s", "phase": "Completed", "tags": tag}])
    running = [
        emulator.add_job(name="live-0", created_ago="10m", tags=tag, timeline=[{"phase": "Running", "seconds": 3600}, "Completed"]),
        emulator.add_job(name="live-1", created_ago="10m", tags=tag, timeline=[{"phase": "Running", "seconds": 86400}, "Completed"]),
        emulator.add_job(name="live-2", created_ago="10m", tags=tag, timeline=[{"phase": "Running", "seconds": 86400}, "Completed"]),
    ]
    mark = emulator.mark()
    args = dict(connection_args(emulator), tags=tag, interval=0.5, startup="changes")
    stop = threading.Event()

    def complete_after_the_first_round():
        # The first round is the unfinished jobs' search, the newest job, and what is new since it: three searches.
        while not stop.is_set() and len([entry for entry in modelarts_requests(emulator, mark) if entry["method"] == "POST"]) < 3:
            time.sleep(0.05)
        emulator.advance_clock(3600)

    mover = threading.Thread(target=complete_after_the_first_round, daemon=True)
    mover.start()
    try:
        events = run(source_events(src, args, lambda events: len(events) >= 1, wait=300))
    finally:
        stop.set()
        mover.join()
    assert transitions(events) == [(running[0], "Running", "Completed")]
    before = modelarts_requests(emulator, mark)
    event_get = max(index for index, entry in enumerate(before) if entry["method"] == "GET" and entry["path"].endswith(running[0]))
    sent = [(entry["method"], entry["path"], (entry.get("body") or {}).get("offset")) for entry in before[: event_get + 1]]
    assert event_get + 1 <= math.ceil(3 / 50.0) + 10, sent
    # Never a page past the first of any search: the 20,000 finished jobs were not listed one by one.
    assert all(((entry.get("body") or {}).get("offset") or 0) == 0 for entry in before if entry["method"] == "POST")


def test_startup_all_reports_a_change_of_a_job_already_listed_during_the_listing(src, modelarts_emulator):
    """3,000 finished jobs and one running: the running job is listed first (the unfinished jobs come first) and its
    completion is reported while the listing of the finished jobs goes on, not after it."""
    emulator = modelarts_emulator
    tag = {"review49-all": uuid.uuid4().hex[:8]}
    emulator.add_jobs([{"name": "done-{n:04d}", "count": 3000, "created_ago": "2h", "stagger": "1s", "phase": "Completed", "tags": tag}])
    live = emulator.add_job(name="live", created_ago="10m", tags=tag, timeline=[{"phase": "Running", "polls": 2}, "Completed"])
    args = dict(connection_args(emulator), tags=tag, interval=0.3, startup="all")
    events = run(source_events(src, args, lambda events: len(events) >= 3002, wait=300))
    moves = transitions(events)
    assert moves[0] == (live, None, "Running"), moves[:3]
    finished = [index for index, move in enumerate(moves) if move[0] != live]
    assert len(finished) == 3000 and all(move[1:] == (None, "Completed") for move in moves if move[0] != live)
    completed = moves.index((live, "Running", "Completed"))
    assert completed < finished[-1], "the completion came only after the whole listing (event %d of %d)" % (completed, len(moves))
