# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watchdog: no attempt runs past its deadline, whatever the server, the proxy or name resolution does.

Socket timeouts bound each read, not an exchange: a server that sends a byte a second, a proxy's CONNECT
answer that never completes, and name resolution (no timeout at all) would keep an attempt going past its
deadline.  So an attempt of a client that made its own session is watched: the client's :class:`Watchdog`
thread shuts the attempt's sockets down when its deadline passes (a blocked recv() or send() returns at once;
the connection is closed, never pooled again) and the attempt reports "the deadline passed while ..." as a
transient error.  A new connection's name resolution and TCP connect, where no socket can help, run in a
helper thread the attempt stops waiting for at the deadline (the helper finishes on its own; its socket is
closed).  Socket timeouts cut to the time left may end an attempt at the same moment: either way a transient
error reports it.  :func:`watching` is the one entry point the client uses around an attempt, and
:func:`read_body` reads a response's body by the deadline, within ``max_response_bytes``.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import ssl
import threading

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.text import label

try:
    import requests.adapters
    import requests.exceptions
    import urllib3.connection
    import urllib3.connectionpool
    import urllib3.poolmanager
except ImportError:  # the client reports the missing library
    pass

_LOCAL = threading.local()

# The longest wait every timer a call uses takes: a lock's, an event's or a condition's (``threading.TIMEOUT_MAX``), a
# socket's and ``time.sleep``'s (a C time_t of nanoseconds), ``signal.alarm``'s (a C int of seconds), about 68 years.  A
# deadline further away - ``wait_timeout`` has no upper bound, 10**12 s is an answer - is waited for in waits of this
# length at most: see :func:`timer_seconds`.
TIMER_MAX = min(float(threading.TIMEOUT_MAX), float(2**31 - 1))


def timer_seconds(seconds):
    """``seconds`` (a wait computed from a deadline or an option) as every timer takes it: 0 to :data:`TIMER_MAX`."""
    return min(max(0.0, float(seconds)), TIMER_MAX)


class Killed(Exception):
    """Raised inside an attempt whose deadline passed (the attempt then reports the deadline)."""


def current_watch():
    return getattr(_LOCAL, "watch", None)


def _socket_names(sock):
    return sock.getsockname(), sock.getpeername()


class Watch(object):
    """One attempt under the watchdog: its deadline, what it is doing, the sockets it uses, and whether it was ended."""

    __slots__ = ("deadline", "clock", "_lock", "stage", "received", "_sockets", "killed", "released")

    def __init__(self, deadline=None, clock=None):
        self.deadline = deadline
        self.clock = clock
        self._lock = threading.Lock()
        self.stage = "while sending the request"
        self.received = None
        self._sockets = []
        self.killed = False
        self.released = False

    def enter(self, stage):
        """The attempt moves on to ``stage`` (``while ...``/``during ...``); an ended attempt goes no further."""
        if self.killed:
            raise Killed()
        self.stage = stage

    def track(self, sock, detachable=False):
        """The attempt now uses ``sock`` (connected): shut down if the deadline passes.  A ``detachable`` socket (one
        the TLS handshake will wrap in a new object) is also known by its descriptor and addresses."""
        if sock is None:
            return
        try:
            entry = (sock, sock.fileno(), _socket_names(sock)) if detachable else (sock, -1, None)
        except OSError:
            return
        with self._lock:
            killed = self.killed
            if not killed:
                self._sockets.append(entry)
        if killed:
            _shutdown(entry)
            try:
                sock.close()
            except OSError:
                pass
            raise Killed()

    def kill(self):
        """End the attempt at its deadline (shut its sockets down); False when it had already handed its connection back."""
        with self._lock:
            if self.released or self.killed:
                return False
            self.killed = True
            entries, self._sockets = self._sockets, []
        for entry in entries:
            _shutdown(entry)
        return True

    def release(self):
        """The attempt is done with its sockets: True, or False when the deadline ended it (close its connection)."""
        with self._lock:
            if self.killed:
                return False
            self.released = True
            self._sockets = []
            return True

    def remaining(self):
        """Seconds left before the deadline (None: no deadline), as a timer takes them (:func:`timer_seconds`)."""
        return None if self.deadline is None else timer_seconds(self.deadline - self.clock())

    def describe(self):
        if self.received is not None:
            return "%s (%d bytes received)" % (self.stage, self.received)
        return self.stage


