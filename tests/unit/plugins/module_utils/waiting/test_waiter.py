# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

import datetime
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import DeadlineExceeded, fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.waiting.waiter import (
    GROWTH_FACTOR,
    JOB_DONE,
    JOB_FAILED,
    JOB_FATAL,
    JOB_TOLERATED,
    JOB_UNREACHABLE,
    JOB_WAITING,
    OUTCOME_ERROR,
    OUTCOME_FAILED,
    OUTCOME_SATISFIED,
    OUTCOME_TIMEOUT,
    MissingResult,
    format_utc,
    judge,
    nap_length,
    next_interval,
    record_phase,
    validate_wait_options,
    wait_for_jobs,
    wait_outcome,
)
from ansible_collections.modelarts.training.plugins.module_utils.waiting.wait_options import WaitSettings

START = 1000.0
EPOCH = datetime.datetime(2026, 1, 31, 12, 0, 0, tzinfo=datetime.timezone.utc)
DEFAULT_FAIL_ON = ("Failed", "Abnormal", "Terminated")


class FakeClock:
    """Monotonic clock whose sleep advances it; wall-clock ``now`` follows it from EPOCH."""

    def __init__(self, start=START):
        self.t = start
        self.sleeps = []

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.t += seconds

    def now(self):
        return EPOCH + datetime.timedelta(seconds=self.t - START)


class FakeError(Exception):
    def __init__(self, message, transient=False, not_found=False):
        super().__init__(message)
        self.transient = transient
        self.not_found = not_found


def transient(message="HTTP 503 after retries"):
    return FakeError(message, transient=True)


def not_found(message="ModelArts.2775 training job not found"):
    return FakeError(message, not_found=True)


def item(key, phase, reason=None):
    return {
        "id": key,
        "name": "train-%s" % (key,),
        "phase": phase,
        "failure_reason": reason,
        "details": {"metadata": {"annotations": {"token": "SECRET-NOT-FOR-MESSAGES"}}},
    }


class Script:
    """A ``poll`` that plays a recorded sequence per key and records every call.

    Sequence entries: a phase, ``(phase, failure_reason)``, a dict item, or an exception. Polling a
    key past its sequence fails the test unless ``repeat_last`` is set.
    """

    def __init__(self, clock, sequences, repeat_last=False, cost=0.0):
        self.clock = clock
        self.sequences = sequences
        self.repeat_last = repeat_last
        self.cost = cost
        self.index = dict((key, 0) for key in sequences)
        self.calls = []

    def entry(self, key):
        sequence = self.sequences[key]
        position = self.index[key]
        self.index[key] += 1
        if position >= len(sequence):
            assert self.repeat_last, "key %r polled past its recorded sequence" % (key,)
            position = len(sequence) - 1
        entry = sequence[position]
        if isinstance(entry, BaseException) or isinstance(entry, dict):
            return entry
        if isinstance(entry, tuple):
            return item(key, entry[0], entry[1])
        return item(key, entry)

    def __call__(self, keys, deadline):
        self.calls.append((list(keys), deadline, self.clock.t))
        result = dict((key, self.entry(key)) for key in keys)
        self.clock.t += self.cost
        return result

    def polled_keys(self):
        return [keys for keys, _deadline, _at in self.calls]


def run(sequences, clock=None, wait_for=("Completed",), fail_on=DEFAULT_FAIL_ON, timeout=3600, sleep=5, sleep_max=60, repeat_last=False, cost=0.0, **kwargs):
    clock = clock or FakeClock()
    script = Script(clock, sequences, repeat_last=repeat_last, cost=cost)
    result = wait_for_jobs(
        list(sequences),
        script,
        WaitSettings(True, list(wait_for), list(fail_on), timeout, sleep, sleep_max),
        clock=clock,
        sleeper=clock.sleep,
        now=clock.now,
        **kwargs,
    )
    return result, script, clock


def at(seconds):
    return format_utc(EPOCH + datetime.timedelta(seconds=seconds))


# ---------------------------------------------------------------- a single job, start to finish


