# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a job failed: the service's own diagnostics for the items of failed v2 jobs.

This file owns all of it: which calls are made, how a log is reduced to its tail, what is masked.
The door (``query.py``) calls :func:`diagnose` for the items of a result; nothing else knows about
events or logs.

* **Which jobs.** Only v2 items whose phase is in ``fail_on``: a completed job costs no call.  Every
  other item gets ``diagnostics: None``.
* **Which calls.** Per job, one events call (``level=Error``, then ``level=Warning`` is not asked: the
  error events are what a user reads) and, unless ``log_lines`` is 0, one log call per task: the AOM
  log by lines (``lines`` at most 500, newest first: a few KB), falling back to the preview (the last
  5 MB of the log) when the AOM call fails or ``log_lines`` is over 500.  All of them run at once over
  the client's session (``fanout.fetch_concurrently``), bounded by the caller's deadline.
* **Bounded memory.** An events or AOM answer is read up to :data:`ANSWER_MAX_BYTES`; a preview is read as it
  arrives (:class:`PreviewTail`), holding only the end of its log - the previews read at once share
  :data:`PREVIEW_BUDGET_BYTES` - and decoding only the lines wanted, whatever size and characters the service sends.
* **Never the verdict.** Nothing here raises for the service's answers: a call that fails (HTTP 403
  for a missing permission, a timeout, an odd body, a log not ready yet) becomes one line of
  ``diagnostics.errors``, and the item's phase and the call's outcome stay as they were.  So does a job
  document whose ``status.tasks``, ``task_statuses`` or ``running_records`` is not a list (``validate: warn``
  or ``off``): read as empty - a string never as its characters - and named in an ``errors`` line.
* **Bounded and safe.** A log is cut from its end (``str.rfind``: the whole text is never split into
  lines); each line is cut to :data:`LINE_CHARS`; secrets (the collection's credentials and the job's
  endpoint tokens) are masked *before* anything is cut; control characters are escaped so that a log
  line cannot forge a line of Ansible's output.  The message gets only the last error event and the
  last :data:`MESSAGE_LOG_LINES` lines of the failing task's log (:func:`summary`).
"""

from __future__ import annotations

import datetime
import json
import re

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.fanout import fetch_concurrently
from ansible_collections.modelarts.training.plugins.module_utils.text import Secrets, describe_typed, label

DEFAULT_LOG_LINES = 30
# The AOM call's own bound on lines; more lines are read from the preview.
AOM_MAX_LINES = 500
# One page of the events API (its largest limit): the newest error events.
EVENTS_PAGE = 100
# A job with more tasks gets the log of the failing task and of the first others up to this many.
MAX_TASKS = 16
# A log line or an event message longer than this is cut (after masking).
LINE_CHARS = 1000
# What the one-line message shows: the last error event, and the last lines of the failing task's log.
MESSAGE_LOG_LINES = 5
MESSAGE_LINE_CHARS = 300
# Memory, whatever the service sends: an events or AOM answer is read up to this many bytes (100 events or 500 lines
# are far less), and a preview is read as it arrives, keeping only the end of its log: at most PREVIEW_TAIL_BYTES per
# preview and PREVIEW_BUDGET_BYTES for all the previews read at once (each gets an equal share, at least PREVIEW_MIN_BYTES).
ANSWER_MAX_BYTES = 4 * 1024 * 1024
PREVIEW_TAIL_BYTES = 2 * 1024 * 1024
PREVIEW_BUDGET_BYTES = 8 * 1024 * 1024
PREVIEW_MIN_BYTES = 64 * 1024
PERMISSIONS = {"events": "modelarts:trainJob:listEvents", "log": "modelarts:trainJob:getLogs"}
# ModelArts answers this code (or HTTP 204 with no body) while a task has no log yet.
NOT_READY_CODES = frozenset(("ModelArts.2776",))
SHOWN_LEVELS = ("Error", "Warning")
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_OFFSET = re.compile(r"^(?P<main>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(?P<fraction>\.\d+)?\s*(?P<zone>Z|[+-]\d{2}:?\d{2}|UTC|GMT)?$")


class LogNotReady(Exception):
    """The task has no log yet (HTTP 204 or ``ModelArts.2776``): not a fault, and not worth a fallback call."""


class OddAnswer(Exception):
    """A 2xx answer whose body is not what the API's model says."""


