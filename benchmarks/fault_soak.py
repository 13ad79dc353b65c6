#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fault soak, full form: the soak of tests/system/soak.py with 1,200 queries; figures to benchmarks/results/.

python benchmarks/fault_soak.py                      # full form: 1,200 queries, ~45% faulted
python benchmarks/fault_soak.py --queries 300 --workers 8 --fault-rate 0.5 --seed 7
"""

import argparse
import json
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))

# pylint: disable=wrong-import-position,import-error
from soak import import_collection, overruns, run_soak, running_emulator, table  # noqa: E402


def main(argv=None):
    """Run the full soak, print the table, write JSON to benchmarks/results/; non-zero exit on any wrong answer."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--queries", type=int, default=1200)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--fault-rate", type=float, default=0.45, help="share of queries that carry a fault")
    parser.add_argument("--seed", type=int, default=20260522)
    parser.add_argument("--request-timeout", type=float, default=0.3)
    parser.add_argument("--retries", type=int, default=4)
    parser.add_argument("--output", default=os.path.join(ROOT, "benchmarks", "results", "fault_soak.json"))
    args = parser.parse_args(argv)
    if not 1 <= args.queries <= 100000 or not 1 <= args.workers <= 64:
        parser.error("queries must be 1-100000 and workers 1-64")
    modules = import_collection()
    with running_emulator(scenario="empty", tls=True) as emu:
        summary = run_soak(
            emu,
            modules,
            queries=args.queries,
            workers=args.workers,
            fault_rate=args.fault_rate,
            seed=args.seed,
            request_timeout=args.request_timeout,
            retries=args.retries,
        )
    print(table(summary))
    worst = overruns(summary)
    print("  Retry-After beyond the budget: %d queries, worst end %.3f s after one request_timeout" % (len(worst), worst[0] if worst else 0.0))
    for problem in summary["problems"]:
        print("PROBLEM %s" % json.dumps(problem, default=str))
    output = dict((key, value) for key, value in summary.items() if key != "records")
    output["retry_after_overruns_seconds"] = [round(value, 3) for value in overruns(summary)[:10]]
    output["platform"] = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    output["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if args.output:
        os.makedirs(os.path.dirname(args.output), exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as handle:
            json.dump(output, handle, indent=2, sort_keys=True)
            handle.write("\n")
        print("wrote %s" % args.output)
    bad = sum(summary["outcomes"][name] for name in ("wrong", "unexpected_error", "traceback"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
