# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job produced, read the way the API gives it: one :class:`Reading` per metric of a Completed job.

``metrics.py`` decides which jobs are read and judges the values; this file only reads them, from three sources:

* ``v1``: a v1 job's ``model_metric_list``, already parsed into ``details.metrics`` by ``jobs.py``:
  ``total_metric.total_metric_values.<name>``.  No request.
* ``ft_metrics``: ``GET /v2/{project_id}/training-jobs/{id}/ft-metrics`` (the official SDK's ``ShowFtMetrics``), once per
  job whatever the number of its metrics: the series of ``data.metrics`` whose ``name_en`` is the metric's name (and
  ``group``, when given).  The SDK types a series' ``data`` only as ``object``; read are a list of numbers, of ``[x, y]``
  pairs or of objects ``{<x_axis>: x, <value>: y}`` and an object of parallel lists (the x axis named by ``x_axis``, or
  ``step``, ``epoch``...), in the order of their x; anything else, or anything read two ways, is named in a problem.
  A key the reader uses given twice (in a v1 document, its ``model_metric_list`` or the ft-metrics answer: marked when
  decoded, ``transport.pairs_marking_duplicates``) is no value: ``json`` would keep the last in silence.
* ``log``: a task's log, through the calls diagnostics makes (``diagnostics.py``): the AOM log by lines, newest first,
  500 lines a call, paged with ``base_line``; the preview (the log's last 5 MB, read as it arrives by
  ``diagnostics.PreviewTail``) when the first AOM call fails.  The lines are matched as they arrive, a page at a time, by
  ``matching.Matcher`` (a child process ended at the deadline); the metrics of one task share one scan, which stops once
  each has what it needs, and at most ``lines`` lines are read for each.  Memory holds one page, whatever the log.
  A line's value is its last match, and ``\\r`` ends a line as ``\\n`` does; of a line over ``matching.LINE_CHARS``
  its end is matched, and when the value may lie in the rest the metric fails closed naming the line.

Nothing here raises for the service's answers: a call that fails, an answer of another shape, no match, a value that is
not a finite number - each becomes a line of the reading's ``problems`` naming the source tried and why, and the value
stays None.  Text from a log is masked (within its whole line: ``text.redact_part``) before it is cut, and made inert
(``text.inert``), before a problem quotes it.
"""

from __future__ import annotations

import math
import re

from ansible_collections.modelarts.training.plugins.module_utils.results import diagnostics
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.results.matching import CONTEXT_CHARS, LINE_CHARS, MatchError
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_typed, inert, json_type_name, label, redact_part

# The AOM call's bound on lines, as diagnostics knows it.
AOM_PAGE = diagnostics.AOM_MAX_LINES
# An ft-metrics answer is a few series of a few thousand points: read up to this many bytes.
FT_ANSWER_MAX_BYTES = diagnostics.ANSWER_MAX_BYTES
# The permissions to name when a read is refused (HTTP 403).
LOG_PERMISSION = diagnostics.PERMISSIONS["log"]
FT_PERMISSION = "modelarts:trainJob:get"
# A series' x axis, when the object of parallel lists does not name it (``x_axis``).
AXIS_NAMES = ("step", "steps", "epoch", "epochs", "timestamp", "timestamps", "time", "x", "iteration", "iterations")
QUOTED_CHARS = 60


class Reading(object):
    """What was read for one metric of one job: ``value`` (a finite float or None), ``source`` (the source tried) and
    ``problems`` (why no value, one line each)."""

    def __init__(self, source, value=None, problems=None):
        self.source = source
        self.value = value
        self.problems = list(problems or [])

    def fail(self, line):
        """No value: ``line`` says why."""
        self.value = None
        self.problems.append(line)
        return self


def number(value):
    """``(float, None)`` for a finite JSON number, else ``(None, why)``: a boolean, a string, NaN, infinite or an integer
    beyond any float are no value."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, "not a number (%s)" % describe_typed(value)
    try:
        number_value = float(value)
    except OverflowError:  # an integer beyond any float: this metric's problem, never the job's
        return None, "beyond the range of a float (an integer of %d bits)" % value.bit_length()
    if not math.isfinite(number_value):
        return None, "NaN or infinite (%s)" % describe_typed(value)
    return number_value, None