def wanted(item, fail_on):
    """Whether ``item`` gets diagnostics: a v2 item with an id, in a ``fail_on`` phase."""
    return isinstance(item, dict) and item.get("api_version") == "v2" and isinstance(item.get("id"), str) and item.get("phase") in (fail_on or ())


# -- what the job document says --------------------------------------------------------------


def _status(details):
    status = details.get("status") if isinstance(details, dict) else None
    return status if isinstance(status, dict) else {}


def _task_name(value):
    return value if isinstance(value, str) and TASK_ID.fullmatch(value) else None


def _array(status, key, problems):
    """``status[key]`` when it is a JSON array, else ``[]``: absent or null quietly, any other value (a number, an object, a
    string - never read as its characters) with a line in ``problems``."""
    value = status.get(key)
    if value is None or isinstance(value, list):
        return value or []
    if problems is not None:
        problems.append("status.%s: not an array (got %s); no task was read from it" % (key, describe_typed(value)))
    return []


def failing_task(details, problems=None):
    """The task that failed: one with a non-zero exit in ``task_statuses`` (the one the last running record
    blames first), else the last running record's ``end_related_task``; None when the document names none.

    A field of another shape than the API's is read as empty and noted in ``problems`` (a list), if given."""
    status = _status(details)
    blamed = None
    for record in reversed(_array(status, "running_records", problems)):
        if isinstance(record, dict) and _task_name(record.get("end_related_task")):
            blamed = record["end_related_task"]
            break
    exited = []
    for entry in _array(status, "task_statuses", problems):
        if not isinstance(entry, dict) or not _task_name(entry.get("task")):
            continue
        code = entry.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            exited.append(entry["task"])
    if exited:
        return blamed if blamed in exited else exited[0]
    return blamed


def task_ids(details, problems=None):
    """The job's task ids (``status.tasks``, else the tasks ``task_statuses`` names), the failing one first, at most
    :data:`MAX_TASKS`; ``worker-0`` (the service's one task of a single-node job) when the document names none.
    Returns ``(ids, left_out)``; a field of another shape than the API's is noted in ``problems`` (a list), if given,
    once."""
    status = _status(details)
    found = []
    tasks = _array(status, "tasks", found)
    names = [name for name in tasks if _task_name(name)]
    if len(names) < len(tasks):
        found.append("status.tasks: %d of its %d entries are not task ids and were not read" % (len(tasks) - len(names), len(tasks)))
    if not names:
        names = [entry.get("task") for entry in _array(status, "task_statuses", None) if isinstance(entry, dict) and _task_name(entry.get("task"))]
    culprit = failing_task(details, found)
    if problems is not None:
        problems.extend(line for line in dict.fromkeys(found) if line not in problems)
    if culprit and culprit not in names:
        names.append(culprit)
    names = list(dict.fromkeys(names)) or ["worker-0"]
    if culprit:
        names.remove(culprit)
        names.insert(0, culprit)
    return names[:MAX_TASKS], max(0, len(names) - MAX_TASKS)


# -- shaping what the service said ------------------------------------------------------------


def clean(text, secrets, length=LINE_CHARS):
    """One line of service text as shown: secrets masked first, control characters escaped, cut to ``length``.

    A value that is not text (an event's ``message`` sent as an object, say) is described, never printed whole."""
    if text is None:
        return ""
    return label(text if isinstance(text, str) else describe_typed(text), length, secrets)


