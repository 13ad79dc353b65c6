# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command line: ``modelarts-emulator`` and ``python -m modelarts_emulator``.

    modelarts-emulator --port 8443 --tls-dir "$(mktemp -d)"

prints ``modelarts-emulator listening on <URL>`` once it accepts connections.
"""

import argparse
import errno
import os
import signal
import stat
import sys
import threading

from . import accounts, tls
from .app import ADMIN_TOKEN_ENV, DEFAULT_ADMIN_TOKEN, Emulator
from .scenario import DEFAULT_SCENARIO, ScenarioError, shipped_scenarios

READY_PREFIX = "modelarts-emulator listening on "

EPILOG = """\
defaults (fixed, public, for tests only):
  region / project id      %(region)s / %(project)s   (second project: %(region2)s / %(project2)s)
  IAM domain / user / pw   %(domain)s / %(user)s / %(password)s
  AK / SK                  %(ak)s / %(sk)s
  temporary AK / SK        %(tak)s / %(tsk)s
  security token           %(token)s
  another tenant           domain %(odomain)s, project %(oproject)s (%(oregion)s), AK %(oak)s / SK %(osk)s,
                           user %(ouser)s / %(opassword)s
  admin token              %(admin)s (or $%(admin_env)s)

API (one port serves everything; use the URL as both endpoint and iam_endpoint):
  POST /v3/auth/tokens                                   IAM password token (X-Subject-Token)
  GET  /v3/projects?name=<region>                        IAM project lookup (AK/SK or token)
  GET  /v2/{project_id}/training-jobs/{id}               job details
  GET  .../training-jobs/{id}/events, /logs/{task_id}, /tasks/{task_id}/logs/preview,
       /metrics/{task_id}, /ft-metrics                   events, task logs, task utilisation, ft-metrics
  POST /v2/{project_id}/training-job-searches            search (offset = page index, or item offset with
                                                         --search-offset item; limit 1-50, filters)
  GET  /v1/{project_id}/training-jobs/{job_id}/versions/{version_id}
  /_emulator/...                                         control API (X-Emulator-Admin-Token header):
       health, state, reset, jobs, faults, requests, settings, tokens/expire, clock/advance

scenarios: without --scenario the emulator serves the "%(default_scenario)s" jobs; "--scenario empty" starts
with none. --scenario takes a YAML/JSON file, or the name of a shipped one: %(shipped)s.
The format, the faults and the control API are documented in docs/emulator.md of modelarts.training.
""" % {
    "region": accounts.DEFAULT_REGION,
    "project": accounts.DEFAULT_PROJECT_ID,
    "region2": accounts.SECOND_REGION,
    "project2": accounts.SECOND_PROJECT_ID,
    "domain": accounts.DEFAULT_DOMAIN_NAME,
    "user": accounts.DEFAULT_USERNAME,
    "password": accounts.DEFAULT_PASSWORD,
    "ak": accounts.DEFAULT_AK,
    "sk": accounts.DEFAULT_SK,
    "tak": accounts.DEFAULT_TEMP_AK,
    "tsk": accounts.DEFAULT_TEMP_SK,
    "token": accounts.DEFAULT_SECURITY_TOKEN,
    "odomain": accounts.OTHER_DOMAIN_NAME,
    "oproject": accounts.OTHER_PROJECT_ID,
    "oregion": accounts.OTHER_REGION,
    "oak": accounts.OTHER_AK,
    "osk": accounts.OTHER_SK,
    "ouser": accounts.OTHER_USERNAME,
    "opassword": accounts.OTHER_PASSWORD,
    "admin": DEFAULT_ADMIN_TOKEN,
    "admin_env": ADMIN_TOKEN_ENV,
    "default_scenario": DEFAULT_SCENARIO,
    "shipped": ", ".join(shipped_scenarios()),
}


def build_parser(prog=None):
    """Return the command line parser (``prog`` names the command in usage and errors)."""
    parser = argparse.ArgumentParser(
        prog=prog or "modelarts-emulator",
        description="ModelArts training job + IAM emulator (HTTP/1.1, threaded, loopback only).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    net = parser.add_argument_group("network")
    net.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one (default: 0)")
    net.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default: 127.0.0.1; others are refused)")
    net.add_argument(
        "--tls-dir",
        metavar="DIR",
        help="serve HTTPS with a CA (DIR/ca.pem) and server certificate generated in DIR, a private directory of yours "
        "(made 0700 if new); only certificates the emulator wrote there are reused",
    )
    run = parser.add_argument_group("running")
    run.add_argument(
        "--scenario",
        metavar="FILE",
        default=DEFAULT_SCENARIO,
        help='scenario file (YAML or JSON) or the name of a shipped one (default: %s, the demo jobs; "empty" for none)' % DEFAULT_SCENARIO,
    )
    run.add_argument(
        "--admin-token", metavar="TOKEN", help="token for the /_emulator/ control API (default: $%s or %s)" % (ADMIN_TOKEN_ENV, DEFAULT_ADMIN_TOKEN)
    )
    run.add_argument("--ready-file", metavar="PATH", help="write the URL to PATH once listening (removed on exit; a symbolic link there is refused)")
    run.add_argument("--pid-file", metavar="PATH", help="write the process id to PATH (removed on exit; a symbolic link there is refused)")
    run.add_argument("--verbose", action="store_true", help="access log and internal errors on stderr (never secrets)")
    auth = parser.add_argument_group("authentication behaviour")
    auth.add_argument("--token-lifetime", type=float, metavar="SECONDS", help="IAM token lifetime (default: 86400)")
    auth.add_argument("--clock-skew-tolerance", type=float, metavar="SECONDS", help="maximum |X-Sdk-Date - now| accepted for signatures (default: 900)")
    auth.add_argument("--no-signature-check", action="store_true", help="accept any SDK-HMAC-SHA256 signature of a known AK")
    auth.add_argument(
        "--search-counts-as-poll", action="store_true", help="a job returned by a search counts as one poll of that job (default: only GETs count)"
    )
    search = parser.add_argument_group("search behaviour")
    search.add_argument(
        "--search-offset",
        choices=("page", "item"),
        help="how POST .../training-job-searches reads offset: page (a page index, 0 = first page, as the SDK's model says) "
        "or item (an item offset, as an older edition of the API reference says) (default: page)",
    )
    cred = parser.add_argument_group("credentials of the primary account (override the defaults below)")
    cred.add_argument("--region", help="region (project name) of the primary project")
    cred.add_argument("--project-id", help="id of the primary project")
    cred.add_argument("--access-key", help="permanent AK")
    cred.add_argument("--secret-key", help="permanent SK")
    cred.add_argument("--temp-access-key", help="temporary AK")
    cred.add_argument("--temp-secret-key", help="temporary SK")
    cred.add_argument("--security-token", help="security token of the temporary AK")
    cred.add_argument("--username", help="IAM user name")
    cred.add_argument("--password", help="IAM user password")
    cred.add_argument("--domain-name", help="IAM domain (account) name")
    return parser


def check_output_file(option, path):
    """Refuse ``path`` for ``--ready-file``/``--pid-file`` when something is planted there: a symbolic link, or anything but
    a regular file of this user's (a stale one from an earlier run is replaced). Raises ValueError naming the option."""
    if not path:
        return
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise ValueError("%s %s is a symbolic link; refusing to write through it (use a path in a directory of your own)" % (option, path))
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("%s %s exists and is not a regular file" % (option, path))
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ValueError("%s %s belongs to another user (uid %d); use a path in a directory of your own" % (option, path, info.st_uid))