def captured_number(line, secrets, start=0, end=None):
    """``(float, None)`` for what a regex group captured, ``line[start:end]``, else ``(None, why)`` quoting it masked
    within its line (:func:`quoted_part`) and inert."""
    try:
        value = float(line[start:end].strip())
    except ValueError:
        return None, "%s is not a number" % quoted_part(line, start, end, secrets)
    if not math.isfinite(value):
        return None, "%s is NaN or infinite" % quoted_part(line, start, end, secrets)
    return value, None


def quoted(text, secrets):
    """Log text as a message may quote it: secrets masked, control characters escaped, cut, no template delimiter."""
    return "'%s'" % inert(label(text, QUOTED_CHARS, secrets))


def quoted_part(line, start, end, secrets):
    """``line[start:end]`` as :func:`quoted` quotes a text, its secrets found in the whole ``line`` first: masked before
    anything is cut, even when the part (a capture, a line's start) holds only a piece of one."""
    return "'%s'" % inert(label(redact_part(line, start, len(line) if end is None else end, secrets), QUOTED_CHARS))


def pick_of(values, pick):
    """The value ``pick`` takes of ``values`` (oldest first): the last, the largest or the smallest."""
    if pick == "max":
        return max(values)
    if pick == "min":
        return min(values)
    return values[-1]


def first_task(details):
    """The job's first task (``status.tasks[0]``, else the first of ``task_statuses``), ``worker-0`` when it names none."""
    status = details.get("status") if isinstance(details, dict) else None
    status = status if isinstance(status, dict) else {}
    for entry in status.get("tasks") if isinstance(status.get("tasks"), list) else []:
        if isinstance(entry, str) and diagnostics.TASK_ID.fullmatch(entry):
            return entry
    for entry in status.get("task_statuses") if isinstance(status.get("task_statuses"), list) else []:
        task = entry.get("task") if isinstance(entry, dict) else None
        if isinstance(task, str) and diagnostics.TASK_ID.fullmatch(task):
            return task
    return "worker-0"


# -- v1 -------------------------------------------------------------------------------------------


def twice(obj, key):
    """The values ``key`` was given in the JSON object ``obj`` when it was given more than once (an object decoded by
    ``transport.pairs_marking_duplicates``: ``json`` keeps the last one), else None."""
    duplicated = getattr(obj, "duplicated", None)
    return duplicated.get(key) if duplicated else None


def values_of(obj, key):
    """Every value ``key`` was given in the JSON object ``obj``: one, or each of a key given more than once."""
    return twice(obj, key) or [obj.get(key)]