def test_single_job_through_its_phases_to_completed():
    result, script, clock = run({"a": ["Creating", "Pending", "Pending", "Running", "Completed"]})

    assert result.outcome == OUTCOME_SATISFIED
    assert result.ok
    assert result.polls == {"a": 5}
    assert clock.sleeps == [5, 7.5, 11.25, 16.875]
    assert result.waited_seconds == 40.625
    assert result.job_waited_seconds == {"a": 40.625}
    assert result.items["a"]["phase"] == "Completed"
    assert result.phase_history["a"] == [
        {"phase": "Creating", "at": at(0)},
        {"phase": "Pending", "at": at(5)},
        {"phase": "Running", "at": at(23)},  # 23.75 s, formatted to the second
        {"phase": "Completed", "at": at(40)},
    ]
    assert result.failures == {}
    assert result.errors == {"a": None}
    assert result.message() == "all 1 training job reached Completed after 40.6s"


def test_phase_history_records_changes_only_and_survives_errors():
    result, _script, _clock = run({"a": ["Running", "Running", transient(), "Running", "Completed"]})

    assert [entry["phase"] for entry in result.phase_history["a"]] == ["Running", "Completed"]
    assert result.polls == {"a": 5}


def test_job_fields_round_the_time_waited_to_milliseconds():
    """A monotonic clock's difference is 64.39466155900027, not 64.395: the item shows milliseconds (issue 50)."""
    result, _script, _clock = run({"a": ["Pending", "Completed"]})
    result.job_waited_seconds["a"] = 64.39466155900027
    assert result.job_fields("a")["waited_seconds"] == 64.395
    assert repr(result.job_fields("a")["waited_seconds"]) == "64.395"


def test_job_fields_for_the_module_item():
    result, _script, _clock = run({"a": ["Pending", "Completed"]})

    fields = result.job_fields("a")
    assert fields == {"waited_seconds": 5.0, "polls": 2, "phase_history": [{"phase": "Pending", "at": at(0)}, {"phase": "Completed", "at": at(5)}]}
    fields["phase_history"].append({"phase": "x", "at": "y"})
    assert len(result.phase_history["a"]) == 2


# ---------------------------------------------------------------- sleeping and the deadline


def test_sleep_grows_by_the_factor_up_to_the_cap():
    sequence = ["Running"] * 7 + ["Completed"]
    _result, _script, clock = run({"a": sequence}, sleep=5, sleep_max=20)

    assert GROWTH_FACTOR == 1.5
    assert clock.sleeps == [5, 7.5, 11.25, 16.875, 20, 20, 20]


def test_sleep_above_sleep_max_stays_at_sleep():
    _result, _script, clock = run({"a": ["Running"] * 4 + ["Completed"]}, sleep=30, sleep_max=10)

    assert clock.sleeps == [30, 30, 30, 30]


def test_timeout_reports_last_phase_and_time_waited():
    result, script, clock = run({"a": ["Pending", "Running"]}, repeat_last=True, timeout=30)

    # 5 + 7.5 + 11.25 = 23.75; the next interval (16.875) is cut to the 6.25 s left.
    assert clock.sleeps == [5, 7.5, 11.25, 6.25]
    assert result.outcome == OUTCOME_TIMEOUT
    assert not result.ok
    assert result.waited_seconds == 30.0
    assert result.polls == {"a": 5}
    assert result.items["a"]["phase"] == "Running"
    message = result.message()
    assert "timed out after 30.0s" in message
    assert "training job a (train-a): last phase seen Running, after waiting 30.0s" in message


def test_one_last_poll_at_the_deadline_sees_a_late_completion():
    result, script, clock = run({"a": ["Running", "Running", "Running", "Running", "Completed"]}, timeout=30)

    assert result.outcome == OUTCOME_SATISFIED
    assert clock.t == START + 30
    assert script.calls[-1][2] == START + 30


def test_every_poll_gets_the_shared_deadline_and_the_last_look_only_the_grace_beyond_it():
    _result, script, _clock = run({"a": ["Running"], "b": ["Pending"]}, repeat_last=True, timeout=30, grace=7)

    deadlines = [deadline for _keys, deadline, _at in script.calls]
    assert deadlines == [START + 30] * 4 + [START + 30 + 7]


