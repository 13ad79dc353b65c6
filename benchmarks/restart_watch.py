#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The event source's start over a tag that matches 1,000, 10,000 or 100,000 jobs, ``startup: all`` and ``changes``
(issue 37): requests of the first listing and of a later round, time to the first event, peak RSS.

Method: one private HTTPS emulator per size, holding that many ``bench-NNNNNN`` jobs tagged ``{bench: restart}``, all
Completed, created over the last 29 days (a tag search covers 31), plus one running job created a minute ago (Running for 3 polls, then
Completed).  For each ``startup`` a child process (so that its peak RSS is the watch's alone) imports the staged
collection, builds the source's ``Watcher`` as ``main()`` does (``interval: 1``) and drives it as the source's loop
does (``Watcher.round``, then ``Watcher.delivered`` for each round's events), until the first listing is over and one
later round ran; the requests of each part are counted from the emulator's request log as they come (``RequestTally``:
the log keeps only the last 20,000).  The child's peak RSS is
``getrusage(RUSAGE_SELF).ru_maxrss``.

    .venv/bin/python benchmarks/restart_watch.py [--jobs 1000 10000 100000] [--startup all changes] [--output FILE]

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


def child(options):
    """Runs in the child process: the watch's figures as one JSON line."""
    setup = json.loads(options.child)
    emu = ControlClient(setup["url"], setup["admin_token"], setup["ca_file"])
    source = runpy.run_path(os.path.join(setup["collections"], "ansible_collections", "modelarts", "training", *SOURCE))
    args = dict(emu.connection("aksk"), tags=TAGS, interval=1, startup=setup["startup"])
    started = time.monotonic()
    watcher, query = source["build_watcher"](args, environ={})
    first_event = None
    events = 0
    try:
        while watcher.prepare() is not None:
            time.sleep(0.5)
        mark = emu_mark(emu)
        while not watcher.listed:
            handed = watcher.round(time.monotonic())
            if handed and first_event is None:
                first_event = time.monotonic() - started
            events += len(handed)
            watcher.delivered(handed)
        listed = time.monotonic() - started
        marks = [mark, emu_mark(emu)]
        later_events = []
        rounds = 0
        # Later rounds, until the running job's Completed event (the first event with startup: changes).
        while rounds < 12 and not any(event["modelarts"]["phase"] == "Completed" and event["modelarts"]["previous_phase"] for event in later_events):
            time.sleep(max(0.0, watcher.next_due() - time.monotonic()))
            handed = watcher.round(time.monotonic())
            if handed and first_event is None:
                first_event = time.monotonic() - started
            later_events += handed
            watcher.delivered(handed)
            rounds += 1
        marks.append(emu_mark(emu))
    finally:
        query.close()
    print(
        json.dumps(
            {
                "startup": setup["startup"],
                "marks": marks,
                "first_listing": {"seconds": round(listed, 2), "events": events},
                "later_rounds": {"rounds": rounds, "events": len(later_events)},
                "first_event_seconds": None if first_event is None else round(first_event, 2),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
            }
        )
    )


def measure(jobs, collections, startups=("all", "changes")):
    """Both startups over one emulator holding ``jobs`` matching jobs."""
    results = []
    with running_emulator(scenario="empty", tls=True) as emu:
        stagger = "%.3fs" % (29 * 86400.0 / jobs)
        jobs_spec = [{"name": "bench-{n:06d}", "count": jobs, "created_ago": "1h", "stagger": stagger, "phase": "Completed", "tags": TAGS}]
        emu.control("POST", "/jobs", {"jobs": jobs_spec}, timeout=900)
        for startup in startups:
            emu.add_job(name="bench-live", created_ago="1m", tags=TAGS, timeline=[{"phase": "Running", "polls": 3}, "Completed"])
            setup = {"url": emu.url, "admin_token": emu.admin_token, "ca_file": emu.ca_file, "collections": collections, "startup": startup}
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
                start, listed, later = result.pop("marks")
                for part, since, until in (("first_listing", start, listed), ("later_rounds", listed, later)):
                    result[part].update(zip(("searches", "by_id", "gets"), tally.calls(since, until)))
            result["jobs"] = jobs
            results.append(result)
            print(json.dumps(result), flush=True)
    return results


def table(results):
    lines = [
        "| matching jobs | startup | first listing: searches + GETs, time | events of the listing | a later round: requests | first event after | peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        listing, later = result["first_listing"], result["later_rounds"]
        per_round = (later["searches"] + later["by_id"] + later["gets"]) / float(max(1, later["rounds"]))
        lines.append(
            "| {:,} | {} | {:,} + {:,}, {:.1f} s | {:,} | {:.1f} | {} | {:.0f} MB |".format(
                result["jobs"],
                result["startup"],
                listing["searches"],
                listing["gets"],
                listing["seconds"],
                listing["events"],
                per_round,
                "%.1f s" % result["first_event_seconds"] if result["first_event_seconds"] is not None else "-",
                result["peak_rss_mb"],
            )
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000, 10000, 100000])
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
