# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whole ``ansible-playbook`` runs of one task each, side by side: what a user waits for, start to end.

``python benchmarks/whole_run.py [--rev main --rev WORKTREE] [--rounds 5] [--uri-jobs 200]``

``run.py`` times a task inside a run (the ``task_timer`` callback, the run's start-up and the plugins' loading
left out, warm-up tasks before). This script times what a user starting ``ansible-playbook`` for one task waits
for: each run is a playbook of exactly one task (``-i localhost, -c local``, ``gather_facts: false``), timed from
this process from the start of ``ansible-playbook`` to its end - the interpreter's and ansible-core's start,
the inventory and the playbook, loading the task's plugins in the controller's main process (the action plugin
and what it imports and builds), the worker, the task, the result's trip and the exit. The IAM token of the
``auth_token`` and ``uri`` runs is obtained once beforehand, as a pipeline passing it in would.

Kinds (``playbook_bench.task_for``): ``noop`` (one ``ansible.builtin.debug``: ansible-playbook's own cost),
``uri:1`` and ``uri:N`` (a loop over N ids), ``module_token`` and ``module_aksk`` over 1 and N jobs in process,
``module_floor`` (the plain module returning the same items from a file, no HTTP) over 1 and N, and the lookup
(``set_fact`` of ``query``) over 1 and 50 terms. With several ``--rev`` (git revisions, ``WORKTREE`` for the files
as they are), the collection's kinds run for each revision in the same rounds, so a change is compared side by
side too. One round runs every kind once, in an order shuffled per round; ratios are paired by round (the
median of the per-round ratios, with min-max). The machine's load is sampled during the run. Results go to
``benchmarks/results/<stamp>-whole-run.json`` and ``.md``.
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
    DOCSETS,
    RESULTS_DIR,
    LoadSampler,
    add_full_jobs,
    capture_items,
    emulator_extra_vars,
    fmt_spread,
    iam_token,
    machine_facts,
    start_emulator,
    summarize,
    write_results,
)
from compare_revisions import stage_revision
from playbook_bench import task_for, timed_run

IDS_VAR = "full_ids"
# The collection's kinds (run for each revision) and the others (run once a round, from the first revision's staging).
COLLECTION_KINDS = ("module_token", "module_aksk", "lookup")
# (numerator, denominator) of the paired ratios printed for each revision, by kind:size; N is --uri-jobs.
RATIOS = (
    ("module_token:1", "uri:1", "one task, `auth_token` / one `uri` task"),
    ("module_aksk:1", "uri:1", "one task, AK/SK / one `uri` task"),
    ("module_token:1", "module_floor:1", "one task, `auth_token` / the floor"),
    ("module_aksk:1", "module_floor:1", "one task, AK/SK / the floor"),
    ("uri:N", "module_token:N", "N jobs: the `uri` loop / one task, `auth_token`"),
    ("uri:N", "module_aksk:N", "N jobs: the `uri` loop / one task, AK/SK"),
    ("module_token:N", "module_floor:N", "N jobs: one task, `auth_token` / the floor"),
    ("module_aksk:N", "module_floor:N", "N jobs: one task, AK/SK / the floor"),
    ("lookup:50", "lookup:1", "the lookup: 50 terms / 1 term"),
    ("module_token:1", "noop:1", "one task, `auth_token` / a `debug` task"),
    ("uri:1", "noop:1", "one `uri` task / a `debug` task"),
)


def one_task(kind, size):
    """The single task of a run."""
    if kind == "noop":
        return {"name": "M", "ansible.builtin.debug": {"msg": "nothing"}}
    return task_for(kind, size, "M", IDS_VAR)


def run_once(base, work, extra_file, kind, size):
    """One ``ansible-playbook`` run of one task; ``(wall seconds, the task's own seconds)``."""
    wall, records = timed_run([one_task(kind, size)], base, work, extra_file, name="whole-run")
    return wall, next((record["seconds"] for record in records if record["task"] == "M"), None)


def paired(samples, top, bottom, rounds):
    """The median (min-max) of the per-round ratios ``top / bottom`` of the wall times."""
    ratios = []
    for round_index in range(rounds):
        upper = [wall for r, wall, _task in samples.get(top, ()) if r == round_index]
        lower = [wall for r, wall, _task in samples.get(bottom, ()) if r == round_index]
        if upper and lower:
            ratios.append(summarize(upper)["median"] / summarize(lower)["median"])
    return summarize(ratios) if ratios else None


