# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTP layer: routing, authentication, fault injection, responses and the request log."""

import hmac
import json
import re
import socket
import ssl
import struct
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

from . import documents, errors, faults as faults_mod, iam, signing
from .control import handle_control
from .requestlog import redact_body, redact_headers

MAX_BODY = 1024 * 1024
_V2_JOB = re.compile(r'^/v2/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/?$')
_V2_SEARCH = re.compile(r'^/v2/(?P<project>[^/]+)/training-job-searches/?$')
_V1_JOB = re.compile(r'^/v1/(?P<project>[^/]+)/training-jobs/(?P<job>[^/]+)/versions/(?P<version>[^/]+)/?$')
SEARCH_KEYS = ('name', 'phase', 'create_time', 'kind', 'algorithm_name', 'user_id', 'user_name', 'id')
SEARCH_OPERATORS = ('like', 'in', 'not', 'between')


class Caller:
    """Who sent a request: ``kind`` is ``aksk`` or ``token``."""

    __slots__ = ('kind', 'account', 'project', 'ak', 'temporary', 'declared_project')

    def __init__(self, kind, account, project=None, ak=None, temporary=False, declared_project=None):
        self.kind = kind
        self.account = account
        self.project = project
        self.ak = ak
        self.temporary = temporary
        self.declared_project = declared_project

    def log_view(self):
        """What the request log shows about the caller (never secrets)."""
        view = {'kind': self.kind, 'domain': self.account.domain_name}
        if self.ak:
            view['ak'] = self.ak
            view['temporary'] = self.temporary
        if self.project:
            view['project_id'] = self.project['id']
        return view


