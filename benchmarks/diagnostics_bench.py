#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What diagnostics cost (issue 22): nothing for a completed job; one round of concurrent calls for a failed one.

    .venv/bin/python benchmarks/diagnostics_bench.py                 # about 2 minutes on 2 cores
    .venv/bin/python benchmarks/diagnostics_bench.py --rounds 5 --playbook-rounds 3

Against its own HTTPS emulator (integration scenario), side by side in one run, each round in a
shuffled order:

* **in process** (the staged collection's ``Query.run()`` with ``wait``, as the module runs it): a
  completed job and a failed one (2 tasks, logs of ~400 lines, the AOM call), each with
  ``diagnostics`` on and off, on loopback and with 50 ms added to every ModelArts call (the
  emulator's ``delay`` fault, so concurrent calls stall in parallel as on a distant service); and a
  failed job with a 5.7 MB log read through the preview (``log_lines: 600``);
* **in a playbook** (real ``ansible-playbook``, one module task): the completed and the failed job,
  diagnostics on and off.

Requests are counted from the emulator's request log, so "no extra call" is a count. Writes
``benchmarks/results/<stamp>-diagnostics.json`` (every sample) and prints the tables of
docs/performance.md.
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
    simulated_latency,
    stage_collection,
    start_emulator,
    summarize,
    timed_playbook,
)

COMPLETED = "a1000000-0000-4000-8000-000000000001"
FAILED = "a1000000-0000-4000-8000-000000000002"
LONG_LOG = "d1a90000-0000-4000-8000-0000000000b1"
LATENCY = 0.05


def _levels(emu, **options):
    base = dict(emu.connection("aksk"), wait=True, wait_timeout=120, wait_sleep=1, backoff_retries=0)
    base.update(options)
    return [("task option", base)]


def run_query(emu, job_id, **options):
    """One ``Query.run()`` of one job: (seconds, ModelArts requests made, ok)."""
    # pylint: disable=import-outside-toplevel
    Query, Selection = door_module("query").Query, door_module("query").Selection

    emu.clear_requests()
    started = time.perf_counter()
    with Query(_levels(emu, **options), Selection([job_id], single=True)) as query:
        result = query.run()
    elapsed = time.perf_counter() - started
    calls = len([entry for entry in emu.requests() if entry["path"].startswith("/v2/")])
    return elapsed, calls, result


def run_playbook(emu, base, job_id, diagnostics, workdir):
    """One ``ansible-playbook`` run of one module task (rescued when the job failed): seconds and requests."""
    connection = emu.connection("aksk")
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [
                {
                    "block": [
                        {
                            "modelarts.training.modelarts_training_job_info": dict(
                                connection, training_job_id=job_id, wait=True, wait_timeout=120, diagnostics=diagnostics
                            )
                        }
                    ],
                    "rescue": [{"ansible.builtin.debug": {"msg": "rescued"}}],
                }
            ],
        }
    ]
    elapsed = timed_playbook(emu, base, play, workdir)
    return elapsed, len([entry for entry in emu.requests() if entry["path"].startswith("/v2/")])


CASES = (
    ("completed", COMPLETED, {}),
    ("failed", FAILED, {}),
    ("failed_long_log_preview", LONG_LOG, {"log_lines": 600}),
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="in-process rounds (each runs every case both ways)")
    parser.add_argument("--playbook-rounds", type=int, default=5, help="ansible-playbook rounds")
    args = parser.parse_args()
    samples = {}

    def add(name, value):
        samples.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as scratch:
        base = stage_collection(os.path.join(scratch, "collections"))
        import_staged(base)
        with start_emulator() as emu:
            emu.add_job(id=LONG_LOG, name="bench-long-log", phase="Failed", failure={"exit_code": 1, "message": "boom"}, log={"lines": 80000})
            for network, latency in (("loopback", 0.0), ("latency", LATENCY)):
                for _round in range(args.rounds):
                    order = [(case, job, options, on) for case, job, options in CASES for on in (True, False)]
                    random.shuffle(order)
                    with simulated_latency(emu, latency) if latency else _Nothing():
                        for case, job, options, on in order:
                            elapsed, calls, result = run_query(emu, job, diagnostics=on, **options)
                            key = "%s_%s_%s" % (network, case, "on" if on else "off")
                            add(key + "_seconds", elapsed)
                            add(key + "_calls", calls)
                            if on and case != "completed":
                                assert result.items[0]["diagnostics"]["tasks"], result.items[0]["diagnostics"]
            for _round in range(args.playbook_rounds):
                order = [(case, job, on) for case, job, _options in CASES[:2] for on in (True, False)]
                random.shuffle(order)
                for case, job, on in order:
                    elapsed, calls = run_playbook(emu, base, job, on, scratch)
                    key = "playbook_%s_%s" % (case, "on" if on else "off")
                    add(key + "_seconds", elapsed)
                    add(key + "_calls", calls)

    report = {"machine": machine_facts(sys.executable), "rounds": args.rounds, "playbook_rounds": args.playbook_rounds, "latency": LATENCY, "samples": samples}
    lines = ["| where | job | calls on / off | time, diagnostics on | time, off | on / off (paired) | added |", "|---|---|---|---|---|---|---|"]
    for prefix in ("loopback", "latency", "playbook"):
        for case, _job, _options in CASES if prefix != "playbook" else CASES[:2]:
            on, off = samples["%s_%s_on_seconds" % (prefix, case)], samples["%s_%s_off_seconds" % (prefix, case)]
            calls_on, calls_off = samples["%s_%s_on_calls" % (prefix, case)], samples["%s_%s_off_calls" % (prefix, case)]
            ratio = ratio_summary(on, off)
            added = summarize([a - b for a, b in zip(on, off)])
            report.setdefault("ratios", {})["%s_%s_on_vs_off" % (prefix, case)] = ratio
            lines.append(
                "| %s | %s | %s / %s | %s | %s | %s | %s |"
                % (
                    prefix,
                    case,
                    "-".join(sorted({str(c) for c in calls_on})),
                    "-".join(sorted({str(c) for c in calls_off})),
                    fmt_spread(summarize(on), " ms", 1000, 1),
                    fmt_spread(summarize(off), " ms", 1000, 1),
                    fmt_spread(ratio, "", 1, 3),
                    fmt_spread(added, " ms", 1000, 1),
                )
            )
    os.makedirs(RESULTS_DIR, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    with open(os.path.join(RESULTS_DIR, "%s-diagnostics.json" % stamp), "w") as handle:
        json.dump(report, handle, indent=1)
    print("\n".join(lines))
    return 0


class _Nothing:  # pylint: disable=too-few-public-methods
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    sys.exit(main())
