# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scenario files: settings, accounts, jobs (with timelines and per-job faults) and global faults.

The format is documented in docs/emulator.md. In short::

    settings: {token_lifetime: 86400, clock_skew_tolerance: 900, search_counts_as_poll: false}
    accounts: [...]            # optional; replaces the built-in accounts
    jobs:
      - name: resnet50-train
        timeline: [Creating, Pending, {phase: Running, polls: 3}, Completed]
      - name: nightly-{n:03d}  # a template: 250 jobs nightly-001 .. nightly-250
        count: 250
        phase: Completed
    faults:
      - {type: throttle, count: 2, retry_after: 1}
"""

import hashlib
import json
import os
import re
import uuid

from . import activity as activity_mod, documents, logs, produced, tags as tags_mod
from .faults import normalise as normalise_fault
from .lifecycle import Lifecycle, parse_timeline, static_timeline

try:
    import yaml
except ImportError:  # pragma: no cover - PyYAML is the optional [yaml] extra; JSON scenarios work without it
    yaml = None

JOB_KEYS = {
    "id",
    "name",
    "description",
    "kind",
    "project",
    "api",
    "v1",
    "job_id",
    "version_id",
    "version_name",
    "pre_version_id",
    "flavor",
    "node_count",
    "pool_id",
    "engine",
    "image_url",
    "algorithm",
    "custom_metrics",
    "dataset",
    "bucket",
    "code_name",
    "parameters",
    "annotations",
    "phase",
    "secondary_phase",
    "run_seconds",
    "timeline",
    "clock",
    "step",
    "created_at",
    "created_ago",
    "tags",
    "not_found_polls",
    "not_found_status",
    "failure",
    "faults",
    "count",
    "stagger",
    "workspace_id",
    "user_name",
    "search_counts_as_poll",
    "model_metric_list",
    "log",
    "metric_lines",
    "ft_metrics",
    "activity",
}
_NAMESPACE = uuid.UUID("6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f")
# Shipped scenarios live in the package. The ones a bare start needs (demo, empty) are JSON, so the
# emulator starts without PyYAML; only YAML scenarios need it.
SCENARIO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
DEFAULT_SCENARIO = "demo"


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message names the offending job or key."""


def load_file(path):
    """Read a YAML or JSON scenario file and return its data (a dict)."""
    with open(path, "rb") as handle:
        raw = handle.read()
    if path.endswith(".json"):
        data = json.loads(raw)
    else:
        if yaml is None:
            raise ScenarioError('PyYAML is needed to read %s: pip install "modelarts-emulator[yaml]" (or give the scenario as JSON)' % path)
        data = yaml.safe_load(raw)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ScenarioError("%s: a scenario must be a mapping" % path)
    return data


class Job:
    """A training job: what it is (spec) and how it evolves (lifecycle)."""

    # pylint: disable=too-many-instance-attributes
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    @property
    def key(self):
        """The job's unique key: its v2 id, or ``<job_id>/<version_id>`` for a legacy-only v1 job."""
        return self.v2_id if self.v2_id else "%s/%s" % (self.v1_job_id, self.v1_version_id)

    @property
    def has_v1(self):
        """Whether the job can be read through the v1 API."""
        return self.v1_job_id is not None

    def summary(self, now):
        """Return a short description for the control API."""
        data = {"key": self.key, "id": self.v2_id, "name": self.name, "project_id": self.project_id, "workspace_id": self.workspace_id}
        data["tags"] = dict(self.tags)
        data["create_time"] = self.lifecycle.created_ms
        if self.has_v1:
            data["v1"] = {"job_id": self.v1_job_id, "version_id": self.v1_version_id}
        data.update(self.lifecycle.describe(now))
        return data