def read_v1(item, metric):
    """The v1 job's ``total_metric.total_metric_values.<name>`` (from ``details.metrics``, parsed by ``jobs.py``).  A key of
    that path given more than once in the document or in ``model_metric_list`` is no value: which one is meant is unknown."""
    reading = Reading("v1")
    details = item.get("details")
    parsed = details.get("metrics") if isinstance(details, dict) else None
    path = "model_metric_list"
    if twice(details, path):
        return reading.fail("%s: the job's document gives %s %d times" % (path, path, len(twice(details, path))))
    if parsed is None:
        return reading.fail("%s: the job has none (empty, absent or not JSON: see schema_errors)" % path)
    where = []
    for key in ("total_metric", "total_metric_values"):
        if twice(parsed, key):
            return reading.fail("%s: %s is given %d times" % (path, ".".join(where + [key]), len(twice(parsed, key))))
        if not isinstance(parsed, dict) or not isinstance(parsed.get(key), dict):
            shown = "absent" if not isinstance(parsed, dict) or key not in parsed else describe_typed(parsed.get(key))
            return reading.fail("%s: %s.%s is not an object (%s)" % (path, "total_metric" if key == "total_metric_values" else path, key, shown))
        parsed = parsed[key]
        where.append(key)
    if twice(parsed, metric.name):
        return reading.fail("%s: total_metric.total_metric_values.%s is given %d times" % (path, label(metric.name, 60), len(twice(parsed, metric.name))))
    if metric.name not in parsed:
        names = ", ".join(label(name, 40) for name in list(parsed)[:10]) or "none"
        return reading.fail("%s: no total_metric.total_metric_values.%s (the job has %s)" % (path, label(metric.name, 60), names))
    value, why = number(parsed[metric.name])
    if why:
        return reading.fail("%s: total_metric.total_metric_values.%s is %s" % (path, label(metric.name, 60), why))
    reading.value = value
    return reading


# -- ft-metrics -----------------------------------------------------------------------------------


class OddSeries(Exception):
    """A series whose ``data`` is of a shape the collection does not read, or reads two ways (the message says which)."""


def series_values(series):
    """The points of one ft-metrics series (``FtMetric``) in step order, oldest first: ``[(index, value)]``, ``index`` the
    point's place in ``data``, each value as the service sent it.  ``data`` is a list of numbers (in the order given), of
    ``[x, y]`` pairs, of objects ``{<x_axis>: x, <value>: y}`` or an object of parallel lists; the x axis is the one
    ``x_axis`` names, else the one of :data:`AXIS_NAMES` there is, and the value the one other list or field (not of
    :data:`AXIS_NAMES`).  Points with an x are put in the order of their x (the newest step is the largest).
    :class:`OddSeries` names anything else and anything read two ways: two value lists, two x axes, an x given twice with
    two values, points of mixed shapes, a key given twice."""
    data = series.get("data")
    axis = series.get("x_axis")
    if axis is not None and not isinstance(axis, str):
        raise OddSeries("x_axis is %s, not the name of a field" % describe_typed(axis))
    if isinstance(data, list):
        if not data:
            return []
        kinds = [_shape(point) for point in data]
        if len(set(kinds)) > 1:
            index = next(index for index, kind in enumerate(kinds) if kind != kinds[0])
            raise OddSeries(
                "data mixes shapes: %s (data[0] is %s, data[%d] is %s)" % (_kinds(data), describe_typed(data[0]), index, describe_typed(data[index]))
            )
        if kinds[0] == "pair":
            bad = next((index for index, point in enumerate(data) if len(point) != 2), None)
            if bad is not None:
                raise OddSeries("data[%d] is an array of %d items, not an [x, y] pair" % (bad, len(data[bad])))
            return _in_step_order([(index, point[0], point[1]) for index, point in enumerate(data)], lambda index: "data[%d][0]" % index)
        if kinds[0] == "object":
            return _object_points(data, axis)
        return list(enumerate(data))
    if isinstance(data, dict):
        duplicated = getattr(data, "duplicated", None)
        if duplicated:
            raise OddSeries("data gives %s more than once" % ", ".join(label(key, 30) for key in list(duplicated)[:5]))
        lists = dict((key, value) for key, value in data.items() if isinstance(value, list))
        keys = ", ".join(label(key, 30) for key in list(data)[:10]) or "no keys"
        x_key = _axis_of(lists, axis, "data (%s)" % keys, "list")
        others = [key for key in lists if key != x_key and key not in AXIS_NAMES]
        if len(others) != 1:
            raise OddSeries("data is an object (%s) without exactly one list of values beside its x axis" % keys)
        lengths = set(len(value) for value in lists.values())
        if len(lengths) > 1:
            raise OddSeries("data is an object of lists of different lengths (%s)" % ", ".join("%s: %d" % (label(k, 30), len(v)) for k, v in lists.items()))
        values = lists[others[0]]
        if x_key is None:
            return list(enumerate(values))
        return _in_step_order(list(zip(range(len(values)), lists[x_key], values)), lambda index: "data.%s[%d]" % (label(x_key, 30), index))
    raise OddSeries("data is %s, not a list or an object of lists" % describe_typed(data))


