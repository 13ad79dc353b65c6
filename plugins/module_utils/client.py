# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTTP client core: endpoints, authentication, retries with backoff, timeouts, TLS and proxies.

One :class:`ModelArtsClient` holds one ``requests`` session (so concurrent
calls share its connection pool) and is safe to use from several threads.
Every call returns parsed JSON or raises
:class:`~ansible_collections.modelarts.training.plugins.module_utils.errors.ModelArtsError`.
"""

from __future__ import annotations

import datetime
import json
import random
import re
import socket
import ssl
import threading
import time
import traceback
import warnings

from urllib.parse import quote, urlsplit

from ansible_collections.modelarts.training.plugins.module_utils import auth
from ansible_collections.modelarts.training.plugins.module_utils import credentials as credentials_mod
from ansible_collections.modelarts.training.plugins.module_utils.errors import (
    ModelArtsError,
    HINTS,
    RETRYABLE_STATUS,
    error_from_response,
)
from ansible_collections.modelarts.training.plugins.module_utils.iam import IamSession
from ansible_collections.modelarts.training.plugins.module_utils import watchdog as watchdog_mod
from ansible_collections.modelarts.training.plugins.module_utils.options import (
    CONNECTION_OPTIONS,
    ConnectionConfigError,
    CREDENTIAL_TEXT_OPTIONS,
    REGION_PATTERN,
    SECRET_OPTIONS,
    ca_bundle_problem,
    check_credentials,
    describe,
    where as option_origin,
    proxy_secrets,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import excerpt, label, redact

try:
    import requests
    import requests.adapters

    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None
except ImportError:
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()

# The collection version; galaxy.yml is where it is set (tests/unit/.../test_version.py keeps this copy equal).
COLLECTION_VERSION = "1.0.0"
USER_AGENT = "modelarts.training/%s (Ansible collection; +https://github.com/modelarts-training/modelarts.training)" % COLLECTION_VERSION
# The longest Retry-After honoured (unless backoff_max_delay is longer); a deadline may cut it shorter.
RETRY_AFTER_LIMIT = 300.0
# The pages of one search count together: at most this many times max_response_bytes (200 pages of 50 documents of
# a few KiB each fit; a server that sends more is stopped, not followed to the 200th page).
SEARCH_BYTES_FACTOR = 8
# Transport errors that say the request can never work as configured: retrying them only wastes the backoff.
PERMANENT_TRANSPORT_ERRORS = ("SSLError", "InvalidURL", "InvalidSchema", "MissingSchema", "InvalidProxyURL", "InvalidHeader", "URLRequired")
# What OpenSSL says when the answer to a ClientHello is not TLS (a plain HTTP server on an https:// URL).
_PLAIN_ANSWER = re.compile(r"WRONG_VERSION_NUMBER|wrong version number|record layer failure|packet length too long|http request", re.IGNORECASE)


# Regions whose ModelArts endpoint does not end in .myhuaweicloud.com (from the official SDK's region map).
MODELARTS_DOMAIN_EXCEPTIONS = {"ap-southeast-1": "myhuaweicloud.cn"}


def _region_host(service, region):
    # The one place a region becomes part of a host name: only a region name may (a region such as
    # "x.other.host#" or "cn-north-4@other.host/" would move the request, its signature or token elsewhere).
    if not isinstance(region, str) or not REGION_PATTERN.fullmatch(region):
        raise ConnectionConfigError("%s must be a region name such as cn-north-4 to derive the %s endpoint" % (describe("region"), service))
    domain = MODELARTS_DOMAIN_EXCEPTIONS.get(region, "myhuaweicloud.com") if service == "modelarts" else "myhuaweicloud.com"
    return "https://%s.%s.%s" % (service, region, domain)


def modelarts_endpoint(region):
    """Default ModelArts endpoint of a region (``ConnectionConfigError`` for anything but a region name)."""
    return _region_host("modelarts", region)


def iam_endpoint(region):
    """Default IAM endpoint of a region (``ConnectionConfigError`` for anything but a region name)."""
    return _region_host("iam", region)


def escape(segment):
    """Percent-encode one path segment so an id can never reach another URL (``/``, ``?``, ``#``, ``%``).

    A bare ``.`` or ``..`` is refused (``ConnectionConfigError``): percent-encoding does not protect it, since
    ``%2E%2E`` is decoded back and collapsed into the parent path by HTTP libraries, proxies and servers.
    """
    text = str(segment)
    if text.strip(".") == "":
        raise ConnectionConfigError("%r cannot be a URL path segment (a job or project id is never only dots)" % text)
    return quote(text, safe="")


def parse_retry_after(value, now=None):
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # pylint: disable=import-outside-toplevel  # rare: only HTTP-date Retry-After headers need it

    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    current = now or datetime.datetime.now(datetime.timezone.utc)
    return max(0.0, (moment - current).total_seconds())


# The headers requests sends (its own rules): a name without ':' or leading whitespace, a value without a line break or leading whitespace.
_HEADER_NAME = re.compile(r"[^:\s][^:\r\n]*")
_HEADER_VALUE = re.compile(r"(?:\S[^\r\n]*)?")


def _sendable_header(name, value):
    """Whether requests would send this header (a value it refuses makes it raise InvalidHeader, quoting the value)."""
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return isinstance(name, str) and isinstance(value, str) and bool(_HEADER_NAME.fullmatch(name)) and bool(_HEADER_VALUE.fullmatch(value))


def _no_netrc_auth(prepared):
    """Leave the request as it is: the signature or the token is the only credential a ModelArts call carries."""
    return prepared


# What to do about a proxy URL that requests reads otherwise than it is written (never the URL itself: it holds a password).
PROXY_ENCODING_HINT = (
    "it cannot be read as scheme://user:password@host:port: percent-encode the reserved characters of its user name and password "
    "('/' as %2F, '@' as %40, '#' as %23, '?' as %3F, '%' as %25), e.g. http://user:pa%2Fss@proxy:3128 (the URL is not shown: it holds a password)"
)
# What to do about a proxy URL whose host and port cannot be read at all (an unclosed IPv6 bracket, a port that is no number).
PROXY_SHAPE_HINT = (
    "it is not a URL of the form scheme://host:port (with user:password@ before the host for a proxy that wants them): "
    "an IPv6 host goes in brackets (http://[fd00::1]:3128), a port is a number from 1 to 65535 (the URL is not shown: it may hold a password)"
)


def _readings(url):
    """The ``(host, port)`` of ``url`` as the standard library reads it and, with requests, as urllib3 (what requests sends
    with) does; ValueError when either cannot read it (urllib3's LocationParseError is a ValueError, as are an unclosed
    bracket and a port that is no number for urlsplit)."""
    read = urlsplit(url)
    found = [(read.hostname, read.port)]
    if HAS_REQUESTS:
        import urllib3.util  # pylint: disable=import-outside-toplevel  # requests' own dependency

        parsed = urllib3.util.parse_url(url)
        found.append(((parsed.host or "").lower(), parsed.port))
    return found


def proxy_problem(proxy):
    """What is wrong with the proxy URL ``proxy`` (:data:`PROXY_SHAPE_HINT` or :data:`PROXY_ENCODING_HINT`, said after the
    option or variable that gave it), or None; never the URL itself, nor a part of it: it may hold a password.

    The host and port after the URL's last ``@`` must be readable (``http://u:p@[fd00::1`` is not: a traceback before,
    from inside the standard library).  Then requests must read that very host: a user name or password holding a raw
    ``/``, ``#`` or ``?`` ends the host part early (``http://user:pa/ss@proxy:3128`` names host ``user`` and port
    ``pa``, and its error message quotes them).  A raw ``@`` is read right, so it passes.  A URL without a scheme is
    read as requests reads one from the environment: ``http://`` first."""
    text = str(proxy)
    if "://" not in text:
        text = "http://" + text
    scheme, _sep, rest = text.partition("://")
    try:
        meant = _readings("%s://%s" % (scheme, rest.rpartition("@")[2]))
    except ValueError:
        return PROXY_SHAPE_HINT
    if not meant[0][0]:
        return PROXY_SHAPE_HINT
    if "@" not in rest:
        return None
    try:
        read = _readings(text)
    except ValueError:
        return PROXY_ENCODING_HINT
    return None if read == meant else PROXY_ENCODING_HINT


