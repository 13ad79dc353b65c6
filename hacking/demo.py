# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`make demo`: the deployment gate against the ModelArts emulator, opened and then closed.

1. Start the emulator (HTTPS) with the jobs of its "demo" scenario: a ResNet-50 job and a legacy
   v1 job that complete, and a BERT job that fails with OOMKilled. Each step of their timelines
   lasts one poll of the gate instead of its seconds (``demo_scenario``), so every run shows the
   whole lifecycle, however long ansible-playbook takes to start on a busy machine.
2. Run playbooks/gate_deployment.yml on the two good jobs: the gate waits through Creating,
   Pending and Running, opens on Completed, and the deploy step writes a release manifest.
3. Run it again with the BERT job added: the gate stays closed, the deploy never runs.
4. Gate on what a job produced, against the model in production (resnet50-flowers-train-baseline, tagged
   stage=production: val_accuracy 0.88 in its log): resnet50-flowers-v2 completed with a worse model (0.85), and
   the gate stays closed although the job is Completed, its message naming the metric, its value, the bound and
   production's value; resnet50-flowers-v3 (0.91) opens it. Each run writes its decision record, whose sha256
   the demo checks.
5. Champion/challenger by production record (issue 57): three nightly runs of churn-model (one name, as every night
   shares it) through the same playbook with gate_production - gate, deploy, promote. The first (0.86) is a first
   deployment and is promoted (the production record, with promoted_at and hmac_sha256); the second (0.83) is refused;
   the third (0.84) beats the refused run before it but is refused too: production is 0.86.
6. A job that stopped making progress (issue 59): gpt2-pretrain hung an hour ago and still reports Running, so a gate
   waits for it until its timeout (3600 s here). With training_job_gate_stall (gate_stall: idle_minutes 5, quiet_minutes
   5) the gate closes within a minute of wall time, its message saying why: the accelerators idle on every task, no log
   line for 5 minutes, the service still reporting Running. The emulator's clock moves one minute at each poll of the
   job (``modelarts_emulator.client.ClockMover``, per poll), so the quiet window passes in a few polls, however slowly the machine runs the playbook.
7. Stop the emulator and remove the demo's private temporary directory (the release manifests too).

