# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""diagnostics.py: the tail of a log, the order and time of events, the failing task, AOM then preview, what is masked."""

from __future__ import annotations

import json
import threading

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.results import diagnostics
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import Response
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError

JOB = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
FAIL_ON = ["Failed", "Abnormal", "Terminated"]


def ok(data, status=200):
    return Response(data, status, "req-1", {})


def denied(action):
    return ModelArtsError(
        "%s: HTTP 403 ModelArts.2771: No permission" % action,
        operation=action,
        status=403,
        error_code="ModelArts.2771",
        error_msg="No permission",
        request_id="r-403",
    )


class FakeClient(object):
    """The three calls diagnostics makes, answered from scripts; every call recorded."""

    def __init__(self, events=None, aom=None, preview=None):
        self.events = events if events is not None else ok({"total": 0, "events": []})
        self.aom = aom or {}
        self.preview = preview or {}
        self.calls = []
        self.lock = threading.Lock()

    def _answer(self, answer):
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def list_training_job_events(self, job_id, level=None, limit=100, offset=0, deadline=None, max_bytes=None):
        with self.lock:
            self.calls.append(("events", job_id, level))
        return self._answer(self.events)

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None):
        with self.lock:
            self.calls.append(("aom", task_id, lines))
        return self._answer(self.aom[task_id])

    def get_task_log_preview(self, job_id, task_id, deadline=None, consume=None):
        with self.lock:
            self.calls.append(("preview", task_id))
        answer = self._answer(self.preview[task_id])
        if consume is not None and isinstance(answer.data, dict):
            # As the client does: the body, read as it arrives, in small pieces.
            body = json.dumps(answer.data).encode("utf-8")
            answer = Response(consume(body[start : start + 7] for start in range(0, len(body), 7)), answer.status, answer.request_id, answer.headers)
        return answer


def failed_item(tasks=("worker-0",), statuses=(), records=(), phase="Failed", api="v2"):
    return {
        "id": JOB,
        "api_version": api,
        "phase": phase,
        "details": {"status": {"tasks": list(tasks), "task_statuses": list(statuses), "running_records": list(records)}},
    }


# -- the tail ------------------------------------------------------------------------------------


def test_tail_keeps_the_last_lines_and_says_whether_earlier_ones_were_left_out():
    assert diagnostics.tail("a\nb\nc\n", 2) == (["b", "c"], True)
    assert diagnostics.tail("a\nb\nc", 3) == (["a", "b", "c"], False)
    assert diagnostics.tail("a\r\nb\r\n", 5) == (["a", "b"], False)
    assert diagnostics.tail("", 5) == ([], False)
    assert diagnostics.tail("a\nb", 0) == ([], True)


def test_tail_of_a_five_megabyte_log_reads_from_its_end():
    text = "".join("line %07d\n" % index for index in range(420000))
    assert len(text) > 5 * 1024 * 1024 - 1
    lines, truncated = diagnostics.tail(text, 3)
    assert lines == ["line 0419997", "line 0419998", "line 0419999"] and truncated


def test_long_lines_are_cut_after_masking_and_control_characters_escaped():
    secret = "S3cr3tK3y/abc+def=="
    line = "x" * (diagnostics.LINE_CHARS - 5) + secret
    shown = diagnostics.clean(line, (secret,))
    assert secret[:5] not in shown[-40:] and "****" in shown, "masked whole before the cut"
    forged = diagnostics.clean("ok\r\nTASK [deploy] ******\x1b[32mchanged\x1b[0m", ())
    assert "\n" not in forged and "\r" not in forged and "\x1b" not in forged
    assert "\\x1b[32m" in forged and "\\r\\n" in forged


# -- events ------------------------------------------------------------------------------------


def test_events_are_utc_newest_last_and_never_info():
    raw = [
        {"time": "2026-11-25T18:00:05+08:00", "level": "Error", "message": "Failed to run the training job."},
        {"time": "2026-11-25T18:00:04+08:00", "level": "Info", "message": "noise"},
        {"time": "2026-11-25T18:00:03+0800", "level": "Warning", "message": "GPU memory above 95%"},
        {"time": "2026-11-25 09:59:59Z", "level": "Error", "message": "[worker-0] exited with 137"},
    ]
    events = diagnostics.error_events(raw, ())
    assert [event["time"] for event in events] == ["2026-11-25T09:59:59Z", "2026-11-25T10:00:03Z", "2026-11-25T10:00:05Z"]
    assert [event["level"] for event in events] == ["Error", "Warning", "Error"]


