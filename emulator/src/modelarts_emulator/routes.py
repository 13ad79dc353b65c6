# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The APIs: IAM tokens and projects, ModelArts v2 details, search, events, task logs, task metrics and ft-metrics, v1 job versions.

Each route returns a :class:`Response` or raises :class:`errors.ApiError`. Faults are drawn after
authentication, so an anonymous request never consumes one.
"""

import bisect
import hmac
import json
import math
import re
import time
from urllib.parse import parse_qsl, unquote

from . import activity, documents, errors, exchanges, faults as faults_mod, iam, logs, produced, tags as tags_mod
from .gateway import Caller, authenticate, check_project
from .lifecycle import PHASES
from .responses import Response, json_bytes, json_bytes_repeating

_V2_JOB = re.compile(r"^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/?$")
_V2_SEARCH = re.compile(r"^/v2/(?P<project>[^/]+)/training-job-searches/?$")
_V2_EVENTS = re.compile(r"^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/events/?$")
_V2_AOM_LOG = re.compile(r"^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/logs/(?P<task>[^/]+)/?$")
_V2_LOG_PREVIEW = re.compile(r"^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/tasks/(?P<task>[^/]+)/logs/preview/?$")
_V2_FT_METRICS = re.compile(r"^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/ft-metrics/?$")
_V2_TASK_METRICS = re.compile(r"^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/metrics/(?P<task>[^/]+)/?$")
_V2_JOB_TAGS = re.compile(r"^/v2/(?P<project>[^/]+)/modelarts-training-job/(?P<job>[^/]+)/tags/?$")
_V2_PROJECT_TAGS = re.compile(r"^/v2/(?P<project>[^/]+)/modelarts-training-job/tags/?$")
_V1_JOB = re.compile(r"^/v1/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/versions/(?P<version>[^/]+)/?$")
SEARCH_KEYS = ("name", "phase", "create_time", "kind", "algorithm_name", "user_id", "user_name", "id")
SEARCH_OPERATORS = ("like", "in", "not", "between")
# The most values one id filter takes (the Terraform provider's documentation of the search: at most 10 ids).
MAX_ID_VALUES = 10
HTTP_REASONS = {200: "OK", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


def dispatch(state, exchange):
    """Route a request; return (API family, Response). Unknown routes are a gateway 404."""
    path, method = exchange.path, exchange.method
    exchange_route = exchanges.ROUTES.get((method, path.rstrip("/")))
    if exchange_route is not None:
        return errors.IAM, exchange_route(state, exchange)
    if path.rstrip("/") == "/v3/auth/tokens" and method == "POST":
        return errors.IAM, iam_token(state, exchange)
    if path.rstrip("/") == "/v3/projects" and method == "GET":
        return errors.IAM, iam_projects(state, exchange)
    match = _V2_JOB.match(path)
    if match and method == "GET":
        return errors.V2, v2_detail(state, exchange, match)
    match = _V2_SEARCH.match(path)
    if match and method == "POST":
        return errors.V2, v2_search(state, exchange, match)
    match = _V1_JOB.match(path)
    if match and method == "GET":
        return errors.V1, v1_detail(state, exchange, match)
    match = _V2_PROJECT_TAGS.match(path)
    if match and method == "GET":
        return errors.V2, v2_project_tags(state, exchange, match)
    match = _V2_JOB_TAGS.match(path)
    if match and method == "GET":
        return errors.V2, v2_job_tags(state, exchange, match)
    for pattern, route in (
        (_V2_EVENTS, v2_events),
        (_V2_AOM_LOG, v2_aom_log),
        (_V2_LOG_PREVIEW, v2_log_preview),
        (_V2_FT_METRICS, v2_ft_metrics),
        (_V2_TASK_METRICS, v2_task_metrics),
    ):
        match = pattern.match(path)
        if match and method == "GET":
            return errors.V2, route(state, exchange, match)
    raise errors.apigw_not_found()


# Faults ------------------------------------------------------------------------------------------------
def draw_fault(state, exchange, fault_family, body_family):
    """Take the fault that hits this request, if any: raise for error-like faults, else return it."""
    fault = state.faults.take(fault_family, exchange.job)
    if fault is None:
        return None
    exchange.fault = fault
    kind = fault["type"]
    if kind == "throttle":
        raise errors.apigw_throttled(fault["retry_after"])
    if kind == "error":
        status = fault["status"]
        if status == 500:
            raise errors.internal_error(body_family)
        if status == 503:
            raise errors.ApiError(503, "ModelArts.0003", "The service is temporarily unavailable. Please try again later.", body_family)
        if status == 502:
            raise errors.ApiError(502, "APIG.0202", "Backend unavailable.", errors.APIGW)
        raise errors.ApiError(504, "APIG.0201", "Backend timeout.", errors.APIGW)
    if kind == "delay":
        time.sleep(fault["seconds"])
    if kind == "echo":
        target = exchange.path + ("?" + exchange.query if exchange.query else "")
        fault["echo"] = faults_mod.echo_response(fault, exchange.method, target, exchange.headers, exchange.body)
    if kind == "wrong_job":
        fault["documents"] = _documents_of(state, fault["answer_with"])
    return fault


def _documents_of(state, key):
    """``{api: document}`` of the job ``key`` in its phase now (peeked at, not a poll): what a ``wrong_job`` fault answers with."""
    job = state.job_by_key(key)
    snapshot = job.lifecycle.peek(state.now()) if job is not None else None
    if snapshot is None:
        return {}
    found = {"v1": documents.v1_document(job, snapshot)} if job.has_v1 else {}
    if job.v2_id:
        found["v2"] = documents.v2_document(job, snapshot)
    return found


def finish(response, fault):
    """Apply body-level faults (HTML page, echo, schema drift, nulls, another job's document, a stale search) to a successful response."""
    if fault is None:
        return response
    if fault["type"] == "echo":
        content_type, body = fault["echo"]
        return Response(fault["status"], body, content_type=content_type)
    if fault["type"] == "html":
        status = fault["status"]
        page = faults_mod.HTML_PAGE.format(status=status, reason=HTTP_REASONS.get(status, "Error"))
        return Response(status, page.encode("utf-8"), content_type="text/html")
    if fault["type"] == "stale" and response.api == "search" and response.document is not None:
        doc = dict(response.document, items=[faults_mod.apply_stale(item, fault["phase"]) for item in response.document["items"]])
        return Response(response.status, json_bytes(doc), document=doc, api=response.api)
    if fault["type"] == "wrong_job" and response.document is not None:
        other = fault["documents"].get("v2" if response.api == "search" else response.api)
        if other is None:
            return response
        doc = dict(response.document, items=[other for _item in response.document["items"]]) if response.api == "search" else other
        return Response(response.status, json_bytes(doc), document=doc, api=response.api)
    if fault["type"] in ("drift", "nulls") and response.document is not None:
        doc = response.document
        if response.api == "search":
            doc = dict(doc, items=[_rewrite_document(fault, item, "v2") for item in doc["items"]])
        else:
            doc = _rewrite_document(fault, doc, response.api)
        return Response(response.status, json_bytes(doc), document=doc, api=response.api)
    return response


def _rewrite_document(fault, doc, api):
    if fault["type"] == "nulls":
        return faults_mod.apply_nulls(doc, api)
    return faults_mod.apply_drift(doc, fault, api)


def _modelarts_prelude(state, exchange, project_id, family, job_key=None, fault_family=None):
    """Authenticate, check the project and draw a fault; return the fault (or None)."""
    exchange.caller = authenticate(state, exchange)
    exchange.project_id = project_id
    check_project(exchange.caller, project_id, family)
    exchange.job = job_key
    return draw_fault(state, exchange, fault_family or family, family)


# IAM -----------------------------------------------------------------------------------------------------
def iam_token(state, exchange):
    """POST /v3/auth/tokens: a project-scoped token for a user's password."""
    fault = draw_fault(state, exchange, "iam", errors.IAM)
    try:
        payload = json.loads(exchange.body or b"{}")
    except ValueError:
        raise errors.ApiError(400, "IAM", "The request body is not valid JSON.", errors.IAM) from None
    if not isinstance(payload, dict):
        raise errors.ApiError(400, "IAM", "The request body must be a JSON object.", errors.IAM)
    domain, user_name, password, scope = iam.parse_password_auth(payload)
    account = state.directory.account_for_domain(domain)
    user = account.users.get(user_name) if account else None
    if user is None or not hmac.compare_digest(user["password"].encode("utf-8"), password.encode("utf-8")):
        # One answer for an unknown user and a wrong password: nothing to enumerate.
        raise errors.ApiError(401, "IAM", "The username or password is wrong.", errors.IAM)
    project = iam.resolve_scope(account, scope)
    record = state.tokens.issue(account, user, project, state.now(), state.settings["token_lifetime"])
    exchange.caller = Caller("password", account, project=project)
    exchange.project_id = project["id"]
    with_catalog = "nocatalog=true" not in exchange.query
    doc = iam.token_body(record, exchange.base_url, with_catalog)
    return finish(Response(201, json_bytes(doc), headers={"X-Subject-Token": record["token"]}), fault)


def iam_projects(state, exchange):
    """GET /v3/projects[?name=<region>]: the caller's projects."""
    exchange.caller = authenticate(state, exchange)
    fault = draw_fault(state, exchange, "iam", errors.IAM)
    name = None
    for part in exchange.query.split("&"):
        key, _sep, value = part.partition("=")
        if key == "name":
            name = unquote(value)
    doc = iam.projects_body(exchange.caller.account, name, exchange.base_url)
    return finish(Response(200, json_bytes(doc)), fault)


# ModelArts -----------------------------------------------------------------------------------------------
def _poll_detail(state, job, family, render, api, fault):
    """One poll of ``job`` (None when unknown): the document of its phase now, or the service's not-found error."""
    if job is None:
        raise errors.job_not_found(family)
    snapshot = job.lifecycle.poll(state.now())
    if snapshot is None:
        raise errors.job_not_found(family, job.not_found_status)
    doc = render(job, snapshot)
    texts = getattr(job, "model_metric_list", None) if api == "v1" else None
    if isinstance(texts, tuple):
        # The scenario's model_metric_list given as a list: the key once per text, as a faulty service may send it.
        return finish(Response(200, json_bytes_repeating(doc, "model_metric_list", texts), document=doc, api=api), fault)
    return finish(Response(200, json_bytes(doc), document=doc, api=api), fault)


def v2_detail(state, exchange, match):
    """GET /v2/{project_id}/training-jobs/{id}: one poll of the job."""
    project_id = unquote(match.group("project"))
    job_id = unquote(match.group("job"))
    fault = _modelarts_prelude(state, exchange, project_id, errors.V2, job_key=job_id)
    return _poll_detail(state, state.v2_job(project_id, job_id), errors.V2, documents.v2_document, "v2", fault)


def _diagnosed_job(state, exchange, match):
    """Authenticate, draw a fault, and return ``(job, snapshot, failure, fault, query)`` for the events and log routes.

    Reading events or logs is not a poll: the job's lifecycle is peeked at, never advanced.
    """
    project_id = unquote(match.group("project"))
    job_id = unquote(match.group("job"))
    fault = _modelarts_prelude(state, exchange, project_id, errors.V2, job_key=job_id)
    job = state.v2_job(project_id, job_id)
    snapshot = job.lifecycle.peek(state.now()) if job is not None else None
    if snapshot is None:
        raise errors.job_not_found(errors.V2, job.not_found_status if job is not None else 400)
    failure = documents.failure_info(job, snapshot.phase, any(step.phase == "Running" for step, _entered in snapshot.history))
    query = dict(parse_qsl(exchange.query, keep_blank_values=True))
    return job, snapshot, failure, fault, query


def v2_events(state, exchange, match):
    """GET /v2/{project_id}/training-jobs/{id}/events: the job's events (logs.py)."""
    job, snapshot, failure, fault, query = _diagnosed_job(state, exchange, match)
    return finish(Response(200, json_bytes(logs.events_body(job, snapshot, failure, query))), fault)


def v2_aom_log(state, exchange, match):
    """GET /v2/{project_id}/training-jobs/{id}/logs/{task_id}: a task's log by lines; HTTP 204 before it has one."""
    job, snapshot, failure, fault, query = _diagnosed_job(state, exchange, match)
    body = logs.aom_body(job, snapshot, unquote(match.group("task")), failure, query)
    if body is None:
        return finish(Response(204, b""), fault)
    return finish(Response(200, json_bytes(body)), fault)


def v2_log_preview(state, exchange, match):
    """GET /v2/{project_id}/training-jobs/{id}/tasks/{task_id}/logs/preview: the latest 5 MB of a task's log."""
    job, snapshot, failure, fault, _query = _diagnosed_job(state, exchange, match)
    return finish(Response(200, json_bytes(logs.preview_body(job, snapshot, unquote(match.group("task")), failure))), fault)


def v2_ft_metrics(state, exchange, match):
    """GET /v2/{project_id}/training-jobs/{id}/ft-metrics: a fine-tuning job's metric series (produced.py)."""
    job, snapshot, _failure, fault, _query = _diagnosed_job(state, exchange, match)
    ran = any(step.phase == "Running" for step, _entered in snapshot.history)
    body = produced.ft_metrics_body(job, snapshot, ran, state.now())
    return finish(Response(200, body if isinstance(body, bytes) else json_bytes(body)), fault)


def v2_task_metrics(state, exchange, match):
    """GET /v2/{project_id}/training-jobs/{id}/metrics/{task_id}: a task's one-minute utilisation averages (activity.py)."""
    job, snapshot, _failure, fault, _query = _diagnosed_job(state, exchange, match)
    task = unquote(match.group("task"))
    if task not in documents.task_names(job):
        raise errors.ApiError(404, "ModelArts.2778", "Task %s does not exist in this training job." % task)
    return finish(Response(200, json_bytes(activity.metrics_body(job, snapshot, task))), fault)


def v1_detail(state, exchange, match):
    """GET /v1/{project_id}/training-jobs/{job_id}/versions/{version_id}: one poll of the job."""
    project_id = unquote(match.group("project"))
    try:
        job_id = int(match.group("job"))
        version_id = int(match.group("version"))
    except ValueError:
        # Authenticate first: an anonymous caller learns nothing, not even argument errors.
        _modelarts_prelude(state, exchange, project_id, errors.V1)
        raise errors.invalid_argument("job_id and version_id must be integers", errors.V1) from None
    job = state.v1_job(project_id, job_id, version_id)
    job_key = job.key if job else "%d/%d" % (job_id, version_id)
    fault = _modelarts_prelude(state, exchange, project_id, errors.V1, job_key=job_key)
    return _poll_detail(state, job, errors.V1, documents.v1_document, "v1", fault)


def v2_search(state, exchange, match):
    """POST /v2/{project_id}/training-job-searches: filter, sort and page the project's v2 jobs."""
    project_id = unquote(match.group("project"))
    fault = _modelarts_prelude(state, exchange, project_id, errors.V2, fault_family="search")
    try:
        query = json.loads(exchange.body or b"{}")
    except ValueError:
        raise errors.invalid_argument("the request body is not valid JSON") from None
    if not isinstance(query, dict):
        raise errors.invalid_argument("the request body must be a JSON object")
    offset, limit, sort_by, order, filters = parse_search(query, state.settings["max_search_limit"])
    workspace_id, tag_conditions = parse_scope(query)
    now = state.now()
    if tag_conditions:
        # A tag search covers a window of creation times (the last 31 days unless create_time says otherwise).
        window, problem = tags_mod.create_time_window(filters, int(now * 1000))
        if problem:
            raise errors.invalid_argument(problem)
        filters = [f for f in filters if f[0] != "create_time"] + [("create_time", "between", [str(window[0]), str(window[1])])]
    ids = [values for key, operator, values in filters if key == "id" and operator == "in"]
    # Jobs already in the order the default sort gives (creation time, then id) need no sort: a search of 100,000 jobs
    # walks the project's list kept in that order (state.v2_jobs_by_creation) rather than sorting it each time.
    presorted = not ids and sort_by == "create_time" and state.settings["search_ties"] != "added"
    # The phase is worked out only when a filter, the sort or the page needs it (once a job): 100,000 jobs stay cheap,
    # and a search allocates nothing for a job it only counts.
    peeked = {}

    def peek(job):
        snapshot = peeked.get(job.v2_id)
        if snapshot is None:
            snapshot = peeked[job.v2_id] = job.lifecycle.peek(now)
        return snapshot

    bounds = _create_time_bounds(filters) if presorted else None
    if bounds is not None:
        # Only creation times to compare (a tag search's window, or no filter): the jobs the workspace and tags select
        # are kept in order, so the matches are a slice found by bisection, not a walk of every job.
        matched = _created_between(state.v2_scope(project_id, workspace_id, tag_conditions), bounds, now)
    else:
        phases = _phases_allowed(filters) if presorted and not ids else None
        if ids:
            # An id filter names its jobs: look them up rather than peek at every job of the project.
            candidates = [state.v2_job(project_id, job_id) for job_id in dict.fromkeys(ids[0])]
        elif phases is not None:
            # A phase filter (the unfinished jobs a watch follows): the jobs settled in other phases are left out
            # unpeeked (state.PhaseIndex); each candidate is still tested with every filter below.
            candidates = state.v2_scope(project_id, workspace_id, tag_conditions).in_phases(phases, int(now * 1000))
        elif presorted:
            candidates = state.v2_jobs_by_creation(project_id)
        else:
            candidates = state.v2_jobs_in(project_id)
        matches = _compile(filters, peek)
        matched = []
        for job in candidates:
            # A search sees one workspace; the tags are checked before the (dearer) lifecycle.
            if job is None or job.workspace_id != workspace_id or (tag_conditions and not tags_mod.tags_match(job.tags, tag_conditions)):
                continue
            if job.lifecycle.visible(now) and matches(job):
                matched.append(job)
    reverse = order == "desc"
    if presorted:
        if reverse:
            matched.reverse()
    elif sort_by == "name":
        matched.sort(key=lambda job: (job.name, job.v2_id), reverse=reverse)
    elif sort_by == "duration":
        matched.sort(key=lambda job: (documents.v2_status(job, peek(job))["duration"], job.v2_id), reverse=reverse)
    elif state.settings["search_ties"] == "added":
        # Jobs created in the same millisecond stay in the order they were added (a stable sort), whatever the order asked.
        matched.sort(key=lambda job: job.lifecycle.created_ms, reverse=reverse)
    else:
        matched.sort(key=lambda job: (job.lifecycle.created_ms, job.v2_id), reverse=reverse)
    # offset is a page index (the SDK's model); an older edition of the API reference calls it an item offset.
    first = offset if state.settings["search_offset"] == "item" else offset * limit
    # A search by id asks about those very jobs: it is a poll of each job it returns (in bulk: the GET that follows
    # reads the same step).  Any other search is one where the setting or the job says so.
    by_id = bool(ids)
    items = []
    for job in matched[first : first + limit]:
        snapshot = peek(job)
        counts = job.search_counts_as_poll if job.search_counts_as_poll is not None else state.settings["search_counts_as_poll"]
        if counts or by_id:
            snapshot = job.lifecycle.poll(now, bulk=True) or snapshot
        items.append(documents.v2_document(job, snapshot))
    doc = {
        "total": len(matched),
        "count": len(items),
        "limit": limit,
        "offset": offset,
        "sort_by": sort_by,
        "order": order,
        "group_by": "",
        "workspace_id": workspace_id,
        "items": items,
    }
    return finish(Response(200, json_bytes(doc), document=doc, api="search"), fault)


def v2_job_tags(state, exchange, match):
    """GET /v2/{project_id}/modelarts-training-job/{training_job_id}/tags (the SDK's ShowTrainJobTags): ``{"tags": [{key, value}]}``.

    Reading tags is not a poll; a job of any workspace answers.
    """
    project_id = unquote(match.group("project"))
    job_id = unquote(match.group("job"))
    fault = _modelarts_prelude(state, exchange, project_id, errors.V2, job_key=job_id)
    job = state.v2_job(project_id, job_id)
    if job is None or job.lifecycle.peek(state.now()) is None:
        raise errors.job_not_found(errors.V2, job.not_found_status if job is not None else 400)
    doc = {"tags": [{"key": key, "value": value} for key, value in job.tags.items()]}
    return finish(Response(200, json_bytes(doc)), fault)


def v2_project_tags(state, exchange, match):
    """GET /v2/{project_id}/modelarts-training-job/tags (the SDK's ListTrainingJobTags): each key with its values, ``{"tags": [{key, values}]}``."""
    project_id = unquote(match.group("project"))
    fault = _modelarts_prelude(state, exchange, project_id, errors.V2)
    now = state.now()
    keys = {}
    for job in state.v2_jobs_in(project_id):
        if job.tags and job.lifecycle.visible(now):
            for key, value in job.tags.items():
                keys.setdefault(key, {})[value] = None
    doc = {"tags": [{"key": key, "values": list(values)} for key, values in sorted(keys.items())]}
    return finish(Response(200, json_bytes(doc)), fault)


def parse_search(query, max_limit):
    """Validate a search body; return (offset, limit, sort_by, order, filters) or raise ModelArts.0101."""
    try:
        offset = int(query["offset"]) if query.get("offset") is not None else 0
        limit = int(query["limit"]) if query.get("limit") is not None else 10
    except (TypeError, ValueError):
        raise errors.invalid_argument("offset and limit must be integers") from None
    if offset < 0:
        raise errors.invalid_argument("offset must be >= 0")
    if not 1 <= limit <= max_limit:
        raise errors.invalid_argument("limit must be between 1 and %d" % max_limit)
    sort_by = query.get("sort_by") or "create_time"
    if sort_by not in ("create_time", "name", "duration"):
        raise errors.invalid_argument("sort_by must be create_time, name or duration")
    order = query.get("order") or "desc"
    if order not in ("asc", "desc"):
        raise errors.invalid_argument("order must be asc or desc")
    filters = query.get("filters") or []
    if not isinstance(filters, list):
        raise errors.invalid_argument("filters must be a list")
    clean = []
    for item in filters:
        if not isinstance(item, dict):
            raise errors.invalid_argument("each filter must be an object {key, operator, value}")
        key, operator, value = item.get("key"), item.get("operator"), item.get("value")
        if key not in SEARCH_KEYS:
            raise errors.invalid_argument("unsupported filter key %r" % (key,))
        if operator not in SEARCH_OPERATORS:
            raise errors.invalid_argument("unsupported filter operator %r" % (operator,))
        if not isinstance(value, list):
            value = [value]
        value = [str(v) for v in value]
        if operator == "between" and len(value) != 2:
            raise errors.invalid_argument("between takes exactly two values")
        if key == "id" and len(value) > MAX_ID_VALUES:
            raise errors.invalid_argument("the filter on id takes at most %d values, got %d" % (MAX_ID_VALUES, len(value)))
        clean.append((key, operator, value))
    return offset, limit, sort_by, order, clean


def parse_scope(query):
    """The search body's ``workspace_id`` (default ``0``) and ``tags``: return (workspace_id, tag conditions) or raise ModelArts.0101."""
    workspace_id = query.get("workspace_id")
    if workspace_id is None:
        workspace_id = tags_mod.DEFAULT_WORKSPACE
    problem = tags_mod.check_workspace(workspace_id)
    if problem:
        raise errors.invalid_argument(problem)
    conditions, problem = tags_mod.parse_tag_filters(query.get("tags"))
    if problem:
        raise errors.invalid_argument(problem)
    return workspace_id, conditions


def _field(job, peek, key):
    if key == "phase":
        return peek(job).phase
    if key == "create_time":
        return job.lifecycle.created_ms
    if key == "algorithm_name":
        return documents.algorithm_name(job)
    if key in ("user_id", "user_name"):
        return job.user_name
    if key == "id":
        return job.v2_id
    return getattr(job, key)


class _PhaseOnly:
    """What ``_field`` reads of a job's snapshot for ``phase``: a phase alone, to test a filter on it."""

    __slots__ = ("phase",)

    def __init__(self, phase):
        self.phase = phase


def _phases_allowed(filters):
    """The phases every ``phase`` filter of a search lets through (a frozenset), or None when no filter is on the phase."""
    tests = [_compile_one(key, operator, values, lambda phase: phase) for key, operator, values in filters if key == "phase"]
    if not tests:
        return None
    return frozenset(phase for phase in PHASES if all(test(_PhaseOnly(phase)) for test in tests))


def _create_time_bounds(filters):
    """``(low, high)`` when every filter is ``create_time`` ``between`` numbers (the window they all allow; no filter:
    everything), else None (a filter of another kind, or a bound that is not a number: the search tests each job)."""
    low, high = -math.inf, math.inf
    for key, operator, values in filters:
        if key != "create_time" or operator != "between":
            return None
        try:
            first, last = float(values[0]), float(values[1])
        except ValueError:
            return None
        if math.isnan(first) or math.isnan(last):
            return None
        low, high = max(low, first), min(high, last)
    return low, high


def _created_between(scope, bounds, now):
    """The jobs of ``scope`` (state.Scope) created between ``bounds`` (ms, both included) that a search sees at ``now``,
    oldest first: what testing each job with ``visible(now)`` and the create_time filter gives."""
    keys = scope.created_ms
    now_ms = int(now * 1000)
    start = bisect.bisect_left(keys, bounds[0])
    # A job created after now_ms is not visible yet, one created before it is (when no 404 polls hide it).
    end = min(bisect.bisect_right(keys, bounds[1]), bisect.bisect_right(keys, now_ms))
    if start >= end:
        return []
    doubtful = set(range(max(start, bisect.bisect_left(keys, now_ms)), end))  # created in now's millisecond
    doubtful.update(index for index in scope.may_hide if start <= index < end)
    hidden = {index for index in doubtful if not scope.jobs[index].lifecycle.visible(now)}
    if not hidden:
        return scope.jobs[start:end]
    return [job for index, job in enumerate(scope.jobs[start:end], start) if index not in hidden]


def _compile(filters, peek):
    """The search's filters as one test ``matches(job)``: each filter's values are parsed once, not once a job (a search
    of 100,000 jobs would parse the create_time window 100,000 times); ``peek(job)``: the job's Snapshot now."""
    tests = [_compile_one(key, operator, values, peek) for key, operator, values in filters]

    def matches(job):
        for test in tests:
            if not test(job):
                return False
        return True

    return matches


def _compile_one(key, operator, values, peek):
    """One filter ``(key, operator, values)`` as a test of a job."""
    if operator == "like":
        lowered = [v.lower() for v in values]
        return lambda job: any(v in str(_field(job, peek, key)).lower() for v in lowered)
    if operator == "in":
        wanted = frozenset(values)
        return lambda job: str(_field(job, peek, key)) in wanted
    if operator == "not":
        unwanted = frozenset(values)
        return lambda job: str(_field(job, peek, key)) not in unwanted
    # between: a job matches when its value lies in [low, high]; a bound or a value that is not a number matches nothing.
    try:
        low, high = float(values[0]), float(values[1])
    except ValueError:
        return lambda job: False

    def between(job):
        try:
            return low <= float(_field(job, peek, key)) <= high
        except ValueError:
            return False

    return between