Run from the checkout with the project's venv; ANSIBLE_COLLECTIONS_PATH must point at a staged
copy of the collection (hacking/in_staged_copy.sh does that for `make demo`).
"""

import hashlib
import json
import os
import secrets
import stat
import subprocess
import sys
import tempfile
import time

from modelarts_emulator.client import ClockMover
from modelarts_emulator.launcher import running_emulator
from modelarts_emulator.scenario import load_file, resolve_scenario_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


GOOD_V2 = "6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60"  # resnet50-flowers-train: completes
FAILING_V2 = "2b7e4d1c-8f3a-4e6b-a0c9-5d1e2f3a4b70"  # bert-intent-train: fails with OOMKilled
GOOD_V1 = {"job_id": 10, "version_id": 12}  # legacy-mnist-train: completes
PLAYBOOK = os.path.join(ROOT, "playbooks", "gate_deployment.yml")


def demo_scenario():
    """The emulator's shipped demo scenario, each timed step of its timelines lasting one poll instead of its seconds.

    Driven by seconds, what the gate saw depended on how long ansible-playbook took to start: on a loaded
    machine its first poll already found the job Running. Driven by polls, every run sees every phase.
    """
    scenario = load_file(resolve_scenario_path("demo"))
    for job in scenario["jobs"]:
        for step in job.get("timeline") or ():
            if isinstance(step, dict) and "seconds" in step:
                step["polls"] = 1
                del step["seconds"]
    return scenario


def say(text):
    """A headline between the playbook outputs."""
    print("\n\033[1m==> %s\033[0m" % text if sys.stdout.isatty() else "\n==> %s" % text, flush=True)


WORSE_V2 = "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d51"  # resnet50-flowers-v2: Completed, val_accuracy 0.85
BETTER_V2 = "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52"  # resnet50-flowers-v3: Completed, val_accuracy 0.91
# Fit to ship: val_accuracy (read from the job's log) at least 0.8 and no worse than the model in production's.
METRICS = [{"name": "val_accuracy", "regex": "val_accuracy=([0-9.]+)", "min": 0.8, "min_improvement": 0}]
PRODUCTION = {"tags": {"stage": "production"}}
# Three nightly runs of churn-model: 0.86 (promoted), 0.83 (refused), 0.84 (refused: production is 0.86).
CHURN = ["c4a1e0d2-5b6f-4c7d-9e8f-0a1b2c3d4e61", "c4a1e0d2-5b6f-4c7d-9e8f-0a1b2c3d4e62", "c4a1e0d2-5b6f-4c7d-9e8f-0a1b2c3d4e63"]
CHAMPION = [{"name": "val_accuracy", "regex": "val_accuracy=([0-9.]+)", "min_improvement": 0}]
HUNG_V2 = "3e8b5c2d-6f7a-4b8c-9d0e-1f2a3b4c5d71"  # gpt2-pretrain: hung since 20 minutes into its run, still Running
STALL = {"idle_minutes": 5, "quiet_minutes": 5}
STALL_TIMEOUT = 3600


def run_gate(env, release_dir, release, job_ids, v1_jobs, **gate):
    """Run the gate playbook; return its exit code."""
    extra = {"training_job_ids": job_ids, "training_v1_jobs": v1_jobs, "release_name": release, "release_dir": release_dir, "gate_poll": 1, "gate_timeout": 120}
    extra.update(gate)
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", PLAYBOOK, "-e", json.dumps(extra)]
    return subprocess.call(command, env=env, cwd=ROOT)


def main():
    # Everything the demo writes (the release manifests, whatever ansible-playbook leaves in TMPDIR)
    # goes to one private directory, removed at the end: the demo leaves nothing behind in /tmp.
    with tempfile.TemporaryDirectory(prefix="modelarts-demo-") as work:
        return demo(work)


def demo(work):
    release_dir = os.path.join(work, "releases")
    os.mkdir(release_dir)
    say("Starting the ModelArts emulator (HTTPS, the demo jobs, each phase lasting one poll: modelarts-emulator --tls-dir DIR)")
    with running_emulator(scenario="demo", tls=True) as emu:
        emu.reset(scenario=demo_scenario())
        print("    listening on %s; each job moves on one phase at every poll of it" % emu.url)
        env = dict(os.environ, **emu.env("aksk"))
        env.update(
            ANSIBLE_PYTHON_INTERPRETER=sys.executable,
            ANSIBLE_LOCALHOST_WARNING="0",
            ANSIBLE_INVENTORY_UNPARSED_WARNING="0",
            ANSIBLE_RETRY_FILES_ENABLED="0",
            PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
            TMPDIR=work,
            # The records' key (hmac_sha256): a secret the playbook reads from the environment, never printed.
            MODELARTS_GATE_RECORD_KEY=secrets.token_hex(16),
        )

        say("Run 1: gate on resnet50-flowers-train (v2) and legacy-mnist-train (v1); both complete at the gate's fourth poll")
        first = run_gate(env, release_dir, "demo-1", [GOOD_V2], [GOOD_V1])
        manifest = os.path.join(release_dir, "release-demo-1.json")
        if first != 0 or not os.path.exists(manifest):
            say("Run 1 should have opened the gate but did not (exit %d)" % first)
            return 1
        say("The gate opened and the deploy step wrote %s:" % manifest)
        with open(manifest) as handle:
            print(handle.read())

        say("Run 2: the same release plus bert-intent-train, which failed with OOMKilled")
        second = run_gate(env, release_dir, "demo-2", [GOOD_V2, FAILING_V2], [GOOD_V1])
        blocked = not os.path.exists(os.path.join(release_dir, "release-demo-2.json"))
        if second == 0 or not blocked:
            say("Run 2 should have closed the gate but did not")
            return 1
        say(
            "The gate stayed closed: the failed job blocked the deploy, and no release-demo-2.json was written; the message above"
            " quotes the job's last error event and the last lines of its log (diagnostics)"
        )

        records = os.path.join(work, "records")
        os.mkdir(records)
        say("Run 3: gate on what resnet50-flowers-v2 produced - Completed, but its val_accuracy (0.85) is worse than production's (0.88)")
        worse = os.path.join(records, "demo-3.json")
        third = run_gate(env, release_dir, "demo-3", [WORSE_V2], [], gate_metrics=METRICS, gate_baseline=PRODUCTION, gate_record=worse)
        if third == 0 or os.path.exists(os.path.join(release_dir, "release-demo-3.json")):
            say("Run 3 should have closed the gate but did not")
            return 1
        say("The gate stayed closed on a Completed job whose model is worse than production; its decision record (%s):" % worse)
        if not show_record(worse, "closed"):
            return 1

        say("Run 4: gate on resnet50-flowers-v3 - its val_accuracy (0.91) beats production's")
        better = os.path.join(records, "demo-4.json")
        fourth = run_gate(env, release_dir, "demo-4", [BETTER_V2], [], gate_metrics=METRICS, gate_baseline=PRODUCTION, gate_record=better)
        if fourth != 0 or not os.path.exists(os.path.join(release_dir, "release-demo-4.json")):
            say("Run 4 should have opened the gate but did not (exit %d)" % fourth)
            return 1
        say("The gate opened on the better model and the deploy step wrote release-demo-4.json; its decision record:")
        if not show_record(better, "open"):
            return 1

        production = os.path.join(records, "churn-model-production.json")
        say("Run 5: churn-model's first night (0.86): a first deployment - no production record yet - so gate, deploy, promote")
        first_night = {"record": production, "required": False}
        fifth = run_gate(env, release_dir, "demo-5", [CHURN[0]], [], gate_metrics=CHAMPION, gate_baseline=first_night, gate_production=production)
        if fifth != 0 or not os.path.exists(production):
            say("Run 5 should have promoted churn-model's first run but did not (exit %d)" % fifth)
            return 1
        say("Deployed and promoted; the production record (%s):" % production)
        if not show_record(production, "open"):
            return 1
        for number, job, value in ((6, CHURN[1], "0.83"), (7, CHURN[2], "0.84")):
            say("Run %d: churn-model's next night (%s), gated against the production record" % (number, value))
            code = run_gate(env, release_dir, "demo-%d" % number, [job], [], gate_metrics=CHAMPION, gate_production=production)
            if code == 0 or os.path.exists(os.path.join(release_dir, "release-demo-%d.json" % number)):
                say("Run %d should have been refused but was not" % number)
                return 1
        with open(production) as handle:
            promoted = json.load(handle)["jobs"][0]
        if promoted["id"] != CHURN[0]:
            say("The production record moved to %s" % promoted["id"])
            return 1
        say(
            "Both refused: 0.84 beats the refused 0.83 before it, but production is still 0.86 (%s) - a search by the"
            " runs' shared name would have shipped it" % promoted["id"]
        )

        say(
            "Run 8: gate on gpt2-pretrain, hung an hour ago and still Running, with gate_stall %s (timeout %d s); the emulator's"
            " clock moves one minute at each poll of the job" % (json.dumps(STALL), STALL_TIMEOUT)
        )
        started = time.monotonic()
        with ClockMover(emu, HUNG_V2, per_poll=True, wait_first=False):
            eighth = run_gate(env, release_dir, "demo-8", [HUNG_V2], [], gate_stall=STALL, gate_timeout=STALL_TIMEOUT)
        took = time.monotonic() - started
        if eighth == 0 or os.path.exists(os.path.join(release_dir, "release-demo-8.json")) or took >= STALL_TIMEOUT:
            say("Run 8 should have closed the gate on the hung job but did not (exit %d)" % eighth)
            return 1
        say(
            "The gate closed on the hung job after %.0f s of wall time, not at its %d s timeout: the message above says it"
            " stopped making progress - its accelerators idle, no log line for minutes - while the service still reports Running" % (took, STALL_TIMEOUT)
        )
    # The release manifests (the playbook also keeps deployed-training-jobs there: the jobs it deployed, each once).
    releases = sorted(name for name in os.listdir(release_dir) if name.startswith("release-"))
    say("Emulator stopped. Releases written: %s (removed with the demo's temporary directory)" % ", ".join(releases))
    return 0


def show_record(path, decision):
    """Print the gist of a decision record and check its sha256 as docs/role.md says a later step does."""
    with open(path) as handle:
        record = json.load(handle)
    # The digest is over the record without its digests (sha256, and hmac_sha256 when the gate had a key).
    text = json.dumps(dict((key, value) for key, value in record.items() if key not in ("sha256", "hmac_sha256")), sort_keys=True, separators=(",", ":"))
    intact = hashlib.sha256(text.encode("utf-8")).hexdigest() == record["sha256"]
    mode = stat.S_IMODE(os.stat(path).st_mode)
    job = record["jobs"][0]
    metric = job["metrics"]["val_accuracy"]
    print(
        "    decision %s at %s%s; %s (%s): val_accuracy %s against %s of %s; mode %o; sha256 %s %s%s"
        % (
            record["decision"],
            record["decided_at"],
            ", promoted at %s" % record["promoted_at"] if record.get("promoted_at") else "",
            job["name"],
            job["phase"],
            metric["value"],
            metric["baseline_value"],
            (record["baseline_job"] or {}).get("name", "no baseline (a first deployment)"),
            mode,
            record["sha256"][:16],
            "checks" if intact else "DOES NOT CHECK",
            "; hmac_sha256 (keyed)" if record.get("hmac_sha256") else "",
        )
    )
    return intact and record["decision"] == decision and mode == 0o600


if __name__ == "__main__":
    sys.exit(main())
