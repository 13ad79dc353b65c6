#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""API calls of watching many jobs (issue 24): one GET per job a round ("before") vs the bulk phase source ("after").

Method: one private HTTPS emulator (``empty`` scenario) for the whole run; the staged collection is imported in
this process.  Every run adds fresh jobs whose lifecycles are driven by polls (a search by id that returns a job
is one poll of it, and the GET that follows such a search reads the same step; a throttled request advances
nothing), so both ways see the very same phase sequences and the call counts do not depend on the machine's speed.

* ``wait``: ``Query.run`` of the module's options on 200 jobs with ``wait: true`` (``wait_sleep`` =
  ``wait_sleep_max``): job i stays Pending 1 + i % 3 polls, Running 20 + i % 20 polls, then Completed.  Rounds are
  delimited by the waiter's naps (its ``sleeper``), calls counted by the client's trace per round and by the
  emulator's request log in total.
* ``eda``: the event source's ``Watcher`` (as ``main()`` builds it) on 1,000 jobs with ``interval`` 2 s until
  every job is final: job i Pending 1 + i % 3 polls, Running 8 + i % 8 polls, then Failed for i % 20 == 7 (5%),
  else Completed.  Besides the calls: every job's sequence of events (identical before and after), and the longest
  gap between two observations of a job (what bounds the time to notice a change).
* "before" is the same code with the bulk source turned off (``observer.SEARCH_MIN_JOBS`` out of reach): one GET
  per job a round, what the collection did until issue 24.  Each is run with the emulator's rate-limit fault off
  and on (``throttle`` every 10th ModelArts call, ``Retry-After: 1``).

    .venv/bin/python benchmarks/bulk_polling.py [--wait-jobs 200] [--eda-jobs 1000] [--interval 2] [--output FILE]

