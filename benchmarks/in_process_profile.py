# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the in-process task's time goes at n full-size jobs (issue 40).

``python benchmarks/in_process_profile.py [--jobs 200] [--rounds 5] [--concurrency 1,2,4,8,16] [--profile FILE]``

What the action plugin ``modelarts_training_job_info`` does in the controller's worker for one task over n ids
(AK/SK, default options, whole ``details``), stage by stage, in this process, against a private HTTPS emulator holding
the full-size documents (benchmarks/README.md):

* ``arguments``: the task's arguments as the module receives them and ``ArgumentSpecValidator``;
* ``door``: ``job_info.run`` - the client, the n GETs (``max_concurrency`` at a time over one session), each answer
  decoded, validated, normalised and masked; split further, with one request at a time (the stages then add up to the
  wall time), into ``http`` (the exchange: ``HttpTransport._exchange``, TLS and the body read), ``decode`` (the answer's
  JSON), ``validate`` (``jobs.validate_document``), ``normalise`` (``jobs.normalise_v2``), ``mask`` (the endpoint
  tokens) and the rest (signing, the client, threads);
* ``format``: what ``AnsibleModule`` does to a result (``_formatted``: invocation, ``remove_values``);
* ``trip``: the result's way back to the controller's main process: pickled and unpickled as the worker's queue does,
  then the callbacks' copy (``module_response_deepcopy`` and ``strip_internal_keys``, once per callback send).

