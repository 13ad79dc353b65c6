# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Accounts (IAM domains) with their users, access keys and projects.

The defaults are fixed so that docs, tests and CI configuration can name them. They look like real
values (32-hex ids, 20-character AKs, 40-character SKs) but grant nothing anywhere.
"""

import copy
import hashlib
import secrets

DEFAULT_REGION = "cn-north-4"
DEFAULT_PROJECT_ID = "c2078239586c89f12689d89fd66e9f9b"
SECOND_REGION = "cn-east-3"
SECOND_PROJECT_ID = "985dd76911835273e3e465c473f753a0"
DEFAULT_DOMAIN_NAME = "modelarts-ci"
DEFAULT_DOMAIN_ID = "1d6f8f5199c31460037b2f37da7c711b"
DEFAULT_USERNAME = "ci-robot"
DEFAULT_USER_ID = "fb1c0a40f80c55eaa5c45a42e097c2c0"
DEFAULT_PASSWORD = "Emulat0r-Passw0rd"
DEFAULT_AK = "HPUAMAEMULATOR000001"
DEFAULT_SK = "MaEmulatorSecretKey000000000000000000001"
DEFAULT_TEMP_AK = "HSTAMAEMULATOR000001"
DEFAULT_TEMP_SK = "MaEmulatorTemporarySecretKey000000000001"
DEFAULT_SECURITY_TOKEN = "gQpjbi1ub3J0aC00EMULATOR-TEMPORARY-SECURITY-TOKEN-Q2lDZFhPZkRrR1BsaE1vZWxhcnRzRW11bGF0b3JUZW1wb3JhcnlUb2tlbg+/=="

OTHER_REGION = "cn-north-4"
OTHER_PROJECT_ID = "817c519a596826b1ccc8630e7d28887e"
OTHER_DOMAIN_NAME = "other-tenant"
OTHER_DOMAIN_ID = "69050a12ba78c3e19f65b092fe9386fd"
OTHER_USERNAME = "other-user"
OTHER_USER_ID = "5e0c3f1a2b4d46c8a9e7f6d5c4b3a291"
OTHER_PASSWORD = "0ther-Passw0rd"
OTHER_AK = "HPUAOTHERTENANT00001"
OTHER_SK = "OtherTenantSecretKey00000000000000000001"


def default_accounts():
    """Return the built-in accounts as scenario-style dicts (a fresh deep copy each time)."""
    return copy.deepcopy(
        [
            {
                "domain_name": DEFAULT_DOMAIN_NAME,
                "domain_id": DEFAULT_DOMAIN_ID,
                "users": [{"name": DEFAULT_USERNAME, "id": DEFAULT_USER_ID, "password": DEFAULT_PASSWORD}],
                "access_keys": [{"ak": DEFAULT_AK, "sk": DEFAULT_SK}],
                "temporary_keys": [{"ak": DEFAULT_TEMP_AK, "sk": DEFAULT_TEMP_SK, "security_token": DEFAULT_SECURITY_TOKEN}],
                "projects": [
                    {"id": DEFAULT_PROJECT_ID, "name": DEFAULT_REGION},
                    {"id": SECOND_PROJECT_ID, "name": SECOND_REGION},
                ],
            },
            {
                "domain_name": OTHER_DOMAIN_NAME,
                "domain_id": OTHER_DOMAIN_ID,
                "users": [{"name": OTHER_USERNAME, "id": OTHER_USER_ID, "password": OTHER_PASSWORD}],
                "access_keys": [{"ak": OTHER_AK, "sk": OTHER_SK}],
                "temporary_keys": [],
                "projects": [{"id": OTHER_PROJECT_ID, "name": OTHER_REGION}],
            },
        ]
    )


class Account:
    """One IAM domain: users, permanent and temporary keys, projects."""

    def __init__(self, spec):
        self.domain_name = str(spec["domain_name"])
        self.domain_id = str(spec.get("domain_id") or _hex_from(self.domain_name))
        self.users = {}
        for user in spec.get("users") or []:
            name = str(user["name"])
            self.users[name] = {"name": name, "id": str(user.get("id") or _hex_from("user/" + name)), "password": str(user["password"])}
        self.access_keys = {
            str(k["ak"]): {"ak": str(k["ak"]), "sk": str(k["sk"]), "security_token": None, "expires_at": None} for k in spec.get("access_keys") or []
        }
        for key in spec.get("temporary_keys") or []:
            # expires_in: seconds after the scenario is loaded; the directory's owner fills expires_at.
            self.access_keys[str(key["ak"])] = {
                "ak": str(key["ak"]),
                "sk": str(key["sk"]),
                "security_token": str(key["security_token"]),
                "expires_in": float(key["expires_in"]) if key.get("expires_in") is not None else None,
                "expires_at": None,
            }
        self.projects = []
        for project in spec.get("projects") or []:
            self.projects.append({"id": str(project["id"]), "name": str(project["name"])})

    def project_by_id(self, project_id):
        """Return the project dict with that id, or None."""
        for project in self.projects:
            if project["id"] == project_id:
                return project
        return None

    def projects_named(self, name):
        """Return the projects whose name (region) is ``name``."""
        return [p for p in self.projects if p["name"] == name]

    def primary_user(self):
        """Return the first user, used to fill ``user_name`` in job documents."""
        return next(iter(self.users.values()), None)


class Directory:
    """All accounts, indexed the ways the gateway and IAM look them up."""

    def __init__(self, specs):
        self.accounts = [Account(spec) for spec in specs]
        self._by_ak = {}
        self._by_domain = {}
        self._by_project = {}
        for account in self.accounts:
            self._by_domain[account.domain_name] = account
            for ak in account.access_keys:
                self._by_ak[ak] = account
            for project in account.projects:
                self._by_project[project["id"]] = account

    def start_clocks(self, now):
        """Fix the expiry time of temporary keys that declare ``expires_in``."""
        for account in self.accounts:
            for key in account.access_keys.values():
                if key.get("expires_in") is not None:
                    key["expires_at"] = now + key["expires_in"]

    def expire_temporary_keys(self, now):
        """Make every temporary key expire at ``now`` (their security tokens stop working)."""
        count = 0
        for account in self.accounts:
            for key in account.access_keys.values():
                if key["security_token"]:
                    key["expires_at"] = now if key["expires_at"] is None else min(key["expires_at"], now)
                    count += 1
        return count

    def issue_temporary_key(self, account, expires_at):
        """A new temporary AK/SK with a security token in ``account``, valid until ``expires_at``; return its key dict."""
        ak = "HST" + secrets.token_hex(10).upper()
        key = {"ak": ak, "sk": secrets.token_urlsafe(30), "security_token": secrets.token_urlsafe(180), "expires_in": None, "expires_at": expires_at}
        account.access_keys[ak] = key
        self._by_ak[ak] = account
        return key

    def account_for_ak(self, ak):
        """Return (account, key dict) for an AK, or (None, None)."""
        account = self._by_ak.get(ak)
        if account is None:
            return None, None
        return account, account.access_keys[ak]

    def account_for_domain(self, domain_name):
        """Return the account of that domain name, or None."""
        return self._by_domain.get(domain_name)

    def owner_of_project(self, project_id):
        """Return the account owning ``project_id``, or None."""
        return self._by_project.get(project_id)

    def first_project(self):
        """Return the primary account's first project: the default home of scenario jobs."""
        for account in self.accounts:
            if account.projects:
                return account.projects[0]
        return None

    def resolve_project(self, ref):
        """Map a scenario project reference (an id or a region name of the primary account) to an id."""
        if ref is None:
            project = self.first_project()
            return project["id"] if project else None
        ref = str(ref)
        if ref in self._by_project:
            return ref
        for account in self.accounts:
            named = account.projects_named(ref)
            if named:
                return named[0]["id"]
        raise ValueError("unknown project %r: not a project id or region of any account" % ref)

    def public_summary(self):
        """Return accounts without secrets (for the control API)."""
        return [
            {
                "domain_name": a.domain_name,
                "domain_id": a.domain_id,
                "users": sorted(a.users),
                "access_keys": sorted(a.access_keys),
                "projects": list(a.projects),
            }
            for a in self.accounts
        ]


