# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading progress (waiting/progress.py, issue 59) over a fake client: which requests a poll makes, the log-size
history kept between polls, a refused read as a problem line, and the wait ended by a stall."""

from __future__ import annotations

import threading

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.door.job_info import argument_spec
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError, resolve
from ansible_collections.modelarts.training.plugins.module_utils.waiting import waiter
from ansible_collections.modelarts.training.plugins.module_utils.waiting.progress import Progress, service_now
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import STALL_OPTIONS, StallSettings
from ansible_collections.modelarts.training.plugins.module_utils.door.stall_checks import check_stall
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import WaitSettings

START = 1800000000.0
TASKS = ["worker-0", "worker-1"]


class Answer(object):
    def __init__(self, data, status=200):
        self.data = data
        self.status = status


class Service(object):
    request_timeout = 10.0


class FakeClient(object):
    """Answers the progress calls from what the test sets, and counts them."""

    service = Service()

    def __init__(self, util=0.2, size=100, events=None, forbidden=()):
        self.util, self.size, self.events, self.forbidden = util, size, events or [], set(forbidden)
        self.calls = []
        self.lock = threading.Lock()

    def _call(self, *call):
        with self.lock:
            self.calls.append(call)
        if call[0] in self.forbidden:
            raise ModelArtsError("HTTP 403 ModelArts.2771: No permission", status=403, error_code="ModelArts.2771")

    def get_task_metrics(self, job_id, task_id, deadline=None, max_bytes=None):
        self._call("metrics", job_id, task_id)
        return Answer({"metrics": [{"metric": "cpuUsage", "value": [50.0] * 40}, {"metric": "gpuUtil", "value": [self.util] * 40}]})

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None, base_line=None):
        self._call("log", job_id, task_id)
        assert lines == 1
        return Answer({"content": "x", "end_line": str(self.size)})

    def list_training_job_events(self, job_id, level=None, limit=100, offset=0, deadline=None, max_bytes=None):
        self._call("events", job_id, level)
        return Answer({"events": self.events})


def running(minutes, job_id="job-1", phase="Running"):
    """A v2 item Running for ``minutes`` since START (the service's clock: start_time + duration)."""
    status = {"phase": phase, "start_time": int(START * 1000), "duration": int(minutes * 60000), "tasks": list(TASKS)}
    return {"id": job_id, "name": "resnet", "api_version": "v2", "phase": phase, "details": {"status": status}}


def test_a_poll_reads_one_request_per_task_and_signal_and_the_events_once_only_for_running_jobs():
    client = FakeClient()
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5}), max_concurrency=4, clock=lambda: 0.0)
    done = running(30, "job-2", phase="Completed")
    items = [running(30), done, ValueError("not a job")]
    progress.read(items, deadline=100.0)
    # Issue 59 item 3: at most one request per task per poll - both signals asked, a task reads its metrics first (the
    # whole window in one call), then its log; the events take one task's turn on the job's second poll.
    assert sorted(call[0] for call in client.calls) == ["metrics", "metrics"]
    assert all(call[1] == "job-1" for call in client.calls), "a Completed job is never read"
    assert done["progress"] is None
    assert items[0]["progress"]["signals"]["idle"]["held"] is True
    progress.read([running(31), done], deadline=100.0)
    assert sorted(call[0] for call in client.calls[2:]) == ["log", "log"], "the logs' first sizes are urgent: no events yet"
    progress.read([running(32)], deadline=100.0)
    assert sorted(call[0] for call in client.calls[4:]) == ["events", "log"]
    assert items[0]["progress"]["signals"]["service"]["held"] is False
    assert items[0]["progress"]["stalled"] is False, "the log was seen once: no silence measured yet"