def _write_file(path, text):
    """Write ``text`` to ``path`` atomically (a fresh file renamed into place: a link planted meanwhile is replaced, never
    followed); return what identifies the file written, for :func:`_remove`."""
    tls.write_file_atomically(path, text.encode("utf-8"), 0o644)
    info = os.lstat(path)
    return (info.st_dev, info.st_ino)


def _remove(path, written):
    """Remove ``path`` if it is still the file this process wrote (never what another process put there since)."""
    if path and written:
        try:
            info = os.lstat(path)
            if (info.st_dev, info.st_ino) == written:
                os.remove(path)
        except OSError:
            pass


def main(argv=None, prog=None):
    """Run the emulator until SIGTERM/SIGINT; return the exit code."""
    args = build_parser(prog).parse_args(argv)
    overrides = {
        "region": args.region,
        "project_id": args.project_id,
        "ak": args.access_key,
        "sk": args.secret_key,
        "temp_ak": args.temp_access_key,
        "temp_sk": args.temp_secret_key,
        "security_token": args.security_token,
        "username": args.username,
        "password": args.password,
        "domain_name": args.domain_name,
    }
    settings = {
        "token_lifetime": args.token_lifetime,
        "clock_skew_tolerance": args.clock_skew_tolerance,
        "signature_check": False if args.no_signature_check else None,
        "search_counts_as_poll": True if args.search_counts_as_poll else None,
        "search_offset": args.search_offset,
    }
    try:
        check_output_file("--ready-file", args.ready_file)
        check_output_file("--pid-file", args.pid_file)
        emulator = Emulator(
            port=args.port,
            host=args.host,
            tls_dir=args.tls_dir,
            scenario=args.scenario,
            admin_token=args.admin_token,
            overrides=overrides,
            settings=settings,
            verbose=args.verbose,
        )
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            reason = "port %d on %s is in use; choose another --port or 0 (a free one)" % (args.port, args.host)
        elif exc.errno == errno.EACCES and args.port < 1024:
            reason = "port %d on %s needs privileges; choose a port from 1024 up or 0 (a free one)" % (args.port, args.host)
        else:
            reason = exc
        sys.stderr.write("modelarts-emulator: cannot start: %s\n" % reason)
        return 2
    except (ScenarioError, ValueError) as exc:
        sys.stderr.write("modelarts-emulator: cannot start: %s\n" % exc)
        return 2

    def _stop(_signum, _frame):
        threading.Thread(target=emulator.server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    written = {}
    try:
        if args.pid_file:
            written["pid"] = _write_file(args.pid_file, "%d\n" % os.getpid())
        if args.ready_file:
            written["ready"] = _write_file(args.ready_file, emulator.url + "\n")
    except OSError as exc:
        emulator.server.server_close()
        _remove(args.pid_file, written.get("pid"))
        sys.stderr.write("modelarts-emulator: cannot start: %s\n" % exc)
        return 2
    print(READY_PREFIX + emulator.url, flush=True)
    try:
        emulator.serve_forever()
    finally:
        emulator.server.server_close()
        _remove(args.ready_file, written.get("ready"))
        _remove(args.pid_file, written.get("pid"))
    return 0
