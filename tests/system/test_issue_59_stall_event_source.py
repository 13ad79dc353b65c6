# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 59 item 4, the event source's ``stall``: in the user's shape - the staged source's ``main()`` against the
emulator, whose jobs' ``activity`` says whether they make progress (docs/emulator.md) - a hung job gives exactly one
stalled event, a busy job none, a restart with the state file gives no second one, and a job that then completes gives
its Completed event.  The rooms on their own: tests/unit/plugins/module_utils/watch/test_watch_stalls.py."""

import asyncio
import json
import logging
import os
import re
import signal
import subprocess
import threading
import time
import uuid

import pytest

from eda_helpers import BIN, connection_args, load_source, rulebook_inputs, source_events

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs")

# A job busy for ten minutes, then hung (accelerators idle, log silent) and still Running; one busy all along.  Both
# started an hour ago (past any grace) and run two hours.
TIMELINE = [{"phase": "Running", "seconds": 7200}, "Completed"]
STALL = {"idle_minutes": 30}


@pytest.fixture
def src(collection_root):
    return load_source(collection_root)


def run(coroutine, limit=300):
    return asyncio.run(asyncio.wait_for(coroutine, limit))


def watched(src, args, quiet=4.0):
    """Every event the source gives until none came for ``quiet`` seconds (many rounds at interval 0.3)."""
    return run(source_events(src, args, lambda events: False, wait=quiet))


class AfterTheFirstLogRead(object):
    """Moves the emulator's clock by ``seconds`` once the source has read ``job``'s log (its first observation of the log's
    size comes before the move however slowly a loaded machine starts the source), then stops; ``cancel`` stops it early."""

    def __init__(self, emulator, job, seconds):
        self.emulator, self.path, self.seconds = emulator, "/training-jobs/%s/logs/" % job, seconds
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._move, daemon=True)

    def _move(self):
        while not self.stopped.wait(0.05):
            if self.emulator.requests(path=self.path):
                self.emulator.advance_clock(self.seconds)
                return

    def start(self):
        self.thread.start()

    def cancel(self):
        self.stopped.set()
        self.thread.join(10)


def described(events):
    return [(e["modelarts"]["training_job"]["id"], e["modelarts"]["previous_phase"], e["modelarts"]["phase"], e["modelarts"].get("stalled")) for e in events]


def sorted_(entries):
    return sorted(entries, key=repr)


def jobs(emulator, **more):
    hung, busy = str(uuid.uuid4()), str(uuid.uuid4())
    emulator.add_jobs(
        [
            dict({"id": hung, "name": "hung", "created_ago": "1h", "timeline": TIMELINE, "activity": {"hang_at": "10m"}}, **more),
            dict({"id": busy, "name": "busy", "created_ago": "1h", "timeline": TIMELINE, "activity": {}}, **more),
        ]
    )
    return hung, busy


def test_a_hung_job_gives_one_stalled_event_a_busy_one_none_and_a_restart_with_the_state_file_none_again(src, modelarts_emulator, tmp_path, caplog):
    emulator = modelarts_emulator
    hung, busy = jobs(emulator)
    state_file = str(tmp_path / "state" / "stalls.json")
    args = dict(connection_args(emulator), training_job_ids=[hung, busy], interval=0.3, stall=STALL, state_file=state_file)
    with caplog.at_level(logging.WARNING, logger="modelarts.training.training_job_phase"):
        events = watched(src, args)
    assert sorted_(described(events)) == sorted_([(hung, None, "Running", False), (busy, None, "Running", False), (hung, "Running", "Running", True)])
    (stalled,) = [e["modelarts"] for e in events if e["modelarts"]["stalled"]]
    progress = stalled["progress"]
    assert progress == stalled["training_job"]["progress"] and progress["stalled"] is True and progress["problems"] == []
    idle = progress["signals"]["idle"]
    assert idle["held"] is True and idle["minutes"] == 30 and idle["tasks"] and all(task["peak"] <= 1 for task in idle["tasks"].values())
    # Busy for ten minutes after its start an hour ago: idle since about fifty minutes ago.
    assert progress["since"] is not None
    assert stalled["event_id"] not in [e["modelarts"]["event_id"] for e in events if not e["modelarts"]["stalled"]]
    busy_item = [e["modelarts"]["training_job"] for e in events if e["modelarts"]["training_job"]["id"] == busy][0]
    assert busy_item["progress"]["stalled"] is False and busy_item["progress"]["signals"]["idle"]["held"] is False
    assert any("stopped making progress" in record.getMessage() and hung in record.getMessage() for record in caplog.records)
    saved = json.loads(open(state_file).read())
    assert saved["jobs"] == {hung: "Running", busy: "Running"} and saved["stalls"] == {hung: progress["since"]}

    # Restarted with the same state file: the same stall is not reported again, nor the Running phases.
    assert watched(src, args) == []

    # The hung job ends (the timeline's two hours are over): its Completed event, and the busy one's; no stall.
    emulator.advance_clock(7200)
    done = watched(src, dict(args, stop_when_done=True))
    assert sorted_(described(done)) == sorted_([(hung, "Running", "Completed", False), (busy, "Running", "Completed", False)])
    assert all(e["modelarts"]["training_job"]["progress"] is None for e in done)
    assert "stalls" not in json.loads(open(state_file).read())


def test_the_stall_argument_is_checked_before_any_request(src, modelarts_emulator):
    emulator = modelarts_emulator
    emulator.clear_requests()
    args = dict(connection_args(emulator), training_job_ids=[str(uuid.uuid4())], stall={"idle_minute": 30})
    with pytest.raises(Exception, match=r"stall: unknown key idle_minute \(did you mean idle_minutes\?\)"):
        run(src["main"](asyncio.Queue(), args))
    assert not [entry for entry in emulator.requests() if "/v2/" in entry["path"]]


def test_a_job_inside_its_grace_or_with_no_samples_is_never_called_stalled(src, modelarts_emulator):
    emulator = modelarts_emulator
    fresh, unsampled = str(uuid.uuid4()), str(uuid.uuid4())
    emulator.add_jobs(
        [
            # Hung at once, but started two minutes ago: inside the ten minutes of grace.
            {"id": fresh, "name": "fresh", "created_ago": "2m", "timeline": TIMELINE, "activity": {"hang_at": "0s"}},
            # Only -1 averages: no evidence either way.
            {"id": unsampled, "name": "unsampled", "created_ago": "1h", "timeline": TIMELINE, "activity": {"hang_at": "10m", "samples": "none"}},
        ]
    )
    events = watched(src, dict(connection_args(emulator), training_job_ids=[fresh, unsampled], interval=0.3, stall=dict(STALL, service=False)))
    assert sorted_(described(events)) == sorted_([(fresh, None, "Running", False), (unsampled, None, "Running", False)])
    items = dict((e["modelarts"]["training_job"]["id"], e["modelarts"]["training_job"]) for e in events)
    assert items[fresh]["progress"]["stalled"] is False
    assert items[unsampled]["progress"]["stalled"] is False and any("-1" in line for line in items[unsampled]["progress"]["problems"])


# -- docs/event_source.md's rulebook -----------------------------------------------------------------------------------


def documented_rulebook():
    with open(os.path.join(DOCS, "event_source.md")) as handle:
        section = handle.read().split("## A job that stopped making progress", 1)[1].split("\n## ", 1)[0]
    (book,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return book


def rulebook_until(tmp_path, env, done, limit=420):
    """Run the page's rulebook (ansible-rulebook over the staged collection) until ``done(output)`` or ``limit`` seconds;
    its output.  A tag watch never ends: it is killed then."""
    inventory, _vars = rulebook_inputs(tmp_path)
    command = [os.path.join(BIN, "ansible-rulebook"), "--rulebook", "stalls.yml", "-i", inventory]
    path = tmp_path / "rulebook.out"
    with open(path, "w") as out:
        process = subprocess.Popen(command, env=env, cwd=str(tmp_path), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.time() + limit
            while time.time() < deadline and process.poll() is None and not done(path.read_text()):
                time.sleep(0.25)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    return path.read_text()


def stalled_lines(text):
    return [line for line in text.splitlines() if "STALLED:" in line]


def test_the_pages_rulebook_notifies_once_about_a_hung_job_and_not_again_after_a_restart(modelarts_emulator, ansible_env, tmp_path):
    emulator = modelarts_emulator
    hung, busy = jobs(emulator, tags={"pipeline": "nightly"})
    book = documented_rulebook()
    assert "condition: event.modelarts.stalled == true" in book and "interval: 60" in book
    # The page's rulebook, polling every 2 s instead of a minute so that a test sees many rounds.
    (tmp_path / "stalls.yml").write_text(book.replace("interval: 60", "interval: 2"))
    env = dict(ansible_env, HOME=str(tmp_path), PYTHONUNBUFFERED="1", **emulator.env("aksk"))
    seen = []

    def notified_and_rounds_after(text):
        if stalled_lines(text) and not seen:
            seen.append(time.time())
        return bool(seen) and time.time() > seen[0] + 8

    text = rulebook_until(tmp_path, env, notified_and_rounds_after)
    lines = stalled_lines(text)
    assert len(lines) == 1 and hung in lines[0] and "has made no progress since" in lines[0], text[-3000:]
    assert busy not in " ".join(lines)
    state = json.loads((tmp_path / ".local" / "state" / "modelarts.training" / "nightly_stalls.json").read_text())
    assert list(state["stalls"]) == [hung]
    # Restarted with its state file: the same stall says nothing (a few rounds after the first).
    started = []

    def a_few_rounds(text):
        if "watching training jobs" in text and not started:
            started.append(time.time())
        return bool(started) and time.time() > started[0] + 8

    again = rulebook_until(tmp_path, env, a_few_rounds)
    assert "watching training jobs" in again and stalled_lines(again) == [], again[-3000:]


def test_a_silent_log_counts_across_rounds_and_a_preprocessing_job_whose_log_grows_never_stalls(src, modelarts_emulator):
    """``quiet_minutes`` is measured across the rounds on the service's clock: the emulator's moves three minutes
    while the source runs.  The hung job's log stays silent (with idle accelerators: require all holds); the
    preprocessing job's accelerators are idle but its log grows."""
    emulator = modelarts_emulator
    hung, prep = str(uuid.uuid4()), str(uuid.uuid4())
    emulator.add_jobs(
        [
            {"id": hung, "name": "hung", "created_ago": "1h", "timeline": TIMELINE, "activity": {"hang_at": "10m"}},
            {"id": prep, "name": "preprocessing", "created_ago": "1h", "timeline": TIMELINE, "activity": {"util": "idle"}},
        ]
    )
    stall = {"idle_minutes": 5, "quiet_minutes": 2, "service": False, "require": "all"}
    args = dict(connection_args(emulator), training_job_ids=[hung, prep], interval=0.3, stall=stall)
    mover = AfterTheFirstLogRead(emulator, hung, 180)
    mover.start()
    try:
        events = watched(src, args, quiet=6.0)
    finally:
        mover.cancel()
    assert sorted_(described(events)) == sorted_([(hung, None, "Running", False), (prep, None, "Running", False), (hung, "Running", "Running", True)])
    (stalled,) = [e["modelarts"] for e in events if e["modelarts"]["stalled"]]
    signals = stalled["progress"]["signals"]
    assert signals["idle"]["held"] is True and signals["quiet"]["held"] is True and signals["service"] is None
    first = [e["modelarts"]["training_job"] for e in events if e["modelarts"]["training_job"]["id"] == prep][0]
    assert first["progress"]["signals"]["idle"]["held"] is True and first["progress"]["signals"]["quiet"]["held"] is False


