#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What metrics cost (issue 48): requests and time they add per job, at 1 and 200 jobs, against the same call without them.

    .venv/bin/python benchmarks/metrics_cost.py                       # about 4 minutes on 2 cores
    .venv/bin/python benchmarks/metrics_cost.py --rounds 5 --playbook-rounds 3

Against its own HTTPS emulator, with 200 Completed jobs whose task logs hold 2,000 training lines and an epoch's
metric line every 400 (``metric_lines``), with ft-metrics series, and a model in production tagged for the baseline.
Side by side in one run, each round in a shuffled order, the same ``Query.run()`` with ``wait`` (as the module runs in
the controller's process) over 1 and over 200 of the jobs:

* ``none``: no ``metrics`` (the call every other figure is paired with);
* ``log_last``: one ``log`` metric, ``pick: last`` (the newest match: one AOM page);
* ``log_max``: one ``log`` metric, ``pick: max`` over ``lines: 1000`` (two AOM pages of 500);
* ``ft``: one ``ft_metrics`` metric (one ft-metrics call);
* ``gate``: champion/challenger - a ``log`` metric with ``min`` and ``min_improvement``, an ``ft_metrics`` metric with
  ``max``, and ``baseline: {tags: ...}`` (the baseline's search, its GET and its own reads).

Then, in real ``ansible-playbook`` runs (one module task, in process), ``none`` against ``gate`` at 1 and 200 jobs.
Requests are counted from the emulator's request log. Writes ``benchmarks/results/<stamp>-metrics.json`` (every
sample, the machine's load) and prints the table of docs/performance.md.
"""

import argparse
import datetime
import json
import os
import random
import sys
import tempfile
import time

from common import (
    door_module,
    RESULTS_DIR,
    fmt_spread,
    import_staged,
    machine_facts,
    ratio_summary,
    stage_collection,
    start_emulator,
    summarize,
    timed_playbook,
)

JOBS = 200
IDS = ["4b000000-0000-4000-8000-%012d" % number for number in range(1, JOBS + 1)]
PRODUCTION = "4b000000-0000-4000-8000-999999999999"
STAGE = "bench-production"
ACC = "val_accuracy=([0-9.]+)"
SERIES = [
    {"name_en": "train_loss", "group": "training", "data": [[step * 100, 2.0 / (1 + step)] for step in range(1, 41)]},
    {
        "name_en": "eval_loss",
        "group": "validation",
        "data": {"step": [step * 400 for step in range(1, 11)], "value": [1.5 / (1 + step) for step in range(1, 11)]},
    },
]
VARIANTS = {
    "none": {},
    "log_last": {"metrics": [{"name": "val_accuracy", "regex": ACC}]},
    "log_max": {"metrics": [{"name": "best", "regex": ACC, "pick": "max", "lines": 1000}]},
    "ft": {"metrics": [{"name": "eval_loss", "group": "validation", "goal": "min"}]},
    "gate": {
        "metrics": [
            {"name": "val_accuracy", "regex": ACC, "min": 0.5, "min_improvement": -1},
            {"name": "eval_loss", "group": "validation", "goal": "min", "max": 2},
        ],
        "baseline": {"tags": {"stage": STAGE}},
    },
}


def add_jobs(emu):
    lines = ["EVAL epoch %d: val_accuracy=%.4f" % (epoch, 0.6 + epoch * 0.05) for epoch in range(1, 6)]
    spec = {"phase": "Completed", "log": {"lines": 2000}, "metric_lines": lines, "ft_metrics": SERIES}
    emu.add_jobs([dict(spec, id=job, name="bench-metrics-%03d" % (index + 1)) for index, job in enumerate(IDS)])
    emu.add_job(id=PRODUCTION, name="bench-production", created_ago="1d", tags={"stage": STAGE}, **spec)


def modelarts_calls(emu):
    return len([entry for entry in emu.requests() if entry["path"].startswith("/v2/")])


def run_query(emu, ids, variant):
    """One ``Query.run()`` with ``wait``: (seconds, ModelArts requests, result)."""
    # pylint: disable=import-outside-toplevel
    Query, Selection = door_module("query").Query, door_module("query").Selection

    options = dict(emu.connection("aksk"), wait=True, wait_timeout=300, wait_sleep=1, backoff_retries=0, **VARIANTS[variant])
    emu.clear_requests()
    started = time.perf_counter()
    with Query([("task option", options)], Selection(ids, single=len(ids) == 1)) as query:
        result = query.run()
    elapsed = time.perf_counter() - started
    return elapsed, modelarts_calls(emu), result


def run_playbook(emu, base, ids, variant, workdir):
    """One ``ansible-playbook`` run of one module task: (seconds, ModelArts requests)."""
    task = dict(emu.connection("aksk"), training_job_ids=ids, wait=True, wait_timeout=300, wait_sleep=1, details_paths=[], **VARIANTS[variant])
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [{"modelarts.training.modelarts_training_job_info": task}]}]
    elapsed = timed_playbook(emu, base, play, workdir)
    return elapsed, modelarts_calls(emu)


def check(result, variant):
    """The call did what it says: every job read, its metrics found (a benchmark of failing reads would measure nothing)."""
    assert result.ok, result.msg
    for item in result.items:
        if variant == "none":
            assert "metrics" not in item
        else:
            assert all(entry["value"] is not None for entry in item["metrics"].values()), item["metrics"]
    if variant == "gate":
        assert result.measured.baseline["id"] == PRODUCTION


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="in-process rounds (each runs every variant at each size)")
    parser.add_argument("--playbook-rounds", type=int, default=3, help="ansible-playbook rounds")
    args = parser.parse_args()
    samples = {}
    loads = [os.getloadavg()[0]]

    def add(name, value):
        samples.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as scratch:
        base = stage_collection(os.path.join(scratch, "collections"))
        import_staged(base)
        with start_emulator() as emu:
            add_jobs(emu)
            for size in (1, JOBS):
                ids = IDS[:size]
                for _round in range(args.rounds):
                    order = list(VARIANTS)
                    random.shuffle(order)
                    for variant in order:
                        elapsed, calls, result = run_query(emu, ids, variant)
                        check(result, variant)
                        add("query_%d_%s_seconds" % (size, variant), elapsed)
                        add("query_%d_%s_calls" % (size, variant), calls)
                    loads.append(os.getloadavg()[0])
            for size in (1, JOBS):
                for _round in range(args.playbook_rounds):
                    order = ["none", "gate"]
                    random.shuffle(order)
                    for variant in order:
                        elapsed, calls = run_playbook(emu, base, IDS[:size], variant, scratch)
                        add("playbook_%d_%s_seconds" % (size, variant), elapsed)
                        add("playbook_%d_%s_calls" % (size, variant), calls)
                    loads.append(os.getloadavg()[0])

    report = {"machine": machine_facts(sys.executable), "rounds": args.rounds, "playbook_rounds": args.playbook_rounds, "load_1min": summarize(loads)}
    report["samples"] = samples
    lines = [
        "| where | jobs | metrics | requests | added requests per job | time | with / without (paired) | added per job |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for where, variants in (("query", list(VARIANTS)), ("playbook", ["none", "gate"])):
        for size in (1, JOBS):
            base_seconds = samples["%s_%d_none_seconds" % (where, size)]
            base_calls = summarize(samples["%s_%d_none_calls" % (where, size)])["median"]
            for variant in variants:
                seconds = samples["%s_%d_%s_seconds" % (where, size, variant)]
                calls = summarize(samples["%s_%d_%s_calls" % (where, size, variant)])["median"]
                ratio = ratio_summary(seconds, base_seconds) if variant != "none" else None
                added = summarize([(a - b) / size for a, b in zip(seconds, base_seconds)]) if variant != "none" else None
                report.setdefault("ratios", {})["%s_%d_%s_vs_none" % (where, size, variant)] = ratio
                lines.append(
                    "| %s | %d | %s | %d | %s | %s | %s | %s |"
                    % (
                        "in process" if where == "query" else "ansible-playbook",
                        size,
                        variant,
                        calls,
                        "-" if variant == "none" else "%.2f" % ((calls - base_calls) / size),
                        fmt_spread(summarize(seconds), " ms", 1000, 1),
                        "-" if ratio is None else fmt_spread(ratio, "", 1, 2),
                        "-" if added is None else fmt_spread(added, " ms", 1000, 2),
                    )
                )
    os.makedirs(RESULTS_DIR, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(RESULTS_DIR, "%s-metrics.json" % stamp)
    with open(path, "w") as handle:
        json.dump(report, handle, indent=1)
    print("\n".join(lines))
    print("\nload (1 min) during the run: %s; results: %s" % (fmt_spread(report["load_1min"], "", 1, 1), path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
