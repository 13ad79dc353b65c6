#!/usr/bin/env python
# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the benchmarks behind docs/performance.md against a private emulator, side by side, in one run.

    .venv/bin/python benchmarks/run.py              # full run, about 7 minutes on 2 idle cores (more when they are busy)
    .venv/bin/python benchmarks/run.py --quick      # about 1.5 minutes; the 200-job uri loop is extrapolated
    .venv/bin/python benchmarks/run.py --only client --only lookup

Groups (``--only``, repeatable; default all):

* ``single``: one module task vs one ``ansible.builtin.uri`` task doing the same GET (issue 4);
* ``fanout``: N jobs in one module task vs a ``uri`` loop over them, N up to 200, and the plot (issue 4);
* ``lookup``: 50 terms vs 1 term in one lookup, in a playbook and in process (issue 5);
* ``client``: queries per second of the collection's client vs a raw ``requests`` loop and the official SDK (issue 4);
* ``floor``: one module task for 1 job and for 200 jobs (``auth_token`` and AK/SK) next to the floor module
  returning the very same result from a file, with no HTTP (issue 24):
  ``run.py --only floor --docs full --rounds 5``.

Next to the module at the largest fan-out size and to the lookup, in the same blocks (issue 14): the
real ``details_paths`` option (three paths), the what-if copies without ``details``, and the floor,
a plain module and lookup returning the same items from a file with no HTTP (playbook_bench.py).

