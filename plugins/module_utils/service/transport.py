# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTTP transport: the ``requests`` session with its proxies and TLS, one call's attempts with retries, backoff and
``Retry-After``, the one deadline (the watchdog ends an attempt there), body limits, which hosts have answered, and
direct calls.  It knows nothing of ModelArts: what a call is for, where its host came from and how it is signed are
the caller's (``sign`` and ``source_of``).

One :class:`HttpTransport` holds one ``requests`` session (so concurrent calls share its connection pool) and is safe
to use from several threads.  Every call returns a :class:`Response` or raises
:class:`~ansible_collections.modelarts.training.plugins.module_utils.errors.ModelArtsError`.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import re
import socket
import ssl
import threading
import time
import traceback
import warnings

from urllib.parse import urlsplit

from ansible_collections.modelarts.training.plugins.module_utils.service import credentials as credentials_mod
from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError, RETRYABLE_STATUS, error_from_response
from ansible_collections.modelarts.training.plugins.module_utils.service import watchdog as watchdog_mod
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import ca_bundle_problem, describe, proxy_secrets
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
# Transport errors that say the request can never work as configured: retrying them only wastes the backoff.
PERMANENT_TRANSPORT_ERRORS = ("SSLError", "InvalidURL", "InvalidSchema", "MissingSchema", "InvalidProxyURL", "InvalidHeader", "URLRequired")
# What OpenSSL says when the answer to a ClientHello is not TLS (a plain HTTP server on an https:// URL).
_PLAIN_ANSWER = re.compile(r"WRONG_VERSION_NUMBER|wrong version number|record layer failure|packet length too long|http request", re.IGNORECASE)


class KeyedTwice(dict):
    """A JSON object in which a key was given more than once (decoded with :func:`pairs_marking_duplicates`): the values
    are ``json``'s (the last of each key), ``duplicated`` maps each key given twice or more to all its values, in order."""

    duplicated = None


def pairs_marking_duplicates(pairs):
    """``object_pairs_hook`` of a call that asks ``expect="json_keyed"``: a plain dict, or a :class:`KeyedTwice` when a key
    repeats - a mark only, so a reader that must not guess (the metric gate) refuses what ``json`` would silently pick."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    marked = KeyedTwice(obj)
    values = {}
    for key, value in pairs:
        values.setdefault(key, []).append(value)
    marked.duplicated = dict((key, found) for key, found in values.items() if len(found) > 1)
    return marked


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
    The class is made once per process (:func:`_session_class`); every session is its own.
    """
    return _session_class()(on_proxies)


_SESSION_CLASS = []


def _session_class():
    """The session class of :func:`_new_requests_session`, made once per process."""
    if _SESSION_CLASS:
        return _SESSION_CLASS[0]

    class _Session(requests.Session):  # pylint: disable=too-few-public-methods
        def __init__(self, on_proxies=None):
            super().__init__()
            self._settings = {}
            self._on_proxies = on_proxies

        def request(self, method, url, headers=None, data=None, timeout=None, verify=None, proxies=None, stream=False, allow_redirects=True):
            # pylint: disable=arguments-differ,too-many-arguments
            prepared = self.prepare_request(requests.Request(method, url, headers=headers, data=data, auth=_no_netrc_auth))
            key = (urlsplit(prepared.url)[:2], verify, tuple(sorted((proxies or {}).items())))
            settings = self._settings.get(key)
            if settings is None:
                merged = self.merge_environment_settings(prepared.url, dict(proxies or {}), stream, verify, None)
                if proxies == DIRECT:
                    merged["proxies"] = {}
                if self._on_proxies is not None:
                    self._on_proxies(merged["proxies"])
                settings = self._settings[key] = dict(proxies=merged["proxies"], verify=merged["verify"], cert=merged["cert"])
            return self.send(prepared, timeout=timeout, allow_redirects=allow_redirects, stream=stream, **settings)

    _SESSION_CLASS.append(_Session)
    return _Session


# The service name of a Call that obtains credentials (a provider's call through the transport).
CREDENTIALS_SERVICE = "credentials"