def utc_time(value):
    """An event time as ISO 8601 UTC (``2026-11-25T02:00:03Z``): from local times such as ``+08:00``, a ``Z``
    time or epoch milliseconds; None when it cannot be read (a time without a zone is not guessed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().isdigit()):
        try:
            moment = datetime.datetime.fromtimestamp(int(value) / 1000.0, datetime.timezone.utc)
        except (ValueError, OverflowError, OSError):
            return None
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    match = _OFFSET.match(value.strip()) if isinstance(value, str) else None
    if not match or not match.group("zone"):
        return None
    zone = match.group("zone")
    zone = "+00:00" if zone in ("Z", "UTC", "GMT") else zone if ":" in zone else zone[:3] + ":" + zone[3:]
    try:
        moment = datetime.datetime.fromisoformat(match.group("main").replace(" ", "T") + (match.group("fraction") or "") + zone)
    except ValueError:
        return None
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ("%sZ" % (match.group("fraction") or "")[:4])


def error_events(raw, secrets):
    """The Error (and Warning) events of an events answer, oldest first (newest last), times in UTC.

    The API answers newest first; an event without a readable time keeps its place relative to the others.
    Info events are dropped whatever the service sent.
    """
    if not isinstance(raw, list):
        raise OddAnswer("'events' is not a list")
    events = []
    for position, event in enumerate(raw):
        if not isinstance(event, dict) or event.get("level") not in SHOWN_LEVELS:
            continue
        events.append((position, {"time": utc_time(event.get("time")), "level": event["level"], "message": clean(event.get("message"), secrets)}))
    # Newest first from the service: reversed, it is oldest first; then a stable sort by the UTC time where known.
    events.reverse()
    # Sorted as times: without the "Z", "...:05" comes before "...:05.5" as text too ("Z" sorts after ".").
    timed = sorted((entry for entry in events if entry[1]["time"]), key=lambda entry: entry[1]["time"].rstrip("Z"))
    if len(timed) == len(events):
        return [event for _position, event in timed]
    return [event for _position, event in events]


def tail(text, count):
    """The last ``count`` lines of ``text`` and whether lines before them were left out.

    Read from the end with ``rfind``: a 5 MB log is never split into its hundred thousand lines.  A
    trailing newline ends the last line rather than starting an empty one; ``\\r\\n`` counts as one break.
    """
    if count <= 0 or not text:
        return [], bool(text)
    end = len(text)
    while end > 0 and text[end - 1] in "\r\n":
        end -= 1
    lines = []
    cut = end
    while len(lines) < count:
        start = text.rfind("\n", 0, cut)
        lines.append(text[start + 1 : cut].rstrip("\r"))
        if start < 0:
            return list(reversed(lines)), False
        cut = start
    return list(reversed(lines)), text[:cut].strip("\r\n") != ""


# -- the calls ----------------------------------------------------------------------------------


def error_line(what, error, permission=None, secrets=()):
    """One ``errors`` line for a call that failed: what, HTTP status and code, the service's message, the permission to check.

    Whatever the service or the transport said is masked before it is cut (``label``)."""
    if isinstance(error, LogNotReady):
        return "%s: the log is not ready yet (%s)" % (what, label(error, 80, secrets))
    if isinstance(error, ModelArtsError):
        if error.status is not None and error.error_code:
            text = "%s: HTTP %s %s: %s" % (what, error.status, label(error.error_code, 60, secrets), label(error.error_msg or "(no message)", 200, secrets))
        else:
            text = "%s: %s" % (what, label(str(error), 300, secrets))
        if error.status == 403 and permission:
            text += " (the credentials need the IAM permission %s)" % permission
        if error.request_id:
            text += " [request id %s]" % label(error.request_id, 80, secrets)
        return text
    return "%s: %s" % (what, label("%s: %s" % (type(error).__name__, error), 300, secrets))


def fetch_events(client, job_id, secrets, deadline):
    """The job's error events (newest last) and whether older ones were left out."""
    response = client.list_training_job_events(job_id, level="Error", limit=EVENTS_PAGE, deadline=deadline, max_bytes=ANSWER_MAX_BYTES)
    data = response.data
    if not isinstance(data, dict):
        raise OddAnswer("the answer is not a JSON object")
    events = error_events(data.get("events"), secrets)
    total = data.get("total")
    more = isinstance(total, int) and not isinstance(total, bool) and total > len(data.get("events") or [])
    return events, more


def log_answer(response, what):
    """The data of a log answer (AOM or preview); :class:`LogNotReady` for HTTP 204 or no body, :class:`OddAnswer` without
    ``content`` text."""
    if response.status == 204 or response.data is None:
        raise LogNotReady("HTTP %s with no body" % response.status)
    if not isinstance(response.data, dict) or not isinstance(response.data.get("content"), str):
        raise OddAnswer("%s: the answer has no 'content' text" % what)
    return response.data


