# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where calls go: a region's ModelArts, IAM and STS hosts, the checks that keep a region or an id from moving a
request to another host, and which option named a host (for a host that cannot be reached).
"""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from ansible_collections.modelarts.training.plugins.module_utils.service.credentials import CredentialsConfigError
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import (
    REGION_PATTERN,
    describe,
)
from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.text import label

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


# Regions with their own STS endpoint in the SDK's region map; the others use cn-north-4's.
STS_REGIONS = frozenset(
    (
        "cn-north-4",
        "cn-south-1",
        "cn-east-3",
        "cn-southwest-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "sa-brazil-1",
        "la-south-2",
        "af-south-1",
        "tr-west-1",
    )
)
DEFAULT_STS_REGION = "cn-north-4"


def sts_endpoint(region=None):
    """The STS endpoint of a region, as the SDK's region map has it: its own for the regions listed there, cn-north-4's otherwise.

    Raises :class:`CredentialsConfigError` for anything but a region name (a region never becomes a host otherwise).
    """
    if region is None or region == "":
        return "https://sts.%s.myhuaweicloud.com" % DEFAULT_STS_REGION
    if not isinstance(region, str) or not REGION_PATTERN.fullmatch(region):
        raise CredentialsConfigError("%s must be a region name such as cn-north-4 to derive the STS endpoint" % describe("region"))
    return "https://sts.%s.myhuaweicloud.com" % (region if region in STS_REGIONS else DEFAULT_STS_REGION)


def sts_base(connection):
    """The STS an OIDC id token is sent to, from the ``connection`` (``connection.Connection``): ``sts_endpoint`` when set;
    else the STS of ``region``.

    A region without an STS of its own in the SDK's region map falls back to cn-north-4's, as in the SDK, only
    when every endpoint is the public default: with ``endpoint`` or ``iam_endpoint`` set (a private gateway, a
    sovereign cloud), and with no region at all, the id token never goes to a host derived for another region:
    :class:`CredentialsConfigError` asks for ``sts_endpoint``.
    """
    given = (connection.sts_endpoint or "").strip()
    if given:
        return given.rstrip("/")
    region = connection.region
    named = [name for name, value in (("endpoint", connection.endpoint), ("iam_endpoint", connection.iam_endpoint)) if value]
    if not region:
        raise CredentialsConfigError(
            "OIDC through STS sends the id token to STS, and no region names one: set %s to the STS endpoint to use (or %s for the STS of that region)"
            % (describe("sts_endpoint"), describe("region"))
        )
    if named and region not in STS_REGIONS:
        given = " and ".join(named) + (" is" if len(named) == 1 else " are")
        raise CredentialsConfigError(
            "OIDC through STS: %s set and region %s has no STS endpoint of its own, so the id token would go to the public STS of %s; "
            "set %s to the STS endpoint to use" % (given, region, DEFAULT_STS_REGION, describe("sts_endpoint"))
        )
    return sts_endpoint(region)


def origin(url):
    """``(scheme, host:port)`` of ``url``."""
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


class Endpoints(object):
    """The hosts of one client: ``endpoint`` (ModelArts), ``iam_endpoint`` and ``sts_endpoint`` ('' when not known), from
    the ``connection`` (``connection.Connection``) and the credential ``kind``; ``named(name)``, given by the door, names a
    connection field in a message with where its value came from (default: the field and its environment variable)."""

    def __init__(self, connection, kind, named=None):
        self.connection = connection
        self._named = named or describe
        region = connection.region
        self.endpoint = (connection.endpoint or modelarts_endpoint(region)).rstrip("/")
        # Without a region the IAM endpoint is needed only when it is given (check_credentials asks for it then).
        self.iam_endpoint = (connection.iam_endpoint or (iam_endpoint(region) if region else "")).rstrip("/")
        # Only the OIDC kind calls STS; where the id token may go is decided before any request (sts_base).
        self.sts_endpoint = sts_base(connection) if kind == "oidc" else (connection.sts_endpoint or "").rstrip("/")

    def iam_base(self, credentials):
        """The IAM endpoint; without iam_endpoint or region, the one the credentials name (a credentials file's
        iam_endpoint); ``credentials()`` answers the current credentials, asked only then."""
        if self.iam_endpoint:
            return self.iam_endpoint
        hint = (credentials().iam_endpoint or "").rstrip("/")
        if not hint:
            raise ConnectionConfigError("set %s, or %s to say which IAM endpoint to call" % (describe("region"), describe("iam_endpoint")))
        return hint

    def source_of(self, url):
        """Which option the host of ``url`` came from, for a connection refused or a name that does not resolve:
        ``127.0.0.1:9 is the host of endpoint (environment variable HUAWEICLOUD_MODELARTS_ENDPOINT)``; '' for another host."""
        wanted = origin(url)
        given = self.connection
        for name, base, service, option in (
            ("endpoint", self.endpoint, "ModelArts", given.endpoint),
            ("iam_endpoint", self.iam_endpoint, "IAM", given.iam_endpoint),
            ("sts_endpoint", self.sts_endpoint, "STS", given.sts_endpoint),
        ):
            if not base or origin(base) != wanted:
                continue
            host = label(wanted[1], 200)
            if option:
                return "%s is the host of %s: check it" % (host, self._named(name))
            if name != "sts_endpoint" and given.region:
                return "%s is the %s endpoint of %s %s: check the region, or set %s" % (
                    host,
                    service,
                    self._named("region"),
                    label(given.region, 60),
                    describe(name),
                )
        return ""


def host_region(url, service="modelarts"):
    """The region a public host name of ``service`` names (``modelarts.cn-north-4.myhuaweicloud.com``: cn-north-4), or None."""
    labels = (urlsplit(url or "").hostname or "").split(".")
    if len(labels) >= 3 and labels[0] == service and "-" in labels[1] and REGION_PATTERN.fullmatch(labels[1]):
        return labels[1]
    return None