def test_events_of_the_same_second_are_ordered_by_their_fraction():
    # Newest first from the service; "...:05Z" sorts after "...:05.500Z" as text, never as a time.
    raw = [
        {"time": "2026-11-25T18:00:05.500+08:00", "level": "Error", "message": "later"},
        {"time": "2026-11-25T18:00:05+08:00", "level": "Error", "message": "earlier"},
    ]
    assert [event["message"] for event in diagnostics.error_events(raw, ())] == ["earlier", "later"]


def test_event_times_in_every_shape_the_service_may_use():
    assert diagnostics.utc_time("2026-11-25T18:00:05.123+08:00") == "2026-11-25T10:00:05.123Z"
    assert diagnostics.utc_time(1764064805000) == "2025-11-25T10:00:05Z"
    assert diagnostics.utc_time("1764064805000") == "2025-11-25T10:00:05Z"
    assert diagnostics.utc_time("2026-11-25T18:00:05") is None, "a time without a zone is not guessed"
    assert diagnostics.utc_time("yesterday") is None
    assert diagnostics.utc_time(True) is None


def test_events_without_readable_times_keep_the_services_order_reversed():
    raw = [{"time": "?", "level": "Error", "message": "second"}, {"time": None, "level": "Error", "message": "first"}]
    assert [event["message"] for event in diagnostics.error_events(raw, ())] == ["first", "second"]


# -- the failing task ----------------------------------------------------------------------------


def test_the_failing_task_is_the_non_zero_exit_the_running_record_blames():
    statuses = [{"task": "worker-0", "exit_code": 143}, {"task": "worker-1", "exit_code": 2}]
    records = [{"end_related_task": "worker-1"}]
    assert diagnostics.failing_task(failed_item(statuses=statuses, records=records)["details"]) == "worker-1"
    assert diagnostics.failing_task(failed_item(statuses=statuses)["details"]) == "worker-0"


def test_without_exit_codes_the_running_record_names_the_failing_task():
    statuses, records = [{"task": "worker-0", "exit_code": 0}], [{"end_related_task": "worker-1"}]
    details = failed_item(tasks=("worker-0", "worker-1"), statuses=statuses, records=records)["details"]
    assert diagnostics.failing_task(details) == "worker-1"
    assert diagnostics.task_ids(details) == (["worker-1", "worker-0"], 0)


def test_task_ids_default_to_worker_0_and_are_bounded():
    assert diagnostics.task_ids({"status": {}}) == (["worker-0"], 0)
    many = failed_item(tasks=["worker-%d" % index for index in range(40)])["details"]
    ids, left = diagnostics.task_ids(many)
    assert len(ids) == diagnostics.MAX_TASKS and left == 40 - diagnostics.MAX_TASKS
    hostile = {"status": {"tasks": ["../../etc", "worker-0"]}}
    assert diagnostics.task_ids(hostile) == (["worker-0"], 0), "a task id that is not a name never reaches a URL"


def test_task_ids_of_a_drifted_document_are_noted_never_read_as_characters():
    problems = []
    details = {"status": {"tasks": "worker-1", "task_statuses": 7, "running_records": {"end_related_task": "worker-1"}}}
    assert diagnostics.task_ids(details, problems) == (["worker-0"], 0)
    assert [line.split(":")[0] for line in problems] == ["status.tasks", "status.running_records", "status.task_statuses"]
    assert all("not an array" in line for line in problems)
    assert diagnostics.failing_task(details) is None


def test_an_event_message_that_is_not_text_is_described():
    events = diagnostics.error_events([{"level": "Error", "message": {"nested": ["x" * 100000]}, "time": 1}], ())
    assert events[0]["message"] == "an object with 1 key"


def _in_pieces(body, size):
    return (body[start : start + size] for start in range(0, len(body), size))