def _axis_of(fields, axis, what, kind):
    """The x axis among ``fields``: the one ``axis`` (``x_axis``) names, else the one of :data:`AXIS_NAMES` there is, else None."""
    if axis is not None:
        if axis not in fields:
            raise OddSeries("%s has no %s %s, the x axis x_axis names" % (what, kind, label(axis, 30)))
        return axis
    named = [key for key in fields if key in AXIS_NAMES]
    if len(named) > 1:
        raise OddSeries("%s has %d x axes (%s) and no x_axis says which" % (what, len(named), ", ".join(label(key, 30) for key in named)))
    return named[0] if named else None


def _object_points(data, axis):
    """``[(index, value)]`` of points given as objects ``{<x_axis>: x, <value>: y}`` (see :func:`series_values`)."""
    points, value_key = [], None
    for index, point in enumerate(data):
        duplicated = getattr(point, "duplicated", None)
        if duplicated:
            raise OddSeries("data[%d] gives %s more than once" % (index, ", ".join(label(key, 30) for key in list(duplicated)[:5])))
        what = "data[%d] (%s)" % (index, ", ".join(label(key, 30) for key in list(point)[:10]) or "no keys")
        x_key = _axis_of(point, axis, what, "field")
        if x_key is None:
            raise OddSeries("%s has no x axis: x_axis names none and it has none of %s" % (what, ", ".join(AXIS_NAMES[:6])))
        others = [key for key in point if key != x_key and key not in AXIS_NAMES]
        if len(others) != 1:
            raise OddSeries("%s has not exactly one value beside its x axis %s" % (what, label(x_key, 30)))
        if value_key is not None and (others[0], x_key) != value_key:
            raise OddSeries("data mixes shapes: data[0] gives %s by %s, %s" % (label(value_key[0], 30), label(value_key[1], 30), what))
        value_key = (others[0], x_key)
        points.append((index, point[x_key], point[others[0]]))
    return _in_step_order(points, lambda index: "data[%d].%s" % (index, label(value_key[1], 30)))


def _in_step_order(points, where):
    """``[(index, y)]`` of ``[(index, x, y)]`` sorted by x (a finite number); an x given twice with two values is ambiguous.
    ``where(index)`` names the x of a point in a problem."""
    for index, x, _y in points:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or (isinstance(x, float) and not math.isfinite(x)):
            raise OddSeries("%s, the x of a point, is %s, not a finite number" % (where(index), describe_typed(x)))
    ordered = sorted(points, key=lambda point: point[1])
    for before, after in zip(ordered, ordered[1:]):
        if before[1] == after[1] and not _same(before[2], after[2]):
            raise OddSeries(
                "%s and %s give one x (%s) two values (%s, %s)"
                % (where(before[0]), where(after[0]), describe_typed(after[1]), describe_typed(before[2]), describe_typed(after[2]))
            )
    return [(index, y) for index, _x, y in ordered]


def _same(one, other):
    return one == other and isinstance(one, bool) == isinstance(other, bool)


def _shape(point):
    return "pair" if isinstance(point, list) else "object" if isinstance(point, dict) else "value"


def _kinds(values):
    return "/".join(sorted(set(json_type_name(value) for value in values)))


def _series_name(series):
    name = label(series.get("name_en"), 40) if isinstance(series.get("name_en"), str) else describe_typed(series.get("name_en"))
    group = series.get("group")
    return "%s (%s)" % (name, label(group, 20)) if isinstance(group, str) else name


