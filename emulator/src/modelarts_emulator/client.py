# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small client for the control API under ``/_emulator/`` and the credentials that work against an emulator.

Use it against any running emulator, for example one a CI job started with ``modelarts-emulator``::

    from modelarts_emulator.client import ControlClient
    control = ControlClient('https://127.0.0.1:8443', ca_file='/home/me/.modelarts-emulator/tls/ca.pem')
    control.add_jobs([{'name': 'trains', 'timeline': ['Creating', 'Running', 'Completed']}])
    control.add_fault(type='throttle', count=2)
    control.advance_clock(60)
    control.requests(path='/training-jobs/')

:class:`ClockMover` moves the emulator's clock while a play waits on a job (a step every so often, or one step per poll of
the job), so minutes of the job's life pass in seconds of the test.  Stdlib only.
"""

import json
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request

from . import accounts
from .app import DEFAULT_ADMIN_TOKEN

PRIMARY = dict(
    region=accounts.DEFAULT_REGION,
    project_id=accounts.DEFAULT_PROJECT_ID,
    ak=accounts.DEFAULT_AK,
    sk=accounts.DEFAULT_SK,
    temp_ak=accounts.DEFAULT_TEMP_AK,
    temp_sk=accounts.DEFAULT_TEMP_SK,
    security_token=accounts.DEFAULT_SECURITY_TOKEN,
    username=accounts.DEFAULT_USERNAME,
    password=accounts.DEFAULT_PASSWORD,
    domain_name=accounts.DEFAULT_DOMAIN_NAME,
)
SECOND_PROJECT = {"region": accounts.SECOND_REGION, "project_id": accounts.SECOND_PROJECT_ID}
OTHER = dict(
    region=accounts.OTHER_REGION,
    project_id=accounts.OTHER_PROJECT_ID,
    ak=accounts.OTHER_AK,
    sk=accounts.OTHER_SK,
    username=accounts.OTHER_USERNAME,
    password=accounts.OTHER_PASSWORD,
    domain_name=accounts.OTHER_DOMAIN_NAME,
)
CREDENTIAL_KINDS = ("aksk", "temporary", "password")


class ControlError(RuntimeError):
    """The control API answered with an error; the message has the status and the emulator's explanation."""

    def __init__(self, method, path, status, body):
        self.status = status
        self.body = body
        super().__init__("control %s %s failed: HTTP %s %s" % (method, path, status, body[:500]))


class EmulatorCredentials:
    """One tenant's credentials and project (the emulator's defaults unless given)."""

    # pylint: disable=too-many-instance-attributes,too-few-public-methods
    def __init__(self, **kwargs):
        self.region = kwargs.get("region")
        self.project_id = kwargs.get("project_id")
        self.ak = kwargs.get("ak")
        self.sk = kwargs.get("sk")
        self.temp_ak = kwargs.get("temp_ak")
        self.temp_sk = kwargs.get("temp_sk")
        self.security_token = kwargs.get("security_token")
        self.username = kwargs.get("username")
        self.password = kwargs.get("password")
        self.domain_name = kwargs.get("domain_name")

    def __repr__(self):
        # Never show secrets in test output or tracebacks.
        return "EmulatorCredentials(region=%r, project_id=%r, ak=%r)" % (self.region, self.project_id, self.ak)


