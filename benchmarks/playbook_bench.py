# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Playbook-level comparisons, timed per task inside real ``ansible-playbook`` runs.

One round is one ``ansible-playbook`` run (``-c local`` against ``localhost``) over a staged copy of
the checkout. Its first tasks get an IAM token the way a hand-rolled ``uri`` user does (``POST
/v3/auth/tokens``, token from ``X-Subject-Token``) and warm every code path once (unmeasured); the
measured tasks follow in an order shuffled per round. The ``task_timer`` callback
(benchmarks/callback_plugins) records each task's wall time in the controller.

Measured task kinds:

* ``module_token`` / ``module_aksk``: ``modelarts_training_job_info`` with ``training_job_id`` (n=1)
  or ``training_job_ids`` (n>1), authenticated with the same IAM token as ``uri`` (``auth_token``)
  or with AK/SK signing; ``ca_bundle`` for TLS; strict validation (the default).
* ``uri``: ``ansible.builtin.uri`` GETs of the same URLs with ``X-Auth-Token`` and ``ca_path``,
  one task for n=1 and a ``loop`` over the ids for n>1 (uri parses the JSON body, too).
* ``lookup``: ``set_fact`` of ``query('modelarts.training.training_job', ...)`` with 1 or 50 terms
  (AK/SK), so the time includes templating and the lookup's own client set-up; ``lookup_phase`` is
  the same with ``field='phase'``, which returns one string per term instead of whole items.
* ``module_token_paths`` / ``lookup_paths``: the module (``auth_token``) and the lookup with the real
  ``details_paths`` option set to ``PATHS`` (three dotted paths), so each item's ``details`` keeps only those.
* ``module_token_nodetails`` / ``lookup_nodetails`` (what-if): copies of the module and the lookup
  that drop each item's ``details`` (``common.add_what_if_plugins``).
* ``module_floor`` / ``lookup_floor`` (what-if): Ansible's floor for carrying the same items, a plain
  module and a plain lookup returning the collection's items read from a file written once per run
  (``common.capture_items``), with no HTTP and no collection code (``common.add_floor_plugins``).

The what-if and ``details_paths`` kinds run only in the blocks they are compared in: the fan-out
block of the largest module size and the lookup blocks. The ``floor`` group (issue 24) puts the
module (both credential kinds) next to ``module_floor`` returning the very same result, in blocks
of 1 job and of 200 jobs.
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import time

import yaml

from common import (
    CALLBACK_DIR,
    DOCSETS,
    FLOOR_LOOKUP,
    FLOOR_MODULE,
    HTTP_FLOOR_MODULE,
    REQUESTS_FLOOR_MODULE,
    WHAT_IF_LOOKUP,
    WHAT_IF_MODULE,
    capture_items,
    emulator_extra_vars,
    ratio_summary,
    summarize,
)

KINDS = (
    "module_token",
    "module_aksk",
    "module_token_remote",
    "module_aksk_remote",
    "uri",
    "lookup",
    "lookup_phase",
    "module_token_nodetails",
    "lookup_nodetails",
    "module_token_paths",
    "lookup_paths",
    "module_floor",
    "lookup_floor",
    "requests_floor",
    "requests_floor_both",
)
# The one-GET comparison: the module with both credential kinds, uri, and the two requests floors.
SINGLE_KINDS = ("module_token", "module_aksk", "module_token_remote", "module_aksk_remote", "uri", "requests_floor", "requests_floor_both")
# The module kinds compared with the uri loop and the module at the largest fan-out size only.
TOP_KINDS = ("module_aksk", "module_token_remote", "module_aksk_remote", "module_token_nodetails", "module_token_paths", "module_floor")
LOOKUP_KINDS = ("lookup", "lookup_phase", "lookup_nodetails", "lookup_paths", "lookup_floor")
# The single task against Ansible's floor (issue 24): the module with both credential kinds and the
# floor module returning the very same result (``single`` for one job), in blocks of each size; and
# the requests floor (the same GETs with the token, the documents returned as they are), which
# bounds what any module using ``requests`` could reach; and the http.client floor, the same on the standard
# library alone, which bounds what any module doing the GETs in Python could reach.
FLOOR_KINDS = ("module_token", "module_aksk", "module_token_remote", "module_aksk_remote", "module_floor", "requests_floor_both", "http_floor_both")
FLOOR_SIZES = (1, 200)
# The details_paths of the module_token_paths and lookup_paths kinds.
PATHS = ["metadata.name", "status.phase", "status.duration"]


