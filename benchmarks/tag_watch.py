#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""API calls a round of the event source watching a tag that matches 1,000 or 10,000 jobs (issue 30).

Method: one private HTTPS emulator per scenario (``tagged-1000``, ``tagged-10000``: that many ``nightly-train`` jobs
tagged ``{pipeline: nightly, team: vision}``, created over the last ~28 days, all long Completed but the newest, which
runs for 60 s); the staged collection imported in this process; the source's ``Watcher`` as ``main()`` builds it
with ``tags: {pipeline: nightly, team: vision}``, driven round by round (``Watcher.round``; the first listing's pages,
a round each, count as round 1), the requests of each
round counted in the emulator's request log.  Before round ``--add-at`` a new matching job is created (through the
control API), to show that it is picked up and what that costs.  "Full listing" is what every round cost before this
issue (the name search of every page, each interval): the first round's count.

    .venv/bin/python benchmarks/tag_watch.py [--jobs 1000 10000] [--rounds 8] [--add-at 4] [--output FILE]

Writes ``benchmarks/results/<stamp>-tag-watch.json`` and prints the table of docs/performance.md.
"""

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

from modelarts_emulator.launcher import running_emulator

from common import RESULTS_DIR, ROOT, calls_since, emu_mark, import_staged, machine_facts, stage_collection


SOURCE = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "training_job_phase.py")
TAGS = {"pipeline": "nightly", "team": "vision"}


def run(source, jobs, rounds, add_at):
    """The source's rounds over the ``tagged-<jobs>`` scenario: a list of per-round figures."""
    with running_emulator(scenario="tagged-%d" % jobs, tls=True) as emu:
        args = dict(emu.connection("aksk"), tags=TAGS, interval=1)
        watcher, query = source["build_watcher"](args, environ={})
        figures = []
        seen = set()
        try:
            while watcher.prepare() is not None:
                time.sleep(0.5)
            for number in range(rounds):
                added = None
                if number == add_at:
                    added = emu.add_job(name="nightly-train", created_ago=0, tags=TAGS, timeline=["Running", "Completed"])
                since = emu_mark(emu)
                started = time.monotonic()
                events = watcher.round(started)
                # The first listing reads a page a round (issue 37): its rounds together are this benchmark's round 1.
                while number == 0 and not watcher.listed:
                    events += watcher.round(time.monotonic())
                elapsed = time.monotonic() - started
                tags, by_id, gets = calls_since(emu, since)
                ids = [event["modelarts"]["training_job"]["id"] for event in events]
                new = [job for job in ids if job not in seen]
                seen.update(ids)
                figures.append(
                    {
                        "round": number + 1,
                        "calls": tags + by_id + gets,
                        "tag_searches": tags,
                        "searches_by_id": by_id,
                        "gets": gets,
                        "events": len(events),
                        "new_jobs": len(new),
                        "added_job_seen": added in ids if added else None,
                        "watched_after": len(watcher.jobs),
                        "seconds": round(elapsed, 3),
                    }
                )
        finally:
            query.close()
    return {"jobs": jobs, "rounds": figures, "full_listing_calls": figures[0]["calls"]}


def table(results):
    lines = [
        "| matching jobs | round 1 (full listing) | later rounds: calls each (tag search + by id + GETs) | round with a new job "
        "| events round 1 | new job's event |",
        "|---|---|---|---|---|---|",
    ]
    for result in results:
        rounds = result["rounds"]
        later = [r for r in rounds[1:] if r["added_job_seen"] is None]
        spread = sorted(set("%d (%d + %d + %d)" % (r["calls"], r["tag_searches"], r["searches_by_id"], r["gets"]) for r in later))
        added = [r for r in rounds if r["added_job_seen"] is not None]
        lines.append(
            "| {:,} | {:,} calls, {:.1f} s | {} | {} | {:,} | {} |".format(
                result["jobs"],
                rounds[0]["calls"],
                rounds[0]["seconds"],
                ", ".join(spread),
                ", ".join("%d (%d + %d + %d)" % (r["calls"], r["tag_searches"], r["searches_by_id"], r["gets"]) for r in added) or "-",
                rounds[0]["events"],
                "yes" if added and added[0]["added_job_seen"] else "no",
            )
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--add-at", type=int, default=4, help="the round (0-based) before which a new matching job is created")
    parser.add_argument("--output")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        stage_collection(base)
        import_staged(base)
        import runpy  # pylint: disable=import-outside-toplevel

        source = runpy.run_path(os.path.join(base, "ansible_collections", "modelarts", "training", *SOURCE.split(os.sep)[-5:]))
        results = [run(source, jobs, options.rounds, options.add_at) for jobs in options.jobs]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    output = options.output or os.path.join(RESULTS_DIR, "%s-tag-watch.json" % stamp)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    with open(output, "w") as handle:
        json.dump({"stamp": stamp, "machine": machine_facts(sys.executable), "results": results}, handle, indent=2)
    print(table(results))
    print("written: %s" % output)


if __name__ == "__main__":
    main()
