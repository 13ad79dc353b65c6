# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ModelArts client: the API's operations (a job, a job version, searches, events, logs) and the headers that sign
them, over the transport (``transport.py``: session, retries, the deadline, TLS, proxies) to the hosts of
``endpoints.py``, with the credentials of ``credentials.py`` (and ``credential_sources.py``, imported only for a
source that obtains them).

One :class:`ModelArtsClient` holds one transport (so concurrent calls share its connection pool) and is safe to use
from several threads.  Every call returns parsed JSON or raises
:class:`~ansible_collections.modelarts.training.plugins.module_utils.errors.ModelArtsError`.
"""

from __future__ import annotations

import json
import random
import time

from ansible_collections.modelarts.training.plugins.module_utils.service import auth
from ansible_collections.modelarts.training.plugins.module_utils.service import credentials as credentials_mod
from ansible_collections.modelarts.training.plugins.module_utils.service.endpoints import Endpoints, escape
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.iam import IamSession
from ansible_collections.modelarts.training.plugins.module_utils.text import label
from ansible_collections.modelarts.training.plugins.module_utils.service.transport import (  # noqa: F401  # pylint: disable=unused-import
    CREDENTIALS_SERVICE,
    HAS_REQUESTS,
    REQUESTS_IMPORT_ERROR,
    Call,
    HttpTransport,
    Response,
)

# The pages of one search count together: at most this many times max_response_bytes (200 pages of 50 documents of
# a few KiB each fit; a server that sends more is stopped, not followed to the 200th page).
SEARCH_BYTES_FACTOR = 8


def _search():
    """The search API's paging and id batches (``search.py``), imported by the calls that search only: AnsiballZ
    compiles every module_utils file a module imports on each run, and reading jobs by id never searches."""
    from ansible_collections.modelarts.training.plugins.module_utils.service import search

    return search


def provider_for(source, connection, environ=None):
    """The credential provider of the credential ``source`` (a ``connection.CredentialSource``) over ``connection``:
    credentials given as they are need only ``credentials.py``; every other kind is built by its source in
    ``credential_sources.py``, imported only then."""
    if credentials_mod.given_as_is(source):
        return credentials_mod.static_provider(source)
    from ansible_collections.modelarts.training.plugins.module_utils.service import credential_sources

    return credential_sources.provider_for(source, connection, environ)


class _ProviderTransport(credentials_mod.Transport):
    """What credential providers ask of a client: calls to absolute URLs through its transport (retries, deadline,
    TLS, proxy and error model), the IAM and STS hosts, and its secrets to mask."""

    def __init__(self, http, endpoints, environ):
        self._http = http
        self._endpoints = endpoints
        # The environment the task sees (os.environ when None): a file's "~" is its HOME's.
        self._environ = environ

    @property
    def iam_endpoint(self):
        return self._endpoints.iam_endpoint

    @property
    def sts_endpoint(self):
        return self._endpoints.sts_endpoint

    def send(self, request):
        deadline = self._http.bounded(request.deadline)
        if request.within is not None:
            deadline = min(deadline, self._http.clock() + request.within)
        payload = json.dumps(request.body, separators=(",", ":")).encode("utf-8") if request.body is not None else None
        sent = {"Content-Type": "application/json;charset=UTF-8"} if payload is not None else {}
        sent.update(request.headers or {})
        call = Call(
            request.method,
            request.url,
            sent,
            payload,
            request.operation or "%s %s" % (request.method, request.url.split("?", 1)[0]),
            CREDENTIALS_SERVICE,
            deadline,
            False,
            sign_with=request.sign_with,
            connect_timeout=request.connect_timeout,
            retries=None if request.retry else 0,
            expect=request.expect,
            direct=request.direct,
        )
        return self._http.send(call)

    def remember_secret(self, value):
        self._http.remember_secret(value)

    def utcnow(self):
        return self._http.utcnow()

    def read_text(self, path, option, deadline=None):
        # A file on a hung mount cannot hold the exchange past the call's deadline.
        left = None if deadline is None else deadline - self._http.clock()
        return credentials_mod.read_text_file(path, option, timeout=left, environ=self._environ)


class ModelArtsClient(object):
    """A client for the ModelArts and IAM APIs.

    ``service`` says how to reach the service and ``credentials`` where the credentials come from: the two parts
    the door resolves the options into (``connection.Connection`` and ``connection.CredentialSource``; the door
    checked the credential rules while building them, before any request: ``options.resolve``, or
    ``options.connection_parts`` for a plain dict of option values).

    ``clock``, ``sleep``, ``rand`` and ``utcnow`` are injectable for tests:
    a monotonic clock, a sleep function (default: a sleep that :meth:`abandon` ends at once), ``random.random`` and a
    function returning the aware UTC ``datetime``.  ``session`` may be any object with
    a ``requests.Session``-like ``request()`` method.
    """

    def __init__(
        self,
        service,
        credentials,
        session=None,
        clock=time.monotonic,
        sleep=None,
        rand=random.random,
        utcnow=None,
        pool_size=16,
        trace=None,
        environ=None,
        watchdog=None,
        named=None,
    ):
        # pylint: disable=too-many-arguments
        self.service = service
        self.kind = credentials.kind
        # named(field): the door's name of a connection field with where its value came from, for a host that takes no connection.
        self.endpoints = Endpoints(service, self.kind, named)
        self.endpoint, self.iam_endpoint, self.sts_endpoint = self.endpoints.endpoint, self.endpoints.iam_endpoint, self.endpoints.sts_endpoint
        # One provider for the kind (options.resolve decided it); renewal is the provider's business, not the client's.
        self.credentials = credentials_mod.Renewing(provider_for(credentials, service, environ))
        self._succeeded = False
        self.iam = IamSession(service.project_id, service.region, self.request, self.current_credentials)
        self.http = HttpTransport(
            service,
            credentials.secrets(),
            session,
            clock,
            sleep,
            rand,
            utcnow,
            pool_size,
            trace,
            watchdog,
            sign=self._auth_headers,
            source_of=self.endpoints.source_of,
        )
        self.http.quiet_insecure_warnings(self.endpoint, self.iam_endpoint)
        self._session = self.http.session
        self.transport = _ProviderTransport(self.http, self.endpoints, environ)

    @property
    def _throttled(self):
        return self.http.throttled

    @_throttled.setter
    def _throttled(self, value):
        self.http.throttled = value

    @property
    def throttled(self):
        """How many answers so far were HTTP 429 (throttling), retried or not: callers pace their rounds by it."""
        return self.http.throttled

    def abandon(self):
        """End the calls in flight and send no other (see ``HttpTransport.abandon``)."""
        self.http.abandon()

    def close(self):
        """Close the pooled connections and let the watchdog thread end."""
        self.http.close()

    def redact(self, text):
        """``text`` with this client's secret values masked."""
        return self.http.redact(text)

    def secrets(self):
        """Every secret value this client knows: the options' and each one obtained or issued since."""
        return self.http.secrets()

    def request_budget(self):
        """The longest one call may take without a deadline (see ``HttpTransport.request_budget``)."""
        return self.http.request_budget()

    # -- authentication --------------------------------------------------

    @property
    def project_id(self):
        """The project id: given, or resolved once from ``region`` through IAM (within one request budget)."""
        return self.resolve_project_id()

    def resolve_project_id(self, deadline=None):
        """The project id, looked up in IAM the first time; the lookup ends by ``deadline`` (default: one request budget)."""
        return self.iam.project_id(self.http.bounded(deadline))

    def current_credentials(self, deadline=None):
        """The credentials calls are signed with now: obtained the first time, renewed when due."""
        return self.credentials.current(self.transport, self.http.bounded(deadline))

    def _auth_headers(self, call):
        """Return ``(url, headers)`` ready to send: signed with the call's own credentials, the client's current ones, or none.

        ``call.signer`` is left naming the credentials this attempt is signed with (None until they are known: an error
        obtaining them is not a refusal of any).
        """
        call.signer = None
        signer = call.sign_with or (self.current_credentials(call.deadline) if call.authenticate else None)
        call.signer = signer
        if signer is None:
            return call.url, dict(call.headers)
        if signer.kind == "aksk":
            project = self.iam.known_project if call.service == "modelarts" else None
            return auth.sign_request(
                call.method,
                call.url,
                call.headers,
                call.payload,
                signer.access_key,
                signer.secret_key,
                project_id=project,
                security_token=signer.security_token,
                now=self.http.utcnow(),
            )
        headers = dict(call.headers)
        headers["X-Auth-Token"] = signer.auth_token
        return call.url, headers

    def request(
        self,
        method,
        path,
        query=None,
        body=None,
        operation=None,
        service="modelarts",
        deadline=None,
        authenticate=True,
        consume=None,
        max_bytes=None,
        expect="json",
    ):
        """Send one API call with retries and return a :class:`Response` holding parsed JSON.

        ``path`` must already be escaped (see :func:`escape`); ``query`` is a
        list of ``(key, value)`` pairs; ``body`` is JSON-serialisable or None.
        ``deadline`` is a value of the client's monotonic clock by which the call ends: no attempt
        starts and no backoff sleeps past it, and an attempt under way is cut there (connect, read
        and a slowly arriving body alike).  Without one, the call is bounded by :meth:`request_budget`.  Retries 429, 500, 502, 503, 504,
        connection errors, timeouts and unreadable 2xx bodies up to
        ``backoff_retries`` times with full-jitter exponential backoff,
        honouring ``Retry-After``.  A 401 renews credentials the collection obtained (a password
        token, federated or metadata credentials...) once, and only when the refused attempt was signed
        with the current ones: an attempt signed before another call renewed them is signed again with
        the new ones, without another exchange.  User-given temporary credentials refused after earlier
        successes are reported as expired.  ``consume``, ``max_bytes`` and ``expect``: see :class:`Call`.
        """
        operation = operation or "%s %s" % (method, path)
        deadline = self.http.bounded(deadline)
        base = self.endpoints.endpoint if service == "modelarts" else self.endpoints.iam_base(lambda: self.current_credentials(deadline))
        url = base + path
        if query:
            url += "?" + auth.canonical_query(query)
        payload = json.dumps(body, separators=(",", ":")).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json;charset=UTF-8"} if payload is not None else {}
        call = Call(method, url, headers, payload, operation, service, deadline, authenticate, expect=expect, consume=consume, max_bytes=max_bytes)
        if not authenticate:
            return self.http.send(call)
        try:
            response = self.http.send(call)
        except ModelArtsError as error:
            # The credentials the refused attempt was signed with, not those current when the call began: a timed
            # renewal between its attempts makes them differ, and renewing is for the credentials refused.
            used = call.signer
            if error.status != 401 or used is None:
                raise
            if self.credentials.refused(self.transport, used, deadline) is used:
                raise credentials_mod.refusal(error, used, self._succeeded, self.credentials.provider.refreshable)
            try:
                response = self.http.send(call)
            except ModelArtsError as again:
                if again.status == 401 and call.signer is not None:
                    credentials_mod.name_the_file(again, call.signer)
                raise
        self._succeeded = True
        return response

    # -- ModelArts operations ---------------------------------------------

    def get_training_job(self, job_id, deadline=None):
        """``GET /v2/{project_id}/training-jobs/{id}``: the v2 job document."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-jobs/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id))
        return self.request("GET", path, operation="get training job %s" % label(job_id), deadline=deadline)

    def get_job_version(self, job_id, version_id, deadline=None):
        """``GET /v1/{project_id}/training-jobs/{job_id}/versions/{version_id}``: the legacy v1 document (a key given twice
        marked: the metric gate reads its ``model_metric_list``)."""
        deadline = self.http.bounded(deadline)
        path = "/v1/%s/training-jobs/%s/versions/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(version_id))
        operation = "get training job %s version %s" % (label(job_id), label(version_id))
        return self.request("GET", path, operation=operation, deadline=deadline, expect="json_keyed")

    def list_training_job_events(self, job_id, level=None, limit=100, offset=0, deadline=None, max_bytes=None):
        """``GET /v2/{project_id}/training-jobs/{id}/events?order=desc``: one page of the job's events, newest first (asked for,
        not left to the service's default, so the newest events - a recent ``JobHanged`` - are the ones a page holds;
        ``offset`` is a page index); ``max_bytes`` bounds the answer below ``max_response_bytes``."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-jobs/%s/events" % (escape(self.resolve_project_id(deadline)), escape(job_id))
        query = [("offset", str(int(offset))), ("limit", str(int(limit))), ("order", "desc")] + ([("level", level)] if level else [])
        return self.request("GET", path, query=query, operation="list events of training job %s" % label(job_id), deadline=deadline, max_bytes=max_bytes)

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None, base_line=None):
        """``GET /v2/{project_id}/training-jobs/{id}/logs/{task_id}?lines=&order=desc``: the newest ``lines`` (1-500) lines of a
        task's log through AOM, newest first; HTTP 204 with no body while the task has no log.  ``max_bytes`` bounds the answer.
        ``base_line`` (an answer's ``end_line``) continues towards older lines from that line, excluded: the next page."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-jobs/%s/logs/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(task_id))
        query = [("lines", str(int(lines))), ("order", "desc")] + ([("base_line", str(base_line))] if base_line not in (None, "") else [])
        operation = "read the log of task %s of training job %s" % (label(task_id), label(job_id))
        return self.request("GET", path, query=query, operation=operation, deadline=deadline, max_bytes=max_bytes)

    def get_task_log_preview(self, job_id, task_id, deadline=None, consume=None):
        """``GET /v2/{project_id}/training-jobs/{id}/tasks/{task_id}/logs/preview``: the latest part of a task's log (at most 5 MB)
        with its ``current_size`` and ``full_size``; ``consume`` reads the answer as it arrives (see :class:`Call`)."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-jobs/%s/tasks/%s/logs/preview" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(task_id))
        operation = "preview the log of task %s of training job %s" % (label(task_id), label(job_id))
        return self.request("GET", path, operation=operation, deadline=deadline, consume=consume)

    def get_task_metrics(self, job_id, task_id, deadline=None, max_bytes=None):
        """``GET /v2/{project_id}/training-jobs/{id}/metrics/{task_id}``: a task's one-minute utilisation averages (the official
        SDK's ``ShowTrainingJobMetrics``: ``{"metrics": [{"metric", "value": [..]}]}``, oldest first, ``-1`` where no sample
        was taken).  ``max_bytes`` bounds the answer."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-jobs/%s/metrics/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(task_id))
        operation = "read the metrics of task %s of training job %s" % (label(task_id), label(job_id))
        return self.request("GET", path, operation=operation, deadline=deadline, max_bytes=max_bytes)

    def get_ft_metrics(self, job_id, deadline=None, max_bytes=None):
        """``GET /v2/{project_id}/training-jobs/{id}/ft-metrics``: a fine-tuning job's metric series (the official SDK's
        ``ShowFtMetrics``: ``data.metrics[]`` of ``{name_en, group, data, ...}``; a key given twice marked).  ``max_bytes``
        bounds the answer."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-jobs/%s/ft-metrics" % (escape(self.resolve_project_id(deadline)), escape(job_id))
        operation = "read the ft-metrics of training job %s" % label(job_id)
        return self.request("GET", path, operation=operation, deadline=deadline, max_bytes=max_bytes, expect="json_keyed")

    def search_training_jobs(self, name, deadline=None, page_size=50, max_pages=200, pages=None, created_since=None):
        """All v2 jobs of the search ``name`` (a ``selection.Search``: a name, tags, a workspace, the newest only; or a
        name alone), from every page of the search API (see :mod:`.search`; ``pages``, a list, receives how many
        requests it took; ``created_since``: only what is new since then, see ``search.jobs_matching``).  The pages
        together stay within ``SEARCH_BYTES_FACTOR`` times ``max_response_bytes`` (a page alone within it): up to
        10,000 documents of a few kilobytes each, bounded whatever the server sends."""
        path = "/v2/%s/training-job-searches" % escape(self.resolve_project_id(deadline))

        def post(body, operation):
            return self.request("POST", path, body=body, operation=operation, deadline=deadline)

        search = _search()
        budget = SEARCH_BYTES_FACTOR * int(self.service.max_response_bytes)
        if isinstance(name, str):
            return search.jobs_named(post, name, page_size=page_size, max_pages=max_pages, pages=pages, max_bytes=budget)
        return search.jobs_matching(post, name, page_size=page_size, max_pages=max_pages, pages=pages, created_since=created_since, max_bytes=budget)

    def search_pages(self, search, page_size=50, pages=None, counts=None, resume_on=()):
        """The v2 jobs of the ``selection.Search`` ``search``, a page at a time (``search.pages_matching``: a list of documents
        per page, no limit on the pages, each page within ``max_response_bytes``): how the event source lists every match
        of a watch, however many, holding one page.  Each request has its own budget; ``resume_on``: see
        ``search.pages_matching``."""

        def post(body, operation):
            path = "/v2/%s/training-job-searches" % escape(self.resolve_project_id())
            return self.request("POST", path, body=body, operation=operation)

        return _search().pages_matching(post, search, page_size=page_size, pages=pages, counts=counts, resume_on=resume_on)

    def search_training_jobs_by_id(self, ids, deadline=None, workspace_id=None):
        """``{id: document}`` of the v2 jobs among ``ids`` (at most ``search.MAX_IDS``) the search API returns, in the
        workspace ``workspace_id`` (None: the default one): one request."""
        deadline = self.http.bounded(deadline)
        path = "/v2/%s/training-job-searches" % escape(self.resolve_project_id(deadline))

        def post(body, operation):
            return self.request("POST", path, body=body, operation=operation, deadline=deadline)

        return _search().jobs_with_ids(post, ids, workspace_id=workspace_id)