# The environment variables requests reads each proxy from (``getproxies``: the lower-case name wins over the upper-case one).
PROXY_VARIABLES = {"https": "https_proxy or HTTPS_PROXY", "http": "http_proxy or HTTP_PROXY", "all": "all_proxy or ALL_PROXY"}


# The ``proxies`` of a call that must reach its host directly (see :attr:`Call.direct`): no proxy for any scheme,
# whatever the ``proxy`` option or HTTPS_PROXY, HTTP_PROXY and ALL_PROXY say.
DIRECT = {"http": None, "https": None, "all": None}


def _new_requests_session(on_proxies=None):
    """A ``requests.Session`` whose ``request()`` reads the environment once per host and never ``.netrc``.

    ``Session.request`` looks the environment up on every call: ``.netrc`` (two file checks, and a
    matching entry, even a ``default`` one, would replace the AK/SK signature or add a second
    credential beside the token), then the proxy and CA variables. Here the proxy, ``no_proxy`` and
    CA variables still apply, resolved once per scheme and host (they do not change while a task
    runs): about 15% less CPU per sequential GET, 17% for 200 concurrent ones (docs/performance.md).
    ``on_proxies`` is given each set of proxy URLs resolved (``HTTPS_PROXY`` and the like included) before use.
    ``proxies=DIRECT`` sends the request without any proxy: the proxy variables are not read for it.
    """

    class _Session(requests.Session):  # pylint: disable=too-few-public-methods
        def __init__(self):
            super().__init__()
            self._settings = {}

        def request(self, method, url, headers=None, data=None, timeout=None, verify=None, proxies=None, stream=False, allow_redirects=True):
            # pylint: disable=arguments-differ,too-many-arguments
            prepared = self.prepare_request(requests.Request(method, url, headers=headers, data=data, auth=_no_netrc_auth))
            key = (urlsplit(prepared.url)[:2], verify, tuple(sorted((proxies or {}).items())))
            settings = self._settings.get(key)
            if settings is None:
                merged = self.merge_environment_settings(prepared.url, dict(proxies or {}), stream, verify, None)
                if proxies == DIRECT:
                    merged["proxies"] = {}
                if on_proxies is not None:
                    on_proxies(merged["proxies"])
                settings = self._settings[key] = dict(proxies=merged["proxies"], verify=merged["verify"], cert=merged["cert"])
            return self.send(prepared, timeout=timeout, allow_redirects=allow_redirects, stream=stream, **settings)

    return _Session()


# The service name of a Call that obtains credentials (a provider's call through the transport).
CREDENTIALS_SERVICE = "credentials"


def _call_name(call):
    """``METHOD URL`` of a call, without the query string, for messages."""
    return "%s %s" % (call.method, call.url.split("?", 1)[0])


def _search():
    """The search API's paging and id batches (``search.py``), imported by the calls that search only: AnsiballZ
    compiles every module_utils file a module imports on each run, and reading jobs by id never searches."""
    from ansible_collections.modelarts.training.plugins.module_utils import search  # pylint: disable=import-outside-toplevel

    return search