def test_the_log_history_is_kept_between_polls_and_a_silent_log_stalls_the_job():
    client = FakeClient(size=100)
    # service off: three polls of two tasks are six reads, all the log and idle need (the events would take one).
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5, "service": False}), clock=lambda: 0.0)
    for minutes in (17, 20, 23, 26):  # 17: the metrics first; 20: the logs; 23: the metrics again, as quiet is due at 26
        item = running(minutes)
        progress.read([item], deadline=100.0)
    assert item["progress"]["stalled"] is True, item["progress"]
    assert item["progress"]["signals"]["quiet"]["since"] == "2027-01-15T08:20:00Z"
    reason = progress.stalled(item)
    assert reason.startswith("stopped making progress: gpuUtil at most 0.2% on every task for 5 minutes; no log line for 6 minutes")
    assert reason.endswith("the service still reports Running")


def test_a_growing_log_is_progress():
    client = FakeClient()
    progress = Progress(client, check_stall({"quiet_minutes": 5, "service": False}), clock=lambda: 0.0)
    for minutes in (20, 23, 26, 29):
        client.size += 6
        item = running(minutes)
        progress.read([item], deadline=100.0)
    assert item["progress"]["stalled"] is False and progress.stalled(item) is None
    assert [call[0] for call in client.calls] == ["log", "log"] * 4, "no metrics nor events asked for"


def test_a_refused_read_is_a_problem_line_never_a_stall():
    client = FakeClient(forbidden=("metrics",))
    progress = Progress(client, check_stall({"idle_minutes": 5}), clock=lambda: 0.0)
    item = running(60)
    progress.read([item], deadline=100.0)
    assert item["progress"]["stalled"] is False
    assert any("403" in line and "metrics could not be read" in line for line in item["progress"]["problems"]), item["progress"]["problems"]


def test_the_services_verdict_newer_than_the_last_start_stalls_on_its_own():
    hang = {"time": int((START + 20 * 60) * 1000), "level": "Warning", "message": "[JobHanged] The system detects that your training job may be suspended."}
    client = FakeClient(util=90.0, events=[hang])
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5}), clock=lambda: 0.0)
    for minutes in (23, 24):  # the first sizes of each signal are urgent: the events take a task's turn on the third poll
        progress.read([running(minutes)], deadline=100.0)
    item = running(25)
    progress.read([item], deadline=100.0)
    assert item["progress"]["stalled"] is True and item["progress"]["signals"]["service"]["held"] is True
    assert ("events", "job-1", None) in client.calls, "events of every level: no level filter"
    assert "the service itself found the job hung at 2027-01-15T08:20:00Z" in progress.stalled(item)


def test_a_service_clock_that_does_not_move_keeps_the_job_in_its_grace_and_says_so():
    # status.duration not live: every poll reads the same service clock, 5 minutes after the start, inside a 10-minute grace.
    client = FakeClient(util=0.0)
    progress = Progress(client, check_stall({"idle_minutes": 1, "quiet_minutes": 1, "grace_minutes": 10}), clock=lambda: 0.0)
    for _poll in range(3):
        item = running(5)
        progress.read([item], deadline=100.0)
        assert item["progress"]["stalled"] is False
        grace = "inside its grace until 2027-01-15T08:10:00Z (grace_minutes after its last start, 2027-01-15T08:00:00Z): no signal counts yet"
        assert grace in item["progress"]["problems"], item["progress"]["problems"]


def test_service_now_is_the_documents_clock_else_this_machines():
    assert service_now(running(10)) == START + 600
    assert service_now({"details": {"status": {"phase": "Running"}}}, lambda: 42.0) == 42.0


def test_without_stall_every_item_gets_progress_null():
    progress = Progress(FakeClient(), None)
    item = running(30)
    progress.read([item])
    assert item["progress"] is None