def connection_vars(kind):
    """Module options (as Jinja over play vars) for one credential kind."""
    options = {
        "region": "{{ region }}",
        "project_id": "{{ project_id }}",
        "endpoint": "{{ emu_url }}",
        "iam_endpoint": "{{ emu_url }}",
        "ca_bundle": "{{ ca_file }}",
    }
    if kind == "token":
        options["auth_token"] = "{{ token }}"
    else:
        options.update(access_key="{{ ak }}", secret_key="{{ sk }}")
    return options


def task_for(kind, size, name, ids_var="bulk_ids"):
    """One task of ``kind`` over the first ``size`` job ids of the play variable ``ids_var``."""
    ids = ("{{ %s[0] }}" % ids_var) if size == 1 else "{{ %s[:%d] }}" % (ids_var, size)
    if kind in ("module_token", "module_aksk", "module_token_remote", "module_aksk_remote", "module_token_nodetails", "module_token_paths"):
        options = connection_vars("aksk" if kind.startswith("module_aksk") else "token")
        options["training_job_id" if size == 1 else "training_job_ids"] = ids
        if kind == "module_token_paths":
            options["details_paths"] = list(PATHS)
        module = WHAT_IF_MODULE if kind == "module_token_nodetails" else "modelarts_training_job_info"
        task = {"name": name, "modelarts.training." + module: options}
        if kind.endswith("_remote"):
            # The module path of the action plugin: AnsiballZ builds, ships and starts the module, as on a remote host.
            task["vars"] = {"modelarts_training_in_process": False}
        return task
    if kind in ("requests_floor", "requests_floor_both", "http_floor_both"):
        options = {"token": "{{ token }}", "ca_path": "{{ ca_file }}", "both_keys": kind != "requests_floor"}
        if size == 1:
            options["url"] = "{{ base }}/%s" % ids
        else:
            options.update(base_url="{{ base }}", ids=ids)
        module = HTTP_FLOOR_MODULE if kind == "http_floor_both" else REQUESTS_FLOOR_MODULE
        return {"name": name, "modelarts.training." + module: options}
    if kind == "module_floor":
        options = {"items_file": "{{ floor_items_file }}", "count": size, "single": size == 1}
        return {"name": name, "modelarts.training." + FLOOR_MODULE: options}
    if kind == "uri":
        task = {
            "name": name,
            "ansible.builtin.uri": {
                "url": "{{ base }}/%s" % (ids if size == 1 else "{{ item }}"),
                "headers": {"X-Auth-Token": "{{ token }}"},
                "ca_path": "{{ ca_file }}",
            },
        }
        if size > 1:
            task["loop"] = ids
        return task
    if kind == "lookup_floor":
        terms = ("%s[0]" % ids_var) if size == 1 else "%s[:%d]" % (ids_var, size)
        expression = "{{ query('modelarts.training.%s', %s, items_file=floor_items_file) }}" % (FLOOR_LOOKUP, terms)
        return {"name": name, "ansible.builtin.set_fact": {"bench_lookup_result": expression}}
    if kind in ("lookup", "lookup_phase", "lookup_nodetails", "lookup_paths"):
        terms = ("%s[0]" % ids_var) if size == 1 else "%s[:%d]" % (ids_var, size)
        field = ", field='phase'" if kind == "lookup_phase" else ""
        if kind == "lookup_paths":
            field = ", details_paths=%r" % (PATHS,)
        plugin = WHAT_IF_LOOKUP if kind == "lookup_nodetails" else "training_job"
        expression = (
            "{{ query('modelarts.training.%s', %s, region=region, project_id=project_id, endpoint=emu_url, "
            "iam_endpoint=emu_url, ca_bundle=ca_file, access_key=ak, secret_key=sk%s) }}" % (plugin, terms, field)
        )
        return {"name": name, "ansible.builtin.set_fact": {"bench_lookup_result": expression}}
    raise ValueError(kind)