def _call_name(call):
    """``METHOD URL`` of a call, without the query string, for messages."""
    return "%s %s" % (call.method, call.url.split("?", 1)[0])


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


# What the resolver answers for a name it does not know (EAI_NONAME), or knows without an address (EAI_NODATA, where the
# platform has it). A server that cannot be asked (EAI_AGAIN) or failed (EAI_FAIL) may answer next time.
_UNKNOWN_NAME_ERRNOS = frozenset(number for number in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None)) if number is not None)


def name_not_known(exc):
    """Whether ``exc`` (a ``requests`` error) says the resolver does not know the host's name: ``socket.gaierror``
    EAI_NONAME (or EAI_NODATA) under urllib3's ``NameResolutionError`` (2.x) or ``NewConnectionError`` (1.x)."""
    for cause in _causes(exc):
        for inner in (cause, getattr(cause, "_reason", None), cause.__cause__, cause.__context__):
            if isinstance(inner, socket.gaierror) and inner.errno in _UNKNOWN_NAME_ERRNOS:
                return True
    return False


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


def tls_verify(connection):
    """What ``verify`` every request of ``connection`` (``connection.Connection``) passes: False, a CA bundle path, or True."""
    # requests lets REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE replace a session's
    # verify setting; passing verify on every request keeps ca_bundle in charge.
    if not connection.validate_certs:
        return False
    bundle = connection.ca_bundle
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


def prepare(environ=None):
    """Build now, in this process, what every task's transport would otherwise build for itself and may share: the
    session and adapter classes and the TLS contexts of the default trust store (``watchdog.tls_context``: the CA
    bundle ``requests`` verifies with when no ``ca_bundle`` is given - ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE`` or
    certifi's, as ``environ`` (default ``os.environ``) says - and ``validate_certs: false``).  Nothing of a task is
    built: no session, no connection, no credential.  The action plugin calls it (``job_info.prepare``) in the
    controller's main process, before the workers that run the tasks are forked from it; without ``requests`` it does
    nothing."""
    if not HAS_REQUESTS:
        return
    environ = os.environ if environ is None else environ
    try:
        _session_class()
        watchdog_mod.watched_adapter(1)
    except (AttributeError, TypeError):  # a requests or urllib3 whose classes do not fit: each task finds out itself
        return
    location = environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE") or requests.adapters.DEFAULT_CA_BUNDLE_PATH
    if location:
        directory = os.path.isdir(location)
        watchdog_mod.tls_context("CERT_REQUIRED", None if directory else location, location if directory else None)
    watchdog_mod.tls_context("CERT_NONE")


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
    ``json`` (parsed), ``json_keyed`` (parsed, each object with a key given twice marked: :class:`KeyedTwice`) or
    ``text``.  ``consume``, when given, reads a 2xx body as it arrives: it gets an iterator of byte
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


