# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The error model: one exception type for everything the service (or the way to it) says.

Every message built here is safe to show: it quotes at most a short excerpt of
a response body, with known secret values and URL user-info masked.
"""

from __future__ import annotations

import json

from ansible_collections.modelarts.training.plugins.module_utils.text import excerpt, redact

RETRYABLE_STATUS = frozenset((429, 500, 502, 503, 504))
NOT_FOUND_CODES = frozenset(("ModelArts.2775",))

# What a user should check for the codes they meet most; keyed by error_code.
HINTS = {
    "APIG.0301": "check the credentials (access_key/secret_key, or auth_token) and that this machine's clock is right",
    "APIG.0303": "the signature has expired: this machine's clock is off by more than 15 minutes",
    "APIG.0307": "the IAM token is invalid or has expired: renew auth_token (HUAWEICLOUD_SDK_AUTH_TOKEN)",
    # Some gateways spell the prefix APIGW.
    "APIGW.0301": "check the credentials (access_key/secret_key, or auth_token) and that this machine's clock is right",
    "APIGW.0303": "the signature has expired: this machine's clock is off by more than 15 minutes",
    "APIGW.0307": "the IAM token is invalid or has expired: renew auth_token (HUAWEICLOUD_SDK_AUTH_TOKEN)",
    "ModelArts.2786": "the credentials belong to another project: check project_id (HUAWEICLOUD_SDK_PROJECT_ID) and region",
    "ModelArts.0210": "the project id is not valid for these credentials: check project_id and region",
    "ModelArts.2771": "the credentials may not read this training job",
    "ModelArts.2775": "no training job has this id in the project asked: check project_id (HUAWEICLOUD_SDK_PROJECT_ID) and region",
}


class ModelArtsError(Exception):
    """An API call failed.

    Attributes: ``operation`` (what was being done, naming the job), ``status``
    (HTTP status or None for transport errors), ``error_code``, ``error_msg``,
    ``request_id`` (the ``X-Request-Id`` to quote to Huawei support),
    ``transient`` (worth retrying later: throttling, 5xx, connection and
    timeout errors, unreadable bodies), ``unreached`` (no connection could be made - refused, a name
    that does not resolve, no answer to the connect, TLS failed - to a host that has not answered once in this
    client's life: a wait ends on it rather than retry it to the deadline), ``unresolved`` (unreached because the
    resolver does not know the host's name: the client does not retry it, as it retries a refused connection) and
    ``not_found``.  A transport failure
    also says how far it got: ``connected`` is False when no connection could be
    made (refused, unreachable, the name not resolved, the connect timed out),
    True when one was made and no complete answer came, None when not known.
    """

    connected = None

    def __init__(self, message, operation=None, status=None, error_code=None, error_msg=None, request_id=None, transient=False):
        super(ModelArtsError, self).__init__(message)
        self.operation = operation
        self.status = status
        self.error_code = error_code
        self.error_msg = error_msg
        self.request_id = request_id
        self.transient = transient
        self.unreached = False
        # Unreached because the resolver does not know the host's name (transport.name_not_known): not retried.
        self.unresolved = False
        # True when the deadline had passed before the request could be sent: no request, no answer, nothing failed.
        self.not_sent = False
        # True when the request was sent and the caller's deadline ended it before an answer came (see
        # HttpTransport._cut): for a wait, the wait running out during it, not an answer from the service.
        self.deadline_cut = False
        # The start of a credential exchange's error body that was not JSON: for recognising it, never for a message.
        self.unshown_body = None
        # True when the job asked for has an id no job can have (not a UUID): its "not found" is final, not a job
        # too new to be seen yet (items.fetch_item sets it; the waiter's judge does not tolerate it).
        self.not_an_id = False

    @property
    def not_found(self):
        """True for ModelArts' "training job not found" (ModelArts.2775, HTTP 400) and for a bare HTTP 404.

        A 404 that carries another code is something else: ModelArts.2786 (the
        credentials' project does not match the URL) or a gateway code.  A job asked for by a value that cannot be
        an id is not found all the same, and ``not_an_id`` says that this answer will never change.
        """
        return self.error_code in NOT_FOUND_CODES or (self.status == 404 and not self.error_code)

    def replace_hint(self, hint):
        """Put ``hint`` in place of the hint :data:`HINTS` gave this error's code (or before its request id, or at the
        end, when it had none)."""
        text = str(self.args[0]) if self.args else ""
        known = HINTS.get(self.error_code)
        if known and "(%s)" % known in text:
            text = text.replace("(%s)" % known, "(%s)" % hint, 1)
        elif self.request_id and text.endswith(" [request id %s]" % self.request_id):
            text = "%s (%s) [request id %s]" % (text[: -len(" [request id %s]" % self.request_id)], hint, self.request_id)
        else:
            text = "%s (%s)" % (text, hint)
        self.args = (text,) + tuple(self.args[1:])

    def to_dict(self):
        """The error's fields for a module result (``fail_json(**err.to_dict())``)."""
        return {
            "status": self.status,
            "error_code": self.error_code,
            "error_msg": self.error_msg,
            "request_id": self.request_id,
            "operation": self.operation,
        }


def _first(mapping, *keys):
    for key in keys:
        value = mapping.get(key)
        if value not in (None, ""):
            return value
    return None


def parse_error_body(body):
    """Return ``(error_code, error_msg, request_id)`` from an error body of any shape the service uses.

    Shapes: v2 ``{error_code, error_msg}``; v1 ``{is_success: false, error_code, error_message}``;
    API gateway ``{error_code: "APIG.xxxx", error_msg, request_id}``; IAM
    ``{error: {code, title, message}}``; and the SDK's other spellings
    ``errorCode/errorMsg`` and ``code/message``.  Unknown shapes give ``(None, None, None)``.
    """
    if not isinstance(body, dict):
        return None, None, None
    nested = body.get("error")
    if isinstance(nested, dict):
        code = _first(nested, "code", "error_code")
        message = _first(nested, "message", "title")
        return (str(code) if code is not None else None), message, _first(body, "request_id")
    code = _first(body, "error_code", "errorCode", "code")
    message = _first(body, "error_msg", "error_message", "errorMsg", "message")
    return (str(code) if code is not None else None), (str(message) if message is not None else None), _first(body, "request_id")


def error_from_response(operation, status, headers, content, secrets=(), quote=True):
    """Build the :class:`ModelArtsError` for a non-2xx response.

    ``quote=False`` (a credential exchange's answer): a body that is not a recognised error is described by its
    size, never quoted; the service's own error code and message are still shown, masked.
    """
    request_id = headers.get("X-Request-Id") if headers else None
    unshown = None
    try:
        body = json.loads(content.decode("utf-8") if isinstance(content, bytes) else content)
    except (ValueError, RecursionError, UnicodeDecodeError):
        body = None
    code, message, body_request_id = parse_error_body(body)
    request_id = request_id or body_request_id
    transient = status in RETRYABLE_STATUS
    if code is None and message is None:
        kind = "an empty body" if not content else "a non-JSON body" if body is None else "an unrecognised error body"
        text = "%s: HTTP %s with %s" % (operation, status, kind)
        if content and quote:
            text += ": %r" % excerpt(content, secrets)
        elif content:
            text += " (%d bytes, not shown: the answer of a credential exchange is never quoted)" % len(content)
            # Kept for the code that recognises an answer (instance metadata's "configure an agency" page), never shown.
            unshown = excerpt(content, secrets, length=1024)
    else:
        message = redact(message, secrets) if message is not None else None
        # IAM's {"error": {"code": 401, ...}} repeats the status as its code: said once.
        shown = "" if code == str(status) else " " + (code or "(no error_code)")
        text = "%s: HTTP %s%s: %s" % (operation, status, shown, message or "(no error message)")
        hint = HINTS.get(code)
        if hint:
            text += " (%s)" % hint
    if request_id:
        text += " [request id %s]" % request_id
    error = ModelArtsError(text, operation=operation, status=status, error_code=code, error_msg=message, request_id=request_id, transient=transient)
    error.unshown_body = unshown
    return error


class ConnectionConfigError(Exception):
    """An option is wrong; raised before any request.

    The message names the option and where its value came from, never a secret value.
    """


ConfigError = ConnectionConfigError