def _shutdown(entry):
    """Shut a tracked socket down so that a thread blocked on it returns; its owner then closes the connection."""
    sock, fd, names = entry
    try:
        if sock.fileno() != -1:
            # socket.socket's own shutdown (an SSLSocket's would also drop its TLS state under the reading thread).
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
            return
    except OSError:
        return
    if names is None:
        return
    # Detached: the TLS handshake wrapped the descriptor in a new socket object. Shut the descriptor down if it still
    # is this connection (same local and remote address), never another one that reused the number.
    try:
        probe = socket.socket(fileno=fd)
    except OSError:
        return
    try:
        if _socket_names(probe) == names:
            probe.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        probe.detach()


class Watchdog(object):
    """A client's watchdog: one daemon thread, started with the first attempt, that ends attempts at their deadlines."""

    def __init__(self, clock):
        self._clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._heap = []
        self._order = itertools.count()
        self._wake_at = None
        self._thread = None
        self._pid = os.getpid()
        self._closed = False
        self._abandoned = False

    def watch(self, deadline):
        """A :class:`Watch` for an attempt that must end by ``deadline`` (a reading of the client's clock); after
        :meth:`abandon`, one already ended (the attempt goes no further than its first stage)."""
        watch = Watch(deadline, self._clock)
        with self._cond:
            if self._abandoned:
                watch.kill()
                return watch
            if self._pid != os.getpid():
                # A forked process (Ansible's workers) has none of its parent's threads.
                self._heap, self._thread, self._wake_at, self._pid = [], None, None, os.getpid()
            while self._heap and self._heap[0][2].released:
                heapq.heappop(self._heap)
            heapq.heappush(self._heap, (deadline, next(self._order), watch))
            self._closed = False
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="modelarts-watchdog", daemon=True)
                self._thread.start()
            elif self._wake_at is None or deadline < self._wake_at:
                self._cond.notify()
        return watch

    def _run(self):
        with self._cond:
            while not self._closed and self._pid == os.getpid():
                now = self._clock()
                while self._heap and (self._heap[0][0] <= now or self._heap[0][2].released):
                    watch = heapq.heappop(self._heap)[2]
                    if not watch.released:
                        watch.kill()
                self._wake_at = self._heap[0][0] if self._heap else None
                self._cond.wait(None if self._wake_at is None else max(0.001, timer_seconds(self._wake_at - now)))
            if self._thread is threading.current_thread():
                self._thread = None

    def close(self):
        """Let the thread end (a later attempt starts another)."""
        with self._cond:
            self._closed = True
            self._cond.notify()

    def abandon(self):
        """End every attempt under way now, and every later one as it starts: the task was interrupted (a task's
        ``timeout:``, ^C) while other threads had requests in flight, whose answers nobody will read."""
        with self._cond:
            self._abandoned = self._closed = True
            entries, self._heap = self._heap, []
            self._cond.notify()
        for _deadline, _order, watch in entries:
            watch.kill()


def discard(raw):
    """Close the connection under a response an ended attempt holds, so that it never goes back to the pool in use."""
    stream = getattr(raw, "raw", None)
    connection = getattr(stream, "_connection", None) or getattr(stream, "connection", None)
    try:
        if connection is not None:
            connection.close()
    finally:
        raw.close()


def _connect_in_helper(connect, watch):
    """``connect()`` (name resolution and TCP connect) in a helper thread, waited for until the watch's deadline."""
    done = threading.Event()
    lock = threading.Lock()
    box = {}

    def helper():
        try:
            sock = connect()
        except BaseException as exc:  # pylint: disable=broad-except  # handed to the attempt as it is
            box["error"] = exc
        else:
            with lock:
                late = box.get("abandoned", False)
                box["sock"] = sock
            if late:
                sock.close()
        finally:
            done.set()

    threading.Thread(target=helper, name="modelarts-connect", daemon=True).start()
    if not done.wait(watch.remaining()):
        with lock:
            box["abandoned"] = "sock" not in box
        if box["abandoned"]:
            watch.kill()
            raise Killed()
    if "error" in box:
        raise box["error"]
    return box["sock"]