Then the wall time of ``door`` by ``max_concurrency`` (rounds alternate the values), and a cProfile of the whole task
(every thread's profile merged; ``--profile-concurrency``, default 1), top functions by own and by cumulative time.
Medians (min-max) of the rounds; the load average is printed: the machine may be shared.

``--single`` (issue 51): what one task over one job pays, before and after its first request, as ansible-playbook
runs it - ``python benchmarks/in_process_profile.py --single [--rev 65e68a5 --rev WORKTREE] [--rounds 5] [--tasks 8]``.
Each ``--rev`` (a git revision, or ``WORKTREE``) is staged as its own collection; every round runs, for each revision
in an order that alternates, a fresh process standing in for the controller's main process: it imports what
ansible-playbook has imported by then, then the action plugin (as the strategy loads it, once per run; with ``python -X
importtime``, so that each module_utils file's own import time is known), then forks one child per task, as the
strategy forks a worker per task, alternating AK/SK and ``auth_token`` tasks over one full-size job.  In the child the
task runs as the action plugin runs it (``_run_in_process``), stage by stage: the arguments (as the module receives
them, the argument spec and its validator), the set-up (options, then the client with its credentials and session), the
request (the exchange; inside it the TCP connect, building a TLS context, the TLS handshake; the signature apart), the
decoding, the validation (with the schema's compilation, when the task pays it), the normalisation, the masking (the
endpoint tokens, then the no_log values and secrets of the result), the result (formatted as ``AnsibleModule`` does, its
pickle trip to the main process and the callbacks' copy), and the modules it imports itself.  One more child runs the
task traced, to tell which module_utils files run code for it and which only lend it names.  Printed and written to
``benchmarks/results/<stamp>-in-process-single.{json,md}``: the stages per revision and credential kind, the task's
paired ratio after / before (per round), the import table, the load average.
"""

import argparse
import cProfile
import datetime
import io
import json
import os
import pickle
import pstats
import subprocess
import sys
import tempfile
import threading
import time

from common import (
    door_module,
    DOCSETS,
    RESULTS_DIR,
    add_full_jobs,
    fmt_spread,
    iam_token,
    import_staged,
    machine_facts,
    ratio_summary,
    stage_collection,
    start_emulator,
    summarize,
    write_results,
)


class _Stages(object):
    """Thread-safe sums of the time spent in wrapped functions."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sums = {}

    def wrap(self, owner, name, stage):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                with self.lock:
                    self.sums[stage] = self.sums.get(stage, 0.0) + elapsed

        setattr(owner, name, timed)
        return original


def _one_task(modules, connection, ids, concurrency, stages=None):
    """The action plugin's in-process work for one task over ``ids``: ``(timings, result)``."""
    action, job_info, remove_pieces = modules
    args = dict(connection, training_job_ids=list(ids), max_concurrency=concurrency)
    timings = {}
    started = time.perf_counter()
    received = action.as_the_module_receives(args)
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel

    validation = ArgumentSpecValidator(**job_info.spec_keywords({})).validate(received)
    params = dict(received)
    params.update(validation.validated_parameters)
    no_log_values = set(getattr(validation, "_no_log_values", ()))
    timings["arguments"] = time.perf_counter() - started
    started = time.perf_counter()
    outcome = job_info.run(validation.validated_parameters, {})
    timings["door"] = time.perf_counter() - started
    if outcome.failed:
        raise RuntimeError(outcome.msg)
    started = time.perf_counter()
    no_log_values.update(outcome.secrets)
    result = action._formatted(dict(outcome.result), params, no_log_values, outcome.warnings, True)  # pylint: disable=protected-access
    timings["format"] = time.perf_counter() - started
    started = time.perf_counter()
    wire = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    timings["result_bytes"] = len(wire)
    back = pickle.loads(wire)
    timings["trip_pickle"] = time.perf_counter() - started
    started = time.perf_counter()
    deepcopy, strip = remove_pieces
    strip(deepcopy(back))
    timings["trip_callback_copy"] = time.perf_counter() - started
    if stages is not None:
        timings.update(stages.sums)
    return timings, result


# -- issue 51: one task, as ansible-playbook runs it -------------------------------------------------------------

COLLECTION = "ansible_collections.modelarts.training."
MODULE_UTILS = COLLECTION + "plugins.module_utils."
# What ``python -X importtime`` writes between these lines is the action plugin's import in the "main process".
MARK_BEFORE = "in_process_profile: importing the action plugin"
MARK_AFTER = "in_process_profile: the action plugin is imported"
# The stages of one task, in the order printed: (name, what).  Indented names are parts of the one above.
SINGLE_STAGES = (
    ("task", "the whole task in the worker, from its arguments to the callbacks' copy"),
    ("arguments", "arguments: as the module receives them, the argument spec, ArgumentSpecValidator"),
    ("setup", "set-up: Query() - options, client, credentials, session"),
    ("setup.options", "  options resolved (options.resolve)"),
    ("setup.client", "  client, credentials, transport and session (ModelArtsClient)"),
    ("request", "the request: the exchange (HttpTransport._exchange)"),
    ("request.connect", "  TCP connect (name resolution, connect; in the watchdog's helper thread)"),
    ("request.tls_context", "  TLS context built (create_urllib3_context, CA locations loaded)"),
    ("request.handshake", "  TLS handshake"),
    ("sign", "signing the request (or the token header)"),
    ("decode", "decoding the answer (read_answer)"),
    ("validate", "schema validation (jobs.validate_document)"),
    ("validate.compile", "  the schema's pre-check compiled (validation._fast_checker)"),
    ("normalise", "normalisation (jobs.normalise_v2)"),
    ("mask_endpoints", "masking the endpoint tokens (items._mask_item)"),
    ("close", "closing the client (session, watchdog)"),
    ("door_rest", "the rest of job_info.run (selection, fan-out, items, threads)"),
    ("mask_result", "masking no_log values and secrets in the result (_without_no_log_values)"),
    ("format_rest", "the rest of formatting the result (invocation, warnings)"),
    ("trip", "the result's trip: pickled to the main process, the callbacks' copy"),
)


def _single_wrappers(stages):
    """Wrap the functions whose time is a stage (every revision since issue 40 has them); return the undo list."""
    # pylint: disable=import-outside-toplevel
    import ssl

    import urllib3.connection
    import urllib3.util.ssl_
    from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action
    from ansible_collections.modelarts.training.plugins.module_utils.service import client, transport, watchdog
    from ansible_collections.modelarts.training.plugins.module_utils.job import items, jobs, validation

    query = door_module("query")

    targets = [
        (query, "resolve", "setup.options"),
        (client.ModelArtsClient, "__init__", "setup.client"),
        (query.Query, "__init__", "setup"),
        (transport.HttpTransport, "_exchange", "request"),
        (watchdog, "_connect_in_helper", "request.connect"),
        (urllib3.util.ssl_, "create_urllib3_context", "request.tls_context"),
        (urllib3.connection, "create_urllib3_context", "request.tls_context"),
        (ssl.SSLContext, "load_verify_locations", "request.tls_context"),
        (ssl.SSLContext, "wrap_socket", "request.handshake"),
        (client.ModelArtsClient, "_auth_headers", "sign"),
        (transport, "read_answer", "decode"),
        (jobs, "validate_document", "validate"),
        (validation, "_fast_checker", "validate.compile"),
        (jobs, "normalise_v2", "normalise"),
        (items, "_mask_item", "mask_endpoints"),
        (client.ModelArtsClient, "close", "close"),
        (action, "_without_no_log_values", "mask_result"),
    ]
    return [(owner, name, stages.wrap(owner, name, stage)) for owner, name, stage in targets if hasattr(owner, name)]


def _single_task(connection, job_id, strip):
    """One task over ``job_id`` as ``ActionModule._run_in_process`` runs it, and its trip back: ``{stage: seconds}`` of
    the stages timed here (the wrapped ones add theirs)."""
    # pylint: disable=import-outside-toplevel
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible.vars.clean import module_response_deepcopy
    from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action

    job_info = door_module("job_info")

    timings = {}
    started = time.perf_counter()
    environ = dict(os.environ)
    args = action.as_the_module_receives(dict(connection, training_job_id=job_id))
    keywords = job_info.spec_keywords(environ)
    validation = ArgumentSpecValidator(**keywords).validate(args)
    params = dict(args)
    params.update(validation.validated_parameters)
    no_log_values = set(getattr(validation, "_no_log_values", ()))
    after_arguments = time.perf_counter()
    timings["arguments"] = after_arguments - started
    outcome = job_info.run(validation.validated_parameters, environ)
    after_run = time.perf_counter()
    timings["run"] = after_run - after_arguments
    if outcome.failed:
        raise RuntimeError(outcome.msg)
    no_log_values.update(outcome.secrets)
    result = action._formatted(dict(outcome.result), params, no_log_values, outcome.warnings, True)  # pylint: disable=protected-access
    after_format = time.perf_counter()
    timings["format"] = after_format - after_run
    back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    strip(module_response_deepcopy(back))
    timings["trip"] = time.perf_counter() - after_format
    timings["task"] = time.perf_counter() - started
    return timings


def _in_child(function):
    """``function()`` in a forked child (as ansible-core runs a task in a worker forked per task): its JSON answer."""
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(reading)
        try:
            answer = {"value": function()}
        except BaseException as exc:  # pylint: disable=broad-except  # reported by the parent
            answer = {"error": "%s: %s" % (type(exc).__name__, exc)}
        with os.fdopen(writing, "w") as handle:
            json.dump(answer, handle)
        os._exit(0)  # pylint: disable=protected-access
    os.close(writing)
    with os.fdopen(reading) as handle:
        text = handle.read()
    os.waitpid(pid, 0)
    answer = json.loads(text) if text else {"error": "the child died"}
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return answer["value"]


def task_child(config):
    """The stand-in for the controller's main process of one revision: the action plugin's import, then each task in a
    forked child.  Prints one JSON line."""
    # pylint: disable=import-outside-toplevel,unused-import
    import_staged(config["base"])
    # What ansible-playbook's main process has imported when its strategy loads the action plugin.
    import ansible.plugins.action  # noqa: F401
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # noqa: F401
    from ansible.vars.clean import module_response_deepcopy, strip_internal_keys  # noqa: F401
    from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder

    _AnsibleCollectionFinder(paths=[config["base"]])._install()  # pylint: disable=protected-access
    import ansible_collections.ansible.builtin  # noqa: F401  # routing loaded at start-up (ansible-playbook resolves its own plugins)

    sys.stderr.write(MARK_BEFORE + "\n")
    sys.stderr.flush()
    started = time.perf_counter()
    from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info  # noqa: F401

    imported = time.perf_counter() - started
    sys.stderr.write(MARK_AFTER + "\n")
    sys.stderr.flush()
    loaded = sorted(name for name in sys.modules if name.startswith(COLLECTION))
    stages = _Stages()
    _single_wrappers(stages)

    def one(kind, job_id):
        before = set(sys.modules)
        stages.sums.clear()
        timings = _single_task(config["connections"][kind], job_id, strip_internal_keys)
        timings.update(stages.sums)
        timings["imported"] = sorted(name for name in set(sys.modules) - before)
        return timings

    tasks = []
    for number in range(config["tasks"]):
        kind = ("aksk", "token")[number % 2]
        tasks.append(dict(kind=kind, timings=_in_child(lambda kind=kind, number=number: one(kind, config["ids"][number % len(config["ids"])]))))

    def traced():
        # Which module_utils files run code for the task (a function called), and which only lend it names.
        ran = set()

        def profiler(frame, event, _arg):
            if event == "call" and os.sep + "module_utils" + os.sep in frame.f_code.co_filename:
                ran.add(os.path.basename(frame.f_code.co_filename)[:-3])

        threading.setprofile(profiler)
        sys.setprofile(profiler)
        try:
            _single_task(config["connections"]["aksk"], config["ids"][0], strip_internal_keys)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
        return sorted(ran)

    print(json.dumps({"import_seconds": imported, "loaded": loaded, "tasks": tasks, "runs_code": _in_child(traced)}))
    return 0


def _import_times(stderr):
    """``{module: (self µs, cumulative µs)}`` of the action plugin's import, from ``python -X importtime``'s lines
    between the markers."""
    times = {}
    inside = False
    for line in stderr.splitlines():
        if line.startswith(MARK_BEFORE):
            inside = True
        elif line.startswith(MARK_AFTER):
            break
        elif inside and line.startswith("import time:") and "|" in line:
            parts = [part.strip() for part in line[len("import time:") :].split("|")]
            if len(parts) == 3 and parts[0].isdigit():
                times[parts[2].strip()] = (int(parts[0]), int(parts[1]))
    return times


def _stage_value(timings, stage):
    """A stage's seconds from one task's timings (derived stages computed)."""
    if stage == "door_rest":
        parts = ("setup", "request", "sign", "decode", "validate", "normalise", "mask_endpoints", "close")
        return timings["run"] - sum(timings.get(name, 0.0) for name in parts)
    if stage == "format_rest":
        return timings["format"] - timings.get("mask_result", 0.0)
    return timings.get(stage, 0.0)


def single(args):
    """Run ``--single``: the revisions side by side, round by round; print and write the tables."""
    # pylint: disable=import-outside-toplevel
    from compare_revisions import stage_revision

    revisions = args.rev or ["WORKTREE"]
    facts = machine_facts(sys.executable)
    print("load average at the start: %s" % ", ".join("%.2f" % value for value in os.getloadavg()))
    runs = dict((revision, []) for revision in revisions)
    loads = [os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="modelarts-single-") as work:
        bases = [stage_revision(revision, os.path.join(work, "rev%d" % index)) for index, revision in enumerate(revisions)]
        with start_emulator() as emu:
            add_full_jobs(emu)
            aksk = emu.connection("aksk")
            token = dict((name, value) for name, value in aksk.items() if name not in ("access_key", "secret_key"))
            token["auth_token"] = iam_token(emu)
            config = {"connections": {"aksk": aksk, "token": token}, "ids": DOCSETS["full"][: max(1, args.tasks)], "tasks": args.tasks}
            for round_index in range(args.rounds):
                order = list(range(len(revisions)))
                if round_index % 2:
                    order.reverse()
                for index in order:
                    child = dict(config, base=bases[index])
                    process = subprocess.run(
                        [sys.executable, "-X", "importtime", os.path.abspath(__file__), "--task-child", json.dumps(child)],
                        capture_output=True,
                        text=True,
                        check=False,
                        cwd=os.path.dirname(os.path.abspath(__file__)),
                    )
                    if process.returncode != 0 or not process.stdout.strip():
                        raise RuntimeError("the child of %s failed: %s" % (revisions[index], process.stderr[-3000:]))
                    outcome = json.loads(process.stdout.strip().splitlines()[-1])
                    outcome["import_times"] = _import_times(process.stderr)
                    outcome["round"] = round_index
                    runs[revisions[index]].append(outcome)
                loads.append(os.getloadavg())
                print("round %d/%d, load %.2f" % (round_index + 1, args.rounds, loads[-1][0]), flush=True)
    facts["loadavg_during"] = loads
    results = {"facts": facts, "revisions": revisions, "tasks_per_round": args.tasks, "runs": runs}
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(args.results_dir, "%s-in-process-single" % stamp)
    write_results(path, results, "\n".join(single_markdown(results)))
    print("results: %s.json and .md" % path)
    return 0


def single_markdown(results):
    """The tables of a ``--single`` run."""
    revisions, runs, facts = results["revisions"], results["runs"], results["facts"]
    loads = facts.get("loadavg_during") or []
    lines = [
        "%s, %s, %s; load average %s over the run (1-minute, at each round's end); %d tasks a round per revision, %d rounds."
        % (
            (facts.get("packages") or {}).get("ansible-core") and "ansible-core %s" % facts["packages"]["ansible-core"],
            facts.get("python"),
            facts.get("cpu"),
            ", ".join("%.1f" % load[0] for load in loads),
            results["tasks_per_round"],
            len(runs[revisions[0]]),
        ),
        "",
    ]
    for kind, label in (("aksk", "AK/SK"), ("token", "`auth_token`")):
        lines += [
            "**One task over one full-size job, %s, in the worker** (milliseconds, median (min-max) of every task)" % label,
            "",
            "| stage | %s |" % " | ".join(revisions),
            "|---|%s" % ("---|" * len(revisions)),
        ]
        for stage, text in SINGLE_STAGES:
            cells = []
            for revision in revisions:
                values = [_stage_value(task["timings"], stage) for run in runs[revision] for task in run["tasks"] if task["kind"] == kind]
                cells.append(fmt_spread(summarize(values), scale=1000.0, digits=2))
            lines.append("| %s | %s |" % (text, " | ".join(cells)))
        imported = []
        for revision in revisions:
            names = sorted(set(name for run in runs[revision] for task in run["tasks"] for name in task["timings"]["imported"]))
            imported.append(", ".join(names) or "none")
        lines.append("| modules the task imported itself | %s |" % " | ".join(imported))
        if len(revisions) > 1:
            for revision in revisions[1:]:
                per_round = []
                for mine, reference in zip(runs[revision], runs[revisions[0]]):
                    ours = [task["timings"]["task"] for task in mine["tasks"] if task["kind"] == kind]
                    theirs = [task["timings"]["task"] for task in reference["tasks"] if task["kind"] == kind]
                    per_round.append((summarize(ours)["median"], summarize(theirs)["median"]))
                ratio = ratio_summary([pair[0] for pair in per_round], [pair[1] for pair in per_round])
                paired = fmt_spread(ratio, unit="x", digits=2)
                lines += ["", "Whole task, %s / %s, paired by round (medians of each round's tasks): %s." % (revision, revisions[0], paired)]
        lines.append("")
    lines += [
        "**The action plugin's import in the controller's main process, once per `ansible-playbook` run** (`python -X importtime`, "
        "own time of each file in ms, median (min-max) of the rounds; a plain GET by id, AK/SK, traced: does it run code of the file?)",
        "",
        "| module | %s | a plain GET runs its code (%s) |" % (" | ".join(revisions), revisions[-1]),
        "|---|%s---|" % ("---|" * len(revisions)),
    ]
    names = sorted(set(name for revision in revisions for run in runs[revision] for name in run["loaded"] if name.startswith(MODULE_UTILS)))
    ran = set(runs[revisions[-1]][0]["runs_code"])
    totals = dict((revision, []) for revision in revisions)
    for name in names:
        cells = []
        for revision in revisions:
            values = [run["import_times"].get(name, (None,))[0] for run in runs[revision]]
            values = [value / 1000.0 for value in values if value is not None]
            cells.append(fmt_spread(summarize(values), digits=2) if values else "not loaded")
        short = name[len(MODULE_UTILS) :]
        lines.append("| `%s` | %s | %s |" % (short, " | ".join(cells), "yes" if short in ran else "no: names only (classes, constants)"))
    for revision in revisions:
        for run in runs[revision]:
            action = run["import_times"].get(COLLECTION + "plugins.action.modelarts_training_job_info")
            totals[revision].append(action[1] / 1000.0 if action else run["import_seconds"] * 1000.0)
    cumulative = " | ".join(fmt_spread(summarize(totals[revision]), digits=1) for revision in revisions)
    lines.append("| the action plugin, all it imports (cumulative) | %s | |" % cumulative)
    own = []
    for revision in revisions:
        values = [run["import_times"].get(COLLECTION + "plugins.action.modelarts_training_job_info", (None,))[0] for run in runs[revision]]
        own.append(fmt_spread(summarize([value / 1000.0 for value in values if value is not None]), digits=2))
    lines.append("| the action plugin's own (with `_prepare_process` where the revision has it) | %s | |" % " | ".join(own))
    rooms = sorted(set(name[len(MODULE_UTILS) :] for name in _all_module_utils()) - set(name[len(MODULE_UTILS) :] for name in names))
    lines += ["", "module_utils files not loaded (rooms a plain GET does not take): %s." % ", ".join(rooms), ""]
    return lines


def _all_module_utils():
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "plugins", "module_utils")
    names = []
    for where, _dirs, files in os.walk(folder):
        package = os.path.relpath(where, folder).replace(os.sep, ".")
        prefix = "" if package == "." else package + "."
        names += [MODULE_UTILS + prefix + name[:-3] for name in files if name.endswith(".py") and name != "__init__.py"]
    return sorted(names)


def main(argv=None):
    """Measure and print the stages, the concurrency sweep and the profile."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", default="1,2,4,8,16")
    parser.add_argument("--profile", help="also write the merged cProfile stats to this file")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--profile-concurrency", type=int, default=1, help="max_concurrency of the profiled task (1: own times are CPU, not GIL waits)")
    parser.add_argument("--single", action="store_true", help="issue 51: one task over one job, stage by stage, as ansible-playbook runs it")
    parser.add_argument("--rev", action="append", help="with --single: a git revision or WORKTREE (repeatable; the first is the reference)")
    parser.add_argument("--tasks", type=int, default=8, help="with --single: tasks per round and revision (alternating AK/SK and auth_token)")
    parser.add_argument("--results-dir", default=RESULTS_DIR, help="with --single: where to write the JSON and Markdown results")
    parser.add_argument("--task-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.task_child:
        return task_child(json.loads(args.task_child))
    if args.single:
        return single(args)
    levels = [int(value) for value in args.concurrency.split(",")]
    ids = DOCSETS["full"][: args.jobs]
    print("load average at the start: %s" % ", ".join("%.2f" % value for value in os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="modelarts-inproc-") as base:
        stage_collection(base)
        import_staged(base)
        # pylint: disable=import-outside-toplevel
        from ansible.vars.clean import module_response_deepcopy, strip_internal_keys
        from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action

        job_info = door_module("job_info")
        from ansible_collections.modelarts.training.plugins.module_utils.job import jobs, items
        from ansible_collections.modelarts.training.plugins.module_utils.service import transport

        def strip(value):
            return strip_internal_keys(value)

        modules = (action, job_info, (module_response_deepcopy, strip))
        with start_emulator() as emu:
            add_full_jobs(emu)
            connection = emu.connection("aksk")
            _one_task(modules, connection, ids, 16)  # warm up: the emulator's documents, the imports

            # 1. Stages, one request at a time so that they add up to the wall time.
            stages_rounds = {}
            for _round in range(args.rounds):
                stages = _Stages()
                undo = [
                    (transport.HttpTransport, "_exchange", stages.wrap(transport.HttpTransport, "_exchange", "door.http")),
                    (transport.json, "loads", stages.wrap(transport.json, "loads", "door.decode")),
                    (jobs, "validate_document", stages.wrap(jobs, "validate_document", "door.validate")),
                    (jobs, "normalise_v2", stages.wrap(jobs, "normalise_v2", "door.normalise")),
                    (items, "_mask_item", stages.wrap(items, "_mask_item", "door.mask")),
                ]
                try:
                    timings, _result = _one_task(modules, connection, ids, 1, stages)
                finally:
                    for owner, name, original in undo:
                        setattr(owner, name, original)
                for name, value in timings.items():
                    stages_rounds.setdefault(name, []).append(value)
            size = stages_rounds.pop("result_bytes")[0]
            print("\n%d full-size jobs, one request at a time, %d rounds; the result pickled is %.2f MB" % (args.jobs, args.rounds, size / 1e6))
            door = summarize(stages_rounds["door"])["median"]
            inner = sum(summarize(values)["median"] for name, values in stages_rounds.items() if name.startswith("door."))
            stages_rounds["door.rest"] = [door - inner]
            print("| stage | seconds | ms per job |")
            print("|---|---|---|")
            for name in sorted(stages_rounds, key=lambda key: (key.split(".")[0] != "arguments", key)):
                summary = summarize(stages_rounds[name])
                print("| %s | %s | %.2f |" % (name, fmt_spread(summary), 1000 * summary["median"] / args.jobs))

            # 2. The door's wall time by max_concurrency.
            sweep = {}
            for round_index in range(args.rounds):
                for level in levels if round_index % 2 else list(reversed(levels)):
                    timings, _result = _one_task(modules, connection, ids, level)
                    sweep.setdefault(level, {}).setdefault("door", []).append(timings["door"])
                    sweep[level].setdefault("task", []).append(sum(value for name, value in timings.items() if name != "result_bytes"))
            print("\nThe door's wall time by max_concurrency (%d rounds, alternating order)" % args.rounds)
            print("| max_concurrency | door, s | whole task, s |")
            print("|---|---|---|")
            for level in levels:
                print("| %d | %s | %s |" % (level, fmt_spread(summarize(sweep[level]["door"])), fmt_spread(summarize(sweep[level]["task"]))))

            # 3. One profiled task at the default concurrency, every thread's profile merged.
            profiles = []
            original_run = threading.Thread.run

            def profiled_run(thread):
                profile = cProfile.Profile()
                profiles.append(profile)
                profile.enable()
                try:
                    original_run(thread)
                finally:
                    profile.disable()

            threading.Thread.run = profiled_run
            main_profile = cProfile.Profile()
            main_profile.enable()
            try:
                _one_task(modules, connection, ids, args.profile_concurrency)
            finally:
                main_profile.disable()
                threading.Thread.run = original_run
            stats = pstats.Stats(main_profile, stream=io.StringIO())
            for profile in profiles:
                stats.add(profile)
            if args.profile:
                stats.dump_stats(args.profile)
            out = io.StringIO()
            stats.stream = out
            stats.sort_stats("tottime").print_stats(args.top)
            stats.sort_stats("cumulative").print_stats(args.top)
            print("\ncProfile of one task at max_concurrency %d (%d threads merged; own time, all threads)" % (args.profile_concurrency, len(profiles) + 1))
            print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:12000])
    print("load average at the end: %s" % ", ".join("%.2f" % value for value in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