_DURATION = re.compile(r"^\s*(-?)\s*((?:\d+(?:\.\d+)?\s*[smhd]\s*)+)$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds(value, where):
    """A length of time: a number of seconds, or a string of parts with units s, m, h, d (``30d``, ``-2h30m``)."""
    if isinstance(value, bool):
        raise ScenarioError("%s must be seconds or a duration such as 3d or 2h30m, got %r" % (where, value))
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value)
    try:
        return float(text)
    except ValueError:
        pass
    match = _DURATION.match(text)
    if not match:
        raise ScenarioError("%s must be seconds or a duration such as 3d or 2h30m, got %r" % (where, value))
    total = sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(match.group(2)))
    return -total if match.group(1) else total


def _fmt(value, index):
    """Apply a ``count`` template: ``{i}``/``{n}`` in a string, or in the keys and values of a mapping or list (tags)."""
    if isinstance(value, dict):
        return {_fmt(k, index): _fmt(v, index) for k, v in value.items()}
    if isinstance(value, list):
        return [_fmt(v, index) for v in value]
    if isinstance(value, str) and "{" in value:
        try:
            return value.format(i=index, n=index + 1)
        except (KeyError, IndexError, ValueError):
            raise ScenarioError("bad template %r: use {i} (0-based) or {n} (1-based)" % value) from None
    return value


