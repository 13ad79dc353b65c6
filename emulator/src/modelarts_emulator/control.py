# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The admin API under ``/_emulator/`` (every route but ``health`` needs ``X-Emulator-Admin-Token``).

=======  ===============================  ==========================================================
GET      /_emulator/health                liveness (no token needed)
GET      /_emulator/state                 settings, accounts (no secrets), job/fault/token counts, clock
POST     /_emulator/reset                 back to the startup scenario; ``{"scenario": {...} | "<shipped name or path>"}`` loads another
GET      /_emulator/jobs                  job summaries: id, name, workspace, tags, create time, phase, polls, timeline
POST     /_emulator/jobs                  ``{"jobs": [...], "replace": false}`` in scenario syntax
DELETE   /_emulator/jobs/<key>            remove a job (v2 id, or ``<job_id>/<version_id>``)
PATCH    /_emulator/jobs/<key>            ``{"tags": {...}, "workspace_id": "...", "name": "..."}``: tag an existing job (its tags
                                          replaced), move it to another workspace, rename it; its lifecycle goes on
GET      /_emulator/faults                pending faults with remaining counts
POST     /_emulator/faults                one fault, or ``{"faults": [...]}``
DELETE   /_emulator/faults[/<id>]         remove one or all faults
GET      /_emulator/requests              request log; query ``since=<seq>``, ``limit=<n>``, ``path=<substring>``
DELETE   /_emulator/requests              clear the request log
GET      /_emulator/settings              current settings
PUT      /_emulator/settings              change settings, e.g. ``{"token_lifetime": 2, "clock_skew_tolerance": 60}``
POST     /_emulator/tokens/expire         expire every issued IAM token and every temporary AK's security token now
POST     /_emulator/clock/advance         ``{"seconds": 60}``: move the emulator clock (lifecycles, token expiry)
POST     /_emulator/id-tokens             ``{"subject", "audience", "lifetime"}``: an id token the emulator trusts (exchanges.py)
POST     /_emulator/http-listener         start (once) the plain-HTTP listener for instance metadata and pod identity; ``{"url"}``
=======  ===============================  ==========================================================
"""

import json
from urllib.parse import parse_qs, unquote

from . import exchanges
from .faults import FaultError
from .scenario import ScenarioError, load_file, resolve_scenario_path


def _error(status, code, message):
    return status, {"error": code, "message": message}


def _parse(body):
    if not body:
        return {}
    return json.loads(body)


def handle_control(server, method, raw_path, raw_query, body, request_id):
    """Serve one control request; return (status, JSON object)."""
    # pylint: disable=too-many-return-statements,too-many-branches
    state = server.state
    parts = [unquote(p) for p in raw_path.split("/") if p][1:]
    query = {k: v[-1] for k, v in parse_qs(raw_query).items()}
    try:
        payload = _parse(body)
    except ValueError:
        return _error(400, "bad_request", "the body is not valid JSON")
    route = parts[0] if parts else ""
    rest = parts[1:]
    try:
        if route == "health" and method == "GET":
            return 200, {"status": "ok", "url": server.base_url}
        if route == "state" and method == "GET":
            return 200, {
                "url": server.base_url,
                "settings": dict(state.settings),
                "clock_offset": state.clock_offset,
                "accounts": state.directory.public_summary(),
                "jobs": len(state.jobs),
                "faults": len(state.faults.snapshot()),
                "tokens": state.tokens.count(),
                "request_id": request_id,
            }
        if route == "reset" and method == "POST":
            scenario = payload.get("scenario") if isinstance(payload, dict) else None
            if isinstance(scenario, str):
                # A shipped scenario's name (nightly, tagged-1000 ...) or a scenario file's path.
                scenario = load_file(resolve_scenario_path(scenario))
            state.reset(scenario)
            return 200, {"reset": True, "jobs": len(state.jobs)}
        if route == "jobs":
            return _jobs(state, method, rest, payload)
        if route == "faults":
            return _faults(state, method, rest, payload)
        if route == "requests":
            if not rest and method == "GET":
                limit = int(query["limit"]) if "limit" in query else None
                entries = state.log.entries(int(query.get("since", 0)), limit, query.get("path"))
                return 200, {"requests": entries, "count": len(entries)}
            if rest == ["mark"] and method == "POST":
                return 200, {"seq": state.log.mark()}
            if method == "DELETE":
                state.log.clear()
                return 200, {"cleared": True}
        if route == "settings":
            if method == "GET":
                return 200, dict(state.settings)
            if method in ("PUT", "PATCH", "POST"):
                if not isinstance(payload, dict):
                    return _error(400, "bad_request", "settings must be an object")
                return 200, state.update_settings(payload)
        if route == "tokens" and rest == ["expire"] and method == "POST":
            state.tokens.expire_all(state.now())
            return 200, {"expired": state.tokens.count(), "temporary_keys": state.directory.expire_temporary_keys(state.now())}
        if route == "id-tokens" and method == "POST":
            claims = payload if isinstance(payload, dict) else {}
            token = exchanges.mint_id_token(
                state,
                subject=str(claims.get("subject", "ci-job")),
                audience=str(claims.get("audience", exchanges.AUDIENCE)),
                lifetime=float(claims.get("lifetime", 600)),
            )
            return 200, {"id_token": token}
        if route == "http-listener" and method == "POST":
            return 200, {"url": state.http_listener()}
        if route == "clock" and rest == ["advance"] and method == "POST":
            seconds = float(payload.get("seconds", 0)) if isinstance(payload, dict) else 0.0
            if seconds < 0:
                return _error(400, "bad_request", "the clock only moves forward")
            return 200, {"clock_offset": state.advance(seconds)}
    except (ScenarioError, FaultError, ValueError, TypeError, KeyError) as exc:
        return _error(400, "bad_request", str(exc))
    return _error(404, "not_found", "no control route %s %s" % (method, raw_path))


def _jobs(state, method, rest, payload):
    if method == "GET" and not rest:
        now = state.now()
        return 200, {"jobs": [job.summary(now) for job in list(state.jobs)]}
    if method == "POST" and not rest:
        if isinstance(payload, list):
            payload = {"jobs": payload}
        specs = payload.get("jobs")
        if specs is None and "name" in payload:
            specs = [payload]
        if not isinstance(specs, list):
            return _error(400, "bad_request", 'expected {"jobs": [...]} or one job object')
        jobs = state.add_jobs(specs, replace=bool(payload.get("replace")))
        return 200, {"added": [{"key": j.key, "id": j.v2_id, "name": j.name} for j in jobs]}
    if method == "PATCH" and rest:
        key = "/".join(rest)
        if not isinstance(payload, dict) or not payload or set(payload) - {"tags", "workspace_id", "name"}:
            return _error(400, "bad_request", 'expected {"tags": {...}, "workspace_id": "...", "name": "..."} (any of them)')
        try:
            job = state.update_job(key, **payload)
        except ValueError as error:
            return _error(400, "bad_request", str(error))
        if job is None:
            return _error(404, "not_found", "no job %s" % key)
        return 200, {"updated": job.summary(state.now())}
    if method == "DELETE" and rest:
        key = "/".join(rest)
        if state.remove_job(key):
            return 200, {"removed": key}
        return _error(404, "not_found", "no job %s" % key)
    return _error(404, "not_found", "no such jobs route")


def _faults(state, method, rest, payload):
    if method == "GET" and not rest:
        return 200, {"faults": state.faults.snapshot()}
    if method == "POST" and not rest:
        specs = payload.get("faults") if isinstance(payload, dict) and "faults" in payload else payload
        if isinstance(specs, dict):
            specs = [specs]
        if not isinstance(specs, list):
            return _error(400, "bad_request", 'expected a fault object or {"faults": [...]}')
        ids = [state.faults.add(spec) for spec in specs]
        return 200, {"ids": ids}
    if method == "DELETE":
        if rest:
            if state.faults.remove(int(rest[0])):
                return 200, {"removed": int(rest[0])}
            return _error(404, "not_found", "no fault %s" % rest[0])
        state.faults.clear()
        return 200, {"cleared": True}
    return _error(404, "not_found", "no such faults route")