def setup_tasks(ids_var="bulk_ids"):
    """Unmeasured tasks: the IAM token for uri and module_token, then one warm-up of every code path."""
    token_body = {
        "auth": {
            "identity": {
                "methods": ["password"],
                "password": {"user": {"name": "{{ username }}", "password": "{{ password }}", "domain": {"name": "{{ domain_name }}"}}},
            },
            "scope": {"project": {"id": "{{ project_id }}"}},
        }
    }
    tasks = [
        {
            "name": "setup|token",
            "ansible.builtin.uri": {
                "url": "{{ emu_url }}/v3/auth/tokens",
                "method": "POST",
                "body_format": "json",
                "body": token_body,
                "ca_path": "{{ ca_file }}",
                "status_code": [200, 201],
            },
            "register": "token_response",
            "no_log": True,
        },
        {"name": "setup|token fact", "ansible.builtin.set_fact": {"token": "{{ token_response.x_subject_token }}"}, "no_log": True},
    ]
    for kind in KINDS:
        tasks.append(task_for(kind, 1, "setup|warm %s" % kind, ids_var))
    return tasks


def localhost_play(name, tasks):
    """A play of ``tasks`` on localhost, with the ``base`` URL of the training jobs the tasks read."""
    return {
        "name": name,
        "hosts": "localhost",
        "gather_facts": False,
        "vars": {"base": "{{ emu_url }}/v2/{{ project_id }}/training-jobs"},
        "tasks": tasks,
    }


def build_playbook(measured, ids_var="bulk_ids"):
    """The setup tasks, then the ``(kind, size, name)`` measured tasks over the ids in ``ids_var``."""
    return setup_tasks(ids_var) + [task_for(kind, size, name, ids_var) for kind, size, name in measured]