def not_ready(error):
    """Whether ``error`` is the service saying the task has no log yet (``ModelArts.2776``)."""
    return isinstance(error, ModelArtsError) and error.error_code in NOT_READY_CODES


def fetch_log(client, job_id, task, count, secrets, deadline, window=PREVIEW_TAIL_BYTES):
    """``{task_id, log_tail, log_truncated}`` for one task: the AOM call first, the preview when it fails.

    Raises when neither answered (the caller turns it into an ``errors`` line); a log not ready yet is
    not asked for twice.  Of a preview, only the last ``window`` bytes of the log are kept (:class:`PreviewTail`).
    """
    first = None
    if count <= AOM_MAX_LINES:
        try:
            data = log_answer(client.get_task_log_lines(job_id, task, count, deadline=deadline, max_bytes=ANSWER_MAX_BYTES), "AOM log")
            # Newest first: the first ``count`` lines of the content, in reading order.
            newest, _more = head(data["content"], count)
            lines = list(reversed(newest))
            returned = data.get("lines")
            # As many lines as asked for: older ones may exist.  Fewer: that is the whole log.
            truncated = len(lines) >= count or (isinstance(returned, int) and not isinstance(returned, bool) and returned >= count)
            return _task_entry(task, lines, truncated, secrets)
        except LogNotReady:
            raise
        except (ModelArtsError, OddAnswer) as error:
            if not_ready(error):
                raise LogNotReady(error.error_code) from None
            first = error
    try:
        data = log_answer(client.get_task_log_preview(job_id, task, deadline=deadline, consume=PreviewTail(window, count)), "log preview")
    except ModelArtsError as error:
        if not_ready(error):
            raise LogNotReady(error.error_code) from None
        raise _Both(first, error) from None
    except OddAnswer as error:
        raise _Both(first, error) from None
    # The answer was read as it arrived, keeping the end of the log only (PreviewTail); tail() finds the last lines
    # from its end, so the log is never split into lines nor copied.
    content = data["content"]
    lines, more = tail(content, count)
    full, current = data.get("full_size"), data.get("current_size")
    cut_at_start = (isinstance(full, int) and isinstance(current, int) and full > current) or data.get(PreviewTail.CUT) is True
    if cut_at_start and not more and lines:
        # The preview starts inside the log: its first line may be the end of a longer one.
        lines = lines[1:]
        more = True
    return _task_entry(task, lines, more or cut_at_start, secrets)


# -- a preview, read as it arrives ----------------------------------------------------------------

# The inside of a JSON string: anything but a quote or a backslash, and escapes (a backslash and the character after it).
_STRING_RUN = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)
_BLANKS = frozenset(b" \t\r\n")
_PASSED_OVER = re.compile(rb'[^"{}\[\]]*')
_KEY_BYTES = 256
_VALUE_BYTES = 4096


class PreviewTail(object):
    """Reads a log preview answer (``{"content": "...", "current_size": n, "full_size": n}``) as it arrives, in any key order.

    Of ``content`` only its last ``window`` bytes (as sent, and one piece or a quarter more) are held, cut where no escape
    or character is split, and of them only the last ``lines`` lines (and one more) are decoded; of the other top-level
    keys, values of up to 4 KB that are not objects or arrays; anything else is passed over.  The data returned has ``CUT`` true when the start of ``content``
    was left out, so its first line is partial; ``None`` for an empty body (HTTP 204); a ValueError for a body that is
    not JSON.  One instance reads any number of answers (one per attempt).
    """

    CUT = "_content_cut"

    def __init__(self, window, lines=None):
        self.window = max(16, int(window))
        self.lines = lines

    def __call__(self, pieces):
        scan = _PreviewScan(self.window, self.lines)
        for piece in pieces:
            scan.feed(piece)
        return scan.result()