def test_no_extra_poll_after_a_round_that_ran_past_the_deadline():
    # Each poll costs 8 s: polls at 0, 13 (after 5 s), 28.5 (after 7.5 s); that round ends at 36.5.
    result, script, clock = run({"a": ["Running"]}, repeat_last=True, timeout=30, cost=8.0)

    assert result.outcome == OUTCOME_TIMEOUT
    assert [call[2] for call in script.calls] == [START, START + 13, START + 28.5]
    assert clock.sleeps == [5, 7.5]
    assert result.waited_seconds == 36.5


def test_waited_seconds_includes_time_spent_polling():
    result, _script, _clock = run({"a": ["Pending", "Running", "Completed"]}, cost=0.5)

    assert result.waited_seconds == 0.5 + 5 + 0.5 + 7.5 + 0.5


def test_timeout_zero_looks_once_without_sleeping():
    result, script, clock = run({"a": ["Running"]}, timeout=0, grace=30)

    assert result.outcome == OUTCOME_TIMEOUT
    assert clock.sleeps == []
    assert script.calls == [(["a"], START + 30, START)]
    assert result.polls == {"a": 1}


def test_timeout_zero_is_satisfied_by_an_already_completed_job():
    result, _script, clock = run({"a": ["Completed"]}, timeout=0)

    assert result.outcome == OUTCOME_SATISFIED
    assert clock.sleeps == []


def test_start_lets_an_earlier_fetch_count_against_the_deadline():
    clock = FakeClock()
    result, script, clock = run({"a": ["Running"]}, clock=clock, repeat_last=True, timeout=10, start=START - 8)

    # 2 s are left: one nap of 2 s, then the last look.
    assert clock.sleeps == [2]
    assert result.waited_seconds == 10
    assert script.calls[0][1] == START + 2


@settings(max_examples=200, deadline=None)
@given(
    timeout=st.integers(min_value=0, max_value=5000),
    sleep=st.floats(min_value=0.5, max_value=120),
    sleep_max=st.floats(min_value=0.5, max_value=600),
    cost=st.sampled_from([0.0, 0.25, 3.0]),
)
def test_never_sleeps_past_the_deadline(timeout, sleep, sleep_max, cost):
    clock = FakeClock()
    script = Script(clock, {"a": ["Running"]}, repeat_last=True, cost=cost)
    naps = []

    def sleeper(seconds):
        naps.append((clock.t, seconds))
        clock.sleep(seconds)

    result = wait_for_jobs(
        ["a"], script, WaitSettings(True, ["Completed"], DEFAULT_FAIL_ON, timeout, sleep, sleep_max), clock=clock, sleeper=sleeper, now=clock.now
    )

    deadline = START + timeout
    assert result.outcome == OUTCOME_TIMEOUT
    for started, seconds in naps:
        assert started + seconds <= deadline + 1e-9
    # Intervals follow the growth rule until the deadline cuts the last one short.
    cap = max(sleep, sleep_max)
    expected = sleep
    for _started, seconds in naps[:-1]:
        assert seconds == pytest.approx(expected)
        expected = min(expected * GROWTH_FACTOR, cap)
    # Only the requests of one round may run past the deadline.
    assert clock.t <= deadline + cost + 1e-9
    assert result.waited_seconds == pytest.approx(clock.t - START)


# ---------------------------------------------------------------- fail fast


@pytest.mark.parametrize("bad_phase", ["Failed", "Abnormal", "Terminated"])
def test_a_fail_on_phase_ends_a_multi_job_wait_at_once(bad_phase):
    sequences = {
        "a": ["Running"],
        "b": ["Pending", "Running", (bad_phase, "exit code 137: OOMKilled")],
        "c": ["Pending", "Completed"],
    }
    result, script, _clock = run(sequences, repeat_last=True)

    assert result.outcome == OUTCOME_FAILED
    assert len(script.calls) == 3
    assert result.polls == {"a": 3, "b": 3, "c": 2}
    assert result.failures == {"b": "reached phase %s: exit code 137: OOMKilled" % bad_phase}
    assert result.verdicts == {"a": JOB_WAITING, "b": JOB_FAILED, "c": JOB_DONE}
    message = result.message()
    assert message.startswith("stopped waiting for Completed after 12.5s")
    # The failing job comes first, then the others not done; the completed one is not named.
    assert message.index("training job b (train-b) reached phase %s: exit code 137: OOMKilled" % bad_phase) < message.index("training job a")
    assert "last phase seen Running" in message
    assert "training job c" not in message


