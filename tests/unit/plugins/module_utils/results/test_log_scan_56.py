# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 3, 4 and 11: a line's last match, ``\\r`` as a line's end, long lines read by their end (or failing
closed naming the line), and a capture masked within its line before anything is cut."""

from __future__ import annotations

import time

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.results import metric_reads
from ansible_collections.modelarts.training.plugins.module_utils.results.matching import LINE_CHARS, Matcher
from ansible_collections.modelarts.training.plugins.module_utils.door.metric_checks import plan
from ansible_collections.modelarts.training.plugins.module_utils.text import MASK, redact_part
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import Response

JOB = "3f7a1c2e-9b4d-4e8a-a1b2-c3d4e5f60718"
ACC = r"val_accuracy=([0-9.]+)"
TOKEN = "gQpjbi1ub3J0aC00EMULATOR-TEMPORARY-SECURITY-TOKEN-Q2lDZFhPZkRrR1BsaE1vZWxhcnRzRW11bGF0b3JUZW1wb3JhcnlUb2tlbg+/=="


class AomClient(object):
    """One task's AOM log (oldest line first), newest first 500 lines a call, paged by base_line."""

    def __init__(self, log):
        self.log = log

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None, base_line=None):
        end = len(self.log) if base_line is None else int(base_line) - 1
        numbers = list(range(end, max(0, end - lines), -1))
        data = {"lines": len(numbers), "content": "\n".join(self.log[n - 1] for n in numbers)}
        data.update(start_line=str(numbers[0]) if numbers else "", end_line=str(numbers[-1]) if numbers else "")
        return Response(data, 200, "r", {})


def read(log, metrics, secrets=()):
    checked = plan(metrics)
    matcher = Matcher(checked.patterns)
    item = {"id": JOB, "api_version": "v2", "phase": "Completed", "details": {"status": {"tasks": ["worker-0"]}}}
    try:
        readings = metric_reads.read_job(AomClient(log), item, checked.metrics, matcher, secrets, time.monotonic() + 60, 64 * 1024)
    finally:
        matcher.close()
    return dict((name, (reading.value, reading.problems)) for name, reading in readings.items())


# -- 3 ----------------------------------------------------------------------------------------------------------


def test_the_child_answers_a_lines_last_match_and_for_max_min_its_extremes():
    matcher = Matcher([ACC])
    try:
        lines = ["best val_accuracy=0.95, val_accuracy=0.52", "val_accuracy=0.3 val_accuracy=0.99 val_accuracy=0.5"]
        assert matcher.match(lines, [(0, True)], time.monotonic() + 30) == [[[0, 37, 41]]]
        # Of each line, the smallest and the largest: 0.52 and 0.95, then 0.3 and 0.99.
        assert matcher.match(lines, [(0, False)], time.monotonic() + 30) == [[[0, 37, 41], [0, 18, 22], [1, 13, 16], [1, 30, 34]]]
        # The first match that is no number ends the answer: the caller fails closed on it.
        assert matcher.match(["val_accuracy=1 val_accuracy=. val_accuracy=3", "val_accuracy=4"], [(0, False)], time.monotonic() + 30) == [[[0, 28, 29]]]
    finally:
        matcher.close()


@pytest.mark.parametrize(
    "line, lines",
    [
        ("a", ["a"]),
        ("a\rb", ["b", "a"]),
        ("a\r\nb", ["b", "a"]),
        ("a\nb\r", ["b", "a"]),
        ("a\r\rb", ["b", "", "a"]),
        ("", [""]),
    ],
)
def test_a_carriage_return_ends_a_line_as_a_newline_does(line, lines):
    assert metric_reads.log_lines(line) == lines


@pytest.mark.parametrize(
    "pick, expected",
    [("last", 0.52), ("max", 0.97), ("min", 0.12)],
)
def test_every_match_of_every_line_and_the_newest_last(pick, expected):
    log = ["val_accuracy=0.31, val_accuracy=0.97", "x", "val_accuracy=0.95\rval_accuracy=0.12 val_accuracy=0.52"]
    assert read(log, [{"name": "m", "regex": ACC, "pick": pick}])["m"] == (expected, [])


def test_lines_counts_the_lines_a_carriage_return_ends():
    log = ["val_accuracy=0.99", "val_accuracy=0.95\rval_accuracy=0.52"]
    assert read(log, [{"name": "m", "regex": ACC, "pick": "max", "lines": 1}])["m"] == (0.52, [])
    assert read(log, [{"name": "m", "regex": ACC, "pick": "max", "lines": 2}])["m"] == (0.95, [])


# -- 4 ----------------------------------------------------------------------------------------------------------


def test_a_window_over_a_long_lines_end_skips_the_token_it_starts_inside():
    line = "a 123.52 pts" + " z" * 2044
    start = metric_reads.window_start(line)
    # Its last LINE_CHARS characters start at "3.52": that half of a number is left out, up to the next space.
    assert len(line) - LINE_CHARS == line.index("3.52") and line[start:].startswith(" pts z")
    assert metric_reads.window_start("x" * LINE_CHARS) == 0
    assert metric_reads.window_start("x" * (LINE_CHARS + 10)) == LINE_CHARS + 10
    assert metric_reads.window_start(" " * 10 + "y" * LINE_CHARS) == 10


