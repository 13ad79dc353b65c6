#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source's start over a tag that matches 200, 20,000 or 100,000 finished jobs and 3 running ones, ``startup:
all`` and ``changes`` (issues 37 and 49): how soon a job that completes just after the start gives its event, how many
ModelArts requests go out before it, how long the first round (the listing) takes, and the watch's peak RSS.

Method: one private HTTPS emulator per size, holding that many ``bench-NNNNNN`` jobs tagged ``{bench: restart}``, all
Completed, created over the last 29 days (a tag search covers 31), plus three running jobs created a minute ago; one of
them completes ``COMPLETES_AFTER`` seconds after the watch starts (a clock-driven timeline).  For each ``startup`` a child
process (so that its peak RSS is the watch's alone) imports the staged collection, builds the source's ``Watcher`` as
``main()`` does (``interval: INTERVAL``) and drives it as the source's loop does (``Watcher.round`` when due, then
``Watcher.delivered``), until the completed job's event came and the first round is over, then one later round.  The
requests are counted from the emulator's request log as they come (``RequestTally``: the log keeps only the last
20,000); "before the event" counts those answered before the child saw the event.  The child's peak RSS is
``getrusage(RUSAGE_SELF).ru_maxrss``.

    .venv/bin/python benchmarks/restart_watch.py [--jobs 200 20000 100000] [--startup all changes] [--output FILE]

Writes ``benchmarks/results/<stamp>-restart-watch.json`` and prints the table of docs/performance.md.
"""

import argparse
import datetime
import json
import os
import resource
import runpy
import subprocess
import sys
import tempfile
import time

from modelarts_emulator.client import ControlClient
from modelarts_emulator.launcher import running_emulator

from common import RESULTS_DIR, ROOT, RequestTally, emu_mark, machine_facts, stage_collection

SOURCE = ("extensions", "eda", "plugins", "event_source", "training_job_phase.py")
TAGS = {"bench": "restart"}


INTERVAL = 5
# The running job that completes does so this long after the watch starts: just after the restart.
COMPLETES_AFTER = 2
LIVE = 3


def child(options):
    """Runs in the child process: the watch's figures as one JSON line."""
    setup = json.loads(options.child)
    emu = ControlClient(setup["url"], setup["admin_token"], setup["ca_file"])
    source = runpy.run_path(os.path.join(setup["collections"], "ansible_collections", "modelarts", "training", *SOURCE))
    args = dict(emu.connection("aksk"), tags=TAGS, interval=INTERVAL, startup=setup["startup"])
    watcher, query = source["build_watcher"](args, environ={})
    event_at = listed_at = None
    marks = {}
    events = 0
    try:
        while watcher.prepare() is not None:
            time.sleep(0.5)
        # The watch starts now; a running job (created a minute ago) completes COMPLETES_AFTER seconds later.
        completes_at = time.time() + COMPLETES_AFTER
        timeline = [{"phase": "Running", "seconds": 60 + COMPLETES_AFTER}, "Completed"]
        completing = emu.add_job(name="bench-live-0", created_ago="1m", tags=TAGS, timeline=timeline)
        started = time.monotonic()
        marks["start"] = emu_mark(emu)
        later = 0
        while later < 2:
            time.sleep(max(0.0, watcher.next_due() - time.monotonic()))
            handed = watcher.round(time.monotonic())
            events += len(handed)
            watcher.delivered(handed)
            done = [event for event in handed if event["modelarts"]["training_job"]["id"] == completing and event["modelarts"]["phase"] == "Completed"]
            if event_at is None and done:
                event_at = time.time()
                marks["event"] = emu_mark(emu)
            if listed_at is None and watcher.listed:
                listed_at = time.monotonic() - started
                marks["listed"] = emu_mark(emu)
            if event_at is not None and listed_at is not None:
                later += 1
        marks["end"] = emu_mark(emu)
    finally:
        query.close()
    print(
        json.dumps(
            {
                "startup": setup["startup"],
                "marks": marks,
                "first_round_seconds": round(listed_at, 2),
                "events": events,
                "event_after_completion_seconds": round(event_at - completes_at, 2),
                "completing": completing,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
            }
        )
    )