def timed_run(tasks, collections_base, workdir, extra_file, name="benchmark", env=None, timeout=None):
    """One ``ansible-playbook`` run (``-c local`` against ``localhost``, this Python) of a play of ``tasks`` with the
    collection staged under ``collections_base`` and the extra vars of ``extra_file``: ``(wall seconds, the
    ``task_timer`` records)``, the wall time taken from outside, start to end.  ``env`` adds to ``ansible_env``'s
    variables.  A failed run raises with the tail of its output."""
    playbook = os.path.join(workdir, "%s.yml" % name)
    with open(playbook, "w", encoding="utf-8") as handle:
        handle.write(yaml.safe_dump([localhost_play(name, tasks)], sort_keys=False, width=1000))
    timer_file = os.path.join(workdir, "%s.jsonl" % name)
    if os.path.exists(timer_file):
        os.unlink(timer_file)
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", playbook, "-e", "@" + extra_file]
    environ = dict(ansible_env(collections_base, os.path.join(workdir, "ansible-home"), timer_file), **(env or {}))
    started = time.perf_counter()
    process = subprocess.run(command, env=environ, cwd=workdir, capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError("ansible-playbook failed (rc %d):\n%s\n%s" % (process.returncode, process.stdout[-4000:], process.stderr[-4000:]))
    with open(timer_file, encoding="utf-8") as handle:
        return wall, [json.loads(line) for line in handle]


def ansible_env(collections_base, home, timer_file):
    """Environment for ansible-playbook: only the staged collection, the venv first, our callback on."""
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith(("HUAWEICLOUD_", "ANSIBLE_")))
    env.update(
        {
            "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
            "ANSIBLE_COLLECTIONS_PATH": collections_base,
            "ANSIBLE_HOME": home,
            "ANSIBLE_LOCAL_TEMP": os.path.join(home, "tmp"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
            "ANSIBLE_CALLBACK_PLUGINS": CALLBACK_DIR,
            "ANSIBLE_CALLBACKS_ENABLED": "task_timer",
            "TASK_TIMER_OUTPUT": timer_file,
        }
    )
    return env


def plan(groups, single_reps, module_sizes, uri_sizes, lookup_reps, floor_reps=0):
    """The measured tasks of one round as blocks: a list of lists of ``(kind, size, name)``.

    A block holds the tasks that are compared with each other (one module task and one uri task
    doing the same GET; the module and the uri loop over the same n jobs; the lookup with 1 and
    with 50 terms; the module and the floor module returning the same result). Blocks are shuffled
    per round and so are the tasks within a block, but a block's
    tasks run next to each other, so each ratio compares tasks that met the same machine load.
    Task names are ``group|kind|size|block``.
    """
    blocks = []
    if "single" in groups:
        for rep in range(single_reps):
            blocks.append([(kind, 1, "single|%s|1|%d" % (kind, rep)) for kind in SINGLE_KINDS])
    if "fanout" in groups:
        top = max(module_sizes)
        for size in sorted(set(module_sizes) | set(uri_sizes)):
            block = []
            if size in module_sizes:
                block.append(("module_token", size, "fanout|module_token|%d|0" % size))
            if size == top:
                block.extend((kind, size, "fanout|%s|%d|0" % (kind, size)) for kind in TOP_KINDS)
            if size in uri_sizes:
                block.append(("uri", size, "fanout|uri|%d|0" % size))
            blocks.append(block)
    if "floor" in groups:
        for rep in range(floor_reps):
            for size in FLOOR_SIZES:
                blocks.append([(kind, size, "floor|%s|%d|%d" % (kind, size, rep)) for kind in FLOOR_KINDS])
    if "lookup" in groups:
        for rep in range(lookup_reps):
            blocks.append([(kind, size, "lookup|%s|%d|%d" % (kind, size, rep)) for kind in LOOKUP_KINDS for size in (1, 50)])
    return blocks


def items_file(workdir, docset):
    """Where ``run`` writes the floor plugins' items of ``docset`` (``common.capture_items``)."""
    return os.path.join(workdir, "floor-items-%s.txt" % docset)


def run_round(emu, collections_base, workdir, measured, round_index, timeout=1800, docset="bulk"):
    """One ansible-playbook run over ``docset``'s jobs; return ``{task name: seconds}`` of the measured tasks and the process wall time.

    The floor kinds read ``items_file(workdir, docset)``, which ``run`` writes before the rounds.
    """
    extra = dict(emulator_extra_vars(emu), floor_items_file=items_file(workdir, docset))
    extra_file = os.path.join(workdir, "extra_vars.json")
    with open(extra_file, "w", encoding="utf-8") as handle:
        json.dump(extra, handle)
    name = "round%d-%s" % (round_index, docset)
    wall, records = timed_run(build_playbook(measured, "%s_ids" % docset), collections_base, workdir, extra_file, name=name, timeout=timeout)
    times = {}
    for record in records:
        if record["status"] != "ok":
            raise RuntimeError("task %s ended %s" % (record["task"], record["status"]))
        times[record["task"]] = record["seconds"]
    missing = [name for _kind, _size, name in measured if name not in times]
    if missing:
        raise RuntimeError("no timing for tasks %s" % ", ".join(missing))
    return times, wall


def run(emu, collections_base, groups, rounds, single_reps, module_sizes, uri_sizes, lookup_reps, seed=5, log=print, docsets=("bulk",), floor_reps=0):
    """Run ``rounds`` playbook rounds per document set; return ``{docset: samples, summaries and paired ratios}``.

    In each round every document set gets one ``ansible-playbook`` run, in a shuffled order, so the
    document sizes are measured side by side under the same machine load.
    """
    blocks = plan(groups, single_reps, module_sizes, uri_sizes, lookup_reps, floor_reps)
    rng = random.Random(seed)
    samples = dict((docset, {}) for docset in docsets)  # docset -> 'group|kind|size' -> list of [round, block, seconds]
    walls = dict((docset, []) for docset in docsets)
    loads = dict((docset, []) for docset in docsets)
    floor_bytes = {}
    with tempfile.TemporaryDirectory(prefix="modelarts-bench-") as workdir:
        for docset in docsets:
            floor_bytes[docset] = capture_items(emu, collections_base, DOCSETS[docset], items_file(workdir, docset))
            log("  floor items of %s documents: %d jobs, %.2f MB of JSON" % (docset, len(DOCSETS[docset]), floor_bytes[docset] / 1e6))
        for round_index in range(rounds):
            sets = list(docsets)
            rng.shuffle(sets)
            for docset in sets:
                order = [list(block) for block in blocks]
                rng.shuffle(order)
                for block in order:
                    rng.shuffle(block)
                measured = [task for block in order for task in block]
                times, wall = run_round(emu, collections_base, workdir, measured, round_index, docset=docset)
                walls[docset].append(wall)
                loads[docset].append(os.getloadavg())
                for _kind, _size, name in measured:
                    group, kind, size, block = name.split("|")
                    samples[docset].setdefault("%s|%s|%s" % (group, kind, size), []).append([round_index, int(block), times[name]])
                log("  playbook round %d/%d, %s documents: %.1fs wall, load %.1f" % (round_index + 1, rounds, docset, wall, loads[docset][-1][0]))
    results = {}
    for docset in docsets:
        results[docset] = analyse(samples[docset], walls[docset], rounds)
        results[docset]["round_loadavg"] = loads[docset]
        results[docset]["docset"] = docset
        results[docset]["floor_items_bytes"] = floor_bytes[docset]
    return results


def paired(samples, numerator, denominator):
    """Ratios of the two series' samples taken in the same round and block."""
    top = dict(((r, b), value) for r, b, value in samples.get(numerator, []))
    bottom = dict(((r, b), value) for r, b, value in samples.get(denominator, []))
    keys = sorted(set(top) & set(bottom))
    return [top[key] for key in keys], [bottom[key] for key in keys]


def analyse(samples, walls, rounds):
    """Summaries per series and the paired ratios the goals are stated in."""
    series = {}
    for key, values in samples.items():
        per_round = [[value for r, _b, value in values if r == index] for index in range(rounds)]
        series[key] = {
            "samples": values,
            "summary": summarize([value for _r, _b, value in values]),
            "round_medians": [summarize(group)["median"] if group else None for group in per_round],
        }
    ratios = {}

    def add(name, numerator, denominator):
        if numerator in samples and denominator in samples:
            ratios[name] = ratio_summary(*paired(samples, numerator, denominator))

    add("single_module_token_vs_uri", "single|module_token|1", "single|uri|1")
    add("single_module_aksk_vs_uri", "single|module_aksk|1", "single|uri|1")
    add("single_module_token_remote_vs_uri", "single|module_token_remote|1", "single|uri|1")
    add("single_module_aksk_remote_vs_uri", "single|module_aksk_remote|1", "single|uri|1")
    add("single_module_token_vs_module_token_remote", "single|module_token|1", "single|module_token_remote|1")
    add("single_requests_floor_vs_uri", "single|requests_floor|1", "single|uri|1")
    add("single_requests_floor_both_vs_uri", "single|requests_floor_both|1", "single|uri|1")
    add("single_module_token_vs_requests_floor_both", "single|module_token|1", "single|requests_floor_both|1")
    for size in FLOOR_SIZES:
        for kind in ("module_token", "module_aksk", "module_token_remote", "module_aksk_remote", "requests_floor_both", "http_floor_both"):
            add("floor_%s_vs_module_floor_%d" % (kind, size), "floor|%s|%d" % (kind, size), "floor|module_floor|%d" % size)
        add("floor_module_token_vs_requests_floor_both_%d" % size, "floor|module_token|%d" % size, "floor|requests_floor_both|%d" % size)
    fan_sizes = sorted(int(key.split("|")[2]) for key in series if key.startswith("fanout|module_token|"))
    uri_sizes = sorted(int(key.split("|")[2]) for key in series if key.startswith("fanout|uri|"))
    for size in fan_sizes:
        add("fanout_uri_vs_module_token_%d" % size, "fanout|uri|%d" % size, "fanout|module_token|%d" % size)
    if fan_sizes:
        top = max(fan_sizes)
        for kind in TOP_KINDS:
            add("fanout_uri_vs_%s_%d" % (kind, top), "fanout|uri|%d" % top, "fanout|%s|%d" % (kind, top))
            if kind not in ("module_aksk", "module_token_remote", "module_aksk_remote"):
                add("fanout_%s_vs_module_token_%d" % (kind, top), "fanout|%s|%d" % (kind, top), "fanout|module_token|%d" % top)
    for kind in LOOKUP_KINDS:
        add("%s_50_vs_1" % kind, "lookup|%s|50" % kind, "lookup|%s|1" % kind)
        if kind != "lookup":
            add("%s_50_vs_lookup_50" % kind, "lookup|%s|50" % kind, "lookup|lookup|50")
    floor_bound = _floor_bound(samples)
    if floor_bound:
        ratios["lookup_floor_bound_50_vs_1"] = floor_bound
    extrapolated = _extrapolate_uri(series, fan_sizes, uri_sizes)
    if extrapolated:
        ratios.update(extrapolated.pop("ratios"))
    return {"series": series, "ratios": ratios, "uri_fit": extrapolated, "round_wall_seconds": walls}


def _floor_bound(samples):
    """The best 50 / 1 ratio the lookup could reach with its own 1-term time: ``(lookup_1 + floor_50 - floor_1) / lookup_1``, per block.

    The floor's 1-term task has none of the lookup's fixed costs (imports, client set-up, one GET),
    so its own 50 / 1 ratio is no bound for the lookup; what the floor does bound is the cost of the
    49 more items, which a lookup pays on top of its 1-term time.
    """
    series = [dict(((r, b), value) for r, b, value in samples.get(key, [])) for key in ("lookup|lookup|1", "lookup|lookup_floor|50", "lookup|lookup_floor|1")]
    keys = sorted(set(series[0]) & set(series[1]) & set(series[2]))
    return summarize([(series[0][key] + series[1][key] - series[2][key]) / series[0][key] for key in keys if series[0][key]])


def _extrapolate_uri(series, fan_sizes, uri_sizes):
    """A least-squares line ``seconds = a + b * n`` through the uri loop's per-round medians.

    Used only for module sizes the uri loop was not run at (``--quick``); such ratios are named
    ``..._extrapolated`` and marked in the report. At the largest size the other module kinds
    (``TOP_KINDS``) get extrapolated ratios, too.
    """
    if len(uri_sizes) < 2:
        return None
    fit = {}
    for round_index in range(len(series["fanout|uri|%d" % uri_sizes[0]]["round_medians"])):
        xs = uri_sizes
        ys = [series["fanout|uri|%d" % size]["round_medians"][round_index] for size in xs]
        mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)
        fit.setdefault("per_round", []).append({"intercept": mean_y - slope * mean_x, "slope": slope})
    fit["slope"] = summarize([line["slope"] for line in fit["per_round"]])
    fit["intercept"] = summarize([line["intercept"] for line in fit["per_round"]])
    fit["ratios"] = {}
    for size in fan_sizes:
        if size in uri_sizes:
            continue
        predicted = [line["intercept"] + line["slope"] * size for line in fit["per_round"]]
        for kind in ("module_token",) + (TOP_KINDS if size == max(fan_sizes) else ()):
            key = "fanout|%s|%d" % (kind, size)
            if key in series:
                fit["ratios"]["fanout_uri_vs_%s_%d_extrapolated" % (kind, size)] = ratio_summary(predicted, series[key]["round_medians"])
    return fit
