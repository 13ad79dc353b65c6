# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module's work for n jobs, stage by stage, in process, at both document sizes.

``python benchmarks/module_costs.py [--jobs 200] [--rounds 7]``

What ``modelarts_training_job_info`` does after Ansible started it, split into the stages that
grow with the jobs, each timed in this process (no AnsiballZ start-up, no controller):

* ``query``: ``Query(...).run()`` over n ids, AK/SK, strict validation, the default 16 requests at
  a time (HTTP to the emulator on the same cores, JSON decode, validation, normalisation);
* ``remove_values``: what ``AnsibleModule.exit_json`` does first with every result: a copy of the
  whole result with every ``no_log`` value masked (ansible-core's
  ``module_utils.common.parameters.remove_values``), here with the module's secret key as the only
  ``no_log`` value;
* ``encode``: the module's JSON output through ansible-core's module encoder (what
  ``exit_json`` prints), next to a plain ``json.dumps`` of the same result;
* the same two stages for the result without ``details`` (what an option leaving out the
  documents would leave).

Rounds alternate the document sets; every figure is the median (min-max) of the rounds, per job
and per KB of the module's JSON output.
"""

import argparse
import json
import os
import sys
import tempfile
import time

from common import door_module, DOCSETS, add_full_jobs, fmt_spread, import_staged, stage_collection, start_emulator, summarize


def _timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return time.perf_counter() - started, value


def main(argv=None):
    """Measure and print the stages."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="modelarts-costs-") as base:
        stage_collection(base)
        import_staged(base)
        # pylint: disable=import-outside-toplevel
        from ansible.module_utils.common import json as _json
        from ansible.module_utils.common.parameters import remove_values

        Query, select = door_module("query").Query, door_module("query").select
        argument_spec = door_module("job_info").argument_spec

        encoder = _json.get_module_encoder("legacy", _json.Direction.MODULE_TO_CONTROLLER)
        stages = {}
        sizes = {}
        with start_emulator() as emu:
            add_full_jobs(emu)
            for round_index in range(args.rounds + 1):  # round 0 warms up
                for docset in sorted(DOCSETS) if round_index % 2 else sorted(DOCSETS, reverse=True):
                    given = dict(emu.connection("aksk"), training_job_ids=DOCSETS[docset][: args.jobs])
                    params = dict((name, given.get(name, spec.get("default"))) for name, spec in argument_spec().items())
                    query = Query([("module", params)], select(params))
                    with query:
                        elapsed, outcome = _timed(query.run)
                    if not outcome.ok:
                        raise RuntimeError(outcome.msg)
                    record = {"query": elapsed}
                    for variant, items in (
                        ("", outcome.items),
                        ("_nodetails", [dict((k, v) for k, v in item.items() if k != "details") for item in outcome.items]),
                    ):
                        result = {"changed": False, "training_jobs": items, "invocation": {"module_args": params}}
                        record["remove_values" + variant], cleaned = _timed(remove_values, result, {emu.sk})
                        record["encode" + variant], text = _timed(lambda value: json.dumps(value, cls=encoder), cleaned)
                        record["plain_json" + variant], _text = _timed(json.dumps, cleaned)
                        sizes[docset + variant] = len(text)
                    if round_index:
                        for name, value in record.items():
                            stages.setdefault(docset, {}).setdefault(name, []).append(value)
    print("%d jobs, %d rounds, load average now %s" % (args.jobs, args.rounds, ", ".join("%.2f" % v for v in os.getloadavg())))
    for docset, record in sorted(stages.items()):
        kilobytes = sizes[docset] / 1024.0
        print("\n%s documents: module output %.0f KB (%.0f KB without details)" % (docset, kilobytes, sizes[docset + "_nodetails"] / 1024.0))
        print("| stage | seconds | ms per job | ms per KB of output |")
        print("|---|---|---|---|")
        for name, values in record.items():
            summary = summarize(values)
            size = sizes[docset + ("_nodetails" if name.endswith("_nodetails") else "")] / 1024.0
            print("| %s | %s | %.2f | %.3f |" % (name, fmt_spread(summary), 1000 * summary["median"] / args.jobs, 1000 * summary["median"] / size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