@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_a_preview_read_as_it_arrives_keeps_the_end_of_its_content_in_any_key_order(ensure_ascii):
    content = "".join('step %d: 训练 😀 "q" \\ \u00e9\n' % index for index in range(2000))
    for order in (("content", "current_size", "full_size", "x"), ("x", "full_size", "content", "current_size")):
        document = dict((key, {"content": content, "current_size": 9, "full_size": 10, "x": [{"content": "nested"}, "s"]}[key]) for key in order)
        body = json.dumps(document, ensure_ascii=ensure_ascii).encode("utf-8")
        for size in (1, 7, 65536):
            whole = diagnostics.PreviewTail(10**9)(_in_pieces(body, size))
            assert whole == {"content": content, "current_size": 9, "full_size": 10, diagnostics.PreviewTail.CUT: False}
            cut = diagnostics.PreviewTail(1000)(_in_pieces(body, size))
            assert cut[diagnostics.PreviewTail.CUT] is True and content.endswith(cut["content"]) and 0 < len(cut["content"].encode()) <= 1500
            lines = diagnostics.PreviewTail(10**9, lines=3)(_in_pieces(body, size))
            assert content.endswith(lines["content"]) and lines["content"].count("\n") == 4, "the last 3 lines and one more"


def test_a_preview_that_is_not_a_json_object_is_not_read_as_one():
    assert diagnostics.PreviewTail(100)(iter([b""])) is None, "HTTP 204: no log yet"
    assert diagnostics.PreviewTail(100)(iter([b"[1, 2]"])) == []
    for body in (b'{"content": "abc', b'{"content": "a"} {', b'{"content": "a\\', b'{"full_size": tru}'):
        with pytest.raises(ValueError):
            diagnostics.PreviewTail(100)(iter([body]))


# -- the calls -----------------------------------------------------------------------------------


def test_aom_lines_come_newest_first_and_are_shown_in_reading_order():
    client = FakeClient(aom={"worker-0": ok({"lines": 3, "content": "c\nb\na", "start_line": "9", "end_line": "7"})})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, log_lines=3)
    assert item["diagnostics"]["tasks"] == [{"task_id": "worker-0", "log_tail": ["a", "b", "c"], "log_truncated": True}]
    assert ("aom", "worker-0", 3) in client.calls and not [call for call in client.calls if call[0] == "preview"]


def test_fewer_aom_lines_than_asked_is_the_whole_log():
    client = FakeClient(aom={"worker-0": ok({"lines": 2, "content": "b\na"})})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, log_lines=30)
    assert item["diagnostics"]["tasks"][0] == {"task_id": "worker-0", "log_tail": ["a", "b"], "log_truncated": False}


def test_a_failed_aom_call_falls_back_to_the_preview():
    preview = ok({"content": "x\n" * 10 + "y\nz\n", "current_size": 24, "full_size": 24})
    client = FakeClient(aom={"worker-0": denied("aom")}, preview={"worker-0": preview})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, log_lines=2)
    assert item["diagnostics"]["tasks"] == [{"task_id": "worker-0", "log_tail": ["y", "z"], "log_truncated": True}]
    assert item["diagnostics"]["errors"] == []


def test_more_lines_than_aom_serves_go_straight_to_the_preview():
    client = FakeClient(preview={"worker-0": ok({"content": "a\nb\n", "current_size": 4, "full_size": 4})})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, log_lines=diagnostics.AOM_MAX_LINES + 1)
    assert [call[0] for call in client.calls if call[0] != "events"] == ["preview"]
    assert item["diagnostics"]["tasks"][0]["log_truncated"] is False


def test_a_preview_that_starts_inside_the_log_drops_its_partial_first_line():
    client = FakeClient(preview={"worker-0": ok({"content": "tial line\nb\n", "current_size": 12, "full_size": 900})})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, log_lines=600)
    assert item["diagnostics"]["tasks"][0] == {"task_id": "worker-0", "log_tail": ["b"], "log_truncated": True}