def test_a_stall_ends_the_wait_like_a_fail_on_phase_and_a_completed_job_is_never_delayed():
    client = FakeClient()
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5, "service": False}), clock=lambda: 0.0)
    rounds = iter([[running(17), running(17, "job-2")], [running(20), running(20, "job-2", "Completed")], [running(23), None], [running(26), None]])

    def poll(keys, deadline):
        found = next(rounds)
        return dict((key, item) for key, item in zip(["job-1", "job-2"], found) if key in keys and item is not None)

    ticks = iter(range(1000))
    result = waiter.wait_for_jobs(
        ["job-1", "job-2"],
        progress.watching(poll),
        WaitSettings(True, ["Completed"], ["Failed"], 3600, 1, 1),
        clock=lambda: float(next(ticks)),
        sleeper=lambda seconds: None,
        stalled=progress.stalled,
    )
    assert result.outcome == waiter.OUTCOME_FAILED
    assert result.verdicts["job-2"] == waiter.JOB_DONE and result.items["job-2"]["progress"] is None
    assert "job-1" in result.failures and result.failures["job-1"].startswith("stopped making progress: ")
    assert "training job job-1 (resnet) stopped making progress" in result.message()
    assert len([call for call in client.calls if call[1] == "job-2"]) == 2, "read while Running (one round), never once Completed"


# -- the cost: at most one request per task per poll (issue 59 item 3) ------------------------------------------


def _per_poll(stall, polls=6, tasks=2):
    """The requests of each of ``polls`` polls of one Running job of ``tasks`` tasks: ``[{task or "events": kind}]``
    (a task read twice in a poll would show as a collision)."""
    names = ["worker-%d" % number for number in range(tasks)]
    client = FakeClient(util=0.0)
    progress = Progress(client, check_stall(stall), clock=lambda: 0.0)
    seen = []
    for poll in range(polls):
        item = running(30 + poll)
        item["details"]["status"]["tasks"] = list(names)
        before = len(client.calls)
        progress.read([item], deadline=100.0)
        calls = client.calls[before:]
        per_task = {}
        for call in calls:
            target = "events" if call[0] == "events" else call[2]
            assert target not in per_task, "two requests for %s on poll %d: %s" % (target, poll, calls)
            per_task[target] = call[0]
        assert len(calls) <= tasks, "poll %d of a job of %d tasks made %d requests: %s" % (poll, tasks, len(calls), calls)
        seen.append(per_task)
    return seen


@pytest.mark.parametrize("service", [True, False])
@pytest.mark.parametrize(
    "asked, kinds",
    [
        ({"idle_minutes": 5}, {"metrics"}),
        ({"quiet_minutes": 5}, {"log"}),
        ({"idle_minutes": 5, "quiet_minutes": 5, "require": "all"}, {"log", "metrics"}),
        ({"idle_minutes": 5, "quiet_minutes": 5, "require": "any"}, {"log", "metrics"}),
    ],
)
@pytest.mark.parametrize("tasks", [1, 2, 3])
def test_each_poll_makes_at_most_one_request_per_task_the_events_included(asked, kinds, service, tasks):
    polls = _per_poll(dict(asked, service=service), polls=8, tasks=tasks)
    names = ["worker-%d" % number for number in range(tasks)]
    for number, per_task in enumerate(polls):
        events = "events" in per_task
        assert not events or service, (number, per_task)
        # every task reads on every poll but one task on a poll that reads the events
        assert len([name for name in names if name in per_task]) == tasks - (1 if events else 0), (number, per_task)
        assert set(kind for name, kind in per_task.items() if name != "events") <= kinds
    if service:
        assert 3 <= len([per_task for per_task in polls if "events" in per_task]) <= 4, "the events about every other poll: %s" % polls
    for name in names:
        read = [per_task[name] for per_task in polls if name in per_task]
        if len(kinds) == 2:
            assert read[0] == "metrics", "the metrics first: the whole window in one call"
            assert set(read) == kinds, read
            if asked["require"] == "any":
                assert all(a != b for a, b in zip(read, read[1:])), "either signal stalls alone: the two in turn: %s" % read
        else:
            assert set(read) == kinds
        assert len(read) >= (4 if service and tasks == 1 else 6), "a task still reads its signals (a job of one task every other poll): %s" % read