def measure(jobs, collections, startups=("all", "changes")):
    """Both startups over one emulator holding ``jobs`` matching finished jobs and three running ones."""
    results = []
    with running_emulator(scenario="empty", tls=True) as emu:
        stagger = "%.3fs" % (29 * 86400.0 / jobs)
        jobs_spec = [{"name": "bench-{n:06d}", "count": jobs, "created_ago": "1h", "stagger": stagger, "phase": "Completed", "tags": TAGS}]
        emu.control("POST", "/jobs", {"jobs": jobs_spec}, timeout=900)
        for startup in startups:
            # Two jobs that run on; the child adds the third, which completes just after its watch starts.
            spec = {"created_ago": "1m", "tags": TAGS}
            running = [{"phase": "Running", "seconds": 86400}, "Completed"]
            live = [emu.add_job(name="bench-live-%d" % number, timeline=running, **spec) for number in range(1, LIVE)]
            setup = {
                "url": emu.url,
                "admin_token": emu.admin_token,
                "ca_file": emu.ca_file,
                "collections": collections,
                "startup": startup,
            }
            # The parent counts the requests as they come: a listing of 100,000 jobs is more than the log keeps.
            with RequestTally(emu) as tally:
                process = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--child", json.dumps(setup)],
                    capture_output=True,
                    text=True,
                    check=False,
                    cwd=os.path.dirname(os.path.abspath(__file__)),
                )
                if process.returncode != 0:
                    raise RuntimeError("the child failed:\n%s" % process.stderr[-3000:])
                result = json.loads(process.stdout.strip().splitlines()[-1])
                live.append(result.pop("completing"))
                marks = result.pop("marks")
                for part, since, until in (("before_event", "start", "event"), ("first_round", "start", "listed"), ("later_rounds", "listed", "end")):
                    result[part] = dict(zip(("searches", "by_id", "gets"), tally.calls(marks[since], marks[until])))
            result["jobs"] = jobs
            result["unfinished"] = LIVE
            results.append(result)
            print(json.dumps(result), flush=True)
            for key in live:
                emu.remove_job(key)
    return results


def table(results):
    lines = [
        "| matching jobs | startup | requests before the event (ceil(U/50) + 10 = %d) | event after the completion "
        "| first round: searches + by id + GETs, time | a later round: requests | peak RSS |" % (-(-LIVE // 50) + 10),
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        before, first, later = result["before_event"], result["first_round"], result["later_rounds"]
        lines.append(
            "| {:,} | {} | {} | {:.1f} s | {:,} + {:,} + {:,}, {:.1f} s | {:.1f} | {:.0f} MB |".format(
                result["jobs"],
                result["startup"],
                before["searches"] + before["by_id"] + before["gets"],
                result["event_after_completion_seconds"],
                first["searches"],
                first["by_id"],
                first["gets"],
                result["first_round_seconds"],
                (later["searches"] + later["by_id"] + later["gets"]) / 2.0,
                result["peak_rss_mb"],
            )
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[200, 20000, 100000])
    parser.add_argument("--startup", nargs="+", default=["all", "changes"], choices=["all", "changes"])
    parser.add_argument("--output")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        return child(options)
    with tempfile.TemporaryDirectory() as base:
        stage_collection(base)
        results = []
        for jobs in options.jobs:
            results.extend(measure(jobs, base, options.startup))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    output = options.output or os.path.join(RESULTS_DIR, "%s-restart-watch.json" % stamp)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    with open(output, "w") as handle:
        json.dump({"machine": machine_facts(sys.executable), "results": results}, handle, indent=1)
    print(table(results))
    print("written to %s" % os.path.relpath(output, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