# The keys of a series the reader uses: one given twice is no value.
SERIES_KEYS = ("name_en", "group", "x_axis", "data")


def read_ft(client, item, metrics, secrets, deadline):
    """``{name: Reading}`` of the ft_metrics metrics of one v2 job, from one ft-metrics call."""
    readings = dict((metric.name, Reading("ft_metrics")) for metric in metrics)
    try:
        response = client.get_ft_metrics(item["id"], deadline=deadline, max_bytes=FT_ANSWER_MAX_BYTES)
    except ModelArtsError as error:
        line = diagnostics.error_line("ft-metrics", error, FT_PERMISSION, secrets)
        return dict((name, reading.fail(line)) for name, reading in readings.items())
    answer = response.data
    data = answer.get("data") if isinstance(answer, dict) else None
    series_list = data.get("metrics") if isinstance(data, dict) else None
    given = ("data", len(twice(answer, "data"))) if twice(answer, "data") else ("data.metrics", len(twice(data, "metrics") or ()))
    if given[1]:
        return dict((name, reading.fail("ft-metrics: the answer gives %s %d times" % given)) for name, reading in readings.items())
    if not isinstance(series_list, list):
        why = (
            "the answer is not an object"
            if not isinstance(answer, dict)
            else ("it has no data object" if not isinstance(data, dict) else "data.metrics is %s, not a list" % describe_typed(data.get("metrics")))
        )
        return dict((name, reading.fail("ft-metrics: %s" % why)) for name, reading in readings.items())
    series_list = [series for series in series_list if isinstance(series, dict)]
    for metric in metrics:
        reading = readings[metric.name]
        found = [
            series
            for series in series_list
            if metric.name in values_of(series, "name_en") and (metric.group is None or metric.group in values_of(series, "group"))
        ]
        what = "series %s%s" % (label(metric.name, 60), " in group %s" % metric.group if metric.group else "")
        if not found:
            names = ", ".join(_series_name(series) for series in series_list[:10]) or "none"
            reading.fail("ft-metrics: no %s (the job has %s)" % (what, names))
            continue
        if len(found) > 1:
            groups = ", ".join(_series_name(series) for series in found[:10])
            reading.fail("ft-metrics: %d series are named %s (%s): set group to say which" % (len(found), label(metric.name, 60), groups))
            continue
        keys = [key for key in SERIES_KEYS if twice(found[0], key)]
        if keys:
            reading.fail("ft-metrics: %s gives %s more than once" % (what, ", ".join(keys)))
            continue
        try:
            points = series_values(found[0])
        except OddSeries as odd:
            reading.fail("ft-metrics: %s: %s" % (what, odd))
            continue
        if not points:
            reading.fail("ft-metrics: %s: data has no point" % what)
            continue
        numbers = []
        for index, value in points:
            converted, why = number(value)
            if why:
                reading.fail("ft-metrics: %s: point %d of %d is %s" % (what, index, len(points), why))
                break
            numbers.append(converted)
        else:
            reading.value = pick_of(numbers, metric.pick)
    return readings


# -- a task's log ---------------------------------------------------------------------------------

# A line's end: ``\r`` ends a line as ``\n`` does (a progress line rewritten in place), ``\r\n`` is one end.
LINE_END = re.compile(r"\r\n|\r|\n")
# The characters of a number (and of a word): a window over a long line's end that starts among them may start inside
# one (``0.52`` read as ``52``), so the window leaves that first, partial token out.
TOKEN_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.+-")


def log_lines(line):
    """The lines of one line of the service's answer, newest first: ``\\r`` ends a line as ``\\n`` does, ``\\r\\n`` is
    one end, and the last end ends its line rather than starting an empty one."""
    if "\r" not in line and "\n" not in line:
        return [line]
    lines = LINE_END.split(line)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    lines.reverse()
    return lines