def test_a_permission_fault_is_an_errors_line_naming_the_permission_and_the_verdict_stays():
    client = FakeClient(events=denied("events"), aom={"worker-0": denied("aom")}, preview={"worker-0": denied("preview")})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON)
    found = item["diagnostics"]
    assert item["phase"] == "Failed" and found["events"] == [] and found["tasks"] == []
    assert len(found["errors"]) == 3
    assert "modelarts:trainJob:listEvents" in found["errors"][0] and "HTTP 403 ModelArts.2771" in found["errors"][0]
    assert all("modelarts:trainJob:getLogs" in line for line in found["errors"][1:])


def test_logs_not_ready_are_reported_once_without_a_fallback():
    client = FakeClient(aom={"worker-0": ok(None, status=204)})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON)
    assert [call[0] for call in client.calls] == ["events", "aom"]
    assert item["diagnostics"]["errors"] == ["log of task worker-0: the log is not ready yet (HTTP 204 with no body)"]


def test_an_odd_body_is_an_errors_line():
    client = FakeClient(events=ok({"events": "nope"}), aom={"worker-0": ok({"content": 7})}, preview={"worker-0": ok(["not", "an", "object"])})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON)
    assert len(item["diagnostics"]["errors"]) == 3 and item["diagnostics"]["tasks"] == []


def test_log_lines_0_reads_the_events_only():
    client = FakeClient()
    item = failed_item()
    assert diagnostics.diagnose(client, [item], FAIL_ON, log_lines=0) == 1
    assert client.calls == [("events", JOB, "Error")]
    assert item["diagnostics"] == {"events": [], "tasks": [], "errors": []}


@pytest.mark.parametrize("item", [failed_item(phase="Completed"), failed_item(api="v1"), failed_item(phase="Running")])
def test_items_outside_fail_on_and_v1_items_cost_no_call(item):
    client = FakeClient()
    assert diagnostics.diagnose(client, [item], FAIL_ON) == 0
    assert client.calls == [] and item["diagnostics"] is None


def test_secrets_are_masked_in_events_logs_and_errors():
    secret, token = "AKSK-secret-value-123", "notebook-token-456789"
    events = ok({"events": [{"time": "2026-11-25T18:00:05+08:00", "level": "Error", "message": "auth with %s failed" % secret}]})
    aom = ok({"content": "jupyter ?token=%s\nexport SK=%s" % (token, secret)})
    client = FakeClient(events=events, aom={"worker-0": aom})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, secrets=(secret, token))
    text = repr(item["diagnostics"]) + diagnostics.summary(item)
    assert secret not in text and token not in text and "********" in text


def test_the_summary_holds_the_last_error_event_and_the_last_lines_of_the_failing_task():
    events = ok(
        {
            "events": [
                {"time": "2026-11-25T18:00:05+08:00", "level": "Error", "message": "Failed to run the training job."},
                {"time": "2026-11-25T18:00:04+08:00", "level": "Warning", "message": "GPU memory high"},
            ]
        }
    )
    log = "\n".join("line %d" % index for index in range(10, 0, -1))
    statuses = [{"task": "worker-0", "exit_code": 143}, {"task": "worker-1", "exit_code": 2}]
    client = FakeClient(events=events, aom={"worker-1": ok({"content": log}), "worker-0": ok({"content": "other"})})
    item = failed_item(tasks=("worker-0", "worker-1"), statuses=statuses, records=[{"end_related_task": "worker-1"}])
    diagnostics.diagnose(client, [item], FAIL_ON, log_lines=10)
    text = diagnostics.summary(item)
    assert "last error event at 2026-11-25T10:00:05Z: Failed to run the training job." in text
    assert "last 5 log lines of task worker-1: line 6 | line 7 | line 8 | line 9 | line 10" in text
    assert "\n" not in text


def test_an_error_that_quotes_a_secret_is_masked_before_it_is_cut():
    token = "notebook-token-456789"
    error = ModelArtsError("x", status=403, error_code="ModelArts.2771", error_msg="denied for " + "y" * 183 + token)  # the cut at 200 falls inside the token
    client = FakeClient(events=error, aom={"worker-0": error}, preview={"worker-0": error})
    item = failed_item()
    diagnostics.diagnose(client, [item], FAIL_ON, secrets=(token,))
    for line in item["diagnostics"]["errors"]:
        assert token[:6] not in line and "\n" not in line