def _hex_from(text):
    return hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()


def apply_overrides(specs, overrides):
    """Apply CLI overrides (keys like ``ak``, ``sk``, ``project_id``, ``region``) to the primary account."""
    if not specs:
        return specs
    primary = specs[0]
    if overrides.get("domain_name"):
        primary["domain_name"] = overrides["domain_name"]
    if overrides.get("username") or overrides.get("password"):
        users = primary.setdefault("users", [{}])
        if not users:
            users.append({})
        if overrides.get("username"):
            users[0]["name"] = overrides["username"]
        if overrides.get("password"):
            users[0]["password"] = overrides["password"]
        users[0].setdefault("name", DEFAULT_USERNAME)
        users[0].setdefault("password", DEFAULT_PASSWORD)
    if overrides.get("ak") or overrides.get("sk"):
        keys = primary.setdefault("access_keys", [])
        if not keys:
            keys.append({"ak": DEFAULT_AK, "sk": DEFAULT_SK})
        if overrides.get("ak"):
            keys[0]["ak"] = overrides["ak"]
        if overrides.get("sk"):
            keys[0]["sk"] = overrides["sk"]
    if overrides.get("temp_ak") or overrides.get("temp_sk") or overrides.get("security_token"):
        keys = primary.setdefault("temporary_keys", [])
        if not keys:
            keys.append({"ak": DEFAULT_TEMP_AK, "sk": DEFAULT_TEMP_SK, "security_token": DEFAULT_SECURITY_TOKEN})
        for src, dst in (("temp_ak", "ak"), ("temp_sk", "sk"), ("security_token", "security_token")):
            if overrides.get(src):
                keys[0][dst] = overrides[src]
    if overrides.get("project_id") or overrides.get("region"):
        projects = primary.setdefault("projects", [])
        if not projects:
            projects.append({"id": DEFAULT_PROJECT_ID, "name": DEFAULT_REGION})
        if overrides.get("project_id"):
            projects[0]["id"] = overrides["project_id"]
        if overrides.get("region"):
            projects[0]["name"] = overrides["region"]
    return specs
