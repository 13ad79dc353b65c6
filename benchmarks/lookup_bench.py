# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lookup's own cost, in process: 50 terms against 1 term, without Ansible's task overhead.

Each sample does what ``LookupModule.run`` does after reading its options: build a
``ModelArtsClient`` (AK/SK, the emulator's CA), ``query.query_jobs`` over the terms with strict
validation, close the client. So it includes the new session's TLS handshakes (one per concurrent
connection), signing, validation and normalisation. The default ``max_concurrency`` (16) is the
figure that counts; 4 and 1 show how the cost moves with concurrency on this machine.

On loopback a GET costs about a millisecond of CPU, so 50 terms are CPU-bound on a small machine and
concurrency cannot hide much. The ``latency`` cases make the emulator stall every job GET (a
``delay`` fault; see ``common.simulated_latency``) to show the same calls against a service that
answers in tens of milliseconds, where the requests overlap.
"""

import random
import time

from common import door_module, V2_IDS, simulated_latency, summarize, ratio_summary

CONCURRENCIES = (16, 4, 1)
SIZES = (1, 50)
LATENCY_SECONDS = 0.05


def _one(emu, size, concurrency, ids):
    # pylint: disable=import-outside-toplevel
    from ansible_collections.modelarts.training.plugins.module_utils.service.client import ModelArtsClient

    connection_parts = door_module("options").connection_parts
    query_jobs = door_module("query").query_jobs

    params = emu.connection("aksk")
    started = time.perf_counter()
    client = ModelArtsClient(*connection_parts(params), pool_size=concurrency)
    try:
        result = query_jobs(client, ids[:size], validate="strict", max_concurrency=concurrency)
    finally:
        client.close()
    elapsed = time.perf_counter() - started
    if not result.ok or len(result.items) != size:
        raise RuntimeError("lookup pipeline failed: %s" % result.msg)
    return elapsed


def _measure(emu, cases, rounds, reps, rng, label, log, ids):
    for size, concurrency in cases:
        _one(emu, size, concurrency, ids)  # warm-up: imports, jsonschema validators
    per_round = dict(("%d|%d" % case, [[] for _round in range(rounds)]) for case in cases)
    for round_index in range(rounds):
        order = cases * reps
        rng.shuffle(order)
        for size, concurrency in order:
            per_round["%d|%d" % (size, concurrency)][round_index].append(_one(emu, size, concurrency, ids))
        log("  lookup %s round %d/%d done" % (label, round_index + 1, rounds))
    series = {}
    for key, samples in per_round.items():
        series[key] = {
            "summary": summarize([value for values in samples for value in values]),
            "round_medians": [summarize(values)["median"] for values in samples],
        }
    ratios = {}
    for concurrency in sorted(set(concurrency for _size, concurrency in cases), reverse=True):
        ratios["direct_50_vs_1_concurrency_%d" % concurrency] = ratio_summary(
            series["50|%d" % concurrency]["round_medians"], series["1|%d" % concurrency]["round_medians"]
        )
    return {"series": series, "ratios": ratios}


def run(emu, rounds, reps, seed=6, log=print, ids=None, concurrencies=CONCURRENCIES):
    """In each round every (size, concurrency) pair runs ``reps`` times in a shuffled order; then the latency cases."""
    ids = ids or V2_IDS
    rng = random.Random(seed)
    result = _measure(emu, [(size, concurrency) for concurrency in concurrencies for size in SIZES], rounds, reps, rng, "loopback", log, ids)
    with simulated_latency(emu, LATENCY_SECONDS):
        result["latency"] = _measure(emu, [(size, 16) for size in SIZES], rounds, reps, rng, "%d ms latency" % (LATENCY_SECONDS * 1000), log, ids)
    result["latency"]["seconds"] = LATENCY_SECONDS
    return result