def watched_adapter(pool_size):
    """An ``HTTPAdapter`` whose connections tell the attempt's watch what they are doing and which socket they use.

    Only urllib3's HTTP and HTTPS connections (direct or through an HTTP proxy) are watched; through a SOCKS
    proxy, or with a urllib3 whose classes do not fit, only the socket timeouts bound an attempt.  The classes are
    made once per process (:func:`_watched_classes`); each session gets its own adapter, pools and connections.
    """
    try:
        adapter_class = _watched_classes()[1]
    except (AttributeError, TypeError):
        return requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=max(1, pool_size), max_retries=0)
    return adapter_class(pool_connections=4, pool_maxsize=max(1, pool_size), max_retries=0)


def _adapter_class(pools):
    class _Adapter(requests.adapters.HTTPAdapter):
        # The kind of each CA location the adapter has checked ("file" or "dir"): requests' cert_verify looks at the disk
        # (two stat calls) on every request, a sixth of a long listing's time; the bundle of one session is checked once.
        _ca_kinds = None

        def cert_verify(self, conn, url, verify, cert):
            location = (verify if verify is not True else requests.adapters.DEFAULT_CA_BUNDLE_PATH) if verify else None
            kinds = self._ca_kinds if self._ca_kinds is not None else {}
            kind = kinds.get(location) if location and url.lower().startswith("https") and not cert else None
            if kind is None:
                super().cert_verify(conn, url, verify, cert)
                if location and url.lower().startswith("https") and not cert:
                    kinds[location] = "dir" if getattr(conn, "ca_cert_dir", None) == location else "file"
                    self._ca_kinds = kinds
                return
            conn.cert_reqs = "CERT_REQUIRED"
            if kind == "file":
                conn.ca_certs = location
            else:
                conn.ca_cert_dir = location

        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy, **proxy_kwargs):
            manager = super().proxy_manager_for(proxy, **proxy_kwargs)
            # SOCKS managers have their own pools: only the stock HTTP(S) ones are replaced.
            if getattr(manager, "pool_classes_by_scheme", None) is urllib3.poolmanager.pool_classes_by_scheme:
                manager.pool_classes_by_scheme = pools
            return manager

    return _Adapter


# -- the TLS context: once per process per trust store ------------------------------------------------------------

# What urllib3 builds for every new HTTPS connection when it is given no context: a new ``ssl.SSLContext`` with the CA
# location loaded into it - about 30 ms for certifi's bundle, 1.5 ms for a one-CA file - again for each connection of
# each task.  A context holds no credential, no session and no connection (CPython resumes no TLS session unless asked
# to): only the trust store and the protocol settings.  So one is built per process for each trust store, by what it is
# built from (the verification mode, the CA file or directory as it is on disk now, SSLKEYLOGFILE), and handed to the
# connections that would have built the same one.  The action plugin builds the default ones (transport.prepare) in the
# controller's main process, before the workers are forked, so that a task finds them built.
_TLS_CONTEXTS = {}
_TLS_LOCK = threading.Lock()
# Connection settings under which urllib3 builds something else than its plain context: never shared.
_OWN_CONTEXT_SETTINGS = (
    "ca_cert_data",
    "cert_file",
    "key_file",
    "key_password",
    "ssl_version",
    "ssl_minimum_version",
    "ssl_maximum_version",
    "assert_fingerprint",
)


def _on_disk(location):
    """What says a CA file or directory changed: its identity, size and times (None when it cannot be looked at)."""
    try:
        found = os.stat(location)
    except (OSError, TypeError, ValueError):
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


def tls_context(cert_reqs, ca_certs=None, ca_cert_dir=None):
    """The ``ssl.SSLContext`` urllib3 would build for a connection that verifies as ``cert_reqs`` says against
    ``ca_certs`` (a file) or ``ca_cert_dir`` (a directory), built once per process and shared by the connections of
    every session: a CA location changed on disk since gets a new one.  None when it cannot be built or shared (urllib3
    then builds its own, and reports a problem as it always has): a location missing or unreadable, a verification
    without a CA location, urllib3 or ``ssl`` missing."""
    try:
        from urllib3.util.ssl_ import create_urllib3_context, resolve_cert_reqs  # pylint: disable=import-outside-toplevel  # requests' own

        mode = resolve_cert_reqs(cert_reqs)
    except (ImportError, AttributeError, TypeError, ValueError):
        return None
    location = ca_certs or ca_cert_dir
    if mode != ssl.CERT_NONE and not location:
        return None  # urllib3 would load the system's CAs: not this context
    stamp = _on_disk(location) if location else ()
    if stamp is None:
        return None
    key = (mode, ca_certs, ca_cert_dir, os.environ.get("SSLKEYLOGFILE"))
    with _TLS_LOCK:
        known = _TLS_CONTEXTS.get(key)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        context = create_urllib3_context(cert_reqs=mode)
        if location and mode != ssl.CERT_NONE:
            context.load_verify_locations(cafile=ca_certs, capath=ca_cert_dir)
    except Exception:  # pylint: disable=broad-except  # urllib3 meets it again on its own way, and says what it is
        return None
    with _TLS_LOCK:
        _TLS_CONTEXTS[key] = (stamp, context)
    return context