class ControlClient(EmulatorCredentials):
    """The control API of one emulator, plus its URL, CA bundle and the primary account's credentials.

    ``url``: the emulator's base URL (its ready line); ``ca_file``: its ``ca.pem`` when it serves HTTPS;
    ``credentials``: overrides of the default primary account (keys of :data:`PRIMARY`).
    """

    def __init__(self, url, admin_token=None, ca_file=None, credentials=None):
        super().__init__(**dict(PRIMARY, **(credentials or {})))
        self.url = url.rstrip("/")
        self.admin_token = admin_token or DEFAULT_ADMIN_TOKEN
        self.ca_file = ca_file
        self.second_project = dict(SECOND_PROJECT)
        self.other = EmulatorCredentials(**OTHER)
        self._ssl = ssl.create_default_context(cafile=ca_file) if ca_file else None
        # The emulator is on loopback: a proxy configured for the machine must never see these requests.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=self._ssl))

    def __repr__(self):
        return "%s(url=%r)" % (type(self).__name__, self.url)

    # Where and how --------------------------------------------------------------------------------------
    @property
    def endpoint(self):
        """The ModelArts endpoint (the emulator's URL)."""
        return self.url

    @property
    def iam_endpoint(self):
        """The IAM endpoint (the same URL: one port serves both)."""
        return self.url

    @property
    def ca_bundle(self):
        """The PEM file to trust (``ca.pem`` of ``--tls-dir``), or None for plain HTTP."""
        return self.ca_file

    @property
    def port(self):
        """The TCP port the emulator listens on."""
        return urllib.parse.urlsplit(self.url).port

    def env(self, kind="aksk"):
        """``HUAWEICLOUD_*`` variables for ``ansible-playbook`` with ``kind`` credentials: aksk, temporary or password."""
        if kind not in CREDENTIAL_KINDS:
            raise ValueError("kind must be one of %s, got %r" % (", ".join(CREDENTIAL_KINDS), kind))
        env = {
            "HUAWEICLOUD_SDK_REGION": self.region,
            "HUAWEICLOUD_SDK_PROJECT_ID": self.project_id,
            "HUAWEICLOUD_MODELARTS_ENDPOINT": self.url,
            "HUAWEICLOUD_SDK_IAM_ENDPOINT": self.url,
        }
        if self.ca_file:
            env["HUAWEICLOUD_CA_BUNDLE"] = self.ca_file
        if kind == "aksk":
            env.update(HUAWEICLOUD_SDK_AK=self.ak, HUAWEICLOUD_SDK_SK=self.sk)
        elif kind == "temporary":
            env.update(HUAWEICLOUD_SDK_AK=self.temp_ak, HUAWEICLOUD_SDK_SK=self.temp_sk, HUAWEICLOUD_SDK_SECURITY_TOKEN=self.security_token)
        else:
            env.update(HUAWEICLOUD_USERNAME=self.username, HUAWEICLOUD_PASSWORD=self.password, HUAWEICLOUD_DOMAIN_NAME=self.domain_name)
        return env

    def connection(self, kind="aksk"):
        """The same as :meth:`env` as module options (for ``module_defaults`` or the role's connection)."""
        if kind not in CREDENTIAL_KINDS:
            raise ValueError("kind must be one of %s, got %r" % (", ".join(CREDENTIAL_KINDS), kind))
        options = {"region": self.region, "project_id": self.project_id, "endpoint": self.url, "iam_endpoint": self.url}
        if self.ca_file:
            options["ca_bundle"] = self.ca_file
        if kind == "aksk":
            options.update(access_key=self.ak, secret_key=self.sk)
        elif kind == "temporary":
            options.update(access_key=self.temp_ak, secret_key=self.temp_sk, security_token=self.security_token)
        else:
            options.update(username=self.username, password=self.password, domain_name=self.domain_name)
        return options

    # The control API ------------------------------------------------------------------------------------
    def control(self, method, path, body=None, timeout=120):
        """Call the control API (``path`` relative to ``/_emulator``); return the parsed JSON answer.  ``timeout``
        (seconds) bounds a hang, not a speed: a loaded machine may take long to add thousands of jobs or to reset.

        Raises :class:`ControlError` (a ``RuntimeError``) for non-2xx answers.
        """
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.url + "/_emulator" + path, data=data, method=method, headers={"X-Emulator-Admin-Token": self.admin_token, "Content-Type": "application/json"}
        )
        try:
            with self._opener.open(request, timeout=timeout) as response:  # nosec - loopback only
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise ControlError(method, path, exc.code, exc.read().decode("utf-8", "replace")) from None

    def health(self):
        """``{"status": "ok", "url": ...}`` (needs no admin token)."""
        return self.control("GET", "/health")

    def state(self):
        """Settings, accounts (no secrets), job/fault/token counts and the clock offset."""
        return self.control("GET", "/state")

    def reset(self, scenario=None):
        """Back to the startup scenario (jobs, polls, faults, tokens, settings, log, clock), or load ``scenario``.

        ``scenario``: a dict in scenario syntax, or a shipped scenario's name (``nightly``, ``tagged-1000``) or a file's path.
        """
        return self.control("POST", "/reset", {"scenario": scenario} if scenario is not None else {})

    def jobs(self):
        """Each job's key, id, name, project, phase, polls and timeline."""
        return self.control("GET", "/jobs")["jobs"]

    def add_jobs(self, jobs, replace=False):
        """Add jobs in scenario syntax (timelines start now; same ids are replaced); return the control API's answer."""
        return self.control("POST", "/jobs", {"jobs": list(jobs), "replace": replace}, timeout=600)

    def update_job(self, key, **fields):
        """Tag (``tags``: the job's tags replaced), move (``workspace_id``) or rename (``name``) an existing job; its summary."""
        return self.control("PATCH", "/jobs/" + key, fields)["updated"]

    def add_job(self, **job):
        """Add one job in scenario syntax; return its v2 id (or ``<job_id>/<version_id>`` for a v1-only job)."""
        added = self.add_jobs([job])["added"][0]
        return added["id"] or added["key"]

    def remove_job(self, key):
        """Remove a job by v2 id or ``<job_id>/<version_id>``."""
        return self.control("DELETE", "/jobs/" + urllib.parse.quote(str(key), safe="/"))

    def add_fault(self, **fault):
        """Inject one fault (``type=throttle|error|reset|delay|truncate|html|drift|nulls|echo|wrong_job`` and its options); return its id."""
        return self.control("POST", "/faults", fault)["ids"][0]

    def add_faults(self, faults):
        """Inject several faults (a list of dicts); return their ids."""
        return self.control("POST", "/faults", {"faults": list(faults)})["ids"]

    def faults(self):
        """The pending faults with their ``hits`` and ``remaining`` counts."""
        return self.control("GET", "/faults")["faults"]

    def clear_faults(self):
        """Remove every pending fault."""
        return self.control("DELETE", "/faults")

    def id_token(self, subject="ci-job", lifetime=600, audience="huaweicloud"):
        """An id token (JWT) the emulator's IAM and STS trust, as a CI system's OIDC issuer writes it."""
        return self.control("POST", "/id-tokens", {"subject": subject, "lifetime": lifetime, "audience": audience})["id_token"]

    def http_listener(self):
        """The plain-HTTP URL serving instance metadata (``/meta-data/...``, ``/openstack/...``) and pod identity."""
        return self.control("POST", "/http-listener")["url"]

    def advance_clock(self, seconds):
        """Move the emulator clock forward (time-driven lifecycles, token expiry); return the total offset."""
        return self.control("POST", "/clock/advance", {"seconds": seconds})["clock_offset"]

    def expire_tokens(self):
        """Expire every issued IAM token and every temporary AK's security token now."""
        return self.control("POST", "/tokens/expire")

    def requests(self, since=0, path=None, limit=None):
        """The (redacted) request log entries after sequence number ``since``, optionally only paths containing ``path``."""
        query = {"since": since}
        if path:
            query["path"] = path
        if limit is not None:
            query["limit"] = limit
        return self.control("GET", "/requests?" + urllib.parse.urlencode(query))["requests"]

    def clear_requests(self):
        """Empty the request log; a request in flight now is not recorded when it ends."""
        return self.control("DELETE", "/requests")

    def mark(self):
        """A sequence number for ``requests(since=...)``: the requests sent after this call, and none sent before it
        (also none held past it: a record's ``seq`` is its request's number when it arrived)."""
        return self.control("POST", "/requests/mark")["seq"]

    def settings(self, **values):
        """Change settings (token_lifetime, clock_skew_tolerance, signature_check, ...); return them all."""
        if not values:
            return self.control("GET", "/settings")
        return self.control("PUT", "/settings", values)