def test_a_long_line_gives_its_ends_last_match_never_an_older_lines():
    assert read(["val_accuracy=0.95", "x" * 9000 + " val_accuracy=0.5 val_accuracy=0.52"], [{"name": "m", "regex": ACC}])["m"] == (0.52, [])


@pytest.mark.parametrize(
    "log, metric, words",
    [
        # The start holds the value: not matched, and 0.95 is never taken in its place.
        (["val_accuracy=0.95", "val_accuracy=0.52 " + "x " * 3000], {}, "line 1 from the log's end ('val_accuracy=0.52 x x x"),
        # Half a number where the window starts: never 3.52.
        (["0.95 pts", "a 123.52 pts" + " z" * 2044], {"regex": r"([0-9]+[.][0-9]+) pts"}, "only its last 4092 are matched, with no match of regex"),
        # max/min need every match: a long line anywhere in the lines scanned, even one older than matches.
        (["val_accuracy=0.95 " + "x " * 3000, "val_accuracy=0.5"], {"pick": "max"}, "line 2 from the log's end"),
        (["y" * 5000, "val_accuracy=0.5"], {"pick": "min"}, "its last 4096 are one token, cut where it starts, so none is matched, and pick min"),
    ],
)
def test_a_long_line_that_cannot_be_scanned_fails_closed_naming_it(log, metric, words):
    value, problems = read(log, [dict({"name": "m", "regex": ACC}, **metric)])["m"]
    assert value is None and len(problems) == 1 and words in problems[0], problems


# A line whose last LINE_CHARS characters begin with val_accuracy=0.99, after a space: the window starts there.
CUT = "x" * 5000 + " "
LONG = CUT + "val_accuracy=0.99 " + "y" * (LINE_CHARS - 18)


@pytest.mark.parametrize("regex", [r"^val_accuracy=([0-9.]+)", r"\Aval_accuracy=([0-9.]+)", r"(?<=: )val_accuracy=([0-9.]+)"], ids=["caret", "A", "lookbehind"])
def test_a_pattern_anchored_before_the_window_never_matches_at_the_cut(regex):
    """A fifth review: the window of a long line was matched as if it were the line, so ``^val_accuracy=`` matched where
    the cut fell (0.99) although the line does not start there, and the gate opened over an older line's 0.52."""
    assert metric_reads.window_start(LONG) == len(CUT)
    value, problems = read(["val_accuracy=0.52", LONG], [{"name": "m", "regex": regex}])["m"]
    assert value is None and len(problems) == 1 and "line 1 from the log's end" in problems[0], (value, problems)


@pytest.mark.parametrize("regex", [r"(?<=x )val_accuracy=([0-9.]+)", r"\bval_accuracy=([0-9.]+)"], ids=["lookbehind", "word-boundary"])
def test_what_precedes_the_window_is_seen_so_a_match_the_line_holds_is_found(regex):
    assert read(["val_accuracy=0.52", LONG], [{"name": "m", "regex": regex}])["m"] == (0.99, [])


def test_a_long_line_older_than_the_newest_match_changes_nothing_for_last():
    assert read(["x" * 9000, "val_accuracy=0.9"], [{"name": "m", "regex": ACC}])["m"] == (0.9, [])
    # Beyond the lines scanned, it is not read at all.
    assert read(["val_accuracy=0.95 " + "x " * 3000, "val_accuracy=0.5"], [{"name": "m", "regex": ACC, "pick": "max", "lines": 1}])["m"] == (0.5, [])


# -- 11 ---------------------------------------------------------------------------------------------------------


def test_a_part_of_a_text_is_masked_within_the_whole_text():
    text = "token=%s end" % TOKEN
    assert redact_part(text, 6, 6 + 40, [TOKEN]) == MASK
    assert redact_part(text, 0, 20, [TOKEN]) == "token=" + MASK
    assert redact_part(text, 6 + len(TOKEN) - 5, len(text), [TOKEN]) == MASK + " end"
    assert redact_part(text, len(text) - 3, len(text), [TOKEN]) == "end"


@pytest.mark.parametrize(
    "line, regex",
    [
        # Cut to 100 characters first, the token was no longer found: 60 of its characters were shown.
        ("val_accuracy=%s" % TOKEN, "val_accuracy=(.*)"),
        ("val_accuracy=%s" % TOKEN, "val_accuracy=(.{50})"),
        ("val_accuracy=%s%s" % ("9" * 30, TOKEN), "val_accuracy=(.*)"),
        ("val_accuracy=%s" % TOKEN, "val_accuracy=.{30}(.{20})"),
    ],
)
def test_a_capture_is_masked_within_its_line_before_it_is_cut(line, regex):
    _value, problems = read([line], [{"name": "m", "regex": regex}], secrets=[TOKEN])["m"]
    assert len(problems) == 1 and MASK in problems[0], problems
    for start in range(len(TOKEN) - 7):
        assert TOKEN[start : start + 8] not in problems[0], problems


def test_the_start_of_a_long_line_is_masked_within_the_line():
    _value, problems = read(["%s %s" % (TOKEN, "x " * 3000)], [{"name": "m", "regex": ACC}], secrets=[TOKEN])["m"]
    assert "line 1 from the log's end ('%s x x x" % MASK in problems[0], problems
    for start in range(len(TOKEN) - 7):
        assert TOKEN[start : start + 8] not in problems[0], problems
