# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The same playbook tasks over two or more revisions of the collection, side by side, paired by round.

``python benchmarks/compare_revisions.py --rev ae1a691 --rev HEAD --task module_token:200 --task lookup:50 [--rounds 4] [--reps 2]``

Each ``--rev`` is a git revision of this checkout (``WORKTREE`` for the files as they are now); it
is exported with ``git archive`` and staged as its own collection. One round runs one
``ansible-playbook`` per revision, in an order that alternates between rounds, each with the same
tasks (kinds of ``playbook_bench.task_for``, ``kind:size``) repeated ``--reps`` times, timed by the
benchmark's ``task_timer`` callback from the checkout (so every revision is timed the same way; set
``--timer-mode results`` for the result-listening timer of earlier runs). The revisions share one
emulator with the full-size jobs. Printed: each task's median per revision and the ratio of every
revision to the first, paired by round (the median of the per-round ratios, with min-max); and the same for the
whole ``ansible-playbook`` run, timed from outside (its start and end, the setup and warm-up tasks included).

What it answers: did a code change make a task faster, measured the way ``run.py`` measures, with
the machine's load drift cancelled by the pairing. The benchmark-only floor plugins are staged too.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


from common import ROOT, add_floor_plugins, add_full_jobs, add_what_if_plugins, emulator_extra_vars, fmt_spread, stage_collection, start_emulator, summarize
from playbook_bench import setup_tasks, task_for, timed_run


# The row of the whole ``ansible-playbook`` run of a revision (its start, the setup and warm-up tasks, the measured ones,
# its end), timed from this process: what a task's share of the run leaves out, such as the action plugin's loading
# in the controller's main process.
WHOLE = "whole ansible-playbook run"


def stage_revision(revision, base):
    """Export ``revision`` (or the working tree for ``WORKTREE``) as a collection under ``base``; return ``base``."""
    if revision == "WORKTREE":
        return stage_collection(base)
    target = os.path.join(base, "ansible_collections", "modelarts", "training")
    os.makedirs(target)
    archive = subprocess.run(["git", "-C", ROOT, "archive", revision], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    add_what_if_plugins(base)
    add_floor_plugins(base)
    return base


def public_bundle(emulator_ca, path):
    """Write certifi's CA bundle with the emulator's CA appended to ``path``; return ``path``.

    The emulator's own CA file holds one certificate, which a TLS context loads in about 1.5 ms; a task against a real
    endpoint verifies with the public CAs (certifi's, about 30 ms to load), so ``--public-bundle`` compares revisions
    with a trust store of that size."""
    import certifi  # pylint: disable=import-outside-toplevel  # requests' own dependency

    with open(certifi.where(), encoding="utf-8") as public, open(emulator_ca, encoding="utf-8") as own, open(path, "w", encoding="utf-8") as out:
        out.write(public.read().rstrip("\n") + "\n" + own.read())
    return path


def main(argv=None):
    """Run the rounds and print the paired comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rev", action="append", required=True, help="git revision, or WORKTREE (repeatable; the first is the reference)")
    parser.add_argument("--task", action="append", required=True, help="kind:size, e.g. module_token:200 or lookup:50 (repeatable)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--reps", type=int, default=2, help="copies of each task per playbook")
    parser.add_argument("--docs", default="full", choices=("bulk", "full"))
    parser.add_argument("--timer-mode", default="starts", choices=("starts", "results"))
    parser.add_argument(
        "--public-bundle",
        action="store_true",
        help="every task's ca_bundle (and uri's ca_path) is certifi's public CAs plus the emulator's, as a trust store of a real endpoint is sized",
    )
    args = parser.parse_args(argv)
    if len(args.rev) < 2:
        parser.error("give at least two --rev")
    tasks = [(spec.split(":")[0], int(spec.split(":")[1])) for spec in args.task]
    samples = {}  # (task spec, revision index) -> list of (round, seconds)
    with tempfile.TemporaryDirectory(prefix="modelarts-revisions-") as work:
        bases = [stage_revision(revision, os.path.join(work, "rev%d" % index)) for index, revision in enumerate(args.rev)]
        ids_var = "%s_ids" % args.docs
        with start_emulator() as emu:
            add_full_jobs(emu)
            extra_file = os.path.join(work, "extra.json")
            extra = emulator_extra_vars(emu)
            if args.public_bundle:
                extra["ca_file"] = public_bundle(emu.ca_file, os.path.join(work, "public-bundle.pem"))
            with open(extra_file, "w", encoding="utf-8") as handle:
                json.dump(extra, handle)
            for round_index in range(args.rounds):
                order = list(range(len(bases)))
                if round_index % 2:
                    order.reverse()
                for index in order:
                    measured = [task_for(kind, size, "X=%s:%d=%d" % (kind, size, rep), ids_var) for rep in range(args.reps) for kind, size in tasks]
                    warm = [task_for(kind, 1, "warm %s" % kind, ids_var) for kind, _size in tasks]
                    try:
                        wall, records = timed_run(
                            setup_tasks(ids_var)[:2] + warm + measured, bases[index], work, extra_file, name="compare", env={"TASK_TIMER_MODE": args.timer_mode}
                        )
                    except RuntimeError as error:
                        raise RuntimeError("%s: %s" % (args.rev[index], error)) from error
                    samples.setdefault((WHOLE, index), []).append((round_index, wall))
                    for record in records:
                        if record["task"].startswith("X="):
                            spec = record["task"].split("=")[1]
                            samples.setdefault((spec, index), []).append((round_index, record["seconds"]))
                print("round %d/%d, load %.2f" % (round_index + 1, args.rounds, os.getloadavg()[0]), flush=True)
    print("\n| task | %s | %s |" % (" | ".join("`%s`" % rev for rev in args.rev), " | ".join("%s / %s (paired)" % (rev, args.rev[0]) for rev in args.rev[1:])))
    print("|---|%s%s" % ("---|" * len(args.rev), "---|" * (len(args.rev) - 1)))
    for spec in ["%s:%d" % (kind, size) for kind, size in tasks] + [WHOLE]:
        cells = [fmt_spread(summarize([seconds for _r, seconds in samples[(spec, index)]])) for index in range(len(args.rev))]
        ratios = []
        for index in range(1, len(args.rev)):
            per_round = []
            for round_index in range(args.rounds):
                top = [s for r, s in samples[(spec, index)] if r == round_index]
                bottom = [s for r, s in samples[(spec, 0)] if r == round_index]
                per_round.append(summarize(top)["median"] / summarize(bottom)["median"])
            ratios.append(fmt_spread(summarize(per_round), unit="x", digits=2))
        print("| %s | %s | %s |" % (spec, " | ".join(cells), " | ".join(ratios)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