def transport_error(exc, operation, secrets, headers=None, url=None, ca_bundle=None):
    """The :class:`ModelArtsError` for a transport failure: its type and innermost reason, redacted; never a traceback.

    ``url`` (what was asked) and ``ca_bundle`` (the option's value) let a TLS failure name its cause."""
    reason = exc
    # requests wraps urllib3 errors, which wrap the socket error; the
    # innermost one says what happened in the fewest words.
    for _depth in range(4):
        inner = reason.args[0] if reason.args and isinstance(reason.args[0], Exception) else getattr(reason, "reason", None)
        if not isinstance(inner, Exception):
            break
        reason = inner
    name = type(exc).__name__
    if name == "InvalidHeader" or (isinstance(exc, ValueError) and str(exc).startswith("Invalid header")):
        # requests (or http.client) quotes the refused value, escaped: name the header only.
        bad = [label(key, 60) for key, value in (headers or {}).items() if not _sendable_header(key, value)]
        which = "the header %s" % bad[0] if len(bad) == 1 else "the headers %s" % ", ".join(bad) if bad else "a header"
        text = "%s cannot be sent: leading whitespace, a line break or not text (the value is not shown)" % which
        return ModelArtsError("%s: %s: %s" % (operation, name, text), operation=operation, transient=False)
    text = excerpt(str(reason), secrets, length=200)
    if "CERTIFICATE_VERIFY_FAILED" in text and ca_bundle:
        text += " (the server certificate is not signed by a CA of ca_bundle %s: give the file of the CA that signed it, or validate_certs: false)" % (
            label(ca_bundle, 300),
        )
    elif "CERTIFICATE_VERIFY_FAILED" in text or (name == "SSLError" and not _PLAIN_ANSWER.search(text)):
        text += " (the server certificate is not trusted: set ca_bundle (HUAWEICLOUD_CA_BUNDLE) to its CA file, or validate_certs: false)"
    elif name == "SSLError":
        where = urlsplit(url or "").netloc or "the endpoint"
        text += " (the server at %s does not answer in TLS: if it serves plain HTTP, use http://%s)" % (label(where, 200), label(where, 200))
    return ModelArtsError("%s: %s: %s" % (operation, name, text), operation=operation, transient=name not in PERMANENT_TRANSPORT_ERRORS)


def _name_the_file(error, used):
    """A refusal of an access key read from a credentials file names the file (the options hold no key to check)."""
    source = getattr(used, "source", None) or ""
    if source.startswith("credentials file ") and used.access_key:
        error.args = ("%s (the access key and secret key were read from %s, ak and sk of its [basic] section: check them there)" % (error.args[0], source),)


def _origin(url):
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def _causes(exc):
    """``exc`` and the exceptions it wraps (requests wraps urllib3's, which wrap the socket's)."""
    found = [exc]
    for _depth in range(6):
        inner = found[-1].args[0] if found[-1].args and isinstance(found[-1].args[0], BaseException) else getattr(found[-1], "reason", None)
        if not isinstance(inner, BaseException) or inner in found:
            break
        found.append(inner)
    return found


def no_connection(exc):
    """Whether ``exc`` (a ``requests`` error) says no connection was made: refused, a name that does not resolve, no
    answer to the connect, a proxy that could not be reached, TLS that failed; not a connection reset after it was
    made."""
    if isinstance(exc, (requests.exceptions.ConnectTimeout, requests.exceptions.ProxyError, requests.exceptions.SSLError)):
        return True
    return any(type(cause).__name__ in ("NewConnectionError", "NameResolutionError") for cause in _causes(exc))


def speaks_tls(host, port, timeout):
    """Whether the server at ``host:port`` completes a TLS handshake (its certificate unchecked): asked once, when a
    plain-HTTP request there was dropped."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            with context.wrap_socket(sock, server_hostname=host):
                return True
    except (OSError, ValueError):
        return False


def connected_before_failing(exc, stage):
    """Whether a failed attempt had connected to its host: False (no connection could be made), True (connected, no
    complete answer came), None (not known).  ``exc`` is the transport's exception (None when the deadline ended the
    attempt); ``stage`` what the attempt was doing (``watchdog.Watch.stage``)."""
    if exc is not None and HAS_REQUESTS:
        if isinstance(exc, requests.exceptions.ConnectTimeout):
            return False
        if isinstance(exc, requests.exceptions.ReadTimeout):
            return True
        import urllib3.exceptions  # pylint: disable=import-outside-toplevel  # requests' own dependency

        if any(isinstance(cause, (urllib3.exceptions.NewConnectionError, ConnectionRefusedError, socket.gaierror)) for cause in _causes(exc)):
            return False
        return None
    stage = stage or ""
    if stage.startswith("while connecting"):
        return False
    if stage.startswith(("while waiting for the status line", "while the body was still arriving")):
        return True
    return None


def tls_verify(params):
    """What ``verify`` every request passes: False, a CA bundle path, or True."""
    # requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE replace a session's
    # verify setting; passing verify on every request keeps ca_bundle in charge.
    if not params["validate_certs"]:
        return False
    bundle = params["ca_bundle"]
    problem = ca_bundle_problem(bundle) if bundle else None
    if problem:
        # requests would raise a bare OSError on every attempt, each one retried (or a directory would trust nothing).
        raise ConnectionConfigError("%s: %s" % (describe("ca_bundle"), problem))
    return bundle or True


def quiet_insecure_warnings(*bases):
    """Silence urllib3's warning about unverified HTTPS requests to the hosts of ``bases`` (and no other host)."""
    # urllib3 warns on every unverified request, straight to stderr (in a lookup, Ansible then
    # complains that a worker wrote to stderr); the caller warns once instead.  The filter only
    # matches this client's own hosts.
    for base in bases:
        host = urlsplit(base).hostname
        if host:
            warnings.filterwarnings("ignore", message=r"Unverified HTTPS request is being made to host '%s'" % re.escape(host))


def new_session(pool_size, on_proxies=None):
    """A ``requests`` session with the watched adapter for both schemes and the collection's User-Agent."""
    if not HAS_REQUESTS:
        raise ConnectionConfigError("the Python library 'requests' is required")
    session = _new_requests_session(on_proxies)
    adapter = watchdog_mod.watched_adapter(pool_size)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    return session