def read_answer(call, raw, content, secrets):
    """The 2xx answer ``raw`` (its body ``content``) to ``call``: ``(Response, None)``, or ``(ModelArtsError, None)`` for a
    body that cannot be read (a read-only call can safely try again) or a v1 error on HTTP 200.  A credential answer's
    error names the call and what is wrong with its body - never a byte of it: the secrets it holds may not be known
    as such (a truncated answer)."""
    operation, status = call.operation, raw.status_code
    request_id = raw.headers.get("X-Request-Id")
    if call.service == CREDENTIALS_SERVICE:
        try:
            data = content.decode("utf-8", "replace") if call.expect == "text" else credentials_mod.parse_answer(content)
        except credentials_mod.UnreadableAnswer as problem:
            message = redact("%s: the answer of %s (HTTP %s) %s" % (operation, _call_name(call), status, problem), secrets)
            if request_id:
                message += " [request id %s]" % label(request_id, 80)
            return ModelArtsError(message, operation=operation, status=status, request_id=request_id, transient=True), None
        return Response(data, status, request_id, raw.headers, call=redact(_call_name(call), secrets)), None
    if isinstance(content, _Consumed):
        return Response(content.data, status, request_id, raw.headers, call=redact(_call_name(call), secrets)), None
    try:
        text = content.decode("utf-8") if content else ""
        hook = pairs_marking_duplicates if call.expect == "json_keyed" else None
        data = text if call.expect == "text" else json.loads(text, object_pairs_hook=hook) if text else None
    except (ValueError, RecursionError, UnicodeDecodeError):
        # A complete 2xx with an unreadable body is what a gateway or a cut
        # connection produces; a read-only call can safely try again.
        message = "%s: HTTP %s but the body is not valid JSON (%d bytes): %r" % (operation, status, len(content), excerpt(content, secrets))
        if request_id:
            message += " [request id %s]" % request_id
        return ModelArtsError(message, operation=operation, status=status, request_id=request_id, transient=True), None
    if isinstance(data, dict) and data.get("is_success") is False:
        # The v1 API reports some errors on HTTP 200: the same error as on a 4xx.
        return error_from_response(operation, status, raw.headers, content, secrets), None
    return Response(data, status, request_id, raw.headers, len(content or b"")), None


def _unsigned(call):
    return call.url, dict(call.headers)