def test_a_failure_without_reason_says_so():
    result, _script, _clock = run({"a": ["Failed"]})

    assert result.failures == {"a": "reached phase Failed: no failure reason given"}


@pytest.mark.parametrize(
    "wait_for,fail_on,phase",
    [
        (["Completed"], ["Failed"], "Terminated"),
        (["Completed"], ["Failed"], "Abnormal"),
        (["Completed"], [], "Failed"),
        (["Running"], ["Failed"], "Completed"),
    ],
)
def test_a_final_phase_outside_wait_for_and_fail_on_ends_the_wait(wait_for, fail_on, phase):
    result, script, _clock = run({"a": ["Pending", phase], "b": ["Pending"]}, repeat_last=True, wait_for=wait_for, fail_on=fail_on)

    assert result.outcome == OUTCOME_FAILED
    assert len(script.calls) == 2
    assert result.verdicts["a"] == JOB_UNREACHABLE
    assert "training job a (train-a) is %s, a final phase outside wait_for" % phase in result.message()


def test_custom_terminal_phases_are_honoured():
    # With Abnormal declared not final, the wait keeps going until the deadline.
    result, _script, _clock = run(
        {"a": ["Abnormal"]}, repeat_last=True, fail_on=["Failed"], timeout=10, terminal_phases=frozenset(("Completed", "Failed", "Terminated"))
    )

    assert result.outcome == OUTCOME_TIMEOUT


def test_terminating_is_not_final_and_keeps_polling():
    result, _script, _clock = run({"a": ["Running", "Terminating", "Terminated"]})

    assert result.outcome == OUTCOME_FAILED
    assert result.polls == {"a": 3}


def test_a_job_not_in_wait_for_never_counts_as_success():
    result, _script, _clock = run({"a": ["Completed"], "b": [{"id": "b", "name": "x", "phase": None, "failure_reason": None}]}, repeat_last=True, timeout=10)

    assert result.outcome == OUTCOME_TIMEOUT
    assert result.unsatisfied_keys() == ["b"]


# ---------------------------------------------------------------- errors


def test_transient_errors_are_tolerated():
    result, _script, _clock = run({"a": ["Pending", transient(), transient(), "Completed"]})

    assert result.outcome == OUTCOME_SATISFIED
    assert result.polls == {"a": 4}
    assert result.errors == {"a": None}


def test_an_unreached_service_ends_the_wait_at_once():
    refused = transient("ConnectionError: [Errno 111] Connection refused (gave up after 4 attempts)")
    refused.unreached = True
    result, script, _clock = run({"a": [refused]})

    assert result.outcome == OUTCOME_ERROR and len(script.calls) == 1
    assert "Connection refused" in result.message() and "not at wait_timeout" in result.message()


def test_transient_error_at_the_deadline_is_a_timeout_naming_the_error():
    result, _script, _clock = run({"a": ["Running", transient("HTTP 503 Service Unavailable")]}, repeat_last=True, timeout=12.5)

    assert result.outcome == OUTCOME_TIMEOUT
    assert result.polls == {"a": 3}
    assert "last phase seen Running, after waiting 12.5s (last poll failed: HTTP 503 Service Unavailable)" in result.message()


def cut(message="the deadline passed while waiting for the status line and headers of the response"):
    error = transient(message)
    error.deadline_cut = True
    return error


