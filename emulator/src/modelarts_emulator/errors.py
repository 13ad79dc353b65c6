# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Error responses in the shapes the real services use.

- API gateway (authentication, throttling, backend failures): ``{error_code: APIG.xxxx, error_msg, request_id}``
- IAM: keystone's ``{error: {code, title, message}}``
- ModelArts v2: ``{error_code: ModelArts.xxxx, error_msg}``
- ModelArts v1: ``{is_success: false, error_code, error_message}``

Handlers raise :class:`ApiError`; the HTTP layer turns it into a response with the body for the API
family the request was addressed to.
"""

# API families, chosen by the request path.
APIGW = "apigw"
IAM = "iam"
V2 = "v2"
V1 = "v1"
CONTROL = "control"


class ApiError(Exception):
    """An error response. ``family`` selects the body shape (APIGW, IAM, V2, V1, CONTROL)."""

    def __init__(self, status, code, message, family=V2, headers=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.family = family
        self.headers = dict(headers or {})

    def body(self, request_id):
        """Return the JSON-serialisable error body."""
        return error_body(self.family, self.status, self.code, self.message, request_id)


_IAM_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server Error"}


def error_body(family, status, code, message, request_id):
    """Return an error body of the given family."""
    if family == APIGW:
        return {"error_code": code, "error_msg": message, "request_id": request_id}
    if family == IAM:
        return {"error": {"code": status, "title": _IAM_TITLES.get(status, "Error"), "message": message}}
    if family == V1:
        return {"is_success": False, "error_code": code, "error_message": message}
    if family == CONTROL:
        return {"error": code, "message": message}
    return {"error_code": code, "error_msg": message}


# Gateway errors (authentication happens at the gateway, before ModelArts sees the request).
def apigw_auth(message):
    """401 APIG.0301: missing or wrong IAM credentials (AK/SK signature or token)."""
    return ApiError(401, "APIG.0301", "Incorrect IAM authentication information: " + message, APIGW)


def apigw_signature_expired(message):
    """401 APIG.0303: the request's X-Sdk-Date is outside the accepted clock skew."""
    return ApiError(401, "APIG.0303", "Incorrect IAM authentication information: " + message, APIGW)


def apigw_token_expired():
    """401 APIG.0307: the IAM token has expired."""
    return ApiError(401, "APIG.0307", "The token must be updated.", APIGW)


def apigw_throttled(retry_after):
    """429 APIG.0308 with a Retry-After header."""
    return ApiError(
        429,
        "APIG.0308",
        "The throttling threshold has been reached: policy user over ratelimit,limit:20,time:1 second",
        APIGW,
        headers={"Retry-After": str(retry_after)},
    )


def apigw_not_found():
    """404 APIG.0101: no API matches the path (the gateway's answer to unknown URLs)."""
    return ApiError(404, "APIG.0101", "The API does not exist or has not been published in the environment.", APIGW)


def apigw_method_not_allowed():
    """405 APIG.0101 variant for a known path with an unsupported method."""
    return ApiError(405, "APIG.0101", "The API does not exist or has not been published in the environment.", APIGW)


# ModelArts errors.
def job_not_found(family=V2, status=400):
    """ModelArts.2775: training job not found (HTTP 400 on the real service)."""
    return ApiError(status, "ModelArts.2775", "Training job not found.", family)


def project_mismatch(family=V2):
    """ModelArts.2786: the caller's project does not match the project in the URL."""
    return ApiError(404, "ModelArts.2786", "Token project id does not match the project id in the URL.", family)


def invalid_argument(message, family=V2):
    """ModelArts.0101: invalid request argument."""
    return ApiError(400, "ModelArts.0101", "Invalid parameter: " + message, family)


def internal_error(family=V2):
    """ModelArts.0010 500: internal error (also used for injected 500 faults)."""
    return ApiError(500, "ModelArts.0010", "Internal server error. Please try again later.", family)