Starts its own HTTPS emulator on 127.0.0.1 and stops it. Writes ``benchmarks/results/<stamp>-<mode>.json``
(every sample) and ``.md`` (the tables of docs/performance.md), and the fan-out PNG (full runs:
docs/images/fanout.png; quick runs: benchmarks/results/fanout-quick.png).
"""

import argparse
import datetime
import json
import os
import sys
import tempfile
import time

from common import (
    DOCSETS,
    LoadSampler,
    RESULTS_DIR,
    ROOT,
    V2_IDS,
    add_full_jobs,
    fmt_spread,
    import_staged,
    machine_facts,
    simulated_latency,
    stage_collection,
    start_emulator,
    write_results,
)

import client_bench
import lookup_bench
import playbook_bench
import plot

GROUPS = ("single", "fanout", "lookup", "client", "floor")
FULL = {
    "rounds": 3,
    "single_reps": 5,
    "module_sizes": [1, 10, 50, 200],
    "uri_sizes": [1, 10, 200],
    "lookup_reps": 5,
    "floor_reps": 4,
    "client_rounds": 30,
    "client_block": 50,
    "direct_rounds": 3,
    "direct_reps": 5,
}
QUICK = {
    "rounds": 2,
    "single_reps": 3,
    "module_sizes": [1, 10, 50, 200],
    "uri_sizes": [1, 10, 25],
    "lookup_reps": 3,
    "floor_reps": 2,
    "client_rounds": 10,
    "client_block": 40,
    "direct_rounds": 2,
    "direct_reps": 3,
}
DOCSET_LABELS = {
    "bulk": "Bulk documents (`bulk-*`, about 6.2 KB each)",
    "full": "Full-size documents (`full-*`, about 12.6 KB each; ids 50, 100, 150, 200 about 47 KB)",
}
GOALS = {
    # Issue 51: one task at most 0.6x one uri task and 0.6x the floor; 200 jobs at least 45x a uri loop and at most 0.9x the floor.
    "single_module_token_vs_uri": ("<=", 0.6, "one module task (auth_token, in process) at most 0.6x one uri task (time ratio module/uri)"),
    "single_module_aksk_vs_uri": ("<=", 0.6, "one module task (AK/SK, in process) at most 0.6x one uri task (time ratio module/uri)"),
    "fanout_200": (">=", 45.0, "200 jobs: module task (in process) at least 45x faster than a uri loop (time ratio uri/module)"),
    "collection_token_vs_floor_token": (">=", 0.8, "client (auth_token) at least 0.8x the raw requests floor with X-Auth-Token (queries/s ratio)"),
    "collection_aksk_vs_floor_signed": (">=", 0.8, "client (AK/SK) at least 0.8x the raw requests floor signing each request (queries/s ratio)"),
    "collection_aksk_vs_sdk_aksk": (">", 1.0, "client ahead of the official SDK (queries/s ratio)"),
    "lookup_50_vs_1": ("<=", 2.0, "50 terms in one lookup cost at most 2x one term (task time ratio, loopback)"),
    "lookup_50_vs_1_latency": ("<=", 2.0, "the same with 50 ms simulated service latency"),
    "lookup_phase_50_vs_1": ("<=", 2.0, "the same on loopback with field='phase'"),
    "floor_module_token_vs_module_floor_1": ("<=", 0.6, "one job: module task (auth_token, in process) at most 0.6x the floor module returning its result"),
    "floor_module_aksk_vs_module_floor_1": ("<=", 0.6, "one job: module task (AK/SK, in process) at most 0.6x the floor module returning its result"),
    "floor_module_token_vs_module_floor_200": ("<=", 0.9, "200 jobs: module task (auth_token, in process) at most 0.9x the floor module returning its result"),
    "floor_module_aksk_vs_module_floor_200": ("<=", 0.9, "200 jobs: module task (AK/SK, in process) at most 0.9x the floor module returning its result"),
}


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and a shorter uri loop (extrapolated to 200)")
    parser.add_argument("--only", action="append", choices=GROUPS, help="run only this group (repeatable)")
    parser.add_argument("--rounds", type=int, help="ansible-playbook rounds (default 3, quick 2)")
    parser.add_argument("--client-rounds", type=int, help="client throughput rounds (default 30, quick 10)")
    parser.add_argument(
        "--docs",
        action="append",
        choices=sorted(DOCSETS),
        help="document sets for the playbook and lookup groups (repeatable; default both: bulk ~6.2 KB, full ~12.6 KB)",
    )
    parser.add_argument("--module-sizes", help="comma-separated job counts of the fan-out module tasks (default 1,10,50,200)")
    parser.add_argument("--uri-sizes", help="comma-separated job counts of the fan-out uri loops (default 1,10,200; quick 1,10,25)")
    parser.add_argument("--plot", help="where to write the fan-out PNG")
    parser.add_argument("--results-dir", default=RESULTS_DIR, help="where to write the JSON and Markdown results")
    parser.add_argument("--report", metavar="JSON", help="only print the tables of a results file (and redraw its plot with --plot)")
    args = parser.parse_args(argv)
    for name in ("rounds", "client_rounds"):
        value = getattr(args, name)
        if value is not None and not 1 <= value <= 50:
            parser.error("--%s must be between 1 and 50" % name.replace("_", "-"))
    return args


def _suffix(docset):
    """The results key suffix of a document set: none for ``bulk`` (the keys of earlier runs), ``_full``."""
    return "" if docset == "bulk" else "_" + docset


def verdict(ratio, goal):
    """``met`` / ``not met`` from the median, with a note when the spread crosses the goal."""
    if not ratio:
        return "n/a"
    operator, target, _text = goal

    def ok(value):
        return {"<=": value <= target, ">=": value >= target, ">": value > target}[operator]

    text = "met" if ok(ratio["median"]) else "not met"
    if ok(ratio["min"]) != ok(ratio["max"]):
        text += " (spread crosses the goal)"
    return text


def ratio_cell(ratio):
    """``1.23x (1.10-1.40)``."""
    return fmt_spread(ratio, unit="x", digits=2)


LOOKUP_ROWS = (
    ("lookup", "whole items"),
    ("lookup_phase", "`field='phase'`"),
    ("lookup_paths", "`details_paths` (%d paths)" % len(playbook_bench.PATHS)),
    ("lookup_nodetails", "items without `details` (what-if)"),
    ("lookup_floor", "floor: the same whole items from a file, no HTTP (what-if)"),
)


def lookup_table(title, playbooks):
    """Markdown lines: the lookup's task times for 1 and 50 terms, per kind of result, and each kind's 50-term task against whole items."""
    series, ratios = playbooks["series"], playbooks["ratios"]
    lines = [title, "", "| returns | 1 term | 50 terms | 50 / 1 (paired) | 50 terms / whole items' 50 terms (paired) |", "|---|---|---|---|---|"]
    for kind, label in LOOKUP_ROWS:
        one, fifty = series.get("lookup|%s|1" % kind), series.get("lookup|%s|50" % kind)
        if one and fifty:
            ratio = ratio_cell(ratios.get("%s_50_vs_1" % kind))
            against = "reference" if kind == "lookup" else ratio_cell(ratios.get("%s_50_vs_lookup_50" % kind))
            lines.append("| %s | %s | %s | %s | %s |" % (label, fmt_spread(one["summary"]), fmt_spread(fifty["summary"]), ratio, against))
    if "lookup|lookup_paths|1" in series:
        lines += ["", "`details_paths`: `%s`." % ", ".join(playbook_bench.PATHS)]
    if ratios.get("lookup_floor_bound_50_vs_1"):
        lines += [
            "",
            "The floor's own 50 / 1 has none of the lookup's fixed cost in its 1-term task. The best 50 / 1 the lookup could reach with "
            "its 1-term time, whole items, if the 49 more items cost only what they cost the floor (1 term + floor 50 - floor 1) / 1 term, "
            "paired: %s." % ratio_cell(ratios["lookup_floor_bound_50_vs_1"]),
        ]
    return lines + [""]


def floor_table(playbooks):
    """Markdown lines: the module against the floor module returning the same result, per size (issue 24)."""
    series, ratios = playbooks["series"], playbooks["ratios"]
    lines = [
        "**The module against Ansible's floor** (a plain module returning the same result from a file, no HTTP; seconds per task)",
        "",
        "| jobs | module, `auth_token` | module, AK/SK | module path, `auth_token` | module path, AK/SK | floor | requests floor | http.client floor "
        "| `auth_token` / floor | AK/SK / floor | module path `auth_token` / floor | module path AK/SK / floor "
        "| requests floor / floor | http.client floor / floor | `auth_token` / requests floor |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in playbook_bench.FLOOR_SIZES:
        cells = [fmt_spread((series.get("floor|%s|%d" % (kind, size)) or {}).get("summary")) for kind in playbook_bench.FLOOR_KINDS]
        versus_floor = ("module_token", "module_aksk", "module_token_remote", "module_aksk_remote", "requests_floor_both", "http_floor_both")
        cells += [ratio_cell(ratios.get("floor_%s_vs_module_floor_%d" % (kind, size))) for kind in versus_floor]
        cells.append(ratio_cell(ratios.get("floor_module_token_vs_requests_floor_both_%d" % size)))
        lines.append("| %d | %s |" % (size, " | ".join(cells)))
    return lines + [
        "",
        "Ratios are paired (tasks run next to each other), median (min-max). Module: the task run in the controller's worker by "
        "the action plugin (the default on a local connection); module path: the same task with `modelarts_training_in_process: false`, "
        "the module built, shipped and started by AnsiballZ as on a remote host. Floor: a plain module returning the module's very result "
        "from a file, no HTTP. Requests floor: a plain module doing the same GETs with `requests` and the token (16 at a time over one "
        "session for 200 jobs) and returning the documents as they are: no option resolution, signing, validation, normalisation or masking. "
        "http.client floor: the same on the standard library alone (`http.client` and `ssl`, one kept-alive connection per thread).",
        "",
    ]


FANOUT_TOP_ROWS = (
    ("module_aksk", "module AK/SK"),
    ("module_token_remote", "module path (AnsiballZ), `auth_token`"),
    ("module_aksk_remote", "module path (AnsiballZ), AK/SK"),
    ("module_token_paths", "module, `details_paths` (%d paths)" % len(playbook_bench.PATHS)),
    ("module_token_nodetails", "module without `details` (what-if)"),
    ("module_floor", "floor: the same items from a file, no HTTP (what-if)"),
)


def _top_ratio(ratios, kind, top):
    """The uri / ``kind`` ratio at ``top`` jobs, measured or (marked) extrapolated."""
    ratio = ratios.get("fanout_uri_vs_%s_%d" % (kind, top))
    if ratio is None and ratios.get("fanout_uri_vs_%s_%d_extrapolated" % (kind, top)):
        return ratio_cell(ratios["fanout_uri_vs_%s_%d_extrapolated" % (kind, top)]) + " (uri extrapolated)"
    return ratio_cell(ratio)


def playbook_markdown(lines, playbooks, latency, docset):
    """Append the playbook tables of one document set to ``lines``; return its ``(goal key, ratio, docset)`` list."""
    goals = []
    if playbooks:
        series, ratios = playbooks["series"], playbooks["ratios"]
        if "single|uri|1" in series:
            lines += ["**One GET, one task** (seconds per task; median (min-max) over all samples)", "", "| task | seconds | samples |", "|---|---|---|"]
            for kind, label in (
                ("module_token", "module, `auth_token`"),
                ("module_aksk", "module, AK/SK"),
                ("module_token_remote", "module path (AnsiballZ, `modelarts_training_in_process: false`), `auth_token`"),
                ("module_aksk_remote", "module path (AnsiballZ), AK/SK"),
                ("uri", "`ansible.builtin.uri`, `X-Auth-Token`"),
                ("requests_floor", "floor: a plain module, one `requests` GET, the document as `json` (what-if)"),
                ("requests_floor_both", "floor: the same, the document under `training_job` and `training_jobs` (what-if)"),
            ):
                if "single|%s|1" % kind not in series:
                    continue
                summary = series["single|%s|1" % kind]["summary"]
                lines.append("| %s | %s | %d |" % (label, fmt_spread(summary), summary["n"]))
            lines += [
                "",
                "| ratio (paired: tasks run next to each other; median (min-max)) | value |",
                "|---|---|",
                "| module `auth_token` / uri | %s |" % ratio_cell(ratios.get("single_module_token_vs_uri")),
                "| module AK/SK / uri | %s |" % ratio_cell(ratios.get("single_module_aksk_vs_uri")),
                "| module path `auth_token` / uri | %s |" % ratio_cell(ratios.get("single_module_token_remote_vs_uri")),
                "| module path AK/SK / uri | %s |" % ratio_cell(ratios.get("single_module_aksk_remote_vs_uri")),
                "| module `auth_token` / module path `auth_token` | %s |" % ratio_cell(ratios.get("single_module_token_vs_module_token_remote")),
                "| floor `requests` GET, `json` / uri (the transport library) | %s |" % ratio_cell(ratios.get("single_requests_floor_vs_uri")),
                "| floor `requests` GET, both keys / uri (the library and the interface's two keys) | %s |"
                % ratio_cell(ratios.get("single_requests_floor_both_vs_uri")),
                "| module `auth_token` / floor with both keys (the collection's own code) | %s |"
                % ratio_cell(ratios.get("single_module_token_vs_requests_floor_both")),
                "",
            ]
            goals.append((docset, "single_module_token_vs_uri", ratios.get("single_module_token_vs_uri")))
            goals.append((docset, "single_module_aksk_vs_uri", ratios.get("single_module_aksk_vs_uri")))
        if any(key.startswith("fanout|") for key in series):
            lines += [
                "**Fan-out** (seconds per task; median (min-max) over rounds)",
                "",
                "| jobs | module, one task (`auth_token`) | uri loop | uri / module |",
                "|---|---|---|---|",
            ]
            sizes = sorted(set(int(key.split("|")[2]) for key in series if key.startswith("fanout|")))
            for size in sizes:
                module = series.get("fanout|module_token|%d" % size)
                uri = series.get("fanout|uri|%d" % size)
                ratio = ratios.get("fanout_uri_vs_module_token_%d" % size)
                mark = ""
                if ratio is None:
                    ratio = ratios.get("fanout_uri_vs_module_token_%d_extrapolated" % size)
                    mark = " (uri extrapolated)" if ratio else ""
                cells = (size, fmt_spread(module and module["summary"]), fmt_spread(uri and uri["summary"]), ratio_cell(ratio), mark)
                lines.append("| %d | %s | %s | %s%s |" % cells)
            top = max(sizes)
            against = []
            for kind, label in FANOUT_TOP_ROWS:
                row = series.get("fanout|%s|%d" % (kind, top))
                if row:
                    lines.append("| %d, %s | %s | | %s |" % (top, label, fmt_spread(row["summary"]), _top_ratio(ratios, kind, top)))
                    if kind not in ("module_aksk", "module_token_remote", "module_aksk_remote"):
                        against.append("| %s | %s |" % (label, ratio_cell(ratios.get("fanout_%s_vs_module_token_%d" % (kind, top)))))
            if against:
                lines += ["", "| %d jobs, task time / module `auth_token` (paired) | value |" % top, "|---|---|"] + against
            if series.get("fanout|module_token_paths|%d" % top):
                lines += ["", "`details_paths`: `%s`." % ", ".join(playbook_bench.PATHS)]
            if playbooks.get("floor_items_bytes"):
                lines += [
                    "",
                    "Floor: a plain module returning the collection's items (%.2f MB of JSON for the %d jobs of this set, captured once per run) "
                    "from a file: what ansible-core alone costs to carry them." % (playbooks["floor_items_bytes"] / 1e6, len(DOCSETS[docset])),
                ]
            fit = playbooks.get("uri_fit")
            if fit:
                lines += ["", "uri loop, least-squares line per round: %s s per job, %s s fixed." % (fmt_spread(fit["slope"]), fmt_spread(fit["intercept"]))]
            lines.append("")
            goals.append((docset, "fanout_200", ratios.get("fanout_uri_vs_module_token_200") or ratios.get("fanout_uri_vs_module_token_200_extrapolated")))
        if any(key.startswith("floor|") for key in series):
            lines += floor_table(playbooks)
            goals += [(docset, key, ratios.get(key)) for key in GOALS if key.startswith("floor_") and key in ratios]
        if "lookup|lookup|1" in series:
            lines += lookup_table("**Lookup in a playbook** (`set_fact` of `query(...)`, AK/SK; seconds per task)", playbooks)
            goals.append((docset, "lookup_50_vs_1", ratios.get("lookup_50_vs_1")))
            goals.append((docset, "lookup_phase_50_vs_1", ratios.get("lookup_phase_50_vs_1")))
    if latency:
        lines += lookup_table(
            "**Lookup in a playbook, %.0f ms simulated service latency per job GET** (seconds per task)" % (latency["seconds"] * 1000), latency
        )
        goals.append((docset, "lookup_50_vs_1_latency", latency["ratios"].get("lookup_50_vs_1")))
    return goals


def direct_markdown(lines, direct):
    """Append the in-process lookup table to ``lines``."""
    lines += [
        "**Lookup pipeline in process** (client set-up + `query_jobs` + close, AK/SK; milliseconds)",
        "",
        "| max_concurrency | 1 term | 50 terms | 50 / 1 |",
        "|---|---|---|---|",
    ]
    for concurrency in [c for c in lookup_bench.CONCURRENCIES if "1|%d" % c in direct["series"]]:
        lines.append(
            "| %d%s | %s | %s | %s |"
            % (
                concurrency,
                " (default)" if concurrency == 16 else "",
                fmt_spread(direct["series"]["1|%d" % concurrency]["summary"], scale=1000, digits=1),
                fmt_spread(direct["series"]["50|%d" % concurrency]["summary"], scale=1000, digits=1),
                ratio_cell(direct["ratios"]["direct_50_vs_1_concurrency_%d" % concurrency]),
            )
        )
    slow = direct.get("latency")
    if slow:
        lines.append(
            "| 16, %.0f ms latency | %s | %s | %s |"
            % (
                slow["seconds"] * 1000,
                fmt_spread(slow["series"]["1|16"]["summary"], scale=1000, digits=1),
                fmt_spread(slow["series"]["50|16"]["summary"], scale=1000, digits=1),
                ratio_cell(slow["ratios"]["direct_50_vs_1_concurrency_16"]),
            )
        )
    lines.append("")


def markdown(results):
    """The result tables, as they go into docs/performance.md."""
    lines = []
    facts = results["machine"]
    lines.append(
        "Run %s (%s mode), %s cores (%s), %s, ansible-core %s, load average at start %s."
        % (
            results["started"],
            results["mode"],
            facts["nproc"],
            facts["cpu"],
            facts["python"],
            (facts["packages"] or {}).get("ansible-core"),
            ", ".join("%.2f" % v for v in facts["loadavg_at_start"] or []),
        )
    )
    during = results.get("loadavg_during")
    if during:
        lines[-1] = lines[-1][:-1] + "; load average during the run %.1f (%.1f-%.1f), 1-minute, sampled every %.0f s (%d samples), %.0f s in all." % (
            during["median"],
            during["min"],
            during["max"],
            during["every"],
            during["samples"],
            results.get("seconds") or 0,
        )
    lines.append("")
    goals = []
    for docset in results.get("docsets", ["bulk"]):
        suffix = _suffix(docset)
        if not any(results.get(name + suffix) for name in ("playbooks", "playbooks_latency", "lookup_direct")):
            continue
        lines += ["### %s" % DOCSET_LABELS.get(docset, docset), ""]
        goals += playbook_markdown(lines, results.get("playbooks" + suffix), results.get("playbooks_latency" + suffix), docset)
        direct = results.get("lookup_direct" + suffix)
        if direct:
            direct_markdown(lines, direct)
    client = results.get("client")
    if client:
        lines += ["### Client throughput (bulk documents)", ""]
        lines += [
            "**Client throughput** (%d sequential GETs per contender per round, %d interleaved rounds; queries/s, median (min-max) of rounds)"
            % (client["requests_per_round"], client["rounds"]),
            "",
            "| contender | queries/s |",
            "|---|---|",
        ]
        for name in client_bench.CONTENDERS + ("collection_fanout",):
            lines.append("| `%s` | %s |" % (name, fmt_spread(client["summary"][name], digits=0)))
        lines += ["", "| ratio (per round) | value |", "|---|---|"]
        for name, value in client["ratios"].items():
            lines.append("| %s | %s |" % (name.replace("_vs_", " / "), ratio_cell(value)))
        lines.append("")
        goals.append(("bulk", "collection_token_vs_floor_token", client["ratios"]["collection_token_vs_floor_token"]))
        goals.append(("bulk", "collection_aksk_vs_floor_signed", client["ratios"]["collection_aksk_vs_floor_signed"]))
        goals.append(("bulk", "collection_aksk_vs_sdk_aksk", client["ratios"]["collection_aksk_vs_sdk_aksk"]))
    if goals:
        lines += ["**Goals**", "", "| goal | measured | verdict |", "|---|---|---|"]
        for docset, key, ratio in goals:
            cells = (GOALS[key][2], docset, GOALS[key][0], GOALS[key][1], ratio_cell(ratio), verdict(ratio, GOALS[key]))
            lines.append("| %s, %s documents %s %s | %s | %s |" % cells)
        lines.append("")
    return "\n".join(lines)


def report_only(path, plot_path):
    """Print the tables of a saved results file; redraw its fan-out plot when ``plot_path`` is given."""
    with open(path, encoding="utf-8") as handle:
        results = json.load(handle)
    if plot_path and (results.get("playbooks") or results.get("playbooks_full")):
        plot.fanout_png(
            results.get("playbooks"), plot_path, " (%s run, %s cores)" % (results["mode"], results["machine"]["nproc"]), results.get("playbooks_full")
        )
    print(markdown(results))
    return 0


def main(argv=None):
    """Run the selected groups and write the results."""
    args = parse_args(argv)
    if args.report:
        return report_only(args.report, args.plot)
    groups = args.only or list(GROUPS)
    config = dict(QUICK if args.quick else FULL)
    if args.rounds:
        config["rounds"] = config["direct_rounds"] = args.rounds
    if args.client_rounds:
        config["client_rounds"] = args.client_rounds
    for name in ("module_sizes", "uri_sizes"):
        if getattr(args, name) is not None:
            config[name] = [int(value) for value in getattr(args, name).split(",") if value.strip()]
    mode = "quick" if args.quick else "full"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    results = {"started": stamp, "mode": mode, "groups": groups, "config": config, "machine": machine_facts(sys.executable)}
    began = time.perf_counter()

    def log(text):
        print("[%6.1fs] %s" % (time.perf_counter() - began, text), flush=True)

    sampler = LoadSampler()
    with sampler, tempfile.TemporaryDirectory(prefix="modelarts-bench-collection-") as staged:
        stage_collection(staged)
        import_staged(staged)
        with start_emulator() as emu:
            log("emulator at %s" % emu.url)
            docsets = [name for name in DOCSETS if name in (args.docs or DOCSETS)]
            results["docsets"] = docsets
            if "full" in docsets:
                add_full_jobs(emu)
            playbook_groups = [group for group in groups if group in ("single", "fanout", "lookup", "floor")]
            if playbook_groups:
                log("playbooks: %s, %d rounds per document set (%s)" % (", ".join(playbook_groups), config["rounds"], ", ".join(docsets)))
                by_docset = playbook_bench.run(
                    emu,
                    staged,
                    playbook_groups,
                    config["rounds"],
                    config["single_reps"],
                    config["module_sizes"],
                    config["uri_sizes"],
                    config["lookup_reps"],
                    log=log,
                    docsets=docsets,
                    floor_reps=config["floor_reps"],
                )
                for docset, value in by_docset.items():
                    results["playbooks" + _suffix(docset)] = value
            if "lookup" in groups:
                with simulated_latency(emu, lookup_bench.LATENCY_SECONDS):
                    log("lookup playbooks with %.0f ms simulated latency, %d rounds" % (lookup_bench.LATENCY_SECONDS * 1000, config["rounds"]))
                    by_docset = playbook_bench.run(emu, staged, ["lookup"], config["rounds"], 0, [], [], config["lookup_reps"], log=log, docsets=docsets)
                for docset, value in by_docset.items():
                    value["seconds"] = lookup_bench.LATENCY_SECONDS
                    results["playbooks_latency" + _suffix(docset)] = value
                for docset in docsets:
                    log("lookup pipeline in process, %s documents, %d rounds" % (docset, config["direct_rounds"]))
                    concurrencies = lookup_bench.CONCURRENCIES if docset == "bulk" else (16,)
                    results["lookup_direct" + _suffix(docset)] = lookup_bench.run(
                        emu, config["direct_rounds"], config["direct_reps"], log=log, ids=DOCSETS[docset], concurrencies=concurrencies
                    )
            if "client" in groups:
                log("client throughput, %d rounds of %d requests per contender" % (config["client_rounds"], config["client_block"]))
                results["client"] = client_bench.run(emu, V2_IDS[:200], config["client_rounds"], config["client_block"], log=log)
    results["seconds"] = time.perf_counter() - began
    results["loadavg_at_end"] = os.getloadavg()
    results["loadavg_during"] = sampler.summary()
    os.makedirs(args.results_dir, exist_ok=True)
    base = os.path.join(args.results_dir, "%s-%s" % (stamp, mode))
    if "fanout" in groups:
        target = args.plot or (os.path.join(ROOT, "docs", "images", "fanout.png") if mode == "full" else os.path.join(args.results_dir, "fanout-quick.png"))
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        note = " (%s run, %s cores)" % (mode, results["machine"]["nproc"])
        results["plot"] = target if plot.fanout_png(results.get("playbooks"), target, note, results.get("playbooks_full")) else None
        log("plot: %s" % (results["plot"] or "not written (matplotlib missing)"))
    write_results(base, results, markdown(results))
    log("results: %s.json and .md" % base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