@pytest.mark.parametrize(
    "sequence,grace,said",
    [
        (["Running", cut()], 0.0, "last phase seen Running, after waiting 12.5s"),
        (["Running", transient("HTTP 503 Service Unavailable"), cut()], 0.0, "last phase seen Running, after waiting 12.5s (last poll failed: HTTP 503"),
        ([cut()], 0.0, "never seen, after waiting 12.5s (last poll failed: the deadline passed while waiting for the status line"),
        # done by a search's word only: the GET that was to confirm it is what failed, and the message says so
        (["Completed", cut()], 0.0, "last phase seen Completed, after waiting 12.5s (last poll failed: the deadline passed while waiting"),
        # the last round had ``grace`` past the deadline: a GET cut short there failed
        (["Running", "Running", cut()], 30.0, "last phase seen Running, after waiting 42.5s (last poll failed: the deadline passed while waiting"),
    ],
)
def test_a_poll_the_deadline_cut_short_reports_what_the_poll_before_it_said(sequence, grace, said):
    """Issue 41: the GET under way when a wait ran out, cut by its deadline, is the wait ending, not a failed poll; a job
    seen unfinished keeps what was seen (and an earlier failure), one never seen says why, and so does one a search
    alone said was done."""
    script = list(sequence)

    def poll(keys, deadline):
        observation = script.pop(0) if len(script) > 1 else script[0]
        if getattr(observation, "deadline_cut", False):
            clock.t = max(clock.t, deadline)  # it ran to the deadline it was given
        return {"a": item("a", observation) if isinstance(observation, str) else observation}

    clock = FakeClock()
    unconfirmed = (lambda: ["a"]) if sequence[0] == "Completed" else None
    result = wait_for_jobs(
        ["a"],
        poll,
        WaitSettings(True, ["Completed"], list(DEFAULT_FAIL_ON), 12.5, 5, 60),
        clock=clock,
        sleeper=clock.sleep,
        now=clock.now,
        unconfirmed=unconfirmed,
        grace=grace,
    )

    assert result.outcome == OUTCOME_TIMEOUT
    message = result.message()
    assert said in message, message
    if "failed" not in said:
        assert "failed" not in message and "deadline" not in message, message
    assert result.polls["a"] >= len(sequence)


def test_never_seen_job_on_timeout():
    result, _script, _clock = run({"a": [transient("connection refused")]}, repeat_last=True, timeout=5)

    assert "training job a: never seen, after waiting 5.0s (last poll failed: connection refused)" in result.message()


@pytest.mark.parametrize("tolerance", [0, 1, 3, 5])
def test_not_found_is_tolerated_for_the_first_polls_only(tolerance):
    result, script, _clock = run({"a": [not_found()] * (tolerance + 1)}, not_found_tolerance=tolerance)

    assert result.outcome == OUTCOME_ERROR
    assert result.polls == {"a": tolerance + 1}
    assert len(script.calls) == tolerance + 1
    expected = "not found after %d poll%s: ModelArts.2775 training job not found" % (tolerance + 1, "" if tolerance == 0 else "s")
    assert result.failures == {"a": expected}
    assert "training job a: " + expected in result.message()
    assert result.message().startswith("stopped waiting for Completed after")


def test_not_found_right_after_creation_then_visible():
    result, _script, _clock = run({"a": [not_found(), not_found(), not_found(), "Creating", "Completed"]})

    assert result.outcome == OUTCOME_SATISFIED
    assert result.phase_history["a"][0]["phase"] == "Creating"


def test_not_found_after_the_window_is_fatal_even_if_seen_before():
    result, _script, _clock = run({"a": ["Running", "Running", "Running", not_found("job deleted")]})

    assert result.outcome == OUTCOME_ERROR
    assert "training job a (train-a): not found after 4 polls: job deleted" in result.message()


def test_a_fatal_error_ends_the_wait_at_once():
    sequences = {"a": ["Running"], "b": ["Pending", FakeError("HTTP 403 ModelArts.2771 no permission")]}
    result, script, _clock = run(sequences, repeat_last=True)

    assert result.outcome == OUTCOME_ERROR
    assert len(script.calls) == 2
    assert result.failures == {"b": "HTTP 403 ModelArts.2771 no permission"}
    assert result.items["b"]["phase"] == "Pending"
    assert "training job b (train-b): HTTP 403 ModelArts.2771 no permission" in result.message()


def test_fail_on_phase_wins_over_an_error_in_the_same_round():
    result, _script, _clock = run({"a": [FakeError("boom")], "b": [("Failed", "bad data")]})

    assert result.outcome == OUTCOME_FAILED
    assert set(result.failures) == {"a", "b"}


def test_a_poll_that_raises_fails_each_job_by_the_usual_rules():
    clock = FakeClock()
    calls = []

    def poll(keys, deadline):
        calls.append(keys)
        if len(calls) == 1:
            raise transient("session dropped")
        return dict((key, item(key, "Completed")) for key in keys)

    result = wait_for_jobs(["a", "b"], poll, WaitSettings(True, ["Completed"], [], 60, 5, 60), clock=clock, sleeper=clock.sleep, now=clock.now)

    assert result.outcome == OUTCOME_SATISFIED
    assert result.polls == {"a": 2, "b": 2}