class _PreviewScan(object):
    # pylint: disable=too-many-instance-attributes
    def __init__(self, window, lines):
        self.window = window
        self.slack = max(65536, window // 4)
        self.lines = lines
        self.depth = 0
        self.started = self.ended = self.not_object = False
        self.in_string = False
        self.carry = b""
        self.expect_key = True  # at depth 1: a key comes next (else a value)
        self.key = None  # the key of the value being read at depth 1
        self.role = None  # what the string being read is: "key", "content", "value" or None (passed over)
        self.text = bytearray()  # a key or a small value as it arrives
        self.scalar = None  # a number, true, false or null at depth 1, as it arrives
        self.tail = bytearray()  # the end of content
        self.cut = False
        self.values = {}

    def feed(self, piece):
        if self.not_object:
            return
        data = self.carry + piece if self.carry else piece
        self.carry = b""
        pos, size = 0, len(data)
        while pos < size:
            if self.in_string:
                end = _STRING_RUN.match(data, pos).end()
                self._string_bytes(data, pos, end)
                if end == size:
                    return
                if data[end] == 0x5C:  # a backslash at the end of the piece: the next piece completes its escape
                    self.carry = data[end:]
                    return
                self.in_string = False
                self._string_end()
                pos = end + 1
            elif self.depth > 1:
                # Inside a value passed over: only strings and brackets matter.
                pos = _PASSED_OVER.match(data, pos).end()
                if pos < size:
                    self._structure(data[pos])
                    pos += 1
            elif data[pos] in _BLANKS:
                self._scalar_end()
                pos += 1
            elif not self.started:
                self.started = True
                if data[pos] != 0x7B:  # not an object: not a preview, whatever follows
                    self.not_object = True
                    return
                self.depth = 1
                pos += 1
            elif self.ended:
                raise ValueError("more after the end of the JSON object")
            else:
                self._structure(data[pos])
                pos += 1

    def _structure(self, byte):
        if byte == 0x22:  # a quote
            self._scalar_end()
            self.in_string = True
            self.role = None
            if self.depth == 1:
                self.role = "key" if self.expect_key else ("content" if self.key == "content" else "value")
            if self.role == "content":
                self.tail = bytearray()
                self.cut = False
            self.text = bytearray()
        elif byte in (0x7B, 0x5B):  # { [
            self._scalar_end()
            self.depth += 1
        elif byte in (0x7D, 0x5D):  # } ]
            self._scalar_end()
            self.depth -= 1
            self.ended = self.depth == 0
        elif byte == 0x3A:  # :
            self._scalar_end()
            self.expect_key = self.depth != 1 and self.expect_key
        elif byte == 0x2C:  # ,
            self._scalar_end()
            if self.depth == 1:
                self.expect_key, self.key = True, None
        elif self.depth == 1 and not self.expect_key:
            # A number, true, false or null, as it arrives.
            if self.scalar is None:
                self.scalar = bytearray()
            if len(self.scalar) <= 64:
                self.scalar.append(byte)
        else:
            raise ValueError("unexpected %r" % bytes([byte]))

    def _scalar_end(self):
        if self.scalar is not None:
            token, self.scalar = bytes(self.scalar), None
            if len(token) <= 64 and self.key is not None:
                self.values[self.key] = json.loads(token)
            elif len(token) <= 64:
                json.loads(token)

    def _string_bytes(self, data, start, end):
        if start == end or self.role is None:
            return
        if self.role == "content":
            self.tail += data[start:end]
            if len(self.tail) > self.window + self.slack:
                cut = _safe_cut(self.tail, len(self.tail) - self.window)
                del self.tail[:cut]
                self.cut = True
        elif len(self.text) <= (_KEY_BYTES if self.role == "key" else _VALUE_BYTES):
            self.text += data[start:end][: _VALUE_BYTES + 1]

    def _string_end(self):
        role, self.role = self.role, None
        if role == "key":
            self.key = _decode_string(self.text) if len(self.text) <= _KEY_BYTES else None
        elif role == "content":
            if len(self.tail) > self.window:
                del self.tail[: _safe_cut(self.tail, len(self.tail) - self.window)]
                self.cut = True
            start = _line_start(self.tail, self.lines + 2) if self.lines is not None else 0
            self.values["content"] = _decode_string(memoryview(self.tail)[start:])
            self.values[PreviewTail.CUT] = self.cut or start > 0
            self.tail = bytearray()
        elif role == "value" and self.key is not None and len(self.text) <= _VALUE_BYTES:
            self.values[self.key] = _decode_string(self.text)
        self.text = bytearray()

    def result(self):
        if not self.started:
            return None
        if self.not_object:
            return []
        self._scalar_end()
        if self.in_string or self.carry or self.depth:
            raise ValueError("the body ends inside its JSON")
        return self.values


def _starts_escape(data, index):
    """Whether the backslash at ``index`` starts an escape (an odd run of backslashes ends there)."""
    run = 0
    while index >= 0 and data[index] == 0x5C:
        run += 1
        index -= 1
    return run % 2 == 1


def _safe_cut(data, pos):
    """The first place at or after ``pos`` where the JSON string text ``data`` (which starts at such a place) may be cut:
    not inside an escape (``\\n``, ``\\u00e9``), between the two escapes of a surrogate pair, nor inside a UTF-8 character."""
    size = len(data)
    while pos < size:
        escape = data.rfind(b"\\u", max(0, pos - 5), min(size, pos + 1))
        if 0 <= escape < pos and _starts_escape(data, escape) and pos <= escape + 5:
            pos = escape + 6
        elif pos > 0 and data[pos - 1] == 0x5C and _starts_escape(data, pos - 1):
            pos += 1
        elif 0x80 <= data[pos] < 0xC0:
            pos += 1
        elif data[pos] == 0x5C and data[pos + 1 : pos + 3].lower() == b"ud" and data[pos + 3 : pos + 4].lower() in (b"c", b"d", b"e", b"f"):
            pos += 6  # the second half of a surrogate pair (an escaped character beyond U+FFFF)
        else:
            return pos
    return size


def _line_start(data, count):
    """Where the last ``count`` lines of the JSON string text ``data`` start: after the ``count``-th newline escape
    (``\\n``) from its end; 0 when it has fewer."""
    end = len(data)
    for _line in range(count):
        found = data.rfind(b"\\n", 0, end)
        while found >= 0 and not _starts_escape(data, found):
            found = data.rfind(b"\\n", 0, found)
        if found < 0:
            return 0
        end = found
    return end + 2


def _decode_string(raw):
    """The text of a JSON string's inside, as sent (bad UTF-8 replaced, control characters let through: they are escaped when shown)."""
    return json.JSONDecoder(strict=False).decode('"%s"' % bytes(raw).decode("utf-8", "replace"))


def head(text, count):
    """The first ``count`` lines of ``text`` (read with ``find``) and whether more follow."""
    lines = []
    start = 0
    while len(lines) < count and start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            if text[start:]:
                lines.append(text[start:].rstrip("\r"))
            return lines, False
        lines.append(text[start:end].rstrip("\r"))
        start = end + 1
    return lines, text[start:].strip("\r\n") != ""


def _task_entry(task, lines, truncated, secrets):
    shown = [clean(line, secrets) for line in lines]
    # clean() cuts a line longer than LINE_CHARS to LINE_CHARS and "...".
    cut = any(len(line) > LINE_CHARS for line in shown)
    return {"task_id": task, "log_tail": shown, "log_truncated": bool(truncated or cut)}


class _Both(Exception):
    """Neither log call answered: the AOM call's error (or None when it was not tried) and the preview's."""

    def __init__(self, aom, preview):
        super().__init__(str(preview))
        self.aom = aom
        self.preview = preview


# -- the whole -----------------------------------------------------------------------------------


def diagnose(client, items, fail_on, log_lines=DEFAULT_LOG_LINES, secrets=(), max_concurrency=16, deadline=None, clock=None):
    """Set ``item['diagnostics']`` on every item of ``items`` (in place): the service's diagnostics for a v2 item in a
    ``fail_on`` phase, None for the others.  Never raises for the service's answers; returns the number of calls made.

    ``secrets`` are masked in everything kept (the client's secrets and the jobs' endpoint tokens); ``deadline`` (a
    reading of ``clock``) bounds every call.
    """
    # One masking structure for every event and log line kept (the caller may pass the one it keeps, see text.Secrets).
    secrets = secrets if isinstance(secrets, Secrets) else Secrets(secrets)
    units = []
    targets = []
    for item in items:
        if not wanted(item, fail_on):
            if isinstance(item, dict):
                item["diagnostics"] = None
            continue
        job_id = item["id"]
        problems = []
        tasks, left_out = task_ids(item.get("details"), problems) if log_lines > 0 else ([], 0)
        # What the document says in another shape than the API's: one line each, as the service's own text is.
        item["diagnostics"] = {"events": [], "tasks": [], "errors": [label(line, 300, secrets) for line in problems]}
        targets.append((item, tasks, left_out))
        units.append(("events", job_id, None))
        units.extend(("log", job_id, task) for task in tasks)
    if not units:
        return 0

    # The previews read at once share PREVIEW_BUDGET_BYTES.
    at_once = max(1, min(int(max_concurrency), sum(1 for unit in units if unit[0] == "log")))
    window = max(PREVIEW_MIN_BYTES, min(PREVIEW_TAIL_BYTES, PREVIEW_BUDGET_BYTES // at_once))

    def run(unit, when):
        kind, job_id, task = unit
        if kind == "events":
            return fetch_events(client, job_id, secrets, when)
        return fetch_log(client, job_id, task, log_lines, secrets, when, window)

    extra = {"clock": clock} if clock is not None else {}
    results = fetch_concurrently(units, run, max_concurrency=max_concurrency, deadline=deadline, **extra)
    for item, tasks, left_out in targets:
        job_id = item["id"]
        found = item["diagnostics"]
        outcome = results.get(("events", job_id, None))
        if isinstance(outcome, BaseException):
            found["errors"].append(error_line("events", outcome, PERMISSIONS["events"], secrets))
        else:
            found["events"], more = outcome
            if more:
                found["errors"].append("events: only the newest %d error events were read" % EVENTS_PAGE)
        for task in tasks:
            outcome = results.get(("log", job_id, task))
            what = "log of task %s" % task
            if isinstance(outcome, _Both):
                if outcome.aom is not None:
                    found["errors"].append(error_line(what + " (AOM)", outcome.aom, PERMISSIONS["log"], secrets))
                found["errors"].append(error_line(what + " (preview)", outcome.preview, PERMISSIONS["log"], secrets))
            elif isinstance(outcome, BaseException):
                found["errors"].append(error_line(what, outcome, PERMISSIONS["log"], secrets))
            else:
                found["tasks"].append(outcome)
        if left_out:
            found["errors"].append("logs of %d more tasks were not read (at most %d tasks are)" % (left_out, MAX_TASKS))
    return len(units)


# An event that names a task ("[worker-0] ...") or an exit code says more than "Failed to run the training job.".
TELLING_EVENT = re.compile(r"\[[^\]]+\]|\bexit(?:ed)?\b.{0,20}\bcode\b|\bexit code\b|\breturn code\b", re.IGNORECASE)


def _event_text(event):
    return "%s%s" % ("at %s: " % event["time"] if event.get("time") else "", _short(event["message"]))


def summary(item):
    """The few words the one-line message adds for a diagnosed item: the last error event (and, when that one names
    neither a task nor an exit code, the last that does) and the last lines of the failing task's log, already masked
    and escaped; '' when there is nothing to add."""
    found = item.get("diagnostics") if isinstance(item, dict) else None
    if not isinstance(found, dict):
        return ""
    parts = []
    errors = [event for event in found.get("events") or [] if event.get("level") == "Error"]
    if errors:
        last = errors[-1]
        text = "last error event%s: %s" % (" at %s" % last["time"] if last.get("time") else "", _short(last["message"]))
        telling = [event for event in errors if TELLING_EVENT.search(event["message"] or "")]
        if telling and not TELLING_EVENT.search(last["message"] or ""):
            text += "; the last naming a task or exit code, %s" % _event_text(telling[-1])
        parts.append(text)
    culprit = failing_task(item.get("details"))
    entries = found.get("tasks") or []
    entry = next((each for each in entries if each.get("task_id") == culprit), entries[0] if entries else None)
    if entry and entry.get("log_tail"):
        lines = entry["log_tail"][-MESSAGE_LOG_LINES:]
        shown = " | ".join(_short(line) for line in lines)
        parts.append("last %d log line%s of task %s: %s" % (len(lines), "" if len(lines) == 1 else "s", entry["task_id"], shown))
    if found.get("errors"):
        parts.append("%d diagnostic%s could not be read (see diagnostics.errors)" % (len(found["errors"]), "" if len(found["errors"]) == 1 else "s"))
    return "; ".join(parts)


def _short(text):
    return text if len(text) <= MESSAGE_LINE_CHARS else text[:MESSAGE_LINE_CHARS] + "..."