def test_both_signals_asked_still_stall_a_silent_idle_job_within_one_quiet_window_plus_one_poll():
    client = FakeClient(util=0.0, size=100)
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5}), clock=lambda: 0.0)
    stalled_at = None
    for minutes in range(20, 40):
        item = running(minutes)
        progress.read([item], deadline=100.0)
        if item["progress"]["stalled"]:
            stalled_at = minutes
            break
    # The metrics first (20), the logs' first sizes next (21): quiet holds one window after it, no later.
    assert stalled_at is not None and stalled_at <= 21 + 5, stalled_at
    assert item["progress"]["signals"]["quiet"]["since"] == "2027-01-15T08:21:00Z"


def test_a_metrics_answer_from_before_the_last_start_is_never_judged_again():
    client = FakeClient(util=0.0)
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5, "service": False}), clock=lambda: 0.0)
    progress.read([running(30)], deadline=100.0)  # logs
    progress.read([running(31)], deadline=100.0)  # metrics, read at minute 31
    restarted = running(33)
    restarted["details"]["status"]["running_records"] = [{"start_at": int(START + 32 * 60)}]
    progress.read([restarted], deadline=100.0)  # logs; the kept metrics were read before the restart at 32
    assert restarted["progress"]["signals"]["idle"]["held"] is False
    assert any("metrics were not read" in line for line in restarted["progress"]["problems"]), restarted["progress"]["problems"]


def test_a_failed_log_read_stays_a_problem_until_the_log_is_read_again():
    client = FakeClient(util=90.0, forbidden=("log",))
    progress = Progress(client, check_stall({"idle_minutes": 5, "quiet_minutes": 5, "service": False, "require": "any"}), clock=lambda: 0.0)
    progress.read([running(29)], deadline=100.0)  # metrics
    first, second = running(30), running(31)
    progress.read([first], deadline=100.0)  # the logs: refused
    progress.read([second], deadline=100.0)  # metrics this poll (any: in turn): the log's failure is still the evidence
    assert [call[0] for call in client.calls] == ["metrics", "metrics", "log", "log", "metrics", "metrics"]
    for item in (first, second):
        assert any("log could not be read" in line for line in item["progress"]["problems"]), item["progress"]["problems"]
        assert item["progress"]["stalled"] is False


# -- the option at the door: resolved once into settings.stall, checked before any request ------------------------

CI_ENV = {"HUAWEICLOUD_SDK_AK": "env-ak", "HUAWEICLOUD_SDK_SK": "env-sk-SECRET", "HUAWEICLOUD_SDK_REGION": "env-region", "HUAWEICLOUD_SDK_PROJECT_ID": "p"}


def test_resolve_gives_the_typed_part_stall_or_none():
    assert resolve([("option", {})], CI_ENV).stall is None
    settings = resolve([("keyword", {"stall": {"quiet_minutes": "30"}})], CI_ENV)
    assert settings.stall == StallSettings(None, 1.0, 30, True, 10, "all")


def test_resolve_refuses_a_bad_stall_naming_the_key():
    for given, text in (
        ({"idle_minuts": 5}, "stall: unknown key idle_minuts (did you mean idle_minutes?)"),
        ({"idle_minutes": 2000}, "stall.idle_minutes must be a whole number of minutes from 1 to 1440, got 2000"),
        ({"service": "maybe"}, "stall.service must be a boolean (true or false), got 'maybe'"),
        ({"service": False}, "stall asks for no signal"),
    ):
        with pytest.raises(ConnectionConfigError) as raised:
            resolve([("keyword", {"stall": given})], CI_ENV)
        assert text in str(raised.value)


def test_the_modules_argument_spec_has_stall_with_its_suboptions():
    spec = argument_spec()["stall"]
    assert spec["type"] == "dict" and set(spec["options"]) == set(STALL_OPTIONS)
    assert spec["options"] is not STALL_OPTIONS and spec["options"]["require"] is not STALL_OPTIONS["require"], "a fresh copy"