Writes ``benchmarks/results/<stamp>-bulk-polling.json`` and ``.md`` (the table of docs/performance.md) and, with
``--plot``, ``docs/images/bulk_polling.png`` (matplotlib): calls per round against jobs.
"""

import argparse
import asyncio
import datetime
import json
import math
import os
import sys
import tempfile
import time

from modelarts_emulator.launcher import running_emulator

from common import door_module, RESULTS_DIR, ROOT, emu_mark, import_staged, machine_facts, stage_collection


SOURCE = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "training_job_phase.py")


def wait_jobs(prefix, count, by_name=False):
    specs = []
    for index in range(count):
        spec = {
            "id": "%s-%04d" % (prefix, index),
            "name": prefix,
            "timeline": [{"phase": "Pending", "polls": 1 + index % 3}, {"phase": "Running", "polls": 20 + index % 20}, "Completed"],
        }
        if by_name:
            spec["search_counts_as_poll"] = True  # a search of the name looks at each job, as a search by id does
        specs.append(spec)
    return specs


def eda_jobs(prefix, count):
    specs = []
    for index in range(count):
        final = "Failed" if index % 20 == 7 else "Completed"
        specs.append(
            {
                "id": "%s-%04d" % (prefix, index),
                "name": prefix,
                "timeline": [{"phase": "Pending", "polls": 1 + index % 3}, {"phase": "Running", "polls": 8 + index % 8}, final],
                "failure": {"task": "worker-0", "exit_code": 1, "message": "RuntimeError: loss is NaN"} if final == "Failed" else None,
            }
        )
    for spec in specs:
        if spec["failure"] is None:
            del spec["failure"]
    return specs


def api_calls(emu, since, prefix):
    """``(searches, gets, throttled)`` answered by the emulator after log sequence ``since`` about jobs ``prefix-*``."""
    searches = gets = throttled = 0
    last = since
    for entry in emu.requests(since=since, path="/training-job"):
        last = max(last, entry["seq"])
        body = entry.get("body") or {}
        asked = [value for spec in (body.get("filters") or []) if spec.get("key") in ("id", "name") for value in spec.get("value") or []]
        mine = entry["path"].rsplit("/", 1)[-1].startswith(prefix) or any(str(value).startswith(prefix) for value in asked)
        if not mine:
            continue
        if entry["status"] == 429:
            throttled += 1
        elif entry["method"] == "POST":
            searches += 1
        else:
            gets += 1
    return searches, gets, throttled


def set_mode(mode):
    from ansible_collections.modelarts.training.plugins.module_utils.waiting import observer

    observer.SEARCH_MIN_JOBS = 2 if mode == "after" else 10**9


def run_wait(emu, mode, count, throttled, tag, by_name=False):
    """One 200-job wait (selected by ids, or ``by_name``); returns its numbers."""
    # pylint: disable=import-outside-toplevel
    from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_OPTION

    Query, select = door_module("query").Query, door_module("query").select
    argument_spec = door_module("job_info").argument_spec

    set_mode(mode)
    prefix = ("n%s" if by_name else "w%s") % tag
    specs = wait_jobs(prefix, count, by_name)
    emu.add_jobs(specs)
    ids = [spec["id"] for spec in specs]
    selector = {"name": prefix} if by_name else {"training_job_ids": ids}
    given = dict(emu.connection("aksk"), wait=True, wait_sleep=0.05, wait_sleep_max=0.05, wait_timeout=1800, **selector)
    params = dict((name, given.get(name, spec.get("default"))) for name, spec in argument_spec().items())
    rounds = [0]
    trace = []

    def sleeper(seconds):
        rounds.append(len(trace))
        time.sleep(seconds)

    fault = emu.add_fault(type="throttle", every=10, retry_after=1) if throttled else None
    mark = emu_mark(emu)
    started = time.monotonic()
    with Query([(LEVEL_OPTION, params)], select(params), environ={}, sleeper=sleeper, trace=trace.append) as query:
        outcome = query.run()
    elapsed = time.monotonic() - started
    if fault is not None:
        emu.control("DELETE", "/faults/%d" % fault)
    rounds.append(len(trace))
    per_round = [b - a for a, b in zip(rounds, rounds[1:])]
    searches, gets, throttles = api_calls(emu, mark, prefix)
    outcome.items.sort(key=lambda item: item["id"])  # a name search lists the newest first
    correct = [item["id"] for item in outcome.items] == ids and outcome.ok
    correct = correct and all(item["phase"] == "Completed" and item["details"]["status"]["phase"] == "Completed" for item in outcome.items)
    # A job is seen Completed at its lifecycle's step; when the search saw it so in a round without room for its GET,
    # the GET that confirms it comes in a later round and is one more request (poll) of the job.
    expected_polls = [spec["timeline"][0]["polls"] + spec["timeline"][1]["polls"] + 1 for spec in specs]
    extra = [item["polls"] - expected for item, expected in zip(outcome.items, expected_polls)]
    # By name, "before" also reads each job once more: its first GET round right after the name search is taken by the
    # emulator for the reading of what that search showed (the same step), as a confirming GET is.
    correct = correct and all(value in (0, 1) for value in extra) and (mode == "after" or by_name or not any(extra))
    paths = sorted(set(path for item in outcome.items for path in json_paths(item["details"])))
    return {
        "mode": mode,
        "throttled": throttled,
        "jobs": count,
        "selector": "name" if by_name else "ids",
        "rounds": len(per_round),
        "calls": searches + gets,
        "searches": searches,
        "gets": gets,
        "throttled_answers": throttles,
        "calls_per_round_mean": (searches + gets) / len(per_round),
        "attempts_per_round_max": max(per_round),
        "attempts_per_round": per_round,
        "confirmations_deferred": sum(extra),
        "correct": bool(correct),
        "details_paths": len(paths),
        "details_signature": hash(tuple(paths)),
        "seconds": round(elapsed, 2),
    }


def json_paths(node, prefix=""):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from json_paths(value, "%s.%s" % (prefix, key))
    elif isinstance(node, list):
        for value in node:
            yield from json_paths(value, prefix + "[]")
    else:
        yield prefix


def run_eda(emu, source, mode, count, interval, throttled, tag):
    """The event source on ``count`` jobs until every job is final; returns its numbers."""
    set_mode(mode)
    prefix = "e%s" % tag
    specs = eda_jobs(prefix, count)
    emu.add_jobs(specs)
    ids = [spec["id"] for spec in specs]
    final = dict((spec["id"], spec["timeline"][-1]) for spec in specs)
    args = dict(emu.connection("aksk"), training_job_ids=ids, interval=interval, stop_when_done=True)
    watcher, query = source["build_watcher"](args, environ={})
    observed = dict((job, []) for job in ids)
    original = watcher.source.observe

    def observe(keys, deadline=None):
        answers = original(keys, deadline)
        now = time.monotonic()
        for key in keys:
            observed[key].append(now)
        return answers

    watcher.source.observe = observe
    fault = emu.add_fault(type="throttle", every=10, retry_after=1) if throttled else None
    mark = emu_mark(emu)
    queue = asyncio.Queue()
    started = time.monotonic()
    try:
        asyncio.run(source["run"](watcher, queue))
    finally:
        query.close()
        if fault is not None:
            emu.control("DELETE", "/faults/%d" % fault)
    elapsed = time.monotonic() - started
    events = []
    while not queue.empty():
        events.append(queue.get_nowait()["modelarts"])
    sequences = dict((job, []) for job in ids)
    for event in events:
        sequences[event["training_job"]["id"]].append(event["phase"])
    correct = all(sequences[job] == ["Pending", "Running", final[job]] for job in ids)
    failed = [event["training_job"] for event in events if event["phase"] == "Failed"]
    correct = correct and len(failed) == sum(1 for phase in final.values() if phase == "Failed")
    correct = correct and all(item["failure_reason"] and "loss is NaN" in item["failure_reason"] for item in failed)
    searches, gets, throttles = api_calls(emu, mark, prefix)
    gaps = [b - a for times in observed.values() for a, b in zip(times, times[1:])]
    observations = sum(len(times) for times in observed.values())
    return {
        "mode": mode,
        "throttled": throttled,
        "jobs": count,
        "interval": interval,
        "calls": searches + gets,
        "searches": searches,
        "gets": gets,
        "throttled_answers": throttles,
        "observations": observations,
        "events": len(events),
        "correct": bool(correct),
        "gap_mean": round(sum(gaps) / len(gaps), 3) if gaps else None,
        "gap_max": round(max(gaps), 3) if gaps else None,
        "seconds": round(elapsed, 2),
    }


def table(results):
    lines = []
    wait = [r for r in results if "rounds" in r]
    if wait:
        lines += [
            "| 200-job wait | selected by | rate-limit fault | rounds | calls (searches + GETs) | calls per round, mean | requests in the busiest round "
            "| GETs a later round's room took | 429 answers | every item correct and complete |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in wait:
            lines.append(
                "| %s | %s | %s | %d | %d (%d + %d) | %.1f | %d | %d | %d | %s |"
                % (
                    r["mode"],
                    "`name`" if r.get("selector") == "name" else "`training_job_ids`",
                    "429 every 10th call" if r["throttled"] else "off",
                    r["rounds"],
                    r["calls"],
                    r["searches"],
                    r["gets"],
                    r["calls_per_round_mean"],
                    r["attempts_per_round_max"],
                    r.get("confirmations_deferred", 0),
                    r["throttled_answers"],
                    "yes" if r["correct"] else "NO",
                )
            )
    eda = [r for r in results if "observations" in r]
    if eda:
        before = dict((r["throttled"], r["calls"]) for r in eda if r["mode"] == "before")
        lines += [
            "",
            "| 1,000-job event source | rate-limit fault | calls (searches + GETs) | share of before | 429 answers | observations "
            "| gap between observations of a job, mean / max | every event correct |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in eda:
            share = "%.1f%%" % (100.0 * r["calls"] / before[r["throttled"]]) if before.get(r["throttled"]) else "-"
            lines.append(
                "| %s | %s | %d (%d + %d) | %s | %d | %d | %.2f s / %.2f s | %s |"
                % (
                    r["mode"],
                    "429 every 10th call" if r["throttled"] else "off",
                    r["calls"],
                    r["searches"],
                    r["gets"],
                    share,
                    r["throttled_answers"],
                    r["observations"],
                    r["gap_mean"],
                    r["gap_max"],
                    "yes" if r["correct"] else "NO",
                )
            )
    return "\n".join(lines) + "\n"


def plot(path, results=(), interval_jobs=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)):
    """Calls per polling round against jobs watched: one GET per job vs the bulk source (searches of 10), in steady
    state (lines), and the measured means of the 200-job wait (calls / rounds) as points."""
    import matplotlib  # pylint: disable=import-outside-toplevel

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # pylint: disable=import-outside-toplevel

    jobs = list(interval_jobs)
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    axes.plot(jobs, jobs, marker="o", label="before: one GET per job")
    axes.plot(jobs, [1 if n == 1 else math.ceil(n / 10) for n in jobs], marker="s", label="after: a search per 10 jobs")
    for mode, marker in (("before", "o"), ("after", "s")):
        measured = [r for r in results if "rounds" in r and r["mode"] == mode and not r["throttled"] and r.get("selector", "ids") == "ids"]
        if measured:
            axes.scatter(
                [r["jobs"] for r in measured],
                [r["calls_per_round_mean"] for r in measured],
                marker=marker,
                s=90,
                facecolors="none",
                edgecolors="black",
                label="measured mean, %d-job wait, %s (with its GETs)" % (measured[0]["jobs"], mode),
            )
    for mode, marker in (("before", "^"), ("after", "v")):
        measured = [r for r in results if "observations" in r and r["mode"] == mode and not r["throttled"]]
        if measured:
            # A round of the event source: one observation of every job watched.
            axes.scatter(
                [r["jobs"] for r in measured],
                [r["calls"] * r["jobs"] / r["observations"] for r in measured],
                marker=marker,
                s=90,
                facecolors="none",
                edgecolors="black",
                label="measured mean, %d-job event source, %s" % (measured[0]["jobs"], mode),
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("jobs watched")
    axes.set_ylabel("API calls per polling round")
    axes.set_title("Calls per round (steady state; + one GET per job at its final phase)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--wait-jobs", type=int, default=200)
    parser.add_argument("--eda-jobs", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--only", choices=("wait", "eda"), action="append")
    parser.add_argument("--plot", action="store_true", help="also write docs/images/bulk_polling.png")
    parser.add_argument("--output", help="results JSON (default benchmarks/results/<stamp>-bulk-polling.json)")
    parser.add_argument("--report", metavar="FILE", help="print the table of a saved run (and redraw the plot with --plot); run nothing")
    options = parser.parse_args()
    if options.report:
        with open(options.report, encoding="utf-8") as handle:
            saved = json.load(handle)["results"]
        print(table(saved))
        if options.plot:
            plot(os.path.join(ROOT, "docs", "images", "bulk_polling.png"), saved)
        return
    groups = options.only or ["wait", "eda"]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    results = []
    with tempfile.TemporaryDirectory() as base:
        stage_collection(base)
        import_staged(base)
        import runpy  # pylint: disable=import-outside-toplevel

        source = runpy.run_path(
            os.path.join(base, "ansible_collections", "modelarts", "training", "extensions", "eda", "plugins", "event_source", "training_job_phase.py")
        )
        with running_emulator(scenario="empty", tls=True) as emu:
            tag = 0
            for throttled in (False, True):
                for mode in ("before", "after"):
                    tag += 1
                    for by_name in (False, True) if "wait" in groups else ():
                        result = run_wait(emu, mode, options.wait_jobs, throttled, "%02d" % tag, by_name)
                        print(json.dumps(dict((k, v) for k, v in result.items() if k != "attempts_per_round")), flush=True)
                        results.append(result)
                    if "eda" in groups:
                        result = run_eda(emu, source, mode, options.eda_jobs, options.interval, throttled, "%02d" % tag)
                        print(json.dumps(result), flush=True)
                        results.append(result)
    os.makedirs(RESULTS_DIR, exist_ok=True)
    output = options.output or os.path.join(RESULTS_DIR, "%s-bulk-polling.json" % stamp)
    with open(output, "w", encoding="utf-8") as handle:
        json.dump({"machine": machine_facts(sys.executable), "results": results}, handle, indent=1)
    text = table(results)
    with open(os.path.splitext(output)[0] + ".md", "w", encoding="utf-8") as handle:
        handle.write(text)
    print(text)
    if options.plot:
        plot(os.path.join(ROOT, "docs", "images", "bulk_polling.png"), results)


if __name__ == "__main__":
    main()
