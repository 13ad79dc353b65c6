# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The two typed parts the door resolves the connection options into (issue 58): what they hold, that they cannot
change once built, that no repr shows a secret, and that ``options.resolve`` and ``options.connection_parts`` build
the same parts."""

from __future__ import annotations

import copy
import pickle

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_OPTION
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError, connection_parts, resolve
from ansible_collections.modelarts.training.plugins.module_utils.service.connection import (
    CONNECTION_OPTIONS,
    DEFAULT_REQUEST_TIMEOUT,
    Connection,
    CredentialSource,
)

SECRETS = {
    "secret_key": "SecretKey-DO-NOT-LEAK",
    "security_token": "SecurityToken-DO-NOT-LEAK",
    "auth_token": "AuthToken-DO-NOT-LEAK",
    "password": "Password-DO-NOT-LEAK",
    "oidc_id_token": "IdToken-DO-NOT-LEAK",
}
PROXY = "http://proxyuser:Proxy-Pass-DO-NOT-LEAK@proxy.example:3128"


def test_every_connection_option_is_a_field_of_exactly_one_part():
    fields = list(Connection._fields) + [name for name in CredentialSource._fields if name != "kind"]
    assert sorted(fields) == sorted(CONNECTION_OPTIONS)


def test_a_connection_takes_the_defaults_and_reads_as_attributes():
    connection = Connection(region=" cn-north-4 ", endpoint="", proxy=None)
    assert connection.region == "cn-north-4" and connection.endpoint is None and connection.proxy is None
    assert connection.request_timeout == DEFAULT_REQUEST_TIMEOUT and connection.validate_certs is True
    assert Connection(validate_certs=False).validate_certs is False
    with pytest.raises(TypeError):
        Connection(access_key="AK")


def test_a_credential_source_strips_text_and_drops_blanks():
    source = CredentialSource("aksk", access_key=" AK ", secret_key=SECRETS["secret_key"], id_token_file=" ")
    assert source.kind == "aksk" and source.access_key == "AK" and source.id_token_file is None
    assert source.secrets() == (SECRETS["secret_key"],)
    assert CredentialSource().kind == "default"


def test_the_parts_cannot_change_once_built():
    connection, source = Connection(region="cn-north-4"), CredentialSource("aksk", access_key="AK")
    for part, name in ((connection, "region"), (source, "access_key"), (connection, "anything")):
        with pytest.raises(AttributeError):
            setattr(part, name, "other")
    assert not hasattr(connection, "__dict__") and not hasattr(source, "__dict__")
    assert pickle.loads(pickle.dumps(connection)) == connection and copy.deepcopy(source) == source


def test_no_repr_shows_a_secret():
    source = CredentialSource("aksk", access_key="AKIDENTIFIER", **SECRETS)
    connection = Connection(region="cn-north-4", proxy=PROXY)
    shown = repr(source) + str(source) + repr(connection) + str(connection) + repr((source, connection))
    for secret in list(SECRETS.values()) + ["proxyuser:Proxy-Pass-DO-NOT-LEAK", "Proxy-Pass-DO-NOT-LEAK"]:
        assert secret not in shown
    assert "AKIDENTIFIER" in shown and "secret_key=********" in shown and "proxy.example:3128" in shown


def test_resolve_and_connection_parts_build_the_same_parts():
    values = {"region": "cn-north-4", "project_id": "p" * 32, "access_key": "AK", "secret_key": SECRETS["secret_key"], "proxy": PROXY}
    settings = resolve([(LEVEL_OPTION, values)], environ={})
    connection, source = connection_parts(values)
    assert settings.service == connection and settings.credentials == source and source.kind == settings.kind == "aksk"
    assert connection.proxy == PROXY and settings.connection["proxy"] == PROXY
    with pytest.raises(ConnectionConfigError, match="incomplete credentials"):
        connection_parts({"region": "cn-north-4", "access_key": "AK"})