def test_a_poll_that_leaves_out_a_key_is_an_error_not_a_poll():
    clock = FakeClock()

    def poll(keys, deadline):
        return {"a": item("a", "Running")}

    result = wait_for_jobs(["a", "b"], poll, WaitSettings(True, ["Completed"], [], 60, 5, 60), clock=clock, sleeper=clock.sleep, now=clock.now)

    assert result.outcome == OUTCOME_ERROR
    assert isinstance(result.errors["b"], MissingResult)
    assert result.polls == {"a": 1, "b": 0}


def test_a_poll_that_gives_none_for_a_key_is_an_error_not_a_crash():
    clock = FakeClock()

    def poll(keys, deadline):
        return {"a": None}

    result = wait_for_jobs(["a"], poll, WaitSettings(True, ["Completed"], [], 60, 5, 60), clock=clock, sleeper=clock.sleep, now=clock.now)

    assert result.outcome == OUTCOME_ERROR
    assert "training job a: poll returned no result for this job" in result.message()


def test_requests_never_sent_are_not_counted_as_polls():
    result, _script, _clock = run({"a": [DeadlineExceeded("a"), "Completed"]})

    assert result.outcome == OUTCOME_SATISFIED
    assert result.polls == {"a": 1}


def test_messages_hold_only_item_fields_and_error_text():
    result, _script, _clock = run({"a": ["Running"], "b": [("Failed", "exit 1")]}, repeat_last=True)

    assert "SECRET-NOT-FOR-MESSAGES" not in result.message()
    assert "details" not in result.message()


# ---------------------------------------------------------------- many jobs


def test_a_completed_job_is_not_polled_again():
    result, script, _clock = run({"a": ["Completed"], "b": ["Pending", "Running", "Completed"]})

    assert script.polled_keys() == [["a", "b"], ["b"], ["b"]]
    assert result.polls == {"a": 1, "b": 3}
    assert result.job_waited_seconds == {"a": 0.0, "b": 12.5}


def test_two_hundred_jobs():
    keys = ["job-%03d" % i for i in range(200)]
    sequences = dict((key, ["Running"] * (i % 7) + ["Completed"]) for i, key in enumerate(keys))
    result, script, _clock = run(sequences)

    assert result.outcome == OUTCOME_SATISFIED
    assert result.polls == dict((key, i % 7 + 1) for i, key in enumerate(keys))
    # Round r polls only the jobs not yet seen Completed: those with i % 7 >= r.
    assert [len(keys_polled) for keys_polled in script.polled_keys()] == [sum(1 for i in range(200) if i % 7 >= r) for r in range(7)]
    assert list(result.items) == keys


def test_two_hundred_jobs_through_the_real_fanout_one_fails_late():
    clock = FakeClock()
    keys = ["job-%03d" % i for i in range(200)]
    counters = dict((key, 0) for key in keys)
    lock = threading.Lock()
    seen_deadlines = set()

    def fetch_one(key, deadline):
        with lock:
            counters[key] += 1
            count = counters[key]
            seen_deadlines.add(deadline)
        if key == "job-150" and count == 4:
            return item(key, "Abnormal", "node lost")
        return item(key, "Completed" if count >= 2 and key != "job-150" else "Running")

    def poll(keys_to_poll, deadline):
        return fetch_concurrently(keys_to_poll, fetch_one, max_concurrency=16, deadline=deadline, clock=clock)

    result = wait_for_jobs(keys, poll, WaitSettings(True, ["Completed"], DEFAULT_FAIL_ON, 3600, 5, 60), clock=clock, sleeper=clock.sleep, now=clock.now)

    assert result.outcome == OUTCOME_FAILED
    assert list(result.failures) == ["job-150"]
    assert result.polls["job-150"] == 4
    assert result.polls["job-000"] == 2
    assert seen_deadlines == {START + 3600}
    assert result.message().count("training job job-") == 1


