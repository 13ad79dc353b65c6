# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials and how they stay valid while a wait lasts for days: the core every call uses.

Each source is one small *provider* with ``name``, ``refreshable`` and ``obtain(transport, deadline)``,
which answers a :class:`Credentials`.  This file holds the provider of credentials given as they are,
which needs no request of its own, :class:`Static` (AK/SK with or without a security token, or an
``auth_token``), and what all providers share; the sources that obtain credentials from a service or a file
(IAM password, the SDK's credentials file, a federated or OIDC id token, CCE pod identity, instance
metadata, an agency, and :func:`~credential_sources.default_chain`) are in ``credential_sources.py``,
imported only when a task uses one of them: AnsiballZ compiles every module_utils file a module
imports on each run (docs/performance.md).

:class:`Renewing` keeps one provider's current credentials and renews them when less than five minutes
or a third of their lifetime remains (whichever is shorter), and once when the service refuses them.
:func:`static_provider` builds the provider of credentials given as they are (:func:`given_as_is`); every
other kind's source builds its own in ``credential_sources.py`` (``SOURCES``, one entry per kind), which
imports this file and is never imported by it.

A provider never speaks HTTP itself: it asks a :class:`Transport` (the client) for each call, so every
exchange gets the client's retries, deadline, TLS, proxy and error model.  Every secret a provider reads
or receives is handed to ``transport.remember_secret`` before anything could show it, and messages name
files, options and variables, never values.
"""

from __future__ import annotations

import collections
import copy
import datetime
import json
import os
import re
import stat
import threading

from ansible_collections.modelarts.training.plugins.module_utils.errors import HINTS, ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import KINDS_HELP, describe
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import expand_user
from ansible_collections.modelarts.training.plugins.module_utils.text import label

# Renew when less than this many seconds, or a third of the lifetime, remains (whichever is shorter).
RENEW_MARGIN = 300.0
RENEW_FRACTION = 1.0 / 3.0
# When a renewal fails while the current credentials are still valid, they are used and the renewal is
# tried again after this many seconds (or half the time they have left, if that is shorter).
RENEW_RETRY = 30.0
# When obtaining the first credentials fails, the source is asked again only this many seconds later, doubled at
# each failure in a row up to OBTAIN_RETRY_MAX: a wait or an event source polling every few seconds does not run
# the whole exchange (with its retries) at every poll; meanwhile each call fails at once with the same error.
OBTAIN_RETRY = 5.0
OBTAIN_RETRY_MAX = 300.0

# The credentials file has no option-level environment variable (options.CONNECTION_OPTIONS): the
# default chain reads it, below every level.  The other options' variables live in that table.
ENV_CREDENTIALS_FILE = "HUAWEICLOUD_SDK_CREDENTIALS_FILE"


MAX_FILE_BYTES = 1024 * 1024
_UTC = datetime.timezone.utc

# The fields of a credential answer (any service's spelling, compared without case, "_" or "-") whose string values
# are secrets: remembered for masking from the raw bytes, before the answer is parsed or even complete.
SECRET_FIELDS = frozenset(
    ("secret", "secretkey", "secretaccesskey", "sk", "securitytoken", "sessiontoken", "token", "accesstoken", "idtoken", "authtoken", "password")
)
# A string field in JSON text, its value possibly cut off by the end of the text (a truncated answer).
_STRING_FIELD = re.compile(r'"([A-Za-z][A-Za-z0-9_\-]{0,40})"\s*:\s*"((?:[^"\\]|\\.)*)')
# Shorter values are not masked on their own: they would mask common words; longer ones are no credential.
SECRET_MIN_LENGTH = 6
SECRET_MAX_LENGTH = 16384


class CredentialsConfigError(ConnectionConfigError):
    """A credential source is set up wrongly (an option, a variable, a file); the message names it, never a value."""


# What the module adds to a NoCredentialsError: it never sees inventory variables, which a newcomer may have set for it.
MODULE_SOURCES_NOTE = (
    "the module reads its task options (module_defaults included) and HUAWEICLOUD_* environment variables; modelarts_* "
    'inventory variables are read by the training_job lookup only: pass them as options (access_key: "{{ modelarts_access_key }}") '
    "or in module_defaults"
)


class NoCredentialsError(ModelArtsError):
    """No credentials were given and no source of the default chain served.

    ``skipped`` lists ``(source, reason)`` for every source tried, in order.
    """

    def __init__(self, skipped):
        self.skipped = list(skipped)
        reasons = "; ".join("%s: %s" % pair for pair in self.skipped)
        super(NoCredentialsError, self).__init__(
            "no credentials were given and none were found (%s); give %s" % (reasons, KINDS_HELP),
            operation="find credentials",
        )


def named_option(name):
    """An option and its environment variable, for messages: ``idp_id (HUAWEICLOUD_SDK_IDP_ID)``."""
    return "%s (%s)" % (name, ENV_CREDENTIALS_FILE) if name == "credentials_file" else describe(name)


def as_utc(moment):
    """``moment`` as an aware UTC datetime (a naive one is taken as UTC)."""
    return moment.astimezone(_UTC) if moment.tzinfo is not None else moment.replace(tzinfo=_UTC)


class Credentials(object):
    """An immutable set of credentials: AK/SK (``access_key``, ``secret_key``, optional ``security_token``) or an ``auth_token``.

    ``expires_at`` is an aware UTC datetime or None (not known: renewed only when refused); ``source`` names
    where they came from; ``project_id`` and ``iam_endpoint`` are hints the source gave (a credentials file's).
    """

    __slots__ = ("access_key", "secret_key", "security_token", "auth_token", "expires_at", "source", "project_id", "iam_endpoint")

    def __init__(self, access_key=None, secret_key=None, security_token=None, auth_token=None, expires_at=None, source="", project_id=None, iam_endpoint=None):
        if auth_token and (access_key or secret_key or security_token):
            raise ValueError("credentials are either AK/SK or an auth_token, not both")
        if not auth_token and not (access_key and secret_key):
            raise ValueError("credentials need access_key and secret_key, or auth_token")
        values = dict(
            access_key=access_key,
            secret_key=secret_key,
            security_token=security_token or None,
            auth_token=auth_token,
            expires_at=as_utc(expires_at) if expires_at is not None else None,
            source=source,
            project_id=project_id or None,
            iam_endpoint=iam_endpoint or None,
        )
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError("Credentials are immutable")

    def __delattr__(self, name):
        raise AttributeError("Credentials are immutable")

    @property
    def kind(self):
        """``aksk`` or ``auth_token``."""
        return "auth_token" if self.auth_token else "aksk"

    def secrets(self):
        """The secret values: the secret key, the security token, the auth token (those that are set)."""
        return tuple(value for value in (self.secret_key, self.security_token, self.auth_token) if value)

    def remaining(self, now):
        """Seconds until ``expires_at`` at ``now`` (an aware datetime), or None when the expiry is not known."""
        return None if self.expires_at is None else (self.expires_at - now).total_seconds()

    def __repr__(self):
        return "Credentials(kind=%s, source=%r, expires_at=%s)" % (self.kind, self.source, self.expires_at.isoformat() if self.expires_at else None)


class Request(
    collections.namedtuple(
        "Request", ("method", "url", "headers", "body", "operation", "deadline", "sign_with", "connect_timeout", "retry", "expect", "within", "direct")
    )
):
    """One call a provider asks of a :class:`Transport`: the arguments of :meth:`Transport.call`, by name."""

    __slots__ = ()


class Transport(object):
    """What a provider needs from the client; the client implements :meth:`send` (one :class:`Request`, what
    :meth:`call` is given) and :meth:`remember_secret`.

    ``call(method, url, headers=None, body=None, operation=None, deadline=None, sign_with=None,
    connect_timeout=None, retry=True, expect="json", within=None, direct=False)`` sends one request to the absolute ``url`` and answers
    an object with ``data``, ``status``, ``headers`` (case-insensitive lookup), ``request_id`` and ``call`` (``METHOD URL``
    without the query, for messages, or None):

    * ``body`` is a JSON-serialisable value (None: no body), encoded by the transport; the ``headers``
      given are sent as they are, over the transport's own defaults (User-Agent);
    * ``sign_with`` is a :class:`Credentials` to authenticate the call with (the ``SDK-HMAC-SHA256``
      signature and ``X-Security-Token`` for AK/SK, ``X-Auth-Token`` for a token), or None for an
      anonymous call; the client's own credentials are never added, and a 401 is not renewed by the client;
    * ``connect_timeout`` (seconds) replaces the client's connect timeout for this call; ``retry=False``
      makes exactly one attempt (a probe, or an answer such as 503 that means "not supported"); ``within``
      (seconds) ends the whole call that soon, connect and answer alike, even before ``deadline`` (a probe of a
      host that accepts connections and never answers must not take a read timeout);
    * ``direct=True`` reaches ``url`` without any proxy, whatever the ``proxy`` option and the proxy variables
      (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``) say: what the instance's or the pod's own credential service
      (instance metadata, CCE pod identity) needs - it is reachable only from the machine itself, and its token
      and the credentials it issues must never pass through a proxy;
    * ``expect="json"``: ``data`` is the parsed JSON body (None when empty); ``expect="text"``: ``data`` is
      the body as text;
    * the answer is a credential answer: its secrets (:func:`answer_secrets`) are remembered as its bytes arrive,
      and no message ever quotes it (an unreadable one is described by :func:`parse_answer`);
    * a non-2xx answer or a transport failure raises ``ModelArtsError`` with ``status`` (None for a
      transport failure), ``error_code``, ``error_msg`` and ``transient``, its message naming
      ``operation`` and masking every secret remembered so far.

    ``iam_endpoint`` and ``sts_endpoint`` are base URLs without a trailing slash ("" when unknown);
    ``utcnow()`` is the aware UTC time; ``remember_secret(value)`` adds a value to what the client masks
    (called often with values it already knows); ``read_text(path, option, deadline=None)`` reads a small UTF-8
    regular file (by ``deadline``, when given), raising :class:`CredentialsConfigError` that names ``option`` and the
    path, never the contents.
    """

    iam_endpoint = ""
    sts_endpoint = ""

    def call(
        self,
        method,
        url,
        headers=None,
        body=None,
        operation=None,
        deadline=None,
        sign_with=None,
        connect_timeout=None,
        retry=True,
        expect="json",
        within=None,
        direct=False,
    ):
        return self.send(Request(method, url, headers, body, operation, deadline, sign_with, connect_timeout, retry, expect, within, direct))

    def send(self, request):
        raise NotImplementedError

    def remember_secret(self, value):
        raise NotImplementedError

    def utcnow(self):
        return datetime.datetime.now(_UTC)

    def read_text(self, path, option, deadline=None):
        return read_text_file(path, option)


class UnreadableAnswer(ValueError):
    """The body of a credential answer cannot be read; the message says why without quoting any of it."""


def answer_secrets(headers, content, expect="json"):
    """The secret values in a credential answer as it arrived: token headers (``X-Subject-Token``), the string values of
    :data:`SECRET_FIELDS` in the body, found in the raw bytes whether or not they parse (a truncated or decorated
    answer still holds them), and the whole body of a ``text`` answer (a session token)."""
    found = []
    for name, value in (headers or {}).items():
        if "token" in str(name).lower() and isinstance(value, str) and value.strip():
            found.append(value.strip())
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else str(content or "")
    if expect == "text":
        # A session token; a page of text is none (and would be a costly pattern to mask).
        if text.strip() and len(text.strip()) <= SECRET_MAX_LENGTH:
            found.append(text.strip())
        return found
    for match in _STRING_FIELD.finditer(text):
        if re.sub(r"[_\-]", "", match.group(1).lower()) not in SECRET_FIELDS:
            continue
        raw = match.group(2).rstrip("\\")
        try:
            value = json.loads('"%s"' % raw)
        except ValueError:
            value = raw
        for each in (value, raw):
            if SECRET_MIN_LENGTH <= len(each) <= SECRET_MAX_LENGTH and each not in found:
                found.append(each)
    return found


def parse_answer(content):
    """The JSON value of a credential answer's bytes (None when empty); :class:`UnreadableAnswer` says why it is not JSON
    (a byte-order mark, not UTF-8, where the JSON breaks) without a byte of it."""
    if not content:
        return None
    if content.startswith(b"\xef\xbb\xbf"):
        raise UnreadableAnswer("starts with a UTF-8 byte-order mark (%d bytes)" % len(content))
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableAnswer("is not UTF-8 text (byte %d of %d)" % (exc.start + 1, len(content))) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        # The decoder's own words and position only: its message never holds the document.
        reason = exc.msg[:1].lower() + exc.msg[1:]
        raise UnreadableAnswer("is not JSON (%s: line %d column %d of %d bytes)" % (reason, exc.lineno, exc.colno, len(content))) from None
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else "a value out of range"
        raise UnreadableAnswer("is not JSON (%s, %d bytes)" % (reason, len(content))) from None


def read_text_file(path, option, limit=MAX_FILE_BYTES, timeout=None, environ=None):
    """The text of a small UTF-8 file (``~`` expanded with the ``HOME`` of ``environ``, the environment the task sees:
    ``os.environ`` when None); errors name ``option`` and the path as given, never the contents.

    Only a regular file is read: it is opened without blocking (a FIFO with no writer would wait forever), and
    anything else - a FIFO, a directory, a device, a socket - is refused.  With ``timeout`` (seconds), a read
    that has not ended by then (a hung network mount) is given up with an error.
    """
    where = expand_user(path, environ)
    if timeout is None:
        return _decoded(_read_regular(where, path, option, limit), path, option)
    outcome = []

    def read():
        try:
            outcome.append((True, _read_regular(where, path, option, limit)))
        except Exception as exc:  # pylint: disable=broad-except  # handed to the caller's thread
            outcome.append((False, exc))

    reader = threading.Thread(target=read, name="read %s" % option, daemon=True)
    reader.start()
    reader.join(max(0.0, min(timeout, threading.TIMEOUT_MAX)))  # a deadline 10**12 s away is no OverflowError
    if not outcome:
        raise CredentialsConfigError(
            "%s: reading %s did not end within the %.1fs left before the deadline (a hung network mount?)" % (option, label(path, 300), max(0.0, timeout))
        )
    done, value = outcome[0]
    if not done:
        raise value
    return _decoded(value, path, option)


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _read_regular(where, path, option, limit):
    shown = label(path, 300)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(where, flags)
    except OSError as exc:
        raise CredentialsConfigError("%s: cannot read %s: %s" % (option, shown, exc.strerror or type(exc).__name__)) from None
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a file")
            raise CredentialsConfigError("%s: %s is not a regular file (it is %s); name a file that holds the value" % (option, shown, kind))
        chunks = []
        size = 0
        while size <= limit:
            chunk = os.read(handle, min(65536, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise CredentialsConfigError("%s: cannot read %s: %s" % (option, shown, exc.strerror or type(exc).__name__)) from None
    finally:
        os.close(handle)
    data = b"".join(chunks)
    if len(data) > limit:
        raise CredentialsConfigError("%s: %s is larger than %d bytes; it should hold a token or a few credentials" % (option, shown, limit))
    return data


def _decoded(data, path, option):
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CredentialsConfigError("%s: %s is not UTF-8 text" % (option, label(path, 300))) from None


def renew_time(expires_at, now):
    """When credentials obtained at ``now`` and expiring at ``expires_at`` are renewed; None: only when refused.

    ``expires_at - min(RENEW_MARGIN, lifetime * RENEW_FRACTION)``.  Credentials that arrive already expired by
    this machine's clock (a clock far ahead) are kept until the service refuses them, not renewed at every call.
    """
    if expires_at is None:
        return None
    lifetime = (expires_at - now).total_seconds()
    if lifetime <= 0:
        return None
    return expires_at - datetime.timedelta(seconds=min(RENEW_MARGIN, lifetime * RENEW_FRACTION))


# -- providers -----------------------------------------------------------------------------------------------------


class Provider(object):
    """One source of credentials: ``obtain(transport, deadline)`` answers a :class:`Credentials` or raises.

    ``ModelArtsError`` for what a service answered (or not), :class:`CredentialsConfigError` for what was set up
    wrongly.  ``refreshable``: obtaining again may give other credentials (renewal makes sense).
    """

    name = "credentials"
    refreshable = True

    def obtain(self, transport, deadline):
        raise NotImplementedError

    def __repr__(self):
        return "<%s %s>" % (type(self).__name__, self.name)


class Static(Provider):
    """Credentials as given: AK/SK (with an optional security token) or an ``auth_token``; never renewed."""

    refreshable = False

    def __init__(self, access_key=None, secret_key=None, security_token=None, auth_token=None, source=None, project_id=None, iam_endpoint=None):
        self.name = source or ("auth_token" if auth_token else "access_key and secret_key")
        self._credentials = Credentials(
            access_key=access_key,
            secret_key=secret_key,
            security_token=security_token,
            auth_token=auth_token,
            source=self.name,
            project_id=project_id,
            iam_endpoint=iam_endpoint,
        )

    def obtain(self, transport, deadline):
        for secret in self._credentials.secrets():
            transport.remember_secret(secret)
        return self._credentials


# -- renewal -------------------------------------------------------------------------------------------------------


class Renewing(object):
    """A provider's current credentials, renewed before they expire and once when refused; thread-safe.

    Renewal happens when less than ``min(RENEW_MARGIN, lifetime * RENEW_FRACTION)`` remains.  When a timed
    renewal fails while the current credentials are still valid, they go on being used and the renewal is
    tried again a little later; once they have expired, the failure is raised.  Credentials of a provider
    that is not refreshable (:class:`Static`) are obtained once and returned as they are.
    """

    def __init__(self, provider):
        self.provider = provider
        self._lock = threading.Lock()
        self._current = None
        self._renew_at = None
        self._failure = None
        self._failures = 0
        self._retry_at = None

    @property
    def name(self):
        return self.provider.name

    def current(self, transport, deadline):
        """Valid credentials: obtained the first time (after a failure, not again before the backoff), renewed when due."""
        with self._lock:
            if self._current is None:
                self._backed_off(transport, deadline)
            elif self._renew_at is not None and transport.utcnow() >= self._renew_at:
                try:
                    self._obtain(transport, deadline)
                except (ModelArtsError, ConnectionConfigError):
                    now = transport.utcnow()
                    left = self._current.remaining(now)
                    if left is None or left <= 0:
                        raise
                    self._renew_at = now + datetime.timedelta(seconds=max(1.0, min(RENEW_RETRY, left / 2.0)))
            return self._current

    def refused(self, transport, stale, deadline):
        """The service refused ``stale`` (a 401): renew once, however many threads saw that refusal.

        Returns the credentials to try again with; they are ``stale`` itself when nothing could be renewed
        (the caller then reports the refusal).
        """
        with self._lock:
            if self._current is None or (self.provider.refreshable and self._current is stale):
                self._obtain(transport, deadline)
            return self._current

    def _backed_off(self, transport, deadline):
        """Obtain the first credentials, unless the last try failed less than the backoff ago: then its error, at once."""
        now = transport.utcnow()
        if self._failure is not None and now < self._retry_at:
            raise self._again(now)
        try:
            self._obtain(transport, deadline)
        except (ModelArtsError, ConnectionConfigError) as error:
            self._failures += 1
            delay = min(OBTAIN_RETRY_MAX, OBTAIN_RETRY * 2 ** (self._failures - 1))
            self._failure, self._retry_at = error, transport.utcnow() + datetime.timedelta(seconds=delay)
            raise
        self._failure, self._failures, self._retry_at = None, 0, None

    def _again(self, now):
        """A copy of the last failure to obtain, saying when the source is asked again."""
        error = copy.copy(self._failure)
        left = (self._retry_at - now).total_seconds()
        text = error.args[0] if error.args else str(self._failure)
        failures = "%d failure%s" % (self._failures, "" if self._failures == 1 else "s")
        error.args = ("%s (credentials are not asked for again for %.0fs after %s in a row)" % (text, left, failures),)
        return error

    def _obtain(self, transport, deadline):
        credentials = self.provider.obtain(transport, deadline)
        for secret in credentials.secrets():
            transport.remember_secret(secret)
        self._current = credentials
        self._renew_at = renew_time(credentials.expires_at, transport.utcnow())


# -- choosing a provider -------------------------------------------------------------------------------------------


# The kinds whose credentials are given as they are (Static); the others are obtained (credential_sources).
STATIC_KINDS = ("aksk", "auth_token")


def required(kind, *given):
    """The values of ``given`` (``(option name, value)`` pairs of a ``connection.CredentialSource``) that ``kind``
    credentials need; :class:`CredentialsConfigError` naming those missing."""
    missing = [name for name, value in given if value is None]
    if missing:
        raise CredentialsConfigError("%s credentials need %s" % (kind, ", ".join(named_option(name) for name in missing)))
    return [value for _name, value in given]


def static_provider(source):
    """The :class:`Static` provider of explicit ``aksk`` or ``auth_token`` credentials (``source``: a ``connection.CredentialSource``)."""
    if source.kind == "aksk":
        access_key, secret_key = required("AK/SK", ("access_key", source.access_key), ("secret_key", source.secret_key))
        return Static(access_key=access_key, secret_key=secret_key, security_token=source.security_token)
    (token,) = required("token", ("auth_token", source.auth_token))
    return Static(auth_token=token)


def given_as_is(source):
    """Whether the credentials of ``source`` (a ``connection.CredentialSource``) are given as they are (AK/SK or a token,
    without an agency): :func:`static_provider` builds them, with no source of ``credential_sources.py``."""
    return source.kind in STATIC_KINDS and source.agency_name is None and source.agency_domain_name is None and source.agency_duration is None


def name_the_file(error, used):
    """A refusal of an access key read from a credentials file names the file (the options hold no key to check)."""
    source = getattr(used, "source", None) or ""
    if source.startswith("credentials file ") and used.access_key:
        error.args = ("%s (the access key and secret key were read from %s, ak and sk of its [basic] section: check them there)" % (error.args[0], source),)


def refusal(error, used, succeeded, refreshable):
    """The error for a 401 that renewal could not cure: temporary credentials given by the user expire, and say so
    (``succeeded``: calls worked before; ``refreshable``: the provider renews); credentials read from a credentials
    file name the file."""
    name_the_file(error, used)
    if succeeded and used.security_token and not refreshable:
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
