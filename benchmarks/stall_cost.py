#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``stall`` costs (issue 59): the requests and time it adds to one poll of 1 and of 200 ``Running`` jobs.

    .venv/bin/python benchmarks/stall_cost.py                  # about a minute on 2 cores
    .venv/bin/python benchmarks/stall_cost.py --rounds 15

Against its own HTTPS emulator, with 200 ``Running`` jobs of two tasks each (``node_count: 2``: worker-0, worker-1),
running for an hour with ``activity: {}`` (busy accelerators, a log that grows: the judgement reads real answers and
finds no stall). One poll is one ``Query.run()`` without ``wait`` (as the lookup calls it, in process): the jobs' GETs,
then - with ``stall`` - ``waiting/progress.py``'s reads of the ``Running`` ones, which are what every poll of a wait adds
as well (a wait's phase source answers, then the same ``Progress.read`` over the items it answered with). Side by side
in one run, each round in a shuffled order, at each size:

* ``none``: no ``stall`` (the poll every other figure is paired with);
* ``stall``: ``{idle_minutes: 5, quiet_minutes: 5}`` - per task and poll ONE read, by need: its metrics (the first
  poll), one line of its log (the AOM call: the next polls, the log growing), and per job its events every other poll
  in a task's place (``service`` is true by default);
* ``stall_no_service``: the same with ``service: false`` - no events.

The polls of one size and variant share one ``Progress``, as the polls of a wait do (the warm-up poll is their first:
the metrics), so the rounds measure the polls that follow.

Requests are counted from the emulator's request log, by kind. Writes ``benchmarks/results/<stamp>-stall-cost.json``
(every sample, the machine's load sampled during the run) and ``.md`` (the table of docs/performance.md).
"""

import argparse
import collections
import datetime
import os
import random
import sys
import tempfile
import time

from common import (
    door_module,
    RESULTS_DIR,
    LoadSampler,
    fmt_spread,
    import_staged,
    machine_facts,
    ratio_summary,
    stage_collection,
    start_emulator,
    summarize,
    write_results,
)

JOBS = 200
TASKS = 2
IDS = ["59000000-0000-4000-8000-%012d" % number for number in range(1, JOBS + 1)]
SIZES = (1, JOBS)
VARIANTS = {
    "none": {},
    "stall": {"stall": {"idle_minutes": 5, "quiet_minutes": 5}},
    "stall_no_service": {"stall": {"idle_minutes": 5, "quiet_minutes": 5, "service": False}},
}
KINDS = ("job", "metrics", "log", "events", "other")


def add_jobs(emu):
    spec = {"phase": "Running", "created_ago": "1h", "node_count": TASKS, "activity": {}}
    emu.add_jobs([dict(spec, id=job, name="bench-stall-%03d" % (index + 1)) for index, job in enumerate(IDS)])


def kind(entry):
    path = entry.get("path", "")
    if "/training-jobs/" not in path:
        return "other"
    tail = path.split("/training-jobs/", 1)[1].split("?")[0].split("/")
    if len(tail) == 1:
        return "job"
    return {"metrics": "metrics", "logs": "log", "events": "events"}.get(tail[1], "other")


def requests_by_kind(emu):
    """The ModelArts requests (``/v2/``) the emulator logged since it was cleared, by kind."""
    counts = collections.Counter()
    last = 0
    while True:
        entries = emu.requests(since=last, limit=5000)
        if not entries:
            return counts
        counts.update(kind(entry) for entry in entries if entry.get("path", "").startswith("/v2/"))
        last = entries[-1]["seq"]


ROOMS = {}  # (size, variant) -> the Progress its polls share, as a wait's polls do
CURRENT = [None]


def keep_progress_between_polls():
    """Make every poll of one (size, variant) use the same ``Progress``, as the polls of one wait (or one event source)
    do: its per-task choice of read and its events' turn depend on the polls before (issue 59: at most one request per
    task per poll).  Without it each ``Query.run()`` would measure a first poll only."""
    # pylint: disable=import-outside-toplevel
    from ansible_collections.modelarts.training.plugins.module_utils.waiting import progress

    real = progress.Progress

    def shared(client, settings, max_concurrency, clock):
        room = ROOMS.get(CURRENT[0])
        if room is None:
            room = ROOMS[CURRENT[0]] = real(client, settings, max_concurrency, clock)
        room.client, room.clock = client, clock
        return room

    progress.Progress = shared


def one_poll(emu, ids, variant):
    """One ``Query.run()`` over ``ids`` without ``wait``: (seconds, requests by kind, result)."""
    # pylint: disable=import-outside-toplevel
    Query, Selection = door_module("query").Query, door_module("query").Selection

    CURRENT[0] = (len(ids), variant)

    options = dict(emu.connection("aksk"), backoff_retries=0, **VARIANTS[variant])
    emu.clear_requests()
    started = time.perf_counter()
    with Query([("task option", options)], Selection(ids, single=len(ids) == 1)) as query:
        result = query.run()
    elapsed = time.perf_counter() - started
    return elapsed, requests_by_kind(emu), result


def check(result, variant, size):
    """The poll did what it says: every job read and Running, its progress judged from answers that were all read."""
    assert result.ok, result.msg
    assert len(result.items) == size
    for item in result.items:
        assert item["phase"] == "Running", item["phase"]
        if variant == "none":
            assert item.get("progress") is None, item.get("progress")
        else:
            progress = item["progress"]
            # A job's log seen once (its second poll) is not silence measured yet: said, not a failure of the read.
            problems = [line for line in progress["problems"] if not line.startswith("quiet: the log was seen across 0 ")]
            assert progress is not None and progress["stalled"] is False and problems == [], progress


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="rounds (each runs every variant at each size, shuffled)")
    args = parser.parse_args()
    samples = {}

    def add(name, value):
        samples.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as scratch, LoadSampler(every=5.0) as load:
        base = stage_collection(os.path.join(scratch, "collections"))
        import_staged(base)
        keep_progress_between_polls()
        with start_emulator() as emu:
            add_jobs(emu)
            for size in SIZES:  # a warm-up poll of each kind (imports, first TLS handshakes), not counted
                for variant in VARIANTS:
                    one_poll(emu, IDS[:size], variant)
            for _round in range(args.rounds):
                cells = [(size, variant) for size in SIZES for variant in VARIANTS]
                random.shuffle(cells)
                for size, variant in cells:
                    elapsed, counts, result = one_poll(emu, IDS[:size], variant)
                    check(result, variant, size)
                    add("poll_%d_%s_seconds" % (size, variant), elapsed)
                    add("poll_%d_%s_requests" % (size, variant), sum(counts.values()))
                    for name in KINDS:
                        add("poll_%d_%s_%s" % (size, variant, name), counts[name])

    report = {"machine": machine_facts(sys.executable), "rounds": args.rounds, "jobs": JOBS, "tasks_per_job": TASKS, "load_1min": load.summary()}
    report["variants"] = VARIANTS
    report["samples"] = samples
    report["ratios"] = {}
    lines = [
        "| Running jobs | stall | requests per poll (GETs + metrics + log + events) | added per job | time per poll | with / without | added per job |",
        "|---|---|---|---|---|---|---|",
    ]
    for size in SIZES:
        base_seconds = samples["poll_%d_none_seconds" % size]
        base_requests = summarize(samples["poll_%d_none_requests" % size])["median"]
        for variant in VARIANTS:
            prefix = "poll_%d_%s_" % (size, variant)
            seconds = samples[prefix + "seconds"]
            requests = summarize(samples[prefix + "requests"])["median"]
            parts = " + ".join("%d" % summarize(samples[prefix + name])["median"] for name in ("job", "metrics", "log", "events"))
            ratio = ratio_summary(seconds, base_seconds) if variant != "none" else None
            added = summarize([(a - b) / size for a, b in zip(seconds, base_seconds)]) if variant != "none" else None
            if ratio is not None:
                report["ratios"]["poll_%d_%s_vs_none" % (size, variant)] = ratio
            lines.append(
                "| %d | %s | %d (%s) | %s | %s | %s | %s |"
                % (
                    size,
                    variant,
                    requests,
                    parts,
                    "-" if variant == "none" else "%.1f" % ((requests - base_requests) / size),
                    fmt_spread(summarize(seconds), " ms", 1000, 1),
                    "-" if ratio is None else fmt_spread(ratio, "", 1, 2),
                    "-" if added is None else fmt_spread(added, " ms", 1000, 2),
                )
            )
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    loads = report["load_1min"] or {}
    text = "\n".join(
        ["# stall cost (issue 59): one poll of Running jobs (%d tasks each), %d rounds, %s" % (TASKS, args.rounds, stamp), ""]
        + lines
        + [
            "",
            "Medians (min-max) over the rounds; ratios paired by round. Load (1 min) during the run: %s (median %s, %d samples); %s."
            % (
                "%.1f-%.1f" % (loads.get("min", 0), loads.get("max", 0)),
                loads.get("median"),
                loads.get("samples", 0),
                "%s CPUs (nproc), %s" % (report["machine"].get("nproc"), report["machine"].get("cpu")),
            ),
        ]
    )
    write_results(os.path.join(RESULTS_DIR, "%s-stall-cost" % stamp), report, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