def window_start(line):
    """Where the part of ``line`` that is matched starts: 0, or for a line over :data:`LINE_CHARS` its last
    ``LINE_CHARS`` characters - the newest text - less the token the window starts inside (a number cut in half is never
    read as a value: the partial token is skipped, the window's first match is a whole one)."""
    start = len(line) - LINE_CHARS
    if start <= 0:
        return 0
    while start < len(line) and line[start - 1] in TOKEN_CHARS and line[start] in TOKEN_CHARS:
        start += 1
    return start


class _Wanted(object):
    """One metric's scan of a task's log: the lines it may see, what it found so far."""

    def __init__(self, metric):
        self.metric = metric
        self.lines = metric.lines
        self.value = None
        self.count = 0
        self.bad = None  # the newest (or any, for max/min) capture was no number
        self.unscanned = None  # a long line's start, not matched, may hold what the value needs
        self.done = False

    def take(self, line, start, end, secrets):
        """A capture of a line, ``line[start:end]``, newest first: ``last`` keeps the first; ``max``/``min`` keep the
        extreme of all."""
        value, why = captured_number(line, secrets, start, end)
        self.count += 1
        if why:
            # Fail closed: a match that is no number is never skipped for an older one, nor left out of max/min.
            self.bad, self.done = why, True
            return
        if self.metric.pick == "last":
            self.value, self.done = value, True
        elif self.value is None:
            self.value = value
        else:
            self.value = max(self.value, value) if self.metric.pick == "max" else min(self.value, value)