def markdown(results):
    """The tables of a results dictionary."""
    facts, during = results["machine"], results["loadavg_during"] or {}
    revs, big = results["revisions"], results["uri_jobs"]
    lines = [
        "Run %s: whole `ansible-playbook` runs of one task each, %d rounds, full-size documents; %s cores (%s), %s, ansible-core %s; "
        "load average during the run %.1f (%.1f-%.1f), 1-minute, sampled every %.0f s; %.0f s in all."
        % (
            results["started"],
            results["rounds"],
            facts["nproc"],
            facts["cpu"],
            facts["python"],
            (facts["packages"] or {}).get("ansible-core"),
            during.get("median", 0),
            during.get("min", 0),
            during.get("max", 0),
            during.get("every", 0),
            results["seconds"],
        ),
        "",
        "| run of one task (wall seconds, median (min-max)) | %s |" % " | ".join("`%s`" % rev for rev in revs),
        "|---|%s" % ("---|" * len(revs)),
    ]
    samples = results["samples"]
    for key in results["order"]:
        cells = []
        for index in range(len(revs)):
            found = samples.get("%d|%s" % (index, key)) or (samples.get("0|%s" % key) if key.split(":")[0] not in COLLECTION_KINDS else None)
            cells.append(fmt_spread(summarize([wall for _r, wall, _t in found])) if found else "")
        lines.append("| %s | %s |" % (key, " | ".join(cells)))
    lines += ["", "| paired by round | %s |" % " | ".join("`%s`" % rev for rev in revs), "|---|%s" % ("---|" * len(revs))]
    for top, bottom, label in RATIOS:
        cells = []
        for index in range(len(revs)):
            summary = paired(_by_key(samples, index), top.replace("N", str(big)), bottom.replace("N", str(big)), results["rounds"])
            cells.append(fmt_spread(summary, unit="x", digits=2) if summary else "")
        lines.append("| %s | %s |" % (label.replace("N jobs", "%d jobs" % big), " | ".join(cells)))
    if len(revs) > 1:
        header = "| the same run, revision / `%s` (paired) | %s |" % (revs[0], " | ".join("`%s`" % rev for rev in revs[1:]))
        lines += ["", header, "|---|%s" % ("---|" * (len(revs) - 1))]
        for key in results["order"]:
            if key.split(":")[0] not in COLLECTION_KINDS:
                continue
            cells = []
            for index in range(1, len(revs)):
                both = {"a": list(samples.get("%d|%s" % (index, key), ())), "b": list(samples.get("0|%s" % key, ()))}
                summary = paired(both, "a", "b", results["rounds"])
                cells.append(fmt_spread(summary, unit="x", digits=2) if summary else "")
            lines.append("| %s | %s |" % (key, " | ".join(cells)))
    return "\n".join(lines)


def _by_key(samples, index):
    """The samples of revision ``index`` (and the revision-independent kinds, run once) by ``kind:size``."""
    out = {}
    for name, values in samples.items():
        rev, key = name.split("|", 1)
        if int(rev) == index or (rev == "0" and key.split(":")[0] not in COLLECTION_KINDS):
            out[key] = values
    return out


def main(argv=None):
    """Run the rounds; write and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rev", action="append", help="git revision, or WORKTREE (repeatable; default WORKTREE; the first is the reference)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--uri-jobs", type=int, default=200, help="jobs of the large runs (uri loop, module, floor)")
    parser.add_argument("--results-dir", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    revs = args.rev or ["WORKTREE"]
    big = args.uri_jobs
    plan = [(kind, size) for kind in ("module_token", "module_aksk") for size in (1, big)] + [("lookup", 1), ("lookup", 50)]
    shared = [("noop", 1), ("uri", 1), ("uri", big), ("module_floor", 1), ("module_floor", big)]
    order = ["%s:%d" % pair for pair in shared[:2] + [("module_floor", 1)] + plan[:1] + plan[2:3] + [shared[2], shared[4]] + plan[1:2] + plan[3:]]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    results = {"started": stamp, "rounds": args.rounds, "revisions": revs, "uri_jobs": big, "machine": machine_facts(sys.executable), "order": order}
    samples = {}
    began = time.perf_counter()
    sampler = LoadSampler()
    with sampler, tempfile.TemporaryDirectory(prefix="modelarts-whole-run-") as work:
        bases = [stage_revision(rev, os.path.join(work, "rev%d" % index)) for index, rev in enumerate(revs)]
        with start_emulator() as emu:
            add_full_jobs(emu)
            items_file = os.path.join(work, "floor-items.txt")
            capture_items(emu, bases[0], DOCSETS["full"], items_file)
            extra_file = os.path.join(work, "extra.json")
            with open(extra_file, "w", encoding="utf-8") as handle:
                json.dump(dict(emulator_extra_vars(emu), floor_items_file=items_file, token=iam_token(emu)), handle)
            for round_index in range(args.rounds):
                runs = [(0, kind, size) for kind, size in shared] + [(index, kind, size) for index in range(len(bases)) for kind, size in plan]
                random.shuffle(runs)
                for index, kind, size in runs:
                    wall, task = run_once(bases[index], work, extra_file, kind, size)
                    samples.setdefault("%d|%s:%d" % (index, kind, size), []).append((round_index, wall, task))
                print("[%6.1fs] round %d/%d, load %.2f" % (time.perf_counter() - began, round_index + 1, args.rounds, os.getloadavg()[0]), flush=True)
    results["seconds"] = time.perf_counter() - began
    results["loadavg_during"] = sampler.summary()
    results["samples"] = samples
    base = os.path.join(args.results_dir, "%s-whole-run" % stamp)
    write_results(base, results, markdown(results))
    print("\nresults: %s.json and .md" % base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