class _Consumed(object):
    """A 2xx body read as it arrived, by a call's ``consume``: the data it returned."""

    __slots__ = ("data",)

    def __init__(self, data):
        self.data = data


class Response(object):
    """A successful API answer: parsed ``data``, HTTP ``status``, the ``request_id``, the body's ``size`` in bytes, and
    ``call``, the method and URL (without its query) that answered, for messages."""

    __slots__ = ("data", "status", "request_id", "headers", "size", "call")

    def __init__(self, data, status, request_id, headers, size=0, call=None):
        # pylint: disable=too-many-arguments
        self.data = data
        self.status = status
        self.request_id = request_id
        self.headers = headers
        self.size = size
        self.call = call


class Call(object):
    """One API call as it goes through retries and attempts: what to send, where, and by when.

    ``authenticate``: sign with the client's current credentials; ``sign_with``: sign with these
    credentials instead (a credential exchange); neither: an anonymous call.  ``connect_timeout``
    replaces the client's for this call, ``retries`` its ``backoff_retries``, and ``expect`` is
    ``json`` (parsed) or ``text``.  ``consume``, when given, reads a 2xx body as it arrives: it gets an iterator of byte
    pieces and returns the answer's data (raising ValueError for a body it cannot read), so that a large answer is never
    held whole; ``max_bytes`` bounds this call's body below ``max_response_bytes``.
    ``direct``: the host is reached without any proxy (the ``proxy``
    option and the proxy variables alike): the instance's or the pod's own credential service.
    ``signer`` is set by each attempt to the credentials it was signed with (None: unsigned).
    """

    __slots__ = (
        "method",
        "url",
        "headers",
        "payload",
        "operation",
        "service",
        "deadline",
        "authenticate",
        "sign_with",
        "connect_timeout",
        "retries",
        "expect",
        "consume",
        "max_bytes",
        "direct",
        "signer",
    )

    def __init__(
        self,
        method,
        url,
        headers,
        payload,
        operation,
        service,
        deadline,
        authenticate,
        sign_with=None,
        connect_timeout=None,
        retries=None,
        expect="json",
        consume=None,
        max_bytes=None,
        direct=False,
    ):
        # pylint: disable=too-many-arguments
        self.method = method
        self.url = url
        self.headers = headers
        self.payload = payload
        self.operation = operation
        self.service = service
        self.deadline = deadline
        self.authenticate = authenticate
        self.sign_with = sign_with
        self.connect_timeout = connect_timeout
        self.retries = retries
        self.expect = expect
        self.consume = consume
        self.max_bytes = max_bytes
        self.direct = direct
        self.signer = None


class _Transport(credentials_mod.Transport):
    """What credential providers ask of a client: calls to absolute URLs through its retries, deadline,
    TLS, proxy and error model, and its secrets to mask."""

    def __init__(self, client):
        self._client = client

    @property
    def iam_endpoint(self):
        return self._client.iam_endpoint

    @property
    def sts_endpoint(self):
        return self._client.sts_endpoint

    def send(self, request):
        client = self._client
        deadline = client._bounded(request.deadline)  # pylint: disable=protected-access
        if request.within is not None:
            deadline = min(deadline, client._clock() + request.within)  # pylint: disable=protected-access
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
        return client._with_retries(call)  # pylint: disable=protected-access

    def remember_secret(self, value):
        self._client._remember_secret(value)  # pylint: disable=protected-access

    def utcnow(self):
        return self._client._utcnow()  # pylint: disable=protected-access

    def read_text(self, path, option, deadline=None):
        # A file on a hung mount cannot hold the exchange past the call's deadline.
        client = self._client
        left = None if deadline is None else deadline - client._clock()  # pylint: disable=protected-access
        return credentials_mod.read_text_file(path, option, timeout=left, environ=client._environ)  # pylint: disable=protected-access


