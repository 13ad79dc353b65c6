# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP layer: a threaded HTTP/1.1 server on loopback; request ids, the request log, transport faults.

What a request means is decided in :mod:`routes` (after :mod:`gateway` authenticated it); this
module only moves bytes, and is where connection-level faults (reset, truncation) happen.
"""

import hmac
import socket
import ssl
import struct
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import errors, routes
from .control import handle_control
from .gateway import Exchange
from .requestlog import redact_body, redact_headers
from .responses import Response, error_response, json_bytes

MAX_BODY = 1024 * 1024


class EmulatorHTTPServer(ThreadingHTTPServer):
    """Threaded HTTP/1.1 server bound to loopback; TLS handshakes happen in the worker threads."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address, state, admin_token, ssl_context=None, verbose=False):
        self.state = state
        self.admin_token = admin_token
        self.ssl_context = ssl_context
        self.verbose = verbose
        super().__init__(address, EmulatorRequestHandler)

    @property
    def base_url(self):
        """The URL clients use, e.g. ``https://127.0.0.1:8443``."""
        host, port = self.server_address[:2]
        return "%s://%s:%d" % ("https" if self.ssl_context else "http", host, port)

    def finish_request(self, request, client_address):
        """Wrap TLS here (a worker thread) so a slow handshake never blocks ``accept``."""
        if self.ssl_context is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(10)
        try:
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        """Connection-level errors (client went away) are normal here; report others tersely."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError, ssl.SSLError, OSError)):
            return
        if self.verbose:
            sys.stderr.write("modelarts-emulator: %s while serving %s\n" % (type(exc).__name__, client_address[0]))


class EmulatorRequestHandler(BaseHTTPRequestHandler):
    """Serves IAM, ModelArts and the control API."""

    protocol_version = "HTTP/1.1"
    server_version = "api-gateway"
    sys_version = ""
    timeout = 120  # idle keep-alive connections are closed after this many seconds
    disable_nagle_algorithm = True  # small responses must not wait for the client's delayed ACK

    def version_string(self):
        """The Server header, as the real gateway sends it."""
        return self.server_version

    # pylint: disable=invalid-name
    def do_GET(self):
        """Dispatch a GET."""
        self._dispatch()

    def do_POST(self):
        """Dispatch a POST."""
        self._dispatch()

    def do_PUT(self):
        """Dispatch a PUT."""
        self._dispatch()

    def do_PATCH(self):
        """Dispatch a PATCH."""
        self._dispatch()

    def do_DELETE(self):
        """Dispatch a DELETE."""
        self._dispatch()

    # pylint: enable=invalid-name

    def send_error(self, code, message=None, explain=None):
        """Errors raised by http.server itself (bad request line, unsupported method) in the gateway's shape."""
        del explain
        request_id = uuid.uuid4().hex
        reason = message or self.responses.get(code, ("Error",))[0]
        gateway_code = "APIG.0101" if code in (404, 405, 501) else "APIG.0100"
        body = json_bytes(errors.error_body(errors.APIGW, code, gateway_code, reason, request_id))
        self.close_connection = True
        if self.request_version == "HTTP/0.9":
            # An unparsable request line; answer with a status line and headers all the same.
            self.request_version = "HTTP/1.1"
        try:
            self.send_response(code, reason)
            self.send_header("Content-Type", "application/json;charset=UTF-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Request-Id", request_id)
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        """Access logging goes to the request log, not stderr (unless --verbose)."""
        if self.server.verbose:
            sys.stderr.write("modelarts-emulator: %s - %s\n" % (self.address_string(), format % args))

    # Request plumbing ------------------------------------------------------------------------------------
    def _read_body(self):
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        try:
            length = int(length)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            # The unread body would be taken for the next request: end this connection after answering.
            self.close_connection = True
            if length < 0:
                raise errors.ApiError(400, "APIG.0100", "Invalid Content-Length.", errors.APIGW)
            raise errors.ApiError(413, "APIG.0100", "Request entity too large.", errors.APIGW)
        return self.rfile.read(length)

    def _dispatch(self):
        state = self.server.state
        started = time.perf_counter()
        # Numbered when it arrives; a clear of the log while this request is held drops its record (requestlog.RequestLog).
        arrival = state.log.arrive()
        path, _sep, query = self.path.partition("?")
        headers = {name.lower(): value for name, value in self.headers.items()}
        host = headers.get("host") or "%s:%d" % self.server.server_address[:2]
        exchange = Exchange(self.command, path, query, headers, b"", uuid.uuid4().hex, "%s://%s" % ("https" if self.server.ssl_context else "http", host))
        family = errors.APIGW
        try:
            exchange.body = self._read_body()
            if path.startswith("/_emulator/") or path == "/_emulator":
                self._control(exchange)
                return
            family, response = routes.dispatch(state, exchange)
        except errors.ApiError as exc:
            response = error_response(exc, exchange.request_id)
        except Exception as exc:  # pylint: disable=broad-except
            # Never leak a traceback to the client: answer like the service's generic internal error.
            if self.server.verbose:
                # The type and the path only: an exception's text could quote request data.
                sys.stderr.write("modelarts-emulator: internal error %s on %s %s\n" % (type(exc).__name__, self.command, path))
            response = error_response(errors.internal_error(family if family in (errors.V1, errors.V2) else errors.V2), exchange.request_id)
        if path.startswith("/v3/"):
            # IAM names its request id differently; the SDK quotes it in project lookup errors.
            response.headers.setdefault("X-IAM-Trace-Id", "token_" + exchange.request_id)
        # Log before writing: a client that reads the log right after its response must find the entry.
        self._log(exchange, response, started, arrival)
        self._send(response, exchange.request_id, exchange.fault)

    def _log(self, exchange, response, started, arrival=(None, None)):
        fault = exchange.fault
        self.server.state.log.add(
            {
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "method": exchange.method,
                "path": exchange.path,
                "query": exchange.query,
                "status": 0 if fault and fault["type"] == "reset" else response.status,
                "request_id": exchange.request_id,
                "caller": exchange.caller.log_view() if exchange.caller else None,
                "project_id": exchange.project_id,
                "job": exchange.job,
                "fault": fault["type"] if fault else None,
                "issued": exchange.issued,
                "headers": redact_headers(dict(self.headers.items())),
                "body": redact_body(exchange.body) if exchange.path.startswith("/v3/") or exchange.method != "GET" else None,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            },
            generation=arrival[1],
            seq=arrival[0],
        )

    def _send(self, response, request_id, fault):
        """Write the response (applying transport-level faults); return False when nothing was sent."""
        kind = fault["type"] if fault else None
        if kind == "reset":
            self._reset()
            return False
        body = response.body or b""
        declared = len(body)
        if kind == "truncate":
            cut = max(1, len(body) // 2)
            if fault.get("mode") == "short_read":
                body = body[:cut]
                self.close_connection = True
            else:
                body = body[:cut]
                declared = len(body)
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(declared))
            self.send_header("X-Request-Id", request_id)
            for name, value in response.headers.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            # One write for headers and body: fewer packets and syscalls per response.
            self._headers_buffer.append(b"\r\n")
            self.wfile.write(b"".join(self._headers_buffer) + (body if self.command != "HEAD" else b""))
            self._headers_buffer = []
        except (ConnectionError, ssl.SSLError, OSError):
            self.close_connection = True
            return False
        return True

    def _reset(self):
        """Abort the connection with a TCP RST (SO_LINGER 0), sending nothing."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    # Control ---------------------------------------------------------------------------------------------
    def _control(self, exchange):
        sent = exchange.headers.get("x-emulator-admin-token", "").encode("utf-8")
        authorised = hmac.compare_digest(sent, self.server.admin_token.encode("utf-8"))
        if exchange.path.rstrip("/") != "/_emulator/health" and not authorised:
            status, obj = (
                403,
                errors.error_body(errors.CONTROL, 403, "forbidden", "the control API needs the X-Emulator-Admin-Token header", exchange.request_id),
            )
        else:
            status, obj = handle_control(self.server, self.command, exchange.path, exchange.query, exchange.body, exchange.request_id)
        self._send(Response(status, json_bytes(obj)), exchange.request_id, None)
