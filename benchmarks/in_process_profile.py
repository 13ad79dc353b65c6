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
"""

import argparse
import cProfile
import io
import os
import pickle
import pstats
import sys
import tempfile
import threading
import time

from common import DOCSETS, add_full_jobs, fmt_spread, import_staged, stage_collection, start_emulator, summarize


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


def main(argv=None):
    """Measure and print the stages, the concurrency sweep and the profile."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", default="1,2,4,8,16")
    parser.add_argument("--profile", help="also write the merged cProfile stats to this file")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--profile-concurrency", type=int, default=1, help="max_concurrency of the profiled task (1: own times are CPU, not GIL waits)")
    args = parser.parse_args(argv)
    levels = [int(value) for value in args.concurrency.split(",")]
    ids = DOCSETS["full"][: args.jobs]
    print("load average at the start: %s" % ", ".join("%.2f" % value for value in os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="modelarts-inproc-") as base:
        stage_collection(base)
        import_staged(base)
        # pylint: disable=import-outside-toplevel
        from ansible.vars.clean import module_response_deepcopy, strip_internal_keys
        from ansible_collections.modelarts.training.plugins.action import modelarts_training_job_info as action
        from ansible_collections.modelarts.training.plugins.module_utils import job_info, jobs, transport, items

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
