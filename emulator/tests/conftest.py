# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures: one emulator per xdist worker (plain HTTP and TLS), reset before each test that uses it."""

import os

import pytest

# The emulator is on loopback: a proxy configured for the machine must never see these requests.
_NO_PROXY = [h for h in os.environ.get("NO_PROXY", os.environ.get("no_proxy", "")).split(",") if h]
for _host in ("127.0.0.1", "localhost"):
    if _host not in _NO_PROXY:
        _NO_PROXY.append(_host)
os.environ["NO_PROXY"] = os.environ["no_proxy"] = ",".join(_NO_PROXY)

# pylint: disable=wrong-import-position
from modelarts_emulator.pytest_plugin import emulator_fixture  # noqa: E402

from .helpers import SignedClient  # noqa: E402


# One plain-HTTP and one HTTPS emulator with the integration scenario, shared by a worker's tests
# (built with the same helper other suites use).
emulator_session = emulator_fixture(scope="session", scenario="integration")
tls_emulator_session = emulator_fixture(scope="session", scenario="integration", tls=True)


@pytest.fixture
def emu(emulator_session):  # pylint: disable=redefined-outer-name
    """The shared emulator, reset to its scenario's initial state."""
    emulator_session.reset()
    return emulator_session


@pytest.fixture
def tls_emu(tls_emulator_session):  # pylint: disable=redefined-outer-name
    """The shared HTTPS emulator, reset."""
    tls_emulator_session.reset()
    return tls_emulator_session


@pytest.fixture
def client(emu):  # pylint: disable=redefined-outer-name
    """An AK/SK-signing client for the primary account's primary project."""
    with SignedClient(emu.url, emu.ak, emu.sk, emu.project_id) as signed:
        yield signed