def _shared_context(conn):
    """The per-process :func:`tls_context` for the urllib3 HTTPS connection ``conn``, or None when ``conn`` would build
    another one (its own context, CA data, a client certificate, TLS versions, a pinned fingerprint or host name) or
    goes through an HTTPS proxy (urllib3 verifies the proxy with the connection's CA location, which stays in place)."""
    if getattr(conn, "ssl_context", None) is not None or getattr(conn, "assert_hostname", None) is not None:
        return None
    if getattr(getattr(conn, "proxy", None), "scheme", None) == "https":
        return None
    if any(getattr(conn, name, None) for name in _OWN_CONTEXT_SETTINGS):
        return None
    return tls_context(getattr(conn, "cert_reqs", None), getattr(conn, "ca_certs", None), getattr(conn, "ca_cert_dir", None))


_CLASSES = []


def _watched_classes():
    """``(pool classes by scheme, adapter class)``: the watched connections, their pools and the adapter that mounts
    them, made once per process."""
    if _CLASSES:
        return _CLASSES[0]

    class _Watched(object):
        """Connection hooks: the stages of an exchange and its socket, for the attempt's watch."""

        def _new_conn(self):
            watch = current_watch()
            if watch is None or watch.deadline is None:
                return super()._new_conn()
            watch.enter("while connecting to %s:%s (name resolution and TCP connect)" % (self.host, self.port))
            connect = super()._new_conn
            sock = _connect_in_helper(connect, watch)
            watch.track(sock, detachable=True)
            if getattr(self, "_tunnel_host", None):
                watch.enter("while waiting for the proxy %s:%s to answer CONNECT %s" % (self.host, self.port, self._tunnel_host))
            elif isinstance(self, urllib3.connection.HTTPSConnection):
                watch.enter("during the TLS handshake with %s:%s" % (self.host, self.port))
            else:
                watch.enter("while sending the request")
            return sock

        def _tunnel(self, *args, **kwargs):
            super()._tunnel(*args, **kwargs)
            watch = current_watch()
            if watch is not None and isinstance(self, urllib3.connection.HTTPSConnection):
                watch.enter("during the TLS handshake with %s through the proxy" % self._tunnel_host)

        def request(self, *args, **kwargs):
            watch = current_watch()
            if watch is not None:
                watch.enter("while sending the request")
                watch.track(getattr(self, "sock", None))
            result = super().request(*args, **kwargs)
            if watch is not None:
                watch.enter("while waiting for the status line and headers of the response")
            return result

    class HTTPConnection(_Watched, urllib3.connection.HTTPConnection):
        pass

    class HTTPSConnection(_Watched, urllib3.connection.HTTPSConnection):
        def connect(self):
            # The TLS handshake with the process's context for this trust store (tls_context), not a new one loading
            # the CA location again; given back after, so that a reconnection looks again.
            context = _shared_context(self)
            if context is None:
                return super().connect()
            given = (self.ssl_context, self.ca_certs, self.ca_cert_dir)
            self.ssl_context, self.ca_certs, self.ca_cert_dir = context, None, None
            try:
                return super().connect()
            finally:
                self.ssl_context, self.ca_certs, self.ca_cert_dir = given

    class HTTPConnectionPool(urllib3.connectionpool.HTTPConnectionPool):
        ConnectionCls = HTTPConnection

    class HTTPSConnectionPool(urllib3.connectionpool.HTTPSConnectionPool):
        ConnectionCls = HTTPSConnection

    # The stock names: messages quote the pool (HTTPSConnectionPool(host=...)) as they did.
    pools = {"http": HTTPConnectionPool, "https": HTTPSConnectionPool}
    _CLASSES.append((pools, _adapter_class(pools)))
    return _CLASSES[0]