def test_message_limit_names_the_first_jobs_and_counts_the_rest():
    sequences = dict(("j%d" % i, ["Running"]) for i in range(5))
    result, _script, _clock = run(sequences, repeat_last=True, timeout=5)

    message = result.message(limit=2)
    assert "training job j0" in message and "training job j1" in message
    assert "training job j2" not in message
    assert message.endswith("; and 3 more")
    assert message.startswith("timed out after 5.0s (wait_timeout 5) waiting for Completed, 5 of 5 training jobs not Completed: ")


# ---------------------------------------------------------------- initial fetch


def test_initial_fetch_is_the_first_round():
    clock = FakeClock()
    script = Script(clock, {"b": ["Running", "Completed"]})
    initial = {"a": item("a", "Completed"), "b": item("b", "Pending")}

    result = wait_for_jobs(
        ["a", "b"], script, WaitSettings(True, ["Completed"], DEFAULT_FAIL_ON, 60, 5, 60), clock=clock, sleeper=clock.sleep, now=clock.now, initial=initial
    )

    assert result.outcome == OUTCOME_SATISFIED
    assert script.polled_keys() == [["b"], ["b"]]
    assert result.polls == {"a": 1, "b": 3}
    assert [entry["phase"] for entry in result.phase_history["b"]] == ["Pending", "Running", "Completed"]


def test_initial_with_timeout_zero_polls_nothing():
    clock = FakeClock()
    script = Script(clock, {})

    result = wait_for_jobs(
        ["a"],
        script,
        WaitSettings(True, ["Completed"], DEFAULT_FAIL_ON, 0, 5, 60),
        clock=clock,
        sleeper=clock.sleep,
        now=clock.now,
        initial={"a": item("a", "Running")},
    )

    assert result.outcome == OUTCOME_TIMEOUT
    assert script.calls == []


def test_keys_missing_from_initial_are_polled_at_once():
    clock = FakeClock()
    script = Script(clock, {"b": ["Completed"]})

    result = wait_for_jobs(
        ["a", "b"],
        script,
        WaitSettings(True, ["Completed"], DEFAULT_FAIL_ON, 60, 5, 60),
        clock=clock,
        sleeper=clock.sleep,
        now=clock.now,
        initial={"a": item("a", "Completed")},
    )

    assert result.outcome == OUTCOME_SATISFIED
    assert script.calls == [(["b"], START + 60, START)]
    assert clock.sleeps == []


def test_an_initial_failure_ends_without_polling():
    clock = FakeClock()
    script = Script(clock, {})

    result = wait_for_jobs(
        ["a"],
        script,
        WaitSettings(True, ["Completed"], DEFAULT_FAIL_ON, 60, 5, 60),
        clock=clock,
        sleeper=clock.sleep,
        now=clock.now,
        initial={"a": item("a", "Failed", "bad")},
    )

    assert result.outcome == OUTCOME_FAILED
    assert script.calls == []


# ---------------------------------------------------------------- options and small functions


@pytest.mark.parametrize(
    "kwargs,fragment",
    [
        ({"wait_for": []}, "wait_for must name at least one phase"),
        ({"wait_for": ["Failed"], "fail_on": ["Failed", "Abnormal"]}, "both contain: Failed"),
        ({"timeout": -1}, "wait_timeout"),
        ({"sleep": 0}, "wait_sleep must"),
        ({"sleep_max": 0}, "wait_sleep_max"),
        ({"not_found_tolerance": -1}, "not_found_tolerance"),
    ],
)
def test_unusable_options_are_refused_before_polling(kwargs, fragment):
    options = {"wait_for": ["Completed"], "fail_on": DEFAULT_FAIL_ON, "timeout": 60, "sleep": 5, "sleep_max": 60}
    tolerance = kwargs.pop("not_found_tolerance", 3)
    options.update(kwargs)

    def poll(keys, deadline):
        raise AssertionError("polled")

    assert any(fragment in problem for problem in validate_wait_options(not_found_tolerance=tolerance, **options))
    with pytest.raises(ValueError, match=fragment):
        wait_for_jobs(
            ["a"],
            poll,
            WaitSettings(True, options["wait_for"], options["fail_on"], options["timeout"], options["sleep"], options["sleep_max"]),
            not_found_tolerance=tolerance,
        )