class Response:
    """A response about to be sent; faults may rewrite it."""

    __slots__ = ('status', 'body', 'content_type', 'headers', 'document', 'api')

    def __init__(self, status, body=None, content_type='application/json;charset=UTF-8', headers=None, document=None, api=None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = dict(headers or {})
        self.document = document      # the JSON object behind body (drift rewrites it)
        self.api = api                # v2 or v1, for drift defaults


def _json_bytes(obj):
    return json.dumps(obj, separators=(',', ':'), ensure_ascii=False).encode('utf-8')


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
        return '%s://%s:%d' % ('https' if self.ssl_context else 'http', host, port)

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
            sys.stderr.write('modelarts-emulator: %s while serving %s\n' % (type(exc).__name__, client_address[0]))


class EmulatorRequestHandler(BaseHTTPRequestHandler):
    """Serves IAM, ModelArts and the control API."""

    protocol_version = 'HTTP/1.1'
    server_version = 'api-gateway'
    sys_version = ''
    timeout = 120    # idle keep-alive connections are closed after this many seconds
    disable_nagle_algorithm = True   # small responses must not wait for the client's delayed ACK

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
        reason = message or self.responses.get(code, ('Error',))[0]
        body = _json_bytes(errors.error_body(errors.APIGW, code, 'APIG.0101' if code in (404, 405, 501) else 'APIG.0100',
                                             reason, request_id))
        self.close_connection = True
        if self.request_version == 'HTTP/0.9':
            # An unparsable request line; answer with a status line and headers all the same.
            self.request_version = 'HTTP/1.1'
        try:
            self.send_response(code, reason)
            self.send_header('Content-Type', 'application/json;charset=UTF-8')
            self.send_header('Content-Length', str(len(body)))
            self.send_header('X-Request-Id', request_id)
            self.send_header('Connection', 'close')
            self.end_headers()
            if self.command != 'HEAD' and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        """Access logging goes to the request log, not stderr (unless --verbose)."""
        if self.server.verbose:
            sys.stderr.write('modelarts-emulator: %s - %s\n' % (self.address_string(), format % args))

    # Request plumbing ------------------------------------------------------------------------------------
    def _read_body(self):
        length = self.headers.get('Content-Length')
        if not length:
            return b''
        try:
            length = int(length)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            # The unread body would be taken for the next request: end this connection after answering.
            self.close_connection = True
            if length < 0:
                raise errors.ApiError(400, 'APIG.0100', 'Invalid Content-Length.', errors.APIGW)
            raise errors.ApiError(413, 'APIG.0100', 'Request entity too large.', errors.APIGW)
        return self.rfile.read(length)

    def _dispatch(self):
        state = self.server.state
        started = time.perf_counter()
        request_id = uuid.uuid4().hex
        raw_path, _sep, raw_query = self.path.partition('?')
        headers = {}
        for name, value in self.headers.items():
            headers[name.lower()] = value
        context = {'caller': None, 'job': None, 'fault': None, 'project_id': None}
        body = b''
        family = errors.APIGW
        try:
            body = self._read_body()
            if raw_path.startswith('/_emulator/') or raw_path == '/_emulator':
                self._control(raw_path, raw_query, headers, body, request_id)
                return
            family, response = self._route(raw_path, raw_query, headers, body, context)
        except errors.ApiError as exc:
            response = Response(exc.status, _json_bytes(exc.body(request_id)), headers=exc.headers)
        except Exception as exc:  # pylint: disable=broad-except
            # Never leak a traceback to the client: answer like the service's generic internal error.
            if self.server.verbose:
                sys.stderr.write('modelarts-emulator: internal error %s: %s\n' % (type(exc).__name__, exc))
            err = errors.internal_error(family if family in (errors.V1, errors.V2) else errors.V2)
            response = Response(err.status, _json_bytes(err.body(request_id)))
        if raw_path.startswith('/v3/'):
            # IAM names its request id differently; the SDK quotes it in project lookup errors.
            response.headers.setdefault('X-IAM-Trace-Id', 'token_' + request_id)
        fault = context.get('fault')
        # Log before writing: a client that reads the log right after its response must find the entry.
        status = 0 if fault and fault['type'] == 'reset' else response.status
        self._log(state, request_id, raw_path, raw_query, headers, body, status, context, started)
        self._send(response, request_id, fault)

    def _log(self, state, request_id, raw_path, raw_query, headers, body, status, context, started):
        caller = context.get('caller')
        fault = context.get('fault')
        state.log.add({
            'time': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
            'method': self.command,
            'path': raw_path,
            'query': raw_query,
            'status': status,
            'request_id': request_id,
            'caller': caller.log_view() if caller else None,
            'project_id': context.get('project_id'),
            'job': context.get('job'),
            'fault': fault['type'] if fault else None,
            'headers': redact_headers(dict(self.headers.items())),
            'body': redact_body(body) if raw_path.startswith('/v3/') or self.command != 'GET' else None,
            'duration_ms': round((time.perf_counter() - started) * 1000, 3),
        })

    def _send(self, response, request_id, fault):
        """Write the response (applying transport-level faults); return False when nothing was sent."""
        kind = fault['type'] if fault else None
        if kind == 'reset':
            self._reset()
            return False
        body = response.body or b''
        declared = len(body)
        if kind == 'truncate':
            cut = max(1, len(body) // 2)
            if fault.get('mode') == 'short_read':
                body = body[:cut]
                self.close_connection = True
            else:
                body = body[:cut]
                declared = len(body)
        try:
            self.send_response(response.status)
            self.send_header('Content-Type', response.content_type)
            self.send_header('Content-Length', str(declared))
            self.send_header('X-Request-Id', request_id)
            for name, value in response.headers.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header('Connection', 'close')
            # One write for headers and body: fewer packets and syscalls per response.
            self._headers_buffer.append(b'\r\n')
            self.wfile.write(b''.join(self._headers_buffer) + (body if self.command != 'HEAD' else b''))
            self._headers_buffer = []
        except (ConnectionError, ssl.SSLError, OSError):
            self.close_connection = True
            return False
        return True

    def _reset(self):
        """Abort the connection with a TCP RST (SO_LINGER 0), sending nothing."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
            self.connection.close()
        except OSError:
            pass

    # Routing ---------------------------------------------------------------------------------------------
    def _route(self, raw_path, raw_query, headers, body, context):
        method = self.command
        if raw_path.rstrip('/') == '/v3/auth/tokens' and method == 'POST':
            return errors.IAM, self._iam_token(raw_path, headers, body, context)
        if raw_path.rstrip('/') == '/v3/projects' and method == 'GET':
            return errors.IAM, self._iam_projects(raw_path, raw_query, headers, body, context)
        match = _V2_JOB.match(raw_path)
        if match and method == 'GET':
            return errors.V2, self._v2_detail(raw_path, raw_query, headers, body, context, match)
        match = _V2_SEARCH.match(raw_path)
        if match and method == 'POST':
            return errors.V2, self._v2_search(raw_path, raw_query, headers, body, context, match)
        match = _V1_JOB.match(raw_path)
        if match and method == 'GET':
            return errors.V1, self._v1_detail(raw_path, raw_query, headers, body, context, match)
        raise errors.apigw_not_found()

    def _base_url(self, headers):
        host = headers.get('host') or '%s:%d' % self.server.server_address[:2]
        return '%s://%s' % ('https' if self.server.ssl_context else 'http', host)

    # Authentication ----------------------------------------------------------------------------------------
    def _authenticate(self, raw_path, raw_query, headers, body):
        state = self.server.state
        authorization = headers.get('authorization')
        if authorization:
            if not authorization.startswith(signing.ALGORITHM + ' '):
                raise errors.apigw_auth('the signing algorithm %s is not supported' % authorization.split(' ', 1)[0][:40])
            try:
                ak = signing.parse_authorization(authorization)[0]
            except signing.SignatureError as exc:
                raise errors.apigw_auth(exc.detail) from None
            account, key = state.directory.account_for_ak(ak)
            if account is None:
                raise errors.apigw_auth('ak %s not exist' % ak)
            if state.settings['signature_check']:
                try:
                    signed = signing.verify(key['sk'], self.command, raw_path, raw_query, headers, body,
                                            skew_tolerance=state.settings['clock_skew_tolerance'])[1]
                except signing.SignatureError as exc:
                    if exc.reason == 'skew':
                        raise errors.apigw_signature_expired(exc.detail) from None
                    raise errors.apigw_auth(exc.detail) from None
            else:
                signed = signing.parse_authorization(authorization)[1]
            sent_token = headers.get('x-security-token')
            if key['security_token']:
                if not sent_token or not hmac.compare_digest(sent_token.strip(), key['security_token']):
                    raise errors.apigw_auth('the security token of temporary AK %s is missing or invalid' % ak)
                if 'x-security-token' not in signed:
                    raise errors.apigw_auth('X-Security-Token must be a signed header')
            elif sent_token:
                raise errors.apigw_auth('a security token was sent with the permanent AK %s' % ak)
            declared = headers.get('x-project-id')
            return Caller('aksk', account, ak=ak, temporary=bool(key['security_token']),
                          declared_project=declared.strip() if declared else None)
        token = headers.get('x-auth-token')
        if token:
            record = state.tokens.lookup(token.strip())
            if record is None:
                raise errors.apigw_auth('decrypt token fail')
            if state.now() >= record['expires_at']:
                raise errors.apigw_token_expired()
            return Caller('token', record['account'], project=record['project'])
        raise errors.apigw_auth('no X-Auth-Token and no AK/SK signature in the request')

    @staticmethod
    def _check_project(caller, project_id, family):
        """Reject a URL project that is not the caller's (ModelArts.2786)."""
        if caller.kind == 'token':
            if caller.project['id'] != project_id:
                raise errors.project_mismatch(family)
            return
        if caller.account.project_by_id(project_id) is None:
            raise errors.project_mismatch(family)
        if caller.declared_project and caller.declared_project != project_id:
            raise errors.project_mismatch(family)

    def _modelarts_prelude(self, raw_path, raw_query, headers, body, context, project_id, family, job_key=None, fault_family=None):
        """Authenticate, check the project and draw a fault; return the fault (or None)."""
        caller = self._authenticate(raw_path, raw_query, headers, body)
        context['caller'] = caller
        context['project_id'] = project_id
        self._check_project(caller, project_id, family)
        context['job'] = job_key
        return self._draw_fault(fault_family or family, job_key, context, family)

    def _draw_fault(self, fault_family, job_key, context, body_family):
        fault = self.server.state.faults.take(fault_family, job_key)
        if fault is None:
            return None
        context['fault'] = fault
        kind = fault['type']
        if kind == 'throttle':
            raise errors.apigw_throttled(fault['retry_after'])
        if kind == 'error':
            status = fault['status']
            if status == 500:
                raise errors.internal_error(body_family)
            if status == 503:
                raise errors.ApiError(503, 'ModelArts.0003', 'The service is temporarily unavailable. Please try again later.', body_family)
            if status == 502:
                raise errors.ApiError(502, 'APIG.0202', 'Backend unavailable.', errors.APIGW)
            raise errors.ApiError(504, 'APIG.0201', 'Backend timeout.', errors.APIGW)
        if kind == 'html':
            return fault
        if kind == 'delay':
            time.sleep(fault['seconds'])
        return fault

    def _finish(self, response, fault):
        """Apply body-level faults (html, drift) to a successful response."""
        if fault is None:
            return response
        if fault['type'] == 'html':
            status = fault['status']
            reason = self.responses.get(status, ('Error',))[0]
            page = faults_mod.HTML_PAGE.format(status=status, reason=reason)
            return Response(status, page.encode('utf-8'), content_type='text/html')
        if fault['type'] == 'drift' and response.document is not None:
            doc = response.document
            if response.api == 'search':
                doc = dict(doc, items=[faults_mod.apply_drift(item, fault, 'v2') for item in doc['items']])
            else:
                doc = faults_mod.apply_drift(doc, fault, response.api)
            return Response(response.status, _json_bytes(doc), document=doc, api=response.api)
        return response

    # IAM ---------------------------------------------------------------------------------------------------
    def _iam_token(self, raw_path, headers, body, context):
        state = self.server.state
        del raw_path
        fault = self._draw_fault('iam', None, context, errors.IAM)
        try:
            payload = json.loads(body or b'{}')
        except ValueError:
            raise errors.ApiError(400, 'IAM', 'The request body is not valid JSON.', errors.IAM) from None
        if not isinstance(payload, dict):
            raise errors.ApiError(400, 'IAM', 'The request body must be a JSON object.', errors.IAM)
        domain, user_name, password, scope = iam.parse_password_auth(payload)
        account = state.directory.account_for_domain(domain)
        user = account.users.get(user_name) if account else None
        if user is None or not hmac.compare_digest(user['password'].encode('utf-8'), password.encode('utf-8')):
            raise errors.ApiError(401, 'IAM', 'The username or password is wrong.', errors.IAM)
        project = iam.resolve_scope(account, scope)
        record = state.tokens.issue(account, user, project, state.now(), state.settings['token_lifetime'])
        context['caller'] = Caller('password', account, project=project)
        context['project_id'] = project['id']
        with_catalog = 'nocatalog=true' not in (self.path.partition('?')[2] or '')
        doc = iam.token_body(record, self._base_url(headers), with_catalog)
        response = Response(201, _json_bytes(doc), headers={'X-Subject-Token': record['token']}, document=None)
        return self._finish(response, fault)

    def _iam_projects(self, raw_path, raw_query, headers, body, context):
        caller = self._authenticate(raw_path, raw_query, headers, body)
        context['caller'] = caller
        fault = self._draw_fault('iam', None, context, errors.IAM)
        name = None
        for part in raw_query.split('&'):
            key, _sep, value = part.partition('=')
            if key == 'name':
                name = unquote(value)
        doc = iam.projects_body(caller.account, name, self._base_url(headers))
        return self._finish(Response(200, _json_bytes(doc)), fault)

    # ModelArts ---------------------------------------------------------------------------------------------
    def _v2_detail(self, raw_path, raw_query, headers, body, context, match):
        project_id = unquote(match.group('project'))
        job_id = unquote(match.group('job'))
        fault = self._modelarts_prelude(raw_path, raw_query, headers, body, context, project_id, errors.V2, job_key=job_id)
        state = self.server.state
        job = state.v2_job(project_id, job_id)
        if job is None:
            raise errors.job_not_found(errors.V2)
        snapshot = job.lifecycle.poll(state.now())
        if snapshot is None:
            raise errors.job_not_found(errors.V2, job.not_found_status)
        doc = documents.v2_document(job, snapshot)
        return self._finish(Response(200, _json_bytes(doc), document=doc, api='v2'), fault)

    def _v1_detail(self, raw_path, raw_query, headers, body, context, match):
        project_id = unquote(match.group('project'))
        try:
            job_id = int(match.group('job'))
            version_id = int(match.group('version'))
        except ValueError:
            # Authenticate first: an anonymous caller learns nothing, not even argument errors.
            self._modelarts_prelude(raw_path, raw_query, headers, body, context, project_id, errors.V1)
            raise errors.invalid_argument('job_id and version_id must be integers', errors.V1) from None
        job_key = '%d/%d' % (job_id, version_id)
        state = self.server.state
        job = state.v1_job(project_id, job_id, version_id)
        fault = self._modelarts_prelude(raw_path, raw_query, headers, body, context, project_id, errors.V1,
                                        job_key=job.key if job else job_key)
        if job is None:
            raise errors.job_not_found(errors.V1)
        snapshot = job.lifecycle.poll(state.now())
        if snapshot is None:
            raise errors.job_not_found(errors.V1, job.not_found_status)
        doc = documents.v1_document(job, snapshot)
        return self._finish(Response(200, _json_bytes(doc), document=doc, api='v1'), fault)

    def _v2_search(self, raw_path, raw_query, headers, body, context, match):
        project_id = unquote(match.group('project'))
        fault = self._modelarts_prelude(raw_path, raw_query, headers, body, context, project_id, errors.V2,
                                        fault_family='search')
        state = self.server.state
        try:
            query = json.loads(body or b'{}')
        except ValueError:
            raise errors.invalid_argument('the request body is not valid JSON') from None
        if not isinstance(query, dict):
            raise errors.invalid_argument('the request body must be a JSON object')
        offset, limit, sort_by, order, filters = _parse_search(query, state.settings['max_search_limit'])
        now = state.now()
        counts = state.settings['search_counts_as_poll']
        matched = []
        for job in state.v2_jobs_in(project_id):
            if not job.lifecycle.visible(now):
                continue
            snapshot = job.lifecycle.peek(now)
            if snapshot is None or not _matches(job, snapshot, filters):
                continue
            matched.append((job, snapshot))
        reverse = order == 'desc'
        if sort_by == 'name':
            matched.sort(key=lambda js: (js[0].name, js[0].v2_id), reverse=reverse)
        elif sort_by == 'duration':
            matched.sort(key=lambda js: (documents.v2_status(js[0], js[1])['duration'], js[0].v2_id), reverse=reverse)
        else:
            matched.sort(key=lambda js: (js[1].created_ms, js[0].v2_id), reverse=reverse)
        page = matched[offset * limit:(offset + 1) * limit]
        items = []
        for job, snapshot in page:
            use_poll = job.search_counts_as_poll if job.search_counts_as_poll is not None else counts
            if use_poll:
                snapshot = job.lifecycle.poll(now) or snapshot
            items.append(documents.v2_document(job, snapshot))
        doc = {'total': len(matched), 'count': len(items), 'limit': limit, 'offset': offset, 'sort_by': sort_by,
               'order': order, 'group_by': '', 'items': items}
        return self._finish(Response(200, _json_bytes(doc), document=doc, api='search'), fault)

    # Control ---------------------------------------------------------------------------------------------
    def _control(self, raw_path, raw_query, headers, body, request_id):
        sent = headers.get('x-emulator-admin-token', '').encode('utf-8')
        authorised = hmac.compare_digest(sent, self.server.admin_token.encode('utf-8'))
        if raw_path.rstrip('/') != '/_emulator/health' and not authorised:
            status, obj = 403, errors.error_body(errors.CONTROL, 403, 'forbidden',
                                                 'the control API needs the X-Emulator-Admin-Token header', request_id)
        else:
            status, obj = handle_control(self.server, self.command, raw_path, raw_query, body, request_id)
        self._send(Response(status, _json_bytes(obj)), request_id, None)


def _parse_search(query, max_limit):
    try:
        offset = int(query['offset']) if query.get('offset') is not None else 0
        limit = int(query['limit']) if query.get('limit') is not None else 10
    except (TypeError, ValueError):
        raise errors.invalid_argument('offset and limit must be integers') from None
    if offset < 0:
        raise errors.invalid_argument('offset must be >= 0')
    if not 1 <= limit <= max_limit:
        raise errors.invalid_argument('limit must be between 1 and %d' % max_limit)
    sort_by = query.get('sort_by') or 'create_time'
    if sort_by not in ('create_time', 'name', 'duration'):
        raise errors.invalid_argument('sort_by must be create_time, name or duration')
    order = query.get('order') or 'desc'
    if order not in ('asc', 'desc'):
        raise errors.invalid_argument('order must be asc or desc')
    filters = query.get('filters') or []
    if not isinstance(filters, list):
        raise errors.invalid_argument('filters must be a list')
    clean = []
    for item in filters:
        if not isinstance(item, dict):
            raise errors.invalid_argument('each filter must be an object {key, operator, value}')
        key, operator, value = item.get('key'), item.get('operator'), item.get('value')
        if key not in SEARCH_KEYS:
            raise errors.invalid_argument('unsupported filter key %r' % (key,))
        if operator not in SEARCH_OPERATORS:
            raise errors.invalid_argument('unsupported filter operator %r' % (operator,))
        if not isinstance(value, list):
            value = [value]
        value = [str(v) for v in value]
        if operator == 'between' and len(value) != 2:
            raise errors.invalid_argument('between takes exactly two values')
        clean.append((key, operator, value))
    return offset, limit, sort_by, order, clean


def _field(job, snapshot, key):
    if key == 'phase':
        return snapshot.phase
    if key == 'create_time':
        return snapshot.created_ms
    if key == 'algorithm_name':
        return 'algo-%s' % job.code_name if job.algorithm != 'code' else ''
    if key in ('user_id', 'user_name'):
        return job.user_name
    if key == 'id':
        return job.v2_id
    return getattr(job, key)


def _matches(job, snapshot, filters):
    for key, operator, values in filters:
        actual = _field(job, snapshot, key)
        if operator == 'like':
            if not any(v.lower() in str(actual).lower() for v in values):
                return False
        elif operator == 'in':
            if str(actual) not in values:
                return False
        elif operator == 'not':
            if str(actual) in values:
                return False
        else:
            try:
                low, high = float(values[0]), float(values[1])
                if not low <= float(actual) <= high:
                    return False
            except ValueError:
                return False
    return True
