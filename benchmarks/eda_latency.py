#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Latency of the ``training_job_phase`` event source: phase change -> event on the queue.

Method: the HTTPS emulator runs in its own process (modelarts_emulator.launcher). For each interval,
``--jobs`` jobs are added with clock-driven timelines Pending -> Running -> Completed whose step
lengths are drawn at random (0.7 to 2.9 intervals, so changes fall anywhere between two polls).
The source's ``main(queue, args)`` - loaded from a staged copy of the collection with runpy, as
ansible-rulebook loads it - watches all of them with that ``interval``; a consumer stamps each
event with ``time.time()`` as it leaves the asyncio queue. The instant of a phase change is known
exactly: the job's ``metadata.create_time`` (epoch ms, from the event itself) plus the timeline's
step lengths; emulator and benchmark share the machine's clock. Latency = arrival - change, for
every change after the first observation (Pending -> Running and Running -> Completed).

    python benchmarks/eda_latency.py [--intervals 0.25 0.5 1 2] [--jobs 8] [--seed 7] [--output FILE]
"""

import argparse
import asyncio
import json
import os
import platform
import random
import runpy
import statistics
import subprocess
import sys
import tempfile
import time

from modelarts_emulator.launcher import running_emulator

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


SOURCE = ("ansible_collections", "modelarts", "training", "extensions", "eda", "plugins", "event_source", "training_job_phase.py")


def load_source(stage_dir):
    """Stage the checkout as a collection and load the source like ansible-rulebook does."""
    subprocess.run([os.path.join(ROOT, "hacking", "stage_collection.sh"), stage_dir], check=True, stdout=subprocess.DEVNULL)
    return runpy.run_path(os.path.join(stage_dir, *SOURCE))


def add_jobs(emu, interval, count, rng, tag):
    """Add ``count`` jobs with random step lengths; return {job id: (pending seconds, running seconds)}."""
    jobs = {}
    specs = []
    for index in range(count):
        pending, running = (round(interval * rng.uniform(0.7, 2.9), 3) for _step in range(2))
        job = "bench-%s-%02d" % (tag, index)
        jobs[job] = (pending, running)
        specs.append(
            {"id": job, "name": "bench-" + tag, "timeline": [{"phase": "Pending", "seconds": pending}, {"phase": "Running", "seconds": running}, "Completed"]}
        )
    emu.add_jobs(specs)
    return jobs


async def measure(source, emu, interval, jobs):
    """Run the source until every job has completed; return one latency (seconds) per observed change."""
    queue = asyncio.Queue()
    args = {
        **emu.connection("aksk"),
        "training_job_ids": list(jobs),
        "interval": interval,
        "stop_when_done": True,
    }
    task = asyncio.ensure_future(source["main"](queue, args))
    latencies = []
    remaining = set(jobs)
    while remaining:
        event = await asyncio.wait_for(queue.get(), 30 + 10 * interval)
        arrived = time.time()
        data = event["modelarts"]
        item = data["training_job"]
        if data["previous_phase"] is None:
            if data["phase"] != "Pending":
                raise RuntimeError("job %s first seen %s: the source started too late" % (item["id"], data["phase"]))
            continue
        pending, running = jobs[item["id"]]
        created = item["details"]["metadata"]["create_time"] / 1000.0
        changed = created + pending + (running if data["phase"] == "Completed" else 0.0)
        latencies.append(arrived - changed)
        if data["phase"] == "Completed":
            remaining.discard(item["id"])
    await task
    return latencies


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--intervals", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0])
    parser.add_argument("--jobs", type=int, default=8, help="jobs per interval (two measured changes each)")
    parser.add_argument("--rounds", type=int, default=2, help="batches of jobs per interval")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", help="write the results as JSON to this file")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    rows = []
    with tempfile.TemporaryDirectory() as stage, running_emulator(scenario="integration", tls=True) as emu:
        source = load_source(stage)
        for interval in options.intervals:
            latencies = []
            for batch in range(options.rounds):
                jobs = add_jobs(emu, interval, options.jobs, rng, "%s-%d" % (str(interval).replace(".", "_"), batch))
                latencies += asyncio.run(measure(source, emu, interval, jobs))
            rows.append(
                {
                    "interval": interval,
                    "changes": len(latencies),
                    "min": min(latencies),
                    "p50": statistics.median(latencies),
                    "p95": percentile(latencies, 0.95),
                    "max": max(latencies),
                    "max_over_interval": max(latencies) / interval,
                }
            )
    print("| interval (s) | changes | min (s) | p50 (s) | p95 (s) | max (s) | max / interval |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            "| %.2f | %d | %.3f | %.3f | %.3f | %.3f | %.2f |"
            % (row["interval"], row["changes"], row["min"], row["p50"], row["p95"], row["max"], row["max_over_interval"])
        )
    if options.output:
        with open(options.output, "w") as handle:
            json.dump(
                {
                    "python": platform.python_version(),
                    "machine": platform.platform(),
                    "jobs": options.jobs,
                    "rounds": options.rounds,
                    "seed": options.seed,
                    "results": rows,
                },
                handle,
                indent=2,
            )
    worst = max(row["max_over_interval"] for row in rows)
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
