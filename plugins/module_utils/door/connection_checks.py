# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's checks of the connection options, read by name once they are resolved: the credential kind and its
rules (:func:`check_credentials`), one-line texts, URLs and numbers - before ``service.connection.Connection`` and
``CredentialSource``, the parts the service's rooms receive, are built from them; and the warning for a ``region`` that
names nothing in the call (:func:`unused_region`), which reads where each option came from."""

from __future__ import annotations

from urllib.parse import urlsplit

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import (
    CONTROL_CHARACTERS,
    CREDENTIAL_KINDS,
    CREDENTIAL_TEXT_OPTIONS,
    DEFAULT_KIND,
    IAM_KINDS,
    KINDS_HELP,
    REGION_PATTERN,
    SELF_DESCRIBING_KINDS,
    describe,
    where,
)
from ansible_collections.modelarts.training.plugins.module_utils.service.endpoints import host_region
from ansible_collections.modelarts.training.plugins.module_utils.text import label, level_text


def _describe_all(names):
    return ", ".join(describe(name) for name in names)


def check_credentials(values, level=None, origins=None):
    """Return the credential kind of ``values``: one of :data:`CREDENTIAL_KINDS`, or :data:`DEFAULT_KIND` when none is named.

    Raises :class:`ConnectionConfigError` when more than one kind is set, when a kind is incomplete, or
    when neither ``region`` nor the endpoints allow finding the services.  ``level`` says where the
    credentials came from, for the messages, and ``origins`` (option -> level) where each other value did.  Messages name
    options and environment variables only.
    """
    present = [kind for kind, names, _required in CREDENTIAL_KINDS if any(values.get(name) for name in names)]
    source = " (%s)" % level_text(level) if level else ""
    if len(present) > 1:
        groups = ["/".join(n for n in names if values.get(n)) for kind, names, _required in CREDENTIAL_KINDS if kind in present]
        raise ConnectionConfigError(
            "conflicting credentials%s: %s are set together; use exactly one kind at one level: %s" % (source, " and ".join(groups), KINDS_HELP)
        )
    kind = present[0] if present else DEFAULT_KIND
    if present:
        names, required = [(names, required) for each, names, required in CREDENTIAL_KINDS if each == kind][0]
        missing = [name for name in required if not values.get(name)]
        if kind == "oidc" and not values.get("oidc_token_file") and not values.get("oidc_id_token"):
            missing.append("oidc_token_file")
        if missing:
            given = [name for name in names if values.get(name)]
            raise ConnectionConfigError("incomplete credentials%s: %s set but %s missing" % (source, _describe_all(given), _describe_all(missing)))
    for name in CREDENTIAL_TEXT_OPTIONS:
        check_text(name, values.get(name))
    if not values.get("region") and not values.get("endpoint"):
        raise ConnectionConfigError("set %s or %s to say which ModelArts endpoint to call" % (describe("region"), describe("endpoint")))
    if kind not in SELF_DESCRIBING_KINDS and not values.get("project_id") and not values.get("region"):
        raise ConnectionConfigError("set %s, or %s so that the project can be looked up in IAM" % (describe("project_id"), describe("region")))
    needs_iam = kind in IAM_KINDS or values.get("agency_name")
    if needs_iam and not values.get("region") and not values.get("iam_endpoint"):
        what = "password authentication asks IAM for a token" if kind == "password" else "these credentials are obtained from IAM"
        raise ConnectionConfigError("%s: set %s, or %s to say which IAM endpoint to call" % (what, describe("region"), describe("iam_endpoint")))
    _check_numbers(values, origins or {})
    _check_urls(values, origins or {})
    return kind


def check_text(name, value, level=None):
    """Refuse a control character in a value that becomes a header, a URL or a body (never echoing the value),
    and a ``region`` that is not a region name; ``level`` says where the value came from, for the message."""
    if not isinstance(value, str):
        return
    named = where(name, level) if level else describe(name)
    if CONTROL_CHARACTERS.search(value):
        raise ConnectionConfigError(
            "%s contains a control character (such as a line break inside the value); a credential or identifier is one line of printable text" % named
        )
    if name == "project_id" and value and not value.strip("."):
        raise ConnectionConfigError("%s is a path segment of every request and cannot be %r" % (named, value))
    if name == "region" and not REGION_PATTERN.fullmatch(value):
        raise ConnectionConfigError(
            "%s must be a region name such as cn-north-4 (lowercase letters and digits in dash-separated parts), got %s; "
            "to call another host, set endpoint and iam_endpoint" % (named, _shown(value))
        )


def _shown(value):
    text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in value)
    return repr(text if len(text) <= 80 else text[:80] + "...")


def option_named(name, origins):
    """``name`` and where its value came from when ``origins`` (option -> level) knows, else ``name`` and its environment variable."""
    return where(name, origins[name]) if name in origins else describe(name)


def _check_urls(values, origins):
    schemes = {
        "endpoint": ("https://", "http://"),
        "iam_endpoint": ("https://", "http://"),
        "sts_endpoint": ("https://", "http://"),
        "proxy": ("https://", "http://", "socks5://", "socks5h://", "socks4://"),
    }
    for name, allowed in schemes.items():
        value = values.get(name)
        if value and not str(value).lower().startswith(allowed):
            raise ConnectionConfigError("%s must be a URL starting with %s" % (option_named(name, origins), " or ".join(allowed)))


def _check_numbers(values, origins):
    for name in ("connect_timeout", "request_timeout", "max_response_bytes"):
        value = values.get(name)
        if value is not None and not value > 0:
            raise ConnectionConfigError("%s must be greater than 0, got %r" % (option_named(name, origins), value))
    for name in ("backoff_retries", "backoff_delay", "backoff_max_delay"):
        value = values.get(name)
        if value is not None and value < 0:
            raise ConnectionConfigError("%s must not be negative, got %r" % (option_named(name, origins), value))


def unused_region(connection, credentials, origins=None, region_at=None):
    """A warning when ``region`` is given and names nothing in the call, yet looks as if it chose where the call goes
    ('' otherwise).

    A region makes the default ModelArts host, the IAM host (for a kind that calls IAM), the STS host (OIDC), and the
    project looked up (or scoped, for a password) when ``project_id`` is not given; no request carries it otherwise
    (the SDK-HMAC-SHA256 signature has no region in it). With ``endpoint``, ``project_id`` and whatever IAM or STS
    endpoint the kind needs all given, it is used for nothing. That is said when the endpoint's host is in another
    region, or when the region was given apart from the endpoint or the project id: at another level (``origins``:
    option -> level) that does not give this same region too (``region_at``: level -> the region given there) - the
    task's ``region: eu-west-101`` over an exported ``HUAWEICLOUD_MODELARTS_ENDPOINT`` and
    ``HUAWEICLOUD_SDK_REGION=cn-north-4``.  A region written with the endpoint and project it goes with is left alone.
    ``connection`` and ``credentials`` are the parts the client is built from (``connection.Connection`` and
    ``connection.CredentialSource``: its kind and agency).
    """
    region, kind = connection.region, credentials.kind
    if not region or not connection.endpoint or not connection.project_id:
        return ""
    needs_iam = kind in IAM_KINDS or kind in SELF_DESCRIBING_KINDS or credentials.agency_name
    if (needs_iam and not connection.iam_endpoint) or (kind == "oidc" and not connection.sts_endpoint):
        return ""
    origins = origins or {}
    region_at = region_at or {}
    named = host_region(connection.endpoint)

    def apart(name):
        level = origins.get(name)
        given = region_at.get(level)
        return level != origins.get("region") and (given.strip() if isinstance(given, str) else given) != region

    if named in (None, region) and not apart("endpoint") and not apart("project_id"):
        return ""

    def shown(name):
        return where(name, origins[name]) if origins.get(name) else describe(name)

    text = "%s is not used: %s names the host and %s the project, and no request carries a region%s" % (
        # region eu-west-101 (task option)
        shown("region").replace("region", "region %s" % label(region, 60), 1),
        shown("endpoint"),
        shown("project_id"),
        " (the AK/SK signature does not include one)" if kind == "aksk" else "",
    )
    if named and named != region:
        text += "; the endpoint's host %s is in %s" % (label(urlsplit(connection.endpoint).hostname, 200), named)
    return text + "; to call %s, set endpoint and project_id for it (or leave them unset), else leave region out" % label(region, 60)
