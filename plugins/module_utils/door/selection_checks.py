# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The door's reading of the selectors: a task's ``training_job_id``, ``training_job_ids``, ``name``, ``tags``,
``job_id`` with ``version_id``, ``v1_jobs``, ``latest`` and ``workspace_id`` (and a lookup term's ``job_id`` and
``version_id``) read by name and turned into ``job.selection.Selection``, the part the rooms receive, before any
request."""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.errors import ConnectionConfigError
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import (
    Search,
    Selection,
    check_job_id,
    check_workspace_id,
    parse_tags,
    v1_ids_key,
    v2_key,
)
from ansible_collections.modelarts.training.plugins.module_utils.text import describe_value


def v1_selection_key(values, prefix):
    """The v1 key of ``values['job_id']`` and ``values['version_id']`` (a task's options, a lookup's term, a baseline):
    ``job.selection.v1_ids_key``'s rule, the message naming ``prefix`` and the option."""
    if not isinstance(values, dict):
        values = {}
    return v1_ids_key(values.get("job_id"), values.get("version_id"), prefix)


_ID_SELECTORS = ("training_job_id", "training_job_ids", "job_id", "v1_jobs")


def select(values):
    """The :class:`Selection` of ``values`` (``training_job_id``, ``training_job_ids``, ``name``, ``tags``, ``job_id`` with
    ``version_id``, ``v1_jobs``; ``latest`` and ``workspace_id`` refine a search); :class:`ConnectionConfigError`, naming
    the option, for an empty, contradictory or malformed one."""
    tags = parse_tags(values.get("tags"))
    workspace_id = check_workspace_id(values.get("workspace_id"))
    latest = values.get("latest")
    if latest is not None and not isinstance(latest, bool):
        raise ConnectionConfigError("latest must be a boolean, got %s" % describe_value(latest, 40))
    given = [name for name in _ID_SELECTORS + ("name",) if values.get(name) not in (None, [])] + (["tags"] if tags else [])
    if values.get("version_id") is not None and values.get("job_id") is None:
        raise ConnectionConfigError("version_id needs job_id")
    if values.get("job_id") is not None and values.get("version_id") is None:
        raise ConnectionConfigError("job_id needs version_id")
    searched = [name for name in given if name in ("name", "tags")]
    if latest and not searched:
        raise ConnectionConfigError("latest needs name or tags: it keeps the newest of the jobs they match")
    if not given:
        raise ConnectionConfigError("one of training_job_id, training_job_ids, name, tags, job_id with version_id, or v1_jobs is required")
    ids = [name for name in given if name not in ("name", "tags")]
    if searched and ids:
        raise ConnectionConfigError("%s are mutually exclusive (name and tags may be combined)" % ", ".join(given))
    if len(ids) > 1 and set(ids) != {"training_job_ids", "v1_jobs"}:
        raise ConnectionConfigError("%s are mutually exclusive (only training_job_ids and v1_jobs may be combined)" % ", ".join(given))
    if searched:
        name = values.get("name")
        if name is not None and not str(name).strip():
            raise ConnectionConfigError("name must not be empty")
        search = Search(name=name, tags=tags, latest=latest, workspace_id=workspace_id)
        return Selection(search=search, single=bool(latest))
    text = values.get("training_job_id")
    if text is not None:
        return Selection([v2_key(check_job_id(text, "training_job_id"))], single=True, workspace_id=workspace_id)
    if values.get("job_id") is not None:
        return Selection([v1_selection_key(values, "")], single=True, workspace_id=workspace_id)
    keys = []
    for index, job_id in enumerate(values.get("training_job_ids") or []):
        keys.append(v2_key(check_job_id(job_id, "training_job_ids[%d]" % index)))
    for index, job in enumerate(values.get("v1_jobs") or []):
        keys.append(v1_selection_key(job, "v1_jobs[%d]." % index))
    return Selection(keys, workspace_id=workspace_id)