class LogScan(object):
    """The metrics of one task's log, read in one scan, newest line first: :meth:`run` returns ``{name: Reading}``."""

    def __init__(self, client, job_id, task, metrics, matcher, secrets, deadline, window):
        # pylint: disable=too-many-arguments
        self.client = client
        self.job_id = job_id
        self.task = task
        self.wanted = [_Wanted(metric) for metric in metrics]
        self.matcher = matcher
        self.secrets = secrets
        self.deadline = deadline
        self.window = window
        self.scanned = 0
        self.ended = False  # the log has no older line
        self.stopped = None  # why the scan stopped before it had every line it needed
        self.via = "AOM"

    def active(self):
        return [wanted for wanted in self.wanted if not wanted.done and wanted.lines > self.scanned]

    def need(self):
        return max([wanted.lines for wanted in self.active()] or [0])

    def feed(self, page):
        """Match one page of lines (newest first) for every metric that still wants them.  ``\\r`` ends a line as ``\\n``
        does; of a line over :data:`LINE_CHARS`, its end is matched (:func:`window_start`)."""
        offset = self.scanned
        active = self.active()
        lines = [part for line in page for part in log_lines(line)]
        starts = [window_start(line) for line in lines]
        # A long line's window goes with up to CONTEXT_CHARS of the text before it, matched from the window's start:
        # ^ never matches at the cut, and \b and look-behinds see the characters the cut left out.
        bases = [max(0, start - CONTEXT_CHARS) if start else 0 for start in starts]
        sent = [[line[base:], start - base] if start else line for line, start, base in zip(lines, starts, bases)]
        asked = sorted(set((wanted.metric.pattern, wanted.metric.pick == "last") for wanted in active))
        answers = self.matcher.match(sent, asked, self.deadline) if sent and asked else [[] for _asked in asked]
        for (pattern, first), hits in zip(asked, answers):
            for wanted in active:
                if (wanted.metric.pattern, wanted.metric.pick == "last") == (pattern, first):
                    self._take(wanted, hits, lines, starts, bases, offset)
        self.scanned += len(lines)

    def _take(self, wanted, hits, lines, starts, bases, offset):
        """What one page's ``hits`` (``[line number, start, end]`` in the texts sent, which start at ``bases``) give
        ``wanted``."""
        # pylint: disable=too-many-arguments
        limit = min(len(lines), wanted.lines - offset)
        hits = [hit for hit in hits if hit[0] < limit]
        # A long line is matched by its end only: its start may hold a match that is not read.  Fail closed, naming the
        # line: for ``last``, a long line newer than the newest match (any, when none matched) - an older line's value
        # is never taken in place of what its start holds; ``max``/``min`` need every match of every line.
        upto = hits[0][0] if hits and wanted.metric.pick == "last" else limit
        long = next((index for index in range(upto) if starts[index]), None)
        if long is not None:
            wanted.unscanned = self._unscanned(wanted, offset + long + 1, lines[long], starts[long])
            wanted.done = True
            return
        for number_, start, end in hits:
            if wanted.done:
                break
            wanted.take(lines[number_], bases[number_] + start, bases[number_] + end, self.secrets)

    def _unscanned(self, wanted, position, line, start):
        """The problem of a long line that could not be scanned whole: where it is, how long, why no value is taken."""
        matched = len(line) - start
        what = "%s: line %d from the log's end (%s) is %d characters long, over %d: %s" % (
            self._what(),
            position,
            quoted_part(line, 0, None, self.secrets),
            len(line),
            LINE_CHARS,
            "only its last %d are matched" % matched if matched else "its last %d are one token, cut where it starts, so none is matched" % LINE_CHARS,
        )
        if wanted.metric.pick == "last":
            return "%s, with no match of regex %s, and an older line's value is never taken in place of what its start may hold" % (
                what,
                quoted(wanted.metric.regex, self.secrets),
            )
        return "%s, and pick %s needs every match of every line" % (what, wanted.metric.pick)

    def run(self):
        """Scan the log and return ``{name: Reading}``."""
        try:
            self._aom()
        except _Fallback as fallback:
            try:
                self._preview(fallback.error)
            except _Stop as stop:
                self.stopped = stop.line
        except _Stop as stop:
            self.stopped = stop.line
        return dict((wanted.metric.name, self._reading(wanted)) for wanted in self.wanted)

    def _aom(self):
        base, previous = None, object()
        while self.active():
            count = min(AOM_PAGE, self.need() - self.scanned)
            try:
                response = self.client.get_task_log_lines(
                    self.job_id, self.task, count, deadline=self.deadline, max_bytes=diagnostics.ANSWER_MAX_BYTES, base_line=base
                )
                data = diagnostics.log_answer(response, "AOM log")
            except diagnostics.LogNotReady as error:
                raise _Stop(diagnostics.error_line(self._what(), error, secrets=self.secrets)) from None
            except (ModelArtsError, diagnostics.OddAnswer) as error:
                if diagnostics.not_ready(error):
                    raise _Stop(diagnostics.error_line(self._what(), diagnostics.LogNotReady(error.error_code), secrets=self.secrets)) from None
                if self.scanned == 0 and not getattr(error, "deadline_cut", False) and not getattr(error, "not_sent", False):
                    raise _Fallback(error) from None
                raise _Stop(self._cut(diagnostics.error_line(self._what(" (AOM)"), error, LOG_PERMISSION, self.secrets))) from None
            page, _more = diagnostics.head(data["content"], count)
            self._match(page)
            base = data.get("end_line")
            if len(page) < count:
                self.ended = True
                return
            if base in (None, "") or base == previous:
                raise _Stop(self._cut("%s: the AOM answer gave no end_line to read older lines from" % self._what()))
            previous = base

    def _preview(self, aom_error):
        self.via = "preview"
        try:
            data = diagnostics.log_answer(
                self.client.get_task_log_preview(self.job_id, self.task, deadline=self.deadline, consume=diagnostics.PreviewTail(self.window, self.need())),
                "log preview",
            )
        except diagnostics.LogNotReady as error:
            raise _Stop(diagnostics.error_line(self._what(), error, secrets=self.secrets)) from None
        except (ModelArtsError, diagnostics.OddAnswer) as error:
            if diagnostics.not_ready(error):
                raise _Stop(diagnostics.error_line(self._what(), diagnostics.LogNotReady(error.error_code), secrets=self.secrets)) from None
            lines = [diagnostics.error_line(self._what(" (AOM)"), aom_error, LOG_PERMISSION, self.secrets)]
            lines.append(diagnostics.error_line(self._what(" (preview)"), error, LOG_PERMISSION, self.secrets))
            raise _Stop("; ".join(lines)) from None
        lines, more = diagnostics.tail(data["content"], self.need())
        full, current = data.get("full_size"), data.get("current_size")
        cut = (isinstance(full, int) and isinstance(current, int) and full > current) or data.get(diagnostics.PreviewTail.CUT) is True
        if cut and not more and lines:
            lines = lines[1:]  # the preview starts inside the log: its first line may be the end of a longer one
        lines.reverse()
        for start in range(0, len(lines), AOM_PAGE):
            if not self.active():
                return
            self._match(lines[start : start + AOM_PAGE])
        if self.active() and (more or cut):
            self.stopped = "%s: the preview holds the end of the log only (%d lines)" % (self._what(), len(lines))
        else:
            self.ended = True

    def _match(self, page):
        try:
            self.feed(page)
        except MatchError as error:
            raise _Stop(self._cut("%s: %s" % (self._what(), error))) from None

    def _what(self, via=""):
        return "log of task %s%s" % (label(self.task, 60), via)

    def _cut(self, line):
        return "%s, after %d lines were scanned" % (line, self.scanned) if self.scanned else line

    def _reading(self, wanted):
        reading = Reading("log")
        if wanted.bad:
            which = "the newest line" if wanted.metric.pick == "last" else "a line"
            return reading.fail("%s: %s matching regex %s captured %s" % (self._what(), which, quoted(wanted.metric.regex, self.secrets), wanted.bad))
        if wanted.unscanned:
            return reading.fail(wanted.unscanned)
        scanned = min(self.scanned, wanted.lines)
        complete = wanted.done or self.ended or scanned >= wanted.lines
        if self.stopped and not complete:
            # Fail closed: a scan cut short never gives max or min (nor a last value it did not reach).
            return reading.fail(self.stopped)
        if wanted.count == 0:
            text = "%s: no line matched regex %s in the %d newest lines scanned%s" % (
                self._what(),
                quoted(wanted.metric.regex, self.secrets),
                scanned,
                " (the whole log)" if self.ended and scanned < wanted.lines else "",
            )
            if self.stopped:
                text += "; %s" % self.stopped
            return reading.fail(text)
        reading.value = wanted.value
        return reading


