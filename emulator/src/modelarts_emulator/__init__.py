# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A ModelArts training job + IAM emulator: a real HTTPS server for tests, demos and CI.

Entry points (see docs/emulator.md of modelarts.training):

- ``cli``           the ``modelarts-emulator`` command (also ``python -m modelarts_emulator``)
- ``launcher``      start it as a subprocess from Python: ``running_emulator()``, ``start_emulator()``
- ``client``        the control API client (``ControlClient``) and the default credentials
- ``pytest_plugin`` the pytest fixtures (``modelarts_emulator`` ...), registered as a ``pytest11`` entry point

Internals, in the order a request meets them:

- ``tls``         CA and server certificate generation for ``--tls-dir``
- ``handler``     HTTP server and request handler: request ids, the request log, transport faults
- ``gateway``     what the API gateway does first: authentication, then the project check
- ``signing``     server-side ``SDK-HMAC-SHA256`` verification (independent of the collection)
- ``accounts``    domains, users, AK/SK pairs, temporary credentials and projects
- ``routes``      the APIs: IAM tokens/projects, v2 details and search, v1 versions; fault drawing
- ``iam``         token issue and validation (``POST /v3/auth/tokens``), project listing
- ``errors``      error bodies in the shapes of APIGW, IAM, ModelArts v2 and v1
- ``lifecycle``   phase timelines driven by wall clock or by poll counts
- ``documents``   v2 and v1 training job documents built from a job's lifecycle
- ``scenario``    scenario files (YAML/JSON) into accounts, jobs and faults
- ``faults``      injected faults and schema drift
- ``requestlog``  the redacted request log
- ``control``     the admin API under ``/_emulator/``
- ``state``       the shared, lock-protected emulator state
- ``app``         assembling state, TLS and the server; running it in a thread or the foreground
"""

__version__ = "0.1.0"