def test_a_restart_does_not_report_a_quiet_and_idle_stall_again(src, modelarts_emulator, tmp_path):
    """Review of issue 59, finding 1: with ``quiet_minutes`` and ``require: all`` the stall's start is the later of the
    idle run's and the silent log's; a restart empties the log-size history, so the silent log's start became the
    restart's first round - more than a minute after the start saved in the state file - and the same stall was
    reported again with a new event_id.  Each run, the emulator's clock moves three minutes (quiet_minutes is 2)."""
    emulator = modelarts_emulator
    hung = str(uuid.uuid4())
    emulator.add_jobs([{"id": hung, "name": "hung", "created_ago": "1h", "timeline": TIMELINE, "activity": {"hang_at": "10m"}}])
    stall = {"idle_minutes": 5, "quiet_minutes": 2, "service": False, "require": "all"}
    state_file = str(tmp_path / "state" / "stalls.json")
    args = dict(connection_args(emulator), training_job_ids=[hung], interval=0.3, stall=stall, state_file=state_file)

    def moving(quiet=6.0):
        mover = AfterTheFirstLogRead(emulator, hung, 180)
        mover.start()
        try:
            return watched(src, args, quiet=quiet)
        finally:
            mover.cancel()

    events = moving()
    assert described(events) == [(hung, None, "Running", False), (hung, "Running", "Running", True)]
    stalled = events[1]["modelarts"]
    signals = stalled["progress"]["signals"]
    assert signals["idle"]["held"] is True and signals["quiet"]["held"] is True
    assert json.loads(open(state_file).read())["stalls"] == {hung: stalled["progress"]["since"]}

    # Restarted with the same state file: the log is seen silent for quiet_minutes again, from the restart's first
    # round - the same stall, no second event.
    assert moving() == []
    assert json.loads(open(state_file).read())["stalls"] == {hung: stalled["progress"]["since"]}