class ModelArtsClient(object):
    """A client for the ModelArts and IAM APIs.

    ``params`` is a dict holding the connection options (see
    ``options.CONNECTION_OPTIONS``); missing keys take their defaults.  The
    credential rules are checked at construction, before any request.

    ``clock``, ``sleep``, ``rand`` and ``utcnow`` are injectable for tests:
    a monotonic clock, a sleep function, ``random.random`` and a function
    returning the aware UTC ``datetime``.  ``session`` may be any object with
    a ``requests.Session``-like ``request()`` method.
    """

    def __init__(
        self,
        params,
        session=None,
        clock=time.monotonic,
        sleep=time.sleep,
        rand=random.random,
        utcnow=None,
        pool_size=16,
        trace=None,
        environ=None,
        watchdog=None,
        origins=None,
    ):
        # pylint: disable=too-many-arguments
        # Where each option came from (options.Settings.origins), for messages that name a value's source.
        self._origins = dict(origins or {})
        # An empty string (a blank environment variable or AWX credential field)
        # means "not set", as it does for the credential rules.
        self.params = dict((name, None if params.get(name) == "" else params.get(name)) for name in CONNECTION_OPTIONS)
        for name in CREDENTIAL_TEXT_OPTIONS:
            if isinstance(self.params[name], str):
                self.params[name] = self.params[name].strip() or None
        for name, (spec, _env) in CONNECTION_OPTIONS.items():
            if self.params[name] is None and "default" in spec:
                self.params[name] = spec["default"]
        self.kind = check_credentials(self.params)
        region = self.params["region"]
        self.endpoint = (self.params["endpoint"] or modelarts_endpoint(region)).rstrip("/")
        # Without a region the IAM endpoint is needed only when it is given (check_credentials asks for it then).
        self.iam_endpoint = (self.params["iam_endpoint"] or (iam_endpoint(region) if region else "")).rstrip("/")
        # Only the OIDC kind calls STS; where the id token may go is decided before any request (credentials.sts_base).
        self.sts_endpoint = credentials_mod.sts_base(self.params) if self.kind == "oidc" else (self.params["sts_endpoint"] or "").rstrip("/")
        self._secrets = tuple(self.params[name] for name in SECRET_OPTIONS if self.params.get(name))
        self._clock = clock
        self._sleep = sleep
        self._rand = rand
        self._utcnow = utcnow or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self._trace = trace
        self._lock = threading.Lock()
        self._throttled = 0
        # The (scheme, host:port) that have answered this client over HTTP once: a host that never has and takes no
        # connection is unreached (ModelArtsError.unreached), and a wait ends on it instead of retrying to its deadline.
        self._answered = set()
        self._speaks_tls = {}
        self.transport = _Transport(self)
        # One provider for the kind (options.resolve decided it); renewal is the provider's business, not the client's.
        self.credentials = credentials_mod.Renewing(credentials_mod.provider_for(self.kind, self.params, environ))
        self._refused_after_success = False
        self._succeeded = False
        self._abandoned = False
        # The environment the task sees (os.environ when None): a file's "~" is its HOME's.
        self._environ = environ
        self.iam = IamSession(self.params, self.request, self.current_credentials)
        self._verify = tls_verify(self.params)
        if self._verify is False:
            quiet_insecure_warnings(self.endpoint, self.iam_endpoint)
        proxy = self.params["proxy"]
        problem = proxy_problem(proxy) if proxy else None
        if problem:
            raise ConnectionConfigError("%s: %s" % (describe("proxy"), problem))
        self._secrets += tuple(value for value in proxy_secrets(proxy) if value not in self._secrets)
        self._proxies = {"http": proxy, "https": proxy} if proxy else None
        self._session = session if session is not None else new_session(pool_size, self._proxies_resolved)
        # Attempts are watched when the client made its own session (or when asked).
        self._watchdog = watchdog_mod.Watchdog(clock) if (session is None if watchdog is None else watchdog) else None

    # -- set-up ---------------------------------------------------------

    def _proxies_resolved(self, proxies):
        # The environment's proxies (HTTPS_PROXY...) as requests resolved them: their credentials are as secret as the option's.
        for name, url in sorted((proxies or {}).items()):
            if not url or url == self.params["proxy"]:
                continue
            for value in proxy_secrets(url):
                self._remember_secret(value)
            problem = proxy_problem(url)
            if problem:
                variable = PROXY_VARIABLES.get(name, "HTTPS_PROXY, HTTP_PROXY or ALL_PROXY")
                where = "the %s proxy from the environment (%s)" % (label(name, 20), variable)
                raise requests.exceptions.InvalidProxyURL("%s: %s" % (where, problem))

    def abandon(self):
        """End the requests other threads have in flight and send no other: the task was interrupted while they ran (a
        task's ``timeout:`` in the controller's process, ^C), and their answers are dropped.  Their sockets are shut down
        (the watchdog's), an attempt not yet sent is refused and no retry waits; then :meth:`close`."""
        self._abandoned = True
        if self._watchdog is not None:
            self._watchdog.abandon()

    def close(self):
        """Close the pooled connections and let the watchdog thread end."""
        if self._watchdog is not None:
            self._watchdog.close()
        closer = getattr(self._session, "close", None)
        if closer:
            closer()

    def redact(self, text):
        """``text`` with this client's secret values masked."""
        return redact(text, self._secrets)

    # -- authentication --------------------------------------------------

    @property
    def project_id(self):
        """The project id: given, or resolved once from ``region`` through IAM (within one request budget)."""
        return self.resolve_project_id()

    def resolve_project_id(self, deadline=None):
        """The project id, looked up in IAM the first time; the lookup ends by ``deadline`` (default: one request budget)."""
        return self.iam.project_id(self._bounded(deadline))

    def _remember_secret(self, value):
        if not value:
            return
        with self._lock:
            if value not in self._secrets:
                self._secrets = self._secrets + (value,)

    def secrets(self):
        """Every secret value this client knows: the options' and each one obtained or issued since."""
        return self._secrets

    def current_credentials(self, deadline=None):
        """The credentials calls are signed with now: obtained the first time, renewed when due."""
        return self.credentials.current(self.transport, self._bounded(deadline))

    def request_budget(self):
        """The longest one call may take without a deadline: every attempt's timeouts and every backoff sleep.

        ``(backoff_retries + 1) * (connect_timeout + request_timeout) + backoff_retries * backoff_max_delay``
        """
        retries = max(0, int(self.params["backoff_retries"]))
        attempt = float(self.params["connect_timeout"]) + float(self.params["request_timeout"])
        return (retries + 1) * attempt + retries * float(self.params["backoff_max_delay"])

    def _bounded(self, deadline):
        return deadline if deadline is not None else self._clock() + self.request_budget()

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
                now=self._utcnow(),
            )
        headers = dict(call.headers)
        headers["X-Auth-Token"] = signer.auth_token
        return call.url, headers

    # -- requests ----------------------------------------------------------

    def request(self, method, path, query=None, body=None, operation=None, service="modelarts", deadline=None, authenticate=True, consume=None, max_bytes=None):
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
        successes are reported as expired.  ``consume`` and ``max_bytes``: see :class:`Call`.
        """
        operation = operation or "%s %s" % (method, path)
        deadline = self._bounded(deadline)
        base = self.endpoint if service == "modelarts" else self._iam_base(deadline)
        url = base + path
        if query:
            url += "?" + auth.canonical_query(query)
        payload = json.dumps(body, separators=(",", ":")).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json;charset=UTF-8"} if payload is not None else {}
        call = Call(method, url, headers, payload, operation, service, deadline, authenticate, consume=consume, max_bytes=max_bytes)
        if not authenticate:
            return self._with_retries(call)
        try:
            response = self._with_retries(call)
        except ModelArtsError as error:
            # The credentials the refused attempt was signed with, not those current when the call began: a timed
            # renewal between its attempts makes them differ, and renewing is for the credentials refused.
            used = call.signer
            if error.status != 401 or used is None:
                raise
            if self.credentials.refused(self.transport, used, deadline) is used:
                raise self._refusal(error, used)
            try:
                response = self._with_retries(call)
            except ModelArtsError as again:
                if again.status == 401 and call.signer is not None:
                    _name_the_file(again, call.signer)
                raise
        self._succeeded = True
        return response

    def _named(self, name):
        return option_origin(name, self._origins[name]) if self._origins.get(name) else describe(name)

    def _source_of(self, url):
        """Which option the host of ``url`` came from, for a connection refused or a name that does not resolve:
        ``127.0.0.1:9 is the host of endpoint (environment variable HUAWEICLOUD_MODELARTS_ENDPOINT)``; '' for another host."""
        origin = _origin(url)
        for name, base, service in (
            ("endpoint", self.endpoint, "ModelArts"),
            ("iam_endpoint", self.iam_endpoint, "IAM"),
            ("sts_endpoint", self.sts_endpoint, "STS"),
        ):
            if not base or _origin(base) != origin:
                continue
            host = label(origin[1], 200)
            if self.params.get(name):
                return "%s is the host of %s: check it" % (host, self._named(name))
            if name != "sts_endpoint" and self.params.get("region"):
                return "%s is the %s endpoint of %s %s: check the region, or set %s" % (
                    host,
                    service,
                    self._named("region"),
                    label(self.params["region"], 60),
                    describe(name),
                )
        return ""

    def _iam_base(self, deadline):
        # Without iam_endpoint or region, the credentials may name IAM (a credentials file's iam_endpoint).
        if self.iam_endpoint:
            return self.iam_endpoint
        hint = (self.current_credentials(deadline).iam_endpoint or "").rstrip("/")
        if not hint:
            raise ConnectionConfigError("set %s, or %s to say which IAM endpoint to call" % (describe("region"), describe("iam_endpoint")))
        return hint

    def _refusal(self, error, used):
        """The error for a 401 that renewal could not cure: temporary credentials given by the user expire, and say so;
        credentials read from a credentials file name the file."""
        _name_the_file(error, used)
        if self._succeeded and used.security_token and not self.credentials.provider.refreshable:
            # Judged by the refusal after success, not by the gateway's wording; the code's own hint (check the clock,
            # renew auth_token) would contradict this one, so it goes.
            hint = HINTS.get(error.error_code)
            if hint:
                error.args = (error.args[0].replace(" (%s)" % hint, "", 1),)
            error.args = (
                "%s (the temporary credentials given as access_key, secret_key and security_token worked earlier in this task and are now "
                "refused: they have expired. Temporary credentials given as options are not renewed; let the collection obtain and renew "
                "them instead: idp_id and id_token_file, oidc_provider_urn and oidc_agency_urn with an id token, a credentials file, "
                "CCE pod identity or ECS instance metadata (docs/authentication.md))" % error.args[0],
            )
        return error

    def _with_retries(self, call):
        retries = max(0, int(self.params["backoff_retries"] if call.retries is None else call.retries))
        deadline = call.deadline
        attempt = 0
        while True:
            error, retry_after = self._attempt(call)
            if not isinstance(error, ModelArtsError):
                return error
            if not error.transient or attempt >= retries or self._abandoned:
                if attempt:
                    error.args = ("%s (gave up after %d attempts)" % (error.args[0], attempt + 1),)
                    error.not_sent = False  # earlier attempts were sent
                raise error
            delay = self._backoff(attempt, retry_after)
            limit = max(RETRY_AFTER_LIMIT, float(self.params["backoff_max_delay"]))
            if retry_after is not None and retry_after > limit:
                # Retry-After is honoured as asked (sleeping less would only be throttled
                # again), but a call with no deadline must not hang for hours on it.
                error.args = ("%s (the service asked to retry after %gs, more than the %gs this client waits)" % (error.args[0], retry_after, limit),)
                raise error
            if deadline is not None and self._clock() + delay >= deadline:
                wanted = "the service asked to retry after %gs" % retry_after if retry_after is not None else "the next retry is due in %.1fs" % delay
                error.args = (
                    "%s (no time left before the deadline to retry: it passes in %.1fs and %s)" % (error.args[0], max(0.0, deadline - self._clock()), wanted),
                )
                raise error
            self._sleep(delay)
            attempt += 1

    def _backoff(self, attempt, retry_after):
        if retry_after is not None:
            return retry_after
        ceiling = min(float(self.params["backoff_max_delay"]), float(self.params["backoff_delay"]) * (2**attempt))
        return self._rand() * ceiling

    def _timeouts(self, deadline, connect_timeout=None):
        remaining = max(0.001, deadline - self._clock())
        connect = float(self.params["connect_timeout"] if connect_timeout is None else connect_timeout)
        return min(connect, remaining), min(float(self.params["request_timeout"]), remaining)

    def _attempt(self, call):
        """One HTTP exchange, ended by the call's deadline. Returns ``(Response, None)`` or ``(ModelArtsError, retry_after)``."""
        operation, deadline = call.operation, call.deadline
        if self._abandoned:
            return ModelArtsError("%s: not sent, the task was interrupted" % operation, operation=operation), None
        if self._clock() >= deadline:
            error = ModelArtsError("%s: the deadline passed before the request could be sent" % operation, operation=operation, transient=True)
            error.not_sent = True
            return error, None
        send_url, send_headers = self._auth_headers(call)
        started = self._clock()
        watch = None
        try:
            with watchdog_mod.watching(self._watchdog, call.deadline) as watch:
                raw, content = self._exchange(call, send_url, send_headers, watch)
        except ModelArtsError as error:
            error.operation = operation
            error.args = ("%s: %s" % (operation, error.args[0]),)
            if error.status is None:
                error.connected = connected_before_failing(None, getattr(watch, "stage", None))
            return error, None
        except Exception as exc:  # pylint: disable=broad-except
            # Any transport failure (connection refused or reset, TLS, timeout,
            # proxy) is reported by type and a redacted message, never a traceback.
            error = transport_error(exc, operation, self._secrets, send_headers, call.url, self.params["ca_bundle"])
            error.connected = connected_before_failing(exc, getattr(watch, "stage", None))
            if no_connection(exc) and not isinstance(exc, (requests.exceptions.SSLError, requests.exceptions.ProxyError)):
                source = self._source_of(call.url)
                if source:
                    error.args = ("%s (%s)" % (error.args[0], source),)
            return self._unreached(exc, error, call), None
        finally:
            self._note(call.method, call.url, started)
        status = raw.status_code
        with self._lock:
            self._answered.add(_origin(call.url))
        request_id = raw.headers.get("X-Request-Id")
        if status == 429:
            with self._lock:
                self._throttled += 1
        credential = call.service == CREDENTIALS_SERVICE
        if not 200 <= status < 300:
            retry_after = parse_retry_after(raw.headers.get("Retry-After"), self._utcnow()) if status in RETRYABLE_STATUS else None
            return error_from_response(operation, status, raw.headers, content, self._secrets, quote=not credential), retry_after
        if credential:
            return self._credential_answer(call, raw, status, content)
        if isinstance(content, _Consumed):
            return Response(content.data, status, request_id, raw.headers, call=self.redact(_call_name(call))), None
        try:
            text = content.decode("utf-8") if content else ""
            data = text if call.expect == "text" else json.loads(text) if text else None
        except (ValueError, RecursionError, UnicodeDecodeError):
            # A complete 2xx with an unreadable body is what a gateway or a cut
            # connection produces; a read-only call can safely try again.
            message = "%s: HTTP %s but the body is not valid JSON (%d bytes): %r" % (operation, status, len(content), excerpt(content, self._secrets))
            if request_id:
                message += " [request id %s]" % request_id
            return ModelArtsError(message, operation=operation, status=status, request_id=request_id, transient=True), None
        if isinstance(data, dict) and data.get("is_success") is False:
            # The v1 API reports some errors on HTTP 200: the same error as on a 4xx.
            return error_from_response(operation, status, raw.headers, content, self._secrets), None
        return Response(data, status, request_id, raw.headers, len(content or b"")), None

    def _unreached(self, exc, error, call):
        """``error`` marked ``unreached`` when no connection was made to a host that has never answered this client; a
        plain-HTTP request that a TLS server dropped also says to use https:// (and is not retried)."""
        if not (HAS_REQUESTS and isinstance(exc, requests.exceptions.ConnectionError)):
            return error
        origin = _origin(call.url)
        with self._lock:
            if origin in self._answered:
                return error
        error.unreached = no_connection(exc)
        parts = urlsplit(call.url)
        if parts.scheme == "http" and not self._proxies and "Connection aborted" in str(exc) and parts.hostname:
            if origin not in self._speaks_tls:
                timeout = max(0.001, min(float(self.params["connect_timeout"]), call.deadline - self._clock()))
                self._speaks_tls[origin] = speaks_tls(parts.hostname, parts.port or 80, timeout)
            if self._speaks_tls[origin]:
                where = label(parts.netloc, 200)
                error.args = ("%s (the server at %s answered in TLS: use https://%s)" % (error.args[0], where, where),)
                error.transient = False
        return error

    def _credential_answer(self, call, raw, status, content):
        """``(Response, None)`` for a 2xx credential answer, or ``(ModelArtsError, None)`` naming the call and what is wrong
        with its body - never a byte of it: the secrets it holds may not be known as such (a truncated answer)."""
        request_id = raw.headers.get("X-Request-Id")
        try:
            data = content.decode("utf-8", "replace") if call.expect == "text" else credentials_mod.parse_answer(content)
        except credentials_mod.UnreadableAnswer as problem:
            message = self.redact("%s: the answer of %s (HTTP %s) %s" % (call.operation, _call_name(call), status, problem))
            if request_id:
                message += " [request id %s]" % label(request_id, 80)
            return ModelArtsError(message, operation=call.operation, status=status, request_id=request_id, transient=True), None
        return Response(data, status, request_id, raw.headers, call=self.redact(_call_name(call))), None

    def _exchange(self, call, url, headers, watch):
        """Send the request and read the whole response: ``(raw response, body bytes)``."""
        raw = self._session.request(
            call.method,
            url,
            headers=headers,
            data=call.payload,
            timeout=self._timeouts(call.deadline, call.connect_timeout),
            verify=self._verify,
            proxies=DIRECT if call.direct else self._proxies,
            stream=True,
            allow_redirects=False,
        )
        try:
            watch.enter("while the body was still arriving")
            if call.service == CREDENTIALS_SERVICE:
                # What arrived is a credential answer: its token headers are secrets before any byte of the body.
                self._remember_answer(raw.headers, b"", "json")
            if call.consume is not None and 200 <= raw.status_code < 300:
                try:
                    content = _Consumed(
                        call.consume(watchdog_mod.body_pieces(raw, call.deadline, watch, self._clock, self.params, self._secrets, call.max_bytes))
                    )
                except ValueError as exc:
                    # What a cut connection or a gateway produces, as for a body read whole: a read-only call may try again.
                    message = "HTTP %s but the body is not readable JSON: %s" % (raw.status_code, label(exc, 200, self._secrets))
                    raise ModelArtsError(message, status=raw.status_code, request_id=raw.headers.get("X-Request-Id"), transient=True) from None
            else:
                content = watchdog_mod.read_body(raw, call.deadline, watch, self._clock, self.params, self._secrets, call.max_bytes)
        except ModelArtsError:
            raise
        except Exception as exc:  # pylint: disable=broad-except
            if call.service != CREDENTIALS_SERVICE or getattr(watch, "killed", False):
                raise
            # A broken body's error may quote the bytes read (a chunk size line): a credential answer is never quoted.
            raise ModelArtsError(
                "the answer of %s broke off while it arrived (%s; %d bytes received; not shown)" % (_call_name(call), type(exc).__name__, watch.received or 0),
                transient=True,
            ) from None
        finally:
            watchdog_mod.hand_back(watch, raw)
        if call.service == CREDENTIALS_SERVICE:
            self._remember_answer(raw.headers, content, call.expect)
        return raw, content

    def _remember_answer(self, headers, content, expect):
        """Every secret a credential answer holds, masked from now on: before it is parsed, whether or not it can be."""
        for value in credentials_mod.answer_secrets(headers, content, expect):
            self._remember_secret(value)

    def _note(self, method, url, started):
        if self._trace is not None:
            self._trace("%s %s %.3fs" % (method, url.split("?", 1)[0], self._clock() - started))

    # -- ModelArts operations ---------------------------------------------

    def get_training_job(self, job_id, deadline=None):
        """``GET /v2/{project_id}/training-jobs/{id}``: the v2 job document."""
        deadline = self._bounded(deadline)
        path = "/v2/%s/training-jobs/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id))
        return self.request("GET", path, operation="get training job %s" % label(job_id), deadline=deadline)

    def get_job_version(self, job_id, version_id, deadline=None):
        """``GET /v1/{project_id}/training-jobs/{job_id}/versions/{version_id}``: the legacy v1 document."""
        deadline = self._bounded(deadline)
        path = "/v1/%s/training-jobs/%s/versions/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(version_id))
        return self.request("GET", path, operation="get training job %s version %s" % (label(job_id), label(version_id)), deadline=deadline)

    def list_training_job_events(self, job_id, level=None, limit=100, offset=0, deadline=None, max_bytes=None):
        """``GET /v2/{project_id}/training-jobs/{id}/events``: one page of the job's events (newest first; ``offset`` is a page index);
        ``max_bytes`` bounds the answer below ``max_response_bytes``."""
        deadline = self._bounded(deadline)
        path = "/v2/%s/training-jobs/%s/events" % (escape(self.resolve_project_id(deadline)), escape(job_id))
        query = [("offset", str(int(offset))), ("limit", str(int(limit)))] + ([("level", level)] if level else [])
        return self.request("GET", path, query=query, operation="list events of training job %s" % label(job_id), deadline=deadline, max_bytes=max_bytes)

    def get_task_log_lines(self, job_id, task_id, lines, deadline=None, max_bytes=None):
        """``GET /v2/{project_id}/training-jobs/{id}/logs/{task_id}?lines=&order=desc``: the newest ``lines`` (1-500) lines of a
        task's log through AOM, newest first; HTTP 204 with no body while the task has no log.  ``max_bytes`` bounds the answer."""
        deadline = self._bounded(deadline)
        path = "/v2/%s/training-jobs/%s/logs/%s" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(task_id))
        query = [("lines", str(int(lines))), ("order", "desc")]
        operation = "read the log of task %s of training job %s" % (label(task_id), label(job_id))
        return self.request("GET", path, query=query, operation=operation, deadline=deadline, max_bytes=max_bytes)

    def get_task_log_preview(self, job_id, task_id, deadline=None, consume=None):
        """``GET /v2/{project_id}/training-jobs/{id}/tasks/{task_id}/logs/preview``: the latest part of a task's log (at most 5 MB)
        with its ``current_size`` and ``full_size``; ``consume`` reads the answer as it arrives (see :class:`Call`)."""
        deadline = self._bounded(deadline)
        path = "/v2/%s/training-jobs/%s/tasks/%s/logs/preview" % (escape(self.resolve_project_id(deadline)), escape(job_id), escape(task_id))
        operation = "preview the log of task %s of training job %s" % (label(task_id), label(job_id))
        return self.request("GET", path, operation=operation, deadline=deadline, consume=consume)

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
        budget = SEARCH_BYTES_FACTOR * int(self.params["max_response_bytes"])
        if isinstance(name, str):
            return search.jobs_named(post, name, page_size=page_size, max_pages=max_pages, pages=pages, max_bytes=budget)
        return search.jobs_matching(post, name, page_size=page_size, max_pages=max_pages, pages=pages, created_since=created_since, max_bytes=budget)

    def search_pages(self, search, page_size=50, pages=None, counts=None):
        """The v2 jobs of the ``selection.Search`` ``search``, a page at a time (``search.pages_matching``: a list of documents
        per page, no limit on the pages, each page within ``max_response_bytes``): how the event source lists every match
        of a watch, however many, holding one page.  Each request has its own budget."""

        def post(body, operation):
            path = "/v2/%s/training-job-searches" % escape(self.resolve_project_id())
            return self.request("POST", path, body=body, operation=operation)

        return _search().pages_matching(post, search, page_size=page_size, pages=pages, counts=counts)

    def search_training_jobs_by_id(self, ids, deadline=None, workspace_id=None):
        """``{id: document}`` of the v2 jobs among ``ids`` (at most ``search.MAX_IDS``) the search API returns, in the
        workspace ``workspace_id`` (None: the default one): one request."""
        deadline = self._bounded(deadline)
        path = "/v2/%s/training-job-searches" % escape(self.resolve_project_id(deadline))

        def post(body, operation):
            return self.request("POST", path, body=body, operation=operation, deadline=deadline)

        return _search().jobs_with_ids(post, ids, workspace_id=workspace_id)

    @property
    def throttled(self):
        """How many answers so far were HTTP 429 (throttling), retried or not: callers pace their rounds by it."""
        return self._throttled