class ClockMover(object):
    """Moves the emulator's clock while a play waits on ``job``: by ``step`` seconds every ``every`` seconds, or with
    ``per_poll`` by ``step`` after each GET of the job (one emulator minute a poll, however slowly the machine runs the
    playbook).  ``wait_first``: start only once the job has been read (the playbook's start-up takes no emulator time).
    A loaded machine can run two polls before this thread sees the first: the clock then moves two steps at once -
    ``longest`` is the most steps so moved at once (1 when the clock kept up)."""

    def __init__(self, emulator, job, per_poll=False, step=60, every=0.25, wait_first=True):
        self.emulator, self.path = emulator, "/training-jobs/%s" % job
        self.per_poll, self.step, self.every, self.wait_first = per_poll, step, every, wait_first
        self.longest = 1
        self.stopped = threading.Event()
        self.thread = None

    def _gets(self):
        return len([entry for entry in self.emulator.requests(path=self.path) if entry.get("method") == "GET" and entry.get("path", "").endswith(self.path)])

    def _move(self, seen):
        while self.wait_first and not self.stopped.is_set() and not self._gets():
            self.stopped.wait(0.05)
        if self.wait_first:
            seen = self._gets()
        while not self.stopped.wait(0.05 if self.per_poll else self.every):
            if not self.per_poll:
                self.emulator.advance_clock(self.step)
                continue
            now = self._gets()
            if now > seen:
                self.emulator.advance_clock(self.step * (now - seen))
                self.longest = max(self.longest, now - seen)
                seen = now

    def __enter__(self):
        # The GETs counted from here (without wait_first): each one the play sends after the mover started moves the clock.
        self.thread = threading.Thread(target=self._move, args=(0 if self.wait_first else self._gets(),), daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *_exc):
        self.stopped.set()
        self.thread.join(10)
