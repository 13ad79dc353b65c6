# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 56, items 3, 4 and 11: what a log scan reads, in the user's shape.

``ansible-playbook`` against the emulator (the module both ways, and the lookup), a job's log set by its scenario
(``metric_lines``):

* 3: the newest value of a line is its LAST match, ``\\r`` ends a line as ``\\n`` does, ``max``/``min`` see every
  match of every line;
* 4: a line over 4,096 characters is read by its end (the newest text), less the token the window starts inside, or
  the metric fails closed naming the line - never an older line's value in its place;
* 11: a capture is masked within its line before it is cut: no piece of the call's own security token or secret key
  reaches ``msg``, ``problems`` or ``-vvvv``.
"""

import json

import pytest

from conftest import emulator_connection
from plays import ACC, info, new_id, run, save

WAYS = pytest.mark.parametrize("in_process", [True, False], ids=["in_process", "module"])
# A short log: the metric lines are the newest lines but for the log's end ("saved model", "Training completed").
SHORT = {"lines": 20}


def play(emulator, tasks, connected=True):
    """One localhost play; ``connected``: the emulator's connection in the module group's ``module_defaults`` (else the
    credentials come from the environment, and no playbook line holds them)."""
    found = {"hosts": "localhost", "gather_facts": False, "tasks": tasks}
    if connected:
        found["module_defaults"] = {"group/modelarts.training.modelarts": emulator_connection(emulator)}
    return [found]


def add(emulator, name, lines, append=()):
    """A Completed job whose log holds ``lines`` (its metric lines: the newest but for the log's end, "saved model" and
    "Training completed") and ends with ``append``."""
    job = new_id()
    emulator.add_job(id=job, name=name, phase="Completed", metric_lines=list(lines), log=dict(SHORT, append=list(append)))
    return job


def entry(result, name):
    return result["training_job"]["metrics"][name]


# -- 3: a line's newest value is its last match -------------------------------------------------------------


@WAYS
def test_the_newest_value_of_a_line_is_its_last_match_and_a_carriage_return_ends_a_line(emulator, run_playbook, tmp_path, in_process):
    rewritten = add(emulator, "progress-rewritten", ["EVAL val_accuracy=0.80", "EVAL val_accuracy=0.95\rEVAL val_accuracy=0.52"])
    best_first = add(emulator, "best-first", ["EVAL val_accuracy=0.80", "best val_accuracy=0.95, val_accuracy=0.52"])
    # max/min consider every match of every line: the extremes sit in the middle of a line and behind a \r.
    every = add(emulator, "every-match", ["val_accuracy=0.31, val_accuracy=0.97, val_accuracy=0.5", "val_accuracy=0.6\rval_accuracy=0.12\r"])
    newest = add(emulator, "progress-newest", [], append=["EVAL val_accuracy=0.95\rEVAL val_accuracy=0.52"])
    gate = [{"name": "val_accuracy", "regex": ACC, "min": 0.9}]
    extremes = [{"name": "high", "regex": ACC, "pick": "max"}, {"name": "low", "regex": ACC, "pick": "min"}, {"name": "now", "regex": ACC}]
    tasks = [
        info("rewritten", "rewritten", training_job_id=rewritten, wait=True, metrics=gate),
        info("best first", "best_first", training_job_id=best_first, wait=True, metrics=gate),
        info("every match", "every", training_job_id=every, metrics=extremes),
        # \r ends a line: with lines 1 only the newest rewrite of the progress line is scanned.
        info("one line", "one", training_job_id=newest, metrics=[{"name": "high", "regex": ACC, "pick": "max", "lines": 1}]),
        save(tmp_path, "rewritten", "best_first", "every", "one"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    for name, job, who in (("rewritten", rewritten, "progress-rewritten"), ("best_first", best_first, "best-first")):
        result = results[name]
        # Before: 0.95, the first match of the line, opened the gate.
        assert entry(result, "val_accuracy")["value"] == 0.52, (name, entry(result, "val_accuracy"))
        assert result["failed"] and result["training_job"]["metrics_ok"] is False
        assert "training job %s (%s): val_accuracy is 0.52, below min 0.9" % (job, who) in result["msg"]
    every_entry = results["every"]["training_job"]["metrics"]
    assert (every_entry["high"]["value"], every_entry["low"]["value"], every_entry["now"]["value"]) == (0.97, 0.12, 0.12)
    assert entry(results["one"], "high")["value"] == 0.52


def test_the_lookup_reads_a_lines_last_match(emulator, run_playbook, tmp_path):
    job = add(emulator, "lookup-last-match", ["EVAL val_accuracy=0.95\rEVAL val_accuracy=0.52"])
    tasks = [
        {
            "name": "a value by field",
            "ansible.builtin.set_fact": {
                "value": "{{ lookup('modelarts.training.training_job', job, metrics=plain, field='metrics.val_accuracy.value', **conn) }}"
            },
        },
        save(tmp_path, "value"),
    ]
    plays = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {"conn": emulator_connection(emulator), "plain": [{"name": "val_accuracy", "regex": ACC}], "job": job},
            "tasks": tasks,
        }
    ]
    results, _output = run(run_playbook, tmp_path, plays)
    assert float(results["value"]) == 0.52


# -- 4: a long line is read by its end, or fails closed naming it --------------------------------------------------

LONG = 5000
# Its end is the newest text: 0.52 is the line's value, 0.95 an older line's.
LONG_WITH_VALUE_AT_END = "EVAL " + "x" * LONG + " val_accuracy=0.52"
# Its start holds the value, which its end (the part that is matched) does not: no value, never 0.95 in its place.
LONG_WITH_VALUE_AT_START = "EVAL val_accuracy=0.52 " + "x " * (LONG // 2)
# The last 4,096 characters start inside "123.52": "3.52" is half a number, never a value.
CUT_NUMBER = "EVAL 123.52 pts" + " z" * ((4096 - len("3.52 pts")) // 2)
SCORE = "([0-9]+[.][0-9]+) pts"


@WAYS
def test_a_long_line_is_read_by_its_end_or_fails_closed_naming_it_never_an_older_value(emulator, run_playbook, tmp_path, in_process):
    at_end = add(emulator, "long-value-at-end", ["EVAL val_accuracy=0.95", LONG_WITH_VALUE_AT_END])
    at_start = add(emulator, "long-value-at-start", ["EVAL val_accuracy=0.95", LONG_WITH_VALUE_AT_START])
    cut = add(emulator, "long-cut-number", ["EVAL 0.95 pts", CUT_NUMBER])
    every = add(emulator, "long-max", ["EVAL val_accuracy=0.95", "EVAL val_accuracy=0.50", LONG_WITH_VALUE_AT_END])
    gate = [{"name": "val_accuracy", "regex": ACC, "min": 0.9}]
    tasks = [
        info("value at end", "at_end", training_job_id=at_end, wait=True, metrics=gate),
        info("value at start", "at_start", training_job_id=at_start, wait=True, metrics=gate),
        info("cut number", "cut", training_job_id=cut, wait=True, metrics=[{"name": "score", "regex": SCORE, "min": 0.9}]),
        info("max over a long line", "every", training_job_id=every, wait=True, metrics=[{"name": "best", "regex": ACC, "pick": "max", "min": 0.9}]),
        save(tmp_path, "at_end", "at_start", "cut", "every"),
    ]
    results, _output = run(run_playbook, tmp_path, play(emulator, tasks), in_process)
    # Before: the long line was passed over in silence and 0.95, an older line's value, opened each gate.
    result = results["at_end"]
    assert entry(result, "val_accuracy")["value"] == 0.52 and result["failed"] and "val_accuracy is 0.52, below min 0.9" in result["msg"]
    result = results["at_start"]
    problem = entry(result, "val_accuracy")["problems"]
    assert result["failed"] and entry(result, "val_accuracy")["value"] is None, problem
    assert problem[0] == (
        "log of task worker-0: line 3 from the log's end ('%s...') is %d characters long, over 4096: only its last 4096 are matched, with no match of "
        "regex 'val_accuracy=([0-9.]+)', and an older line's value is never taken in place of what its start may hold"
        % (LONG_WITH_VALUE_AT_START[:60], len(LONG_WITH_VALUE_AT_START))
    ), problem
    assert "line 3 from the log's end" in result["msg"]
    result = results["cut"]
    problem = entry(result, "score")["problems"]
    # Neither 0.95 (an older line) nor 3.52 (half of 123.52, where the window over the line's end starts).
    assert result["failed"] and entry(result, "score")["value"] is None, problem
    assert "line 3 from the log's end ('EVAL 123.52 pts z z z" in problem[0] and "only its last 4092 are matched, with no match of regex" in problem[0]
    result = results["every"]
    problem = entry(result, "best")["problems"]
    assert result["failed"] and entry(result, "best")["value"] is None, problem
    assert "line 3 from the log's end ('EVAL xxxx" in problem[0] and problem[0].endswith("and pick max needs every match of every line"), problem


# -- 11: masked before anything is cut ---------------------------------------------------------------------------


def pieces(secret, size=8):
    return set(secret[start : start + size] for start in range(len(secret) - size + 1))


@WAYS
def test_a_capture_holding_the_calls_own_security_token_is_masked_before_it_is_cut(emulator, run_playbook, tmp_path, in_process):
    token, secret_key = emulator.security_token, emulator.temp_sk
    assert len(token) > 100 and len(secret_key) >= 40
    job = add(emulator, "token-in-log", ["EVAL val_accuracy=%s" % token, "EVAL loss=%s" % secret_key])
    # A long line starting with the token: the problem quotes its start.
    long_job = add(emulator, "token-in-long-line", ["EVAL %s %s" % (token, "x " * 2500)])
    metrics = [
        # The whole token captured: before, its first 100 characters were sent back, missed by the mask, and 60 shown.
        {"name": "whole", "regex": "val_accuracy=(.*)", "min": 0},
        # A group that captures only part of a secret: masked within its line.
        {"name": "part", "regex": "val_accuracy=(.{50})", "min": 0},
        {"name": "key", "regex": "loss=(.{20})", "min": 0},
    ]
    tasks = [
        info("token in a log", "result", training_job_id=job, wait=True, metrics=metrics),
        info("token in a long line", "long", training_job_id=long_job, wait=True, metrics=[{"name": "long", "regex": "nothing=([0-9.]+)", "min": 0}]),
        {"name": "show the problems", "ansible.builtin.debug": {"msg": "{{ [result.training_job.metrics, long.training_job.metrics] }}"}},
        save(tmp_path, "result", "long"),
    ]
    # The temporary credentials from the environment, so that no playbook line holds them.
    results, output = run(run_playbook, tmp_path, play(emulator, tasks, connected=False), in_process, env=emulator.env("temporary"), verbosity=4)
    result = results["result"]
    found = result["training_job"]["metrics"]
    assert result["failed"] and results["long"]["failed"]
    assert found["whole"]["problems"][:1] == ["log of task worker-0: the newest line matching regex 'val_accuracy=(.*)' captured '********' is not a number"]
    assert found["part"]["problems"][:1] == ["log of task worker-0: the newest line matching regex 'val_accuracy=(.{50})' captured '********' is not a number"]
    assert found["key"]["problems"][:1] == ["log of task worker-0: the newest line matching regex 'loss=(.{20})' captured '********' is not a number"]
    long_problems = results["long"]["training_job"]["metrics"]["long"]["problems"]
    assert long_problems[0].startswith("log of task worker-0: line 3 from the log's end ('EVAL ******** x x x"), long_problems
    everything = output + json.dumps(results)
    for secret in (token, secret_key):
        leaked = sorted(piece for piece in pieces(secret) if piece in everything)
        assert not leaked, leaked
