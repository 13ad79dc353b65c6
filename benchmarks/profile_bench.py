# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a task's time goes, on both sides: a py-spy profile of one ``ansible-playbook`` run.

``python benchmarks/profile_bench.py [--task module|uri|lookup] [--jobs N] [--docs bulk|full] [--repeat R]``

Starts the HTTPS emulator (with the full-size jobs of ``common.full_jobs``), writes a playbook with
an unmeasured warm-up and then ``--repeat`` copies of one task (the module over ``--jobs`` ids,
one ``uri`` GET, or ``set_fact`` of a lookup over ``--jobs`` terms), and runs it under ``py-spy
record --subprocesses`` (sampling, so the profiled code runs at full speed). py-spy samples every
process of the run: the controller (``ansible-playbook``), its forked workers (templating, the
module's transfer, the result's post-processing) and the module's own Python process (AnsiballZ).

It prints, per process kind, the samples and the functions with the most inclusive time (a
function's share of the samples in which it is on the stack), and writes the raw collapsed stacks
to ``benchmarks/results/profile-<stamp>-<task>-<docs>.txt`` for flame graphs. py-spy
(requirements/bench.txt) needs permission to read the children's memory (ptrace), which a
container may forbid.
"""

import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

from common import DOCSETS, RESULTS_DIR, add_full_jobs, emulator_extra_vars, stage_collection, start_emulator
from playbook_bench import ansible_env, connection_vars

PROCESS = re.compile(r'^process (\d+):"(.*?)"$')


def playbook(task, jobs, docs, repeat):
    """The playbook text: one warm-up and ``repeat`` measured copies of the task."""
    ids_var = "%s_ids" % docs
    ids = "{{ %s[0] }}" % ids_var if jobs == 1 else "{{ %s[:%d] }}" % (ids_var, jobs)

    def one(name):
        if task == "module":
            options = connection_vars("aksk")
            options["training_job_id" if jobs == 1 else "training_job_ids"] = ids
            return {"name": name, "modelarts.training.modelarts_training_job_info": options}
        if task == "uri":
            return {
                "name": name,
                "ansible.builtin.uri": {
                    "url": "{{ emu_url }}/v2/{{ project_id }}/training-jobs/%s" % ids.replace("[:%d]" % jobs, "[0]"),
                    "headers": {"X-Auth-Token": "{{ token }}"},
                    "ca_path": "{{ ca_file }}",
                },
            }
        terms = ids[3:-3]
        return {
            "name": name,
            "ansible.builtin.set_fact": {
                "bench_lookup_result": (
                    "{{ query('modelarts.training.training_job', %s, region=region, project_id=project_id, endpoint=emu_url, iam_endpoint=emu_url, "
                    "ca_bundle=ca_file, access_key=ak, secret_key=sk) }}" % terms
                )
            },
        }

    tasks = []
    if task == "uri":
        tasks.append(
            {
                "name": "token",
                "ansible.builtin.uri": {
                    "url": "{{ emu_url }}/v3/auth/tokens",
                    "method": "POST",
                    "body_format": "json",
                    "ca_path": "{{ ca_file }}",
                    "status_code": [201],
                    "body": {
                        "auth": {
                            "identity": {
                                "methods": ["password"],
                                "password": {"user": {"name": "{{ username }}", "password": "{{ password }}", "domain": {"name": "{{ domain_name }}"}}},
                            },
                            "scope": {"project": {"id": "{{ project_id }}"}},
                        }
                    },
                },
                "register": "token_response",
                "no_log": True,
            }
        )
        tasks.append({"name": "token fact", "ansible.builtin.set_fact": {"token": "{{ token_response.x_subject_token }}"}, "no_log": True})
    tasks.append(one("warm-up"))
    tasks += [one("measured %d" % index) for index in range(repeat)]
    return yaml.safe_dump([{"name": "profile", "hosts": "localhost", "gather_facts": False, "tasks": tasks}], sort_keys=False, width=1000)


def process_kind(chain):
    """What a sampled process is, from its chain of ``process PID:"command"`` frames (root first).

    ``controller`` is the ``ansible-playbook`` process itself, ``worker`` one of its forked workers
    (same command line, one level down: templating, lookups, the module's transfer and the
    result's post-processing), ``module`` the module's Python process (AnsiballZ), ``shell`` the
    ``/bin/sh`` wrappers.
    """
    command = chain[-1][1]
    if "AnsiballZ_" in command and not command.startswith("/bin/sh"):
        return "module"
    if command.startswith("/bin/sh"):
        return "shell"
    if "ansible-playbook" in command:
        return "controller" if len(chain) == 1 else "worker"
    return "other"


def analyse(raw_path, top=25):
    """Per process kind: total samples, and the frames with the most inclusive samples."""
    totals = collections.Counter()
    inclusive = collections.defaultdict(collections.Counter)
    pids = collections.defaultdict(set)
    with open(raw_path, encoding="utf-8") as handle:
        for line in handle:
            stack, _space, count = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            chain = []
            while frames and PROCESS.match(frames[0]):
                match = PROCESS.match(frames.pop(0))
                chain.append((match.group(1), match.group(2)))
            kind = process_kind(chain) if chain else "other"
            if chain:
                pids[kind].add(chain[-1][0])
            samples = int(count)
            totals[kind] += samples
            for frame in set(re.sub(r":\d+\)$", ")", frame) for frame in frames):
                inclusive[kind][frame] += samples
    return {kind: {"samples": totals[kind], "processes": len(pids[kind]), "top": list(inclusive[kind].most_common(top))} for kind in totals}


def main(argv=None):
    """Profile one task kind; print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--task", choices=("module", "uri", "lookup"), default="module")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--docs", choices=sorted(DOCSETS), default="full")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    os.makedirs(RESULTS_DIR, exist_ok=True)
    raw = os.path.join(RESULTS_DIR, "profile-%s-%s%d-%s.txt" % (stamp, args.task, args.jobs, args.docs))
    spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    with tempfile.TemporaryDirectory(prefix="modelarts-profile-") as workdir:
        stage_collection(workdir)
        with start_emulator() as emu:
            add_full_jobs(emu)
            book = os.path.join(workdir, "profile.yml")
            with open(book, "w", encoding="utf-8") as handle:
                handle.write(playbook(args.task, args.jobs, args.docs, args.repeat))
            extra = emulator_extra_vars(emu)
            extra_file = os.path.join(workdir, "extra.json")
            with open(extra_file, "w", encoding="utf-8") as handle:
                json.dump(extra, handle)
            timer = os.path.join(workdir, "timer.jsonl")
            command = [
                spy,
                "record",
                "--subprocesses",
                "--nonblocking",
                "--format",
                "raw",
                "--rate",
                str(args.rate),
                "--output",
                raw,
                "--",
                os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                "-i",
                "localhost,",
                "-c",
                "local",
                book,
                "-e",
                "@" + extra_file,
            ]
            process = subprocess.run(
                command, env=ansible_env(workdir, os.path.join(workdir, "home"), timer), cwd=workdir, capture_output=True, text=True, check=False
            )
            if process.returncode != 0:
                sys.stderr.write(process.stdout[-3000:] + process.stderr[-3000:])
                return 1
            with open(timer, encoding="utf-8") as handle:
                times = [json.loads(line) for line in handle]
    measured = [record["seconds"] for record in times if record["task"].startswith("measured")]
    timings = ", ".join("%.3f" % value for value in measured)
    print("%s over %d %s jobs, %d measured tasks (under py-spy): %s s" % (args.task, args.jobs, args.docs, len(measured), timings))
    report(raw, args.rate, args.top)
    print("\nraw stacks: %s" % raw)
    return 0


def report(raw, rate=250, top=25):
    """Print the summary of a saved raw profile."""
    for kind, data in sorted(analyse(raw, top).items()):
        print("\n== %s: %d samples (%.2f s at %d Hz), %d processes" % (kind, data["samples"], data["samples"] / rate, rate, data["processes"]))
        for frame, count in data["top"]:
            print("%6.1f%% %7.3fs  %s" % (100.0 * count / data["samples"], count / rate, frame[:150]))


if __name__ == "__main__":
    sys.exit(main())