def test_default_options_are_usable():
    assert validate_wait_options(["Completed"], DEFAULT_FAIL_ON, 3600, 5, 60) == []
    assert validate_wait_options(["Completed"], DEFAULT_FAIL_ON, 0, 5, 60) == []


def test_no_keys_is_satisfied_without_polling():
    def poll(keys, deadline):
        raise AssertionError("polled")

    result = wait_for_jobs([], poll, WaitSettings(True, ["Completed"], [], 60, 5, 60))
    assert result.outcome == OUTCOME_SATISFIED


def test_judge():
    ok = ["Completed"]
    bad = DEFAULT_FAIL_ON
    assert judge(item("a", "Completed"), 1, ok, bad) == (JOB_DONE, None)
    assert judge(item("a", "Running"), 1, ok, bad) == (JOB_WAITING, None)
    assert judge(item("a", "Failed", "r"), 1, ok, bad) == (JOB_FAILED, "reached phase Failed: r")
    assert judge(item("a", "Terminated"), 1, ok, ["Failed"])[0] == JOB_UNREACHABLE
    assert judge(transient(), 99, ok, bad) == (JOB_TOLERATED, None)
    assert judge(not_found(), 3, ok, bad) == (JOB_TOLERATED, None)
    assert judge(not_found("x"), 4, ok, bad) == (JOB_FATAL, "not found after 4 polls: x")
    assert judge(ValueError("v"), 1, ok, bad) == (JOB_FATAL, "v")


def test_error_flags_must_be_values_not_methods():
    class MethodNotProperty(Exception):
        def not_found(self):
            return True

        def transient(self):
            return True

    assert judge(MethodNotProperty("x"), 1, ["Completed"], []) == (JOB_FATAL, "x")


def test_the_clients_error_type_is_classified():
    errors = pytest.importorskip("ansible_collections.modelarts.training.plugins.module_utils.errors")
    gone = errors.ModelArtsError("get training job a: HTTP 404", status=404)
    busy = errors.ModelArtsError("get training job a: HTTP 503", status=503, transient=True)
    denied = errors.ModelArtsError("get training job a: HTTP 403", status=403)

    assert judge(gone, 1, ["Completed"], []) == (JOB_TOLERATED, None)
    assert judge(gone, 4, ["Completed"], [])[0] == JOB_FATAL
    assert judge(busy, 50, ["Completed"], []) == (JOB_TOLERATED, None)
    assert judge(denied, 1, ["Completed"], []) == (JOB_FATAL, "get training job a: HTTP 403")


def test_wait_outcome():
    assert wait_outcome({"a": JOB_DONE, "b": JOB_DONE}) == OUTCOME_SATISFIED
    assert wait_outcome({"a": JOB_DONE, "b": JOB_WAITING}) is None
    assert wait_outcome({"a": JOB_DONE, "b": JOB_TOLERATED}) is None
    assert wait_outcome({"a": JOB_WAITING, "b": JOB_FATAL}) == OUTCOME_ERROR
    assert wait_outcome({"a": JOB_FATAL, "b": JOB_UNREACHABLE}) == OUTCOME_FAILED


def test_next_interval_and_nap_length():
    assert next_interval(5, 60) == 7.5
    assert next_interval(50, 60) == 60
    assert next_interval(5, 60, growth=2) == 10
    assert nap_length(10, 100.0, 105.0) == 5.0
    assert nap_length(3, 100.0, 105.0) == 3
    assert nap_length(3, 106.0, 105.0) == 0.0


def test_record_phase():
    history = []
    assert record_phase(history, "Pending", "t0")
    assert not record_phase(history, "Pending", "t1")
    assert record_phase(history, "Running", "t2")
    assert record_phase(history, "Pending", "t3")
    assert history == [{"phase": "Pending", "at": "t0"}, {"phase": "Running", "at": "t2"}, {"phase": "Pending", "at": "t3"}]


def test_format_utc():
    plus_eight = datetime.timezone(datetime.timedelta(hours=8))
    assert format_utc(datetime.datetime(2026, 1, 31, 20, 0, 5, 999999, tzinfo=plus_eight)) == "2026-01-31T12:00:05Z"
    assert format_utc(datetime.datetime(2026, 1, 31, 12, 0, 5)) == "2026-01-31T12:00:05Z"