class HttpTransport(object):
    """Calls over one ``requests`` session: each :class:`Call` with its attempts, retries and deadline.

    ``connection`` (``connection.Connection``) holds what it reads (timeouts, backoff, ``proxy``, ``validate_certs``,
    ``ca_bundle``, ``max_response_bytes``); ``secrets`` the values to mask from the start.  ``sign(call)`` answers
    ``(url, headers)`` for each attempt (unsigned by default), ``source_of(url)`` says where a host that takes no
    connection came from ('' when not known).  ``clock``, ``sleep``, ``rand``, ``utcnow``: see
    :class:`~ansible_collections.modelarts.training.plugins.module_utils.service.client.ModelArtsClient`; ``session`` may be
    any object with a ``requests.Session``-like ``request()`` method; attempts are watched when the transport made
    its own session (or when ``watchdog`` says so).
    """

    def __init__(
        self,
        connection,
        secrets=(),
        session=None,
        clock=time.monotonic,
        sleep=None,
        rand=random.random,
        utcnow=None,
        pool_size=16,
        trace=None,
        watchdog=None,
        sign=None,
        source_of=None,
    ):
        # pylint: disable=too-many-arguments
        self.connection = connection
        self._secrets = tuple(secrets)
        self._clock = clock
        self._sleep = sleep
        # What a backoff sleep waits on when no ``sleep`` was injected: :meth:`abandon` sets it, so the sleep ends at once.
        self._woken = threading.Event()
        self._rand = rand
        self._utcnow = utcnow or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self._trace = trace
        self.sign = sign or _unsigned
        self._source_of = source_of or (lambda url: "")
        self._lock = threading.Lock()
        self._throttled = 0
        self._abandoned = False
        # The (scheme, host:port) that have answered over HTTP once: a host that never has and takes no
        # connection is unreached (ModelArtsError.unreached), and a wait ends on it instead of retrying to its deadline.
        self._answered = set()
        self._speaks_tls = {}
        self._verify = tls_verify(connection)
        proxy = connection.proxy
        problem = proxy_problem(proxy) if proxy else None
        if problem:
            raise ConnectionConfigError("%s: %s" % (describe("proxy"), problem))
        self._secrets += tuple(value for value in proxy_secrets(proxy) if value not in self._secrets)
        self._proxies = {"http": proxy, "https": proxy} if proxy else None
        self.session = session if session is not None else new_session(pool_size, self._proxies_resolved)
        self._watchdog = watchdog_mod.Watchdog(clock) if (session is None if watchdog is None else watchdog) else None

    def quiet_insecure_warnings(self, *bases):
        """Without certificate checks, silence urllib3's warning for the hosts of ``bases`` (the caller warns once)."""
        if self._verify is False:
            quiet_insecure_warnings(*bases)

    def clock(self):
        """The transport's monotonic clock, which deadlines are values of."""
        return self._clock()

    def utcnow(self):
        """The aware UTC time now."""
        return self._utcnow()

    def send(self, call):
        """Send ``call`` with its retries: a :class:`Response`, or raises ``ModelArtsError``."""
        return self._with_retries(call)

    @property
    def throttled(self):
        """How many answers so far were HTTP 429 (throttling), retried or not: callers pace their rounds by it."""
        return self._throttled

    @throttled.setter
    def throttled(self, value):
        with self._lock:
            self._throttled = value

    def _proxies_resolved(self, proxies):
        # The environment's proxies (HTTPS_PROXY...) as requests resolved them: their credentials are as secret as the option's.
        for name, url in sorted((proxies or {}).items()):
            if not url or url == self.connection.proxy:
                continue
            for value in proxy_secrets(url):
                self.remember_secret(value)
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
        self._woken.set()
        if self._watchdog is not None:
            self._watchdog.abandon()

    def close(self):
        """Close the pooled connections and let the watchdog thread end."""
        if self._watchdog is not None:
            self._watchdog.close()
        closer = getattr(self.session, "close", None)
        if closer:
            closer()

    def redact(self, text):
        """``text`` with this client's secret values masked."""
        return redact(text, self._secrets)

    def remember_secret(self, value):
        if not value:
            return
        with self._lock:
            if value not in self._secrets:
                self._secrets = self._secrets + (value,)

    def secrets(self):
        """Every secret value this client knows: the options' and each one obtained or issued since."""
        return self._secrets

    def request_budget(self):
        """The longest one call may take without a deadline: every attempt's timeouts and every backoff sleep.

        ``(backoff_retries + 1) * (connect_timeout + request_timeout) + backoff_retries * backoff_max_delay``
        """
        retries = max(0, int(self.connection.backoff_retries))
        attempt = float(self.connection.connect_timeout) + float(self.connection.request_timeout)
        return (retries + 1) * attempt + retries * float(self.connection.backoff_max_delay)

    def bounded(self, deadline):
        return deadline if deadline is not None else self._clock() + self.request_budget()

    def _with_retries(self, call):
        retries = max(0, int(self.connection.backoff_retries if call.retries is None else call.retries))
        deadline = call.deadline
        attempt = 0
        while True:
            error, retry_after = self._attempt(call)
            if not isinstance(error, ModelArtsError):
                return error
            # A name the resolver does not know, for a host that never answered, is said at once (ModelArtsError.unresolved).
            if not error.transient or attempt >= retries or self._abandoned or error.unresolved:
                if attempt:
                    error.args = ("%s (gave up after %d attempts)" % (error.args[0], attempt + 1),)
                    error.not_sent = False  # earlier attempts were sent
                raise error
            delay = self._backoff(attempt, retry_after)
            limit = max(RETRY_AFTER_LIMIT, float(self.connection.backoff_max_delay))
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
            self._nap(delay)
            attempt += 1

    def _nap(self, seconds):
        """The backoff between two attempts.  :meth:`abandon` ends it at once - an event source cancelled at shutdown while
        it honours a ``Retry-After: 90`` leaves then, not 90 s later - and the next attempt is then refused."""
        seconds = watchdog_mod.timer_seconds(seconds)
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._woken.wait(seconds)

    def _backoff(self, attempt, retry_after):
        if retry_after is not None:
            return retry_after
        ceiling = min(float(self.connection.backoff_max_delay), float(self.connection.backoff_delay) * (2**attempt))
        return self._rand() * ceiling

    def _timeouts(self, deadline, connect_timeout=None):
        # As socket timeouts take them: a request_timeout of 1e12 (or a deadline that far) is no OverflowError.
        remaining = max(0.001, watchdog_mod.timer_seconds(deadline - self._clock()))
        connect = float(self.connection.connect_timeout if connect_timeout is None else connect_timeout)
        return min(connect, remaining), min(float(self.connection.request_timeout), remaining)

    def _attempt(self, call):
        """One HTTP exchange, ended by the call's deadline. Returns ``(Response, None)`` or ``(ModelArtsError, retry_after)``."""
        operation, deadline = call.operation, call.deadline
        if self._abandoned:
            return ModelArtsError("%s: not sent, the task was interrupted" % operation, operation=operation), None
        if self._clock() >= deadline:
            error = ModelArtsError("%s: the deadline passed before the request could be sent" % operation, operation=operation, transient=True)
            error.not_sent = True
            return error, None
        send_url, send_headers = self.sign(call)
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
            return self._cut(error, deadline), None
        except Exception as exc:  # pylint: disable=broad-except
            # Any transport failure (connection refused or reset, TLS, timeout,
            # proxy) is reported by type and a redacted message, never a traceback.
            error = transport_error(exc, operation, self._secrets, send_headers, call.url, self.connection.ca_bundle)
            error.connected = connected_before_failing(exc, getattr(watch, "stage", None))
            if no_connection(exc) and not isinstance(exc, (requests.exceptions.SSLError, requests.exceptions.ProxyError)):
                source = self._source_of(call.url)
                if source:
                    error.args = ("%s (%s)" % (error.args[0], source),)
            return self._cut(self._unreached(exc, error, call), deadline), None
        finally:
            self._note(call.method, call.url, started)
        status = raw.status_code
        with self._lock:
            self._answered.add(_origin(call.url))
        if status == 429:
            with self._lock:
                self._throttled += 1
        credential = call.service == CREDENTIALS_SERVICE
        if not 200 <= status < 300:
            retry_after = parse_retry_after(raw.headers.get("Retry-After"), self._utcnow()) if status in RETRYABLE_STATUS else None
            return error_from_response(operation, status, raw.headers, content, self._secrets, quote=not credential), retry_after
        return read_answer(call, raw, content, self._secrets)

    def _cut(self, error, deadline):
        """``error`` marked ``deadline_cut`` when the call's deadline ended the exchange (the watchdog, or a socket
        timeout cut to the time left): the request was sent and its answer was still to come when time ran out."""
        if error.transient and not error.unreached and self._clock() >= deadline:
            error.deadline_cut = True
        return error

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
        # A host that never answered and whose name the resolver does not know: a typo, or a private name this machine
        # cannot resolve. Asking again in a second does not change that answer.
        error.unresolved = error.unreached and name_not_known(exc)
        parts = urlsplit(call.url)
        if parts.scheme == "http" and not self._proxies and "Connection aborted" in str(exc) and parts.hostname:
            if origin not in self._speaks_tls:
                timeout = max(0.001, watchdog_mod.timer_seconds(min(float(self.connection.connect_timeout), call.deadline - self._clock())))
                self._speaks_tls[origin] = speaks_tls(parts.hostname, parts.port or 80, timeout)
            if self._speaks_tls[origin]:
                where = label(parts.netloc, 200)
                error.args = ("%s (the server at %s answered in TLS: use https://%s)" % (error.args[0], where, where),)
                error.transient = False
        return error

    def _exchange(self, call, url, headers, watch):
        """Send the request and read the whole response: ``(raw response, body bytes)``."""
        raw = self.session.request(
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
                        call.consume(watchdog_mod.body_pieces(raw, call.deadline, watch, self._clock, self.connection, self._secrets, call.max_bytes))
                    )
                except ValueError as exc:
                    # What a cut connection or a gateway produces, as for a body read whole: a read-only call may try again.
                    message = "HTTP %s but the body is not readable JSON: %s" % (raw.status_code, label(exc, 200, self._secrets))
                    raise ModelArtsError(message, status=raw.status_code, request_id=raw.headers.get("X-Request-Id"), transient=True) from None
            else:
                content = watchdog_mod.read_body(raw, call.deadline, watch, self._clock, self.connection, self._secrets, call.max_bytes)
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
            self.remember_secret(value)

    def _note(self, method, url, started):
        if self._trace is not None:
            self._trace("%s %s %.3fs" % (method, url.split("?", 1)[0], self._clock() - started))