def _hex(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def expand(specs):
    """Expand ``count:`` templates into one spec per job."""
    result = []
    for spec in specs or []:
        if not isinstance(spec, dict):
            raise ScenarioError("each job must be a mapping, got %r" % (spec,))
        unknown = set(spec) - JOB_KEYS
        if unknown:
            raise ScenarioError("job %r: unknown keys %s" % (spec.get("name"), ", ".join(sorted(unknown))))
        count = int(spec.get("count", 1))
        if count < 1:
            raise ScenarioError("job %r: count must be >= 1" % spec.get("name"))
        if "count" not in spec:
            result.append(dict(spec, _index=0, _templated=False))
            continue
        stagger = seconds(spec.get("stagger", 0.001), "job %r: stagger" % spec.get("name"))
        for index in range(count):
            # Templates in top-level strings and in tags ({run: "{n}"}).
            item = {k: (_fmt(v, index) if k == "tags" or not isinstance(v, (dict, list)) else v) for k, v in spec.items() if k not in ("count", "stagger")}
            for key in ("job_id",):
                if key in item:
                    item[key] = int(item[key]) + index
            if isinstance(item.get("v1"), dict) and "job_id" in item["v1"]:
                item["v1"] = dict(item["v1"], job_id=int(item["v1"]["job_id"]) + index)
            if "created_ago" in item:
                item["created_ago"] = seconds(item["created_ago"], "job %r: created_ago" % spec.get("name")) + index * stagger
            else:
                item["created_at"] = seconds(item.get("created_at", 0), "job %r: created_at" % spec.get("name")) - index * stagger
            item["_index"] = index
            item["_templated"] = True
            result.append(item)
    return result


def build_job(spec, directory, origin, ordinal):
    """Build a Job from one expanded spec. ``origin`` is the emulator time the scenario was loaded."""
    # pylint: disable=too-many-locals,too-many-branches,too-many-statements
    name = spec.get("name")
    if not name:
        raise ScenarioError("every job needs a name")
    name = str(name)
    where = "job %r" % name
    try:
        project_id = directory.resolve_project(spec.get("project"))
    except ValueError as exc:
        raise ScenarioError("%s: %s" % (where, exc)) from None
    account = directory.owner_of_project(project_id)
    project = account.project_by_id(project_id)
    uid = _hex("%s/%s/%s/%s" % (project_id, name, spec.get("_index", 0), ordinal))
    api = spec.get("api", "v2")
    if api not in ("v2", "v1"):
        raise ScenarioError("%s: api must be v2 or v1" % where)

    v2_id = None
    if api == "v2":
        v2_id = str(spec["id"]) if spec.get("id") else str(uuid.uuid5(_NAMESPACE, uid))
    v1 = spec.get("v1")
    v1_job_id = v1_version_id = None
    if api == "v1":
        v1 = {
            "job_id": spec.get("job_id"),
            "version_id": spec.get("version_id"),
            "version_name": spec.get("version_name"),
            "pre_version_id": spec.get("pre_version_id"),
        }
        if v1["job_id"] is None:
            raise ScenarioError("%s: v1 jobs need a numeric job_id" % where)
    if v1:
        if not isinstance(v1, dict) or v1.get("job_id") is None:
            raise ScenarioError("%s: v1 must be a mapping with job_id (and version_id)" % where)
        try:
            v1_job_id = int(v1["job_id"])
            v1_version_id = int(v1.get("version_id") or 1)
        except (TypeError, ValueError):
            raise ScenarioError("%s: v1 job_id and version_id must be integers" % where) from None

    flavor = spec.get("flavor", "gpu")
    if flavor not in documents.FLAVORS:
        raise ScenarioError("%s: flavor must be one of %s" % (where, ", ".join(documents.FLAVORS)))
    engine = spec.get("engine", "pytorch")
    if engine not in documents.ENGINES:
        raise ScenarioError("%s: engine must be one of %s" % (where, ", ".join(documents.ENGINES)))
    custom_metrics = spec.get("custom_metrics", "exec_http")
    if custom_metrics not in documents.CUSTOM_METRICS_SHAPES:
        raise ScenarioError("%s: custom_metrics must be one of %s" % (where, ", ".join(documents.CUSTOM_METRICS_SHAPES)))
    algorithm = spec.get("algorithm", "code")
    if algorithm not in ("code", "managed", "subscription"):
        raise ScenarioError("%s: algorithm must be code, managed or subscription" % where)
    try:
        model_metric_list = produced.model_metric_list_text(spec.get("model_metric_list"))
        ft_metrics, ft_metrics_fault = produced.check_ft_metrics(spec.get("ft_metrics"))
    except ValueError as exc:
        raise ScenarioError("%s: %s" % (where, exc)) from None
    failure = spec.get("failure") or {}
    if not isinstance(failure, dict):
        raise ScenarioError("%s: failure must be a mapping {exit_code, message, task}" % where)

    try:
        log = logs.check_log_spec(spec.get("log"))
    except (TypeError, ValueError) as exc:
        raise ScenarioError("%s: %s" % (where, exc)) from None

    if "created_ago" in spec and "created_at" in spec:
        raise ScenarioError("%s: give either created_at or created_ago, not both" % where)
    created_ago = None
    if "created_ago" in spec:
        created_ago = seconds(spec["created_ago"], "%s: created_ago" % where)
        if created_ago < 0:
            raise ScenarioError("%s: created_ago must be >= 0 (use created_at for a job created later)" % where)
        created_at = origin - created_ago
    else:
        created_at = origin + seconds(spec.get("created_at", 0) or 0, "%s: created_at" % where)
    try:
        if "timeline" in spec:
            if "phase" in spec:
                raise ScenarioError("%s: give either phase or timeline, not both" % where)
            mode, steps = parse_timeline(spec["timeline"], default_step=spec.get("step", 1), clock=spec.get("clock"))
        else:
            steps, past = static_timeline(spec.get("phase", "Completed"), spec.get("secondary_phase"), spec.get("run_seconds"))
            mode = "seconds"
            if created_ago is None:
                created_at -= past
            elif past > created_ago:
                # Created that long ago, in its phase now: the synthesised history is squeezed in between.
                for step in steps:
                    if step.length is not None:
                        step.length *= created_ago / past
    except ValueError as exc:
        raise ScenarioError("%s: %s" % (where, exc)) from None
    workspace_id = str(spec.get("workspace_id", tags_mod.DEFAULT_WORKSPACE))
    problem = tags_mod.check_workspace(workspace_id)
    if problem:
        raise ScenarioError("%s: %s" % (where, problem))
    try:
        job_tags = tags_mod.job_tags(spec.get("tags"), where)
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None
    lifecycle = Lifecycle(mode, steps, created_at, spec.get("not_found_polls", 0))

    user = account.primary_user()
    job = Job(
        uid=uid,
        uid_b=_hex(uid),
        seed=int(uid[:8], 16),
        ordinal=ordinal,
        v2_id=v2_id,
        v1_job_id=v1_job_id,
        v1_version_id=v1_version_id,
        v1_version_name=str((v1 or {}).get("version_name") or "V%04d" % (v1_version_id or 1)),
        v1_pre_version_id=int((v1 or {}).get("pre_version_id") or max(0, (v1_version_id or 1) - 1)),
        name=name,
        description=str(spec.get("description", "Training job %s" % name)),
        kind=str(spec.get("kind", "job")),
        workspace_id=workspace_id,
        tags=job_tags,
        user_name=str(spec.get("user_name", user["name"] if user else "")),
        project_id=project_id,
        region=project["name"],
        flavor=flavor,
        node_count=int(spec.get("node_count", 1)),
        pool_id=spec.get("pool_id"),
        engine=engine,
        image_url=str(spec.get("image_url", "swr.%s.myhuaweicloud.com/ml-team/train:1.4.2" % project["name"])),
        algorithm=algorithm,
        custom_metrics=custom_metrics,
        dataset=str(spec.get("dataset", "flowers-5class")),
        bucket=str(spec.get("bucket", "ml-team-bucket")),
        code_name=str(spec.get("code_name", "resnet50")),
        parameters=dict(spec.get("parameters") or {}),
        annotations={str(k): str(v) for k, v in (spec.get("annotations") or {}).items()},
        failure={"exit_code": failure.get("exit_code"), "message": failure.get("message"), "task": failure.get("task")},
        not_found_status=int(spec.get("not_found_status", 400)),
        search_counts_as_poll=spec.get("search_counts_as_poll"),
        model_metric_list=model_metric_list,
        ft_metrics=ft_metrics,
        ft_metrics_fault=ft_metrics_fault,
        metric_lines={},
        log=log,
        lifecycle=lifecycle,
        job_faults=list(spec.get("faults") or []),
    )
    if job.node_count < 1:
        raise ScenarioError("%s: node_count must be >= 1" % where)
    tasks = documents.task_names(job)
    try:
        job.metric_lines = produced.check_metric_lines(spec.get("metric_lines"), tasks)
        job.activity = activity_mod.check_activity_spec(spec.get("activity"), seconds, tasks)
    except ValueError as exc:
        raise ScenarioError("%s: %s" % (where, exc)) from None
    if job.failure["task"] is not None and job.failure["task"] not in tasks:
        raise ScenarioError(
            "%s: failure task %r does not exist: a job of node_count %d has the tasks %s" % (where, job.failure["task"], job.node_count, ", ".join(tasks))
        )
    for fault in job.job_faults:
        try:
            normalise_fault(fault, job.key)
        except ValueError as exc:
            raise ScenarioError("%s: %s" % (where, exc)) from None
    return job


def build_jobs(specs, directory, origin, first_ordinal=0):
    """Expand and build all jobs of a scenario; return the list of Job objects."""
    return [build_job(spec, directory, origin, first_ordinal + i) for i, spec in enumerate(expand(specs))]


def shipped_scenarios():
    """Return the names of the scenarios shipped in the package, sorted (``demo``, ``empty``, ...)."""
    return sorted({os.path.splitext(name)[0] for name in os.listdir(SCENARIO_DIR) if name.endswith((".yaml", ".yml", ".json"))})


def resolve_scenario_path(path):
    """Accept a path, or a bare name of a shipped scenario (``demo`` -> scenarios/demo.json)."""
    if os.path.exists(path):
        return path
    for candidate in (path, path + ".json", path + ".yaml", path + ".yml"):
        full = os.path.join(SCENARIO_DIR, candidate)
        if os.path.isfile(full):
            return full
    raise ScenarioError("scenario file not found: %s (shipped scenarios: %s)" % (path, ", ".join(shipped_scenarios())))
