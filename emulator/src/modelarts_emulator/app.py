# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Assemble state, TLS and the HTTP server; run it in the foreground or in a background thread."""

import ipaddress
import os
import threading

from . import tls
from .handler import EmulatorHTTPServer
from .scenario import load_file, resolve_scenario_path
from .state import EmulatorState

DEFAULT_ADMIN_TOKEN = "modelarts-emulator-admin"
ADMIN_TOKEN_ENV = "MODELARTS_EMULATOR_ADMIN_TOKEN"


def check_loopback(host):
    """Refuse anything but a loopback IPv4 address: the emulator accepts well-known credentials."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError("--host must be a loopback IPv4 address such as 127.0.0.1, got %r" % host) from None
    if address.version != 4 or not address.is_loopback:
        raise ValueError("--host must be a loopback IPv4 address such as 127.0.0.1, got %r" % host)
    return host


class Emulator:
    """A configured emulator. ``start()`` serves in a daemon thread; ``serve_forever()`` blocks.

    ``overrides`` keys (all optional): region, project_id, ak, sk, temp_ak, temp_sk, security_token,
    username, password, domain_name. ``settings``: token_lifetime, clock_skew_tolerance,
    signature_check, search_counts_as_poll.
    """

    def __init__(self, port=0, host="127.0.0.1", tls_dir=None, scenario=None, admin_token=None, overrides=None, settings=None, verbose=False):
        # pylint: disable=too-many-arguments
        host = check_loopback(host)
        data = scenario
        if isinstance(scenario, str):
            data = load_file(resolve_scenario_path(scenario))
        self.state = EmulatorState(data, overrides=overrides, settings=settings)
        self.ca_file = None
        context = None
        if tls_dir:
            self.ca_file, cert, key = tls.ensure_certificates(tls_dir)
            context = tls.server_context(cert, key)
        self.admin_token = admin_token or os.environ.get(ADMIN_TOKEN_ENV) or DEFAULT_ADMIN_TOKEN
        self.server = EmulatorHTTPServer((host, int(port)), self.state, self.admin_token, context, verbose)
        self._thread = None
        # Instance metadata and pod identity answer on plain HTTP on a real host: a second listener on the
        # same loopback address and state, started on demand (control POST /_emulator/http-listener).
        self._host, self._verbose = host, verbose
        self.http_server = None
        self._http_lock = threading.Lock()
        self.state.http_listener = self.http_listener

    @property
    def url(self):
        """Base URL, e.g. ``https://127.0.0.1:41234``."""
        return self.server.base_url

    def http_listener(self):
        """The URL of the plain-HTTP listener (instance metadata, pod identity), started the first time."""
        with self._http_lock:
            if self.http_server is None:
                self.http_server = EmulatorHTTPServer((self._host, 0), self.state, self.admin_token, None, self._verbose)
                threading.Thread(target=self.http_server.serve_forever, name="modelarts-emulator-http", daemon=True).start()
            return self.http_server.base_url

    def start(self):
        """Serve in a background daemon thread; return self."""
        self._thread = threading.Thread(target=self.server.serve_forever, name="modelarts-emulator", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self):
        """Serve in the calling thread until ``stop()`` is called from another thread."""
        self.server.serve_forever()

    def stop(self):
        """Stop serving and close the listening socket."""
        self.server.shutdown()
        self.server.server_close()
        if self.http_server is not None:
            self.http_server.shutdown()
            self.http_server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