class _Fallback(Exception):
    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class _Stop(Exception):
    def __init__(self, line):
        super().__init__(line)
        self.line = line


# -- one job --------------------------------------------------------------------------------------


def read_job(client, item, metrics, matcher, secrets, deadline, window):
    """``{name: Reading}`` for ``metrics`` (``metrics.Metric`` objects) of one Completed job ``item``: each from the source
    it names for the job's API (``metric.source_for``); the ft-metrics call and each task's log are read once."""
    api = item.get("api_version")
    readings = {}
    by_source = {"v1": [], "ft_metrics": [], "log": []}
    for metric in metrics:
        source = metric.source_for(api)
        wrong = metric.wrong_api(source, api)
        if wrong:
            readings[metric.name] = Reading(source).fail(wrong)
        else:
            by_source[source].append(metric)
    for metric in by_source["v1"]:
        readings[metric.name] = read_v1(item, metric)
    if by_source["ft_metrics"]:
        readings.update(read_ft(client, item, by_source["ft_metrics"], secrets, deadline))
    tasks = {}
    for metric in by_source["log"]:
        tasks.setdefault(metric.task or first_task(item.get("details")), []).append(metric)
    for task, some in tasks.items():
        readings.update(LogScan(client, item["id"], task, some, matcher, secrets, deadline, window).run())
    return readings