@contextlib.contextmanager
def watching(dog, deadline):
    """The attempt in the ``with`` block, ended at ``deadline`` by ``dog`` (a :class:`Watchdog`, or None: not watched).

    An exception the shut-down sockets made the libraries raise becomes a transient :class:`ModelArtsError` saying
    what the attempt was doing when the deadline passed.
    """
    if dog is None:
        yield Watch()
        return
    watch = dog.watch(deadline)
    outer = current_watch()
    _LOCAL.watch = watch
    try:
        yield watch
    except ModelArtsError:
        raise
    except Exception:  # pylint: disable=broad-except  # whatever the shut-down socket made the libraries raise
        if watch.killed:
            raise ModelArtsError("the deadline passed %s" % watch.describe(), transient=True) from None
        raise
    finally:
        _LOCAL.watch = outer
        watch.release()


def hand_back(watch, raw):
    """The attempt is done with ``raw`` (a streamed response): close it, and its connection too if the deadline ended it."""
    if watch.release():
        raw.close()
    else:
        discard(raw)


def read_body(raw, deadline, watch, clock, connection, secrets, limit=None):
    """The whole body of ``raw`` by ``deadline``, read in pieces so that neither its size (``connection.max_response_bytes``,
    or ``limit`` when smaller) nor a slow trickle (``connection.request_timeout`` between pieces) can pass the limits."""
    return b"".join(body_pieces(raw, deadline, watch, clock, connection, secrets, limit))


def body_pieces(raw, deadline, watch, clock, connection, secrets, limit=None):
    """The body of ``raw`` as it arrives, piece by piece (64 KiB at most), by ``deadline`` and within
    ``connection.max_response_bytes`` (``connection.Connection``) - or ``limit``, a caller's own smaller bound -: what
    reads a large answer as a stream holds one piece at a time."""
    maximum = int(connection.max_response_bytes)
    if limit is not None and int(limit) < maximum:
        maximum, bound = int(limit), "the limit of %d bytes read for this answer" % int(limit)
        advice = "the rest is not read"
    else:
        bound = "the max_response_bytes limit of %d" % maximum
        advice = "raise max_response_bytes if documents this large are expected"
    declared = raw.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > maximum:
        raise ModelArtsError("the response body is %s bytes, over %s; %s" % (declared, bound, advice))
    size = 0
    for chunk in _body_pieces(raw, deadline, watch, clock, float(connection.request_timeout)):
        size += len(chunk)
        if size > maximum:
            raise ModelArtsError(
                "the response body is over %s (more than %d bytes received, Content-Type %s); %s"
                % (bound, maximum, label(raw.headers.get("Content-Type"), 60, secrets), advice)
            )
        yield chunk


def _body_pieces(raw, deadline, watch, clock, read_timeout):
    # With urllib3's response, each piece is one socket read whose timeout is cut to the time
    # left, so a body that trickles in ends at the deadline; other transports (test fakes) give
    # their own pieces, checked against the deadline in between.
    stream = getattr(raw, "raw", None)
    reader = getattr(stream, "read1", None) if stream is not None and hasattr(stream, "_connection") else None
    pieces = None if reader is not None else raw.iter_content(chunk_size=65536)
    received = 0
    while True:
        remaining = deadline - clock()
        if remaining <= 0:
            raise ModelArtsError("the deadline passed while the body was still arriving (%d bytes received)" % received, transient=True)
        if reader is None:
            piece = next(pieces, b"")
        else:
            sock = getattr(getattr(stream, "_connection", None), "sock", None)
            if sock is not None:
                sock.settimeout(max(0.001, timer_seconds(min(read_timeout, remaining))))
            try:
                piece = reader(65536, decode_content=True)
            except Exception as exc:  # pylint: disable=broad-except
                raise _as_requests_error(exc) from exc
        if not piece:
            return
        received += len(piece)
        if watch is not None:
            watch.received = received
        yield piece


def _as_requests_error(exc):
    """The ``requests`` exception that ``iter_content`` would raise for a urllib3 error met while reading a body."""
    mapping = (
        ("ProtocolError", "ChunkedEncodingError"),
        ("DecodeError", "ContentDecodingError"),
        ("ReadTimeoutError", "ReadTimeout"),
        ("SSLError", "SSLError"),
    )
    names = set(klass.__name__ for klass in type(exc).__mro__)
    for urllib3_name, requests_name in mapping:
        if urllib3_name in names and type(exc).__module__.startswith("urllib3"):
            return getattr(requests.exceptions, requests_name)(exc)
    return exc
