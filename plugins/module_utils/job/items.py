# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The items a caller sees, whichever way a job was read: one job's GET (:func:`fetch_item`), a search's documents
(:func:`keys_for_search`, :func:`search_item`, :class:`UnidentifiedJobError` for a document that cannot be keyed),
a job that could not be read (:func:`unseen_item`); each validated and normalised (``jobs.build_item``) with its
endpoint tokens masked (or kept, ``include_endpoint_tokens``) and collected; and ``details_paths`` (:func:`keep_paths`).
"""

from __future__ import annotations

from ansible_collections.modelarts.training.plugins.module_utils.errors import ModelArtsError
from ansible_collections.modelarts.training.plugins.module_utils.job.jobs import ITEM_KEYS, build_item
from ansible_collections.modelarts.training.plugins.module_utils.job.phases import DEFAULT_FAIL_ON
from ansible_collections.modelarts.training.plugins.module_utils.job.selection import JOB_ID_PATTERN, Search, can_be_job_id, not_a_job_id, v2_key
from ansible_collections.modelarts.training.plugins.module_utils.text import MASK, label, name_key, redact
from ansible_collections.modelarts.training.plugins.module_utils.job.validation import SchemaValidationError


# -- endpoint tokens ----------------------------------------------------------------------------


def mask_endpoint_tokens(details):
    """Mask, in place, every ``token`` inside ``details['endpoints']``; return the values masked.

    ``jupyter_lab.token``, ``tensorboard.token`` and ``mindstudio_insight.token`` open the job's
    notebook and dashboards: they are access credentials, so they leave the collection only when
    the user asks for them (``include_endpoint_tokens``).
    """
    return _endpoint_tokens(details, mask=True)


def endpoint_token_values(details):
    """The endpoint tokens of ``details`` without masking them (they are masked in diagnostics all the same)."""
    return _endpoint_tokens(details, mask=False)


def _endpoint_tokens(details, mask):
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key != "token":
                    walk(value)
                elif isinstance(value, str) and value and value != MASK:
                    found.append(value)
                    if mask:
                        node[key] = MASK
                elif mask and value is not None and not isinstance(value, str):
                    node[key] = MASK
        elif isinstance(node, list):
            for entry in node:
                walk(entry)

    if isinstance(details, dict):
        walk(details.get("endpoints"))
    return found


def _keep_tokens(tokens, found):
    """Add ``found`` to ``tokens`` (a dict used as an ordered set): each distinct token once, however often the jobs
    are read, so that what a long wait or a source that never ends keeps does not grow with its rounds."""
    if tokens is not None:
        for value in found:
            tokens.setdefault(value, None)


def _mask_item(item, include_tokens, tokens=None):
    if not isinstance(item, dict):
        return []
    if include_tokens:
        _keep_tokens(tokens, endpoint_token_values(item.get("details")))
        return []
    found = mask_endpoint_tokens(item.get("details"))
    # Kept for diagnostics: a job's log may print its notebook token.
    _keep_tokens(tokens, found)
    if found:
        if item.get("failure_reason"):
            item["failure_reason"] = redact(item["failure_reason"], found)
        item["schema_errors"] = [dict(error, message=redact(error.get("message"), found)) for error in item.get("schema_errors") or []]
    return found


def keep_paths(details, paths):
    """Only the dotted ``paths`` of ``details`` (object keys; a path that is not there is skipped), nested as in the document.

    ``[]`` keeps nothing. Large documents cost Ansible about 1 ms per KB of result, so a playbook that
    only needs a few fields keeps only those (see docs/performance.md).
    """
    kept = {}
    if not isinstance(details, dict):
        return kept
    for path in paths:
        parts = [part for part in str(path).split(".") if part]
        value = details
        for part in parts:
            value = value.get(part, _ABSENT) if isinstance(value, dict) else _ABSENT
            if value is _ABSENT:
                break
        if value is _ABSENT or not parts:
            continue
        target = kept
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value
    return kept


_ABSENT = object()


def fetch_item(client, key, validate="strict", fail_on=DEFAULT_FAIL_ON, deadline=None, include_tokens=False, tokens=None, name_option="name"):
    """GET one job (v2 id or v1 key), validate the raw document, normalise it and mask its endpoint tokens.

    Raises ``ModelArtsError`` for API failures (a ``jobs.WrongJobError`` when the answer is another job's document)
    and ``SchemaValidationError`` under ``validate=strict`` (its item masked too).  ``tokens``, a dict used as an
    ordered set, receives the endpoint tokens found.  A v2 key that cannot be an id (a job's name given as its id)
    that is not found says so, pointing to ``name_option`` (the entry point's name search), and is final
    (``ModelArtsError.not_an_id``).
    """
    try:
        # The answer is checked against the question (expect): another job's document is never this job's item.
        if isinstance(key, tuple):
            response = client.get_job_version(key[1], key[2], deadline=deadline)
            api, expect, operation = "v1", key[1:], "get training job %s version %s" % (label(key[1]), label(key[2]))
        else:
            try:
                response = client.get_training_job(key, deadline=deadline)
            except ModelArtsError as error:
                if error.not_found and not can_be_job_id(key):
                    error.replace_hint(not_a_job_id(name_option))
                    error.not_an_id = True
                raise
            api, expect, operation = "v2", key, "get training job %s" % label(key)
        item = build_item(
            response.data, api, validate=validate, fail_on=fail_on, job_ref=name_key(key), expect=expect, operation=operation, request_id=response.request_id
        )
    except SchemaValidationError as error:
        _mask_error(error, include_tokens, tokens)
        raise
    _mask_item(item, include_tokens, tokens)
    return item


def search_item(document, key, validate="strict", fail_on=DEFAULT_FAIL_ON, include_tokens=False, tokens=None):
    """The item of one search document of the v2 job ``key``, validated, normalised and masked like a GET's.

    Raises ``SchemaValidationError`` under ``validate=strict``, and ``jobs.WrongJobError`` for a document of another job
    (the phase source then GETs the job).
    """
    item = build_item(document, "v2", validate=validate, fail_on=fail_on, job_ref=name_key(key), expect=key, operation="search training jobs by id")
    _mask_item(item, include_tokens, tokens)
    return item


def _mask_error(error, include_tokens, tokens=None):
    found = _mask_item(error.item, include_tokens, tokens)
    if found:
        error.errors = [dict(entry, message=redact(entry.get("message"), found)) for entry in error.errors]
        error.args = (redact(str(error), found),)


def unseen_item(key, error):
    """The item of a job that could not be read: its last state where the error holds one, and the error.

    A schema failure under ``validate=strict`` carries the normalised item (so the job's phase is
    still shown); other errors leave identity only.
    """
    known = getattr(error, "item", None)
    if isinstance(known, dict):
        return dict(known, error=str(error))
    item = dict((name, None) for name in ITEM_KEYS)
    item.update(terminal=False, completed=False, failed=False, schema_errors=[], error=str(error), diagnostics=None)
    if isinstance(key, tuple) and key[0] == "v1":
        item.update(id=key[1], version_id=key[2], api_version="v1")
    elif isinstance(key, tuple):
        item.update(api_version="v2")
    else:
        item.update(id=key, api_version="v2")
    return item


def keys_for_search(
    client, search, validate="strict", fail_on=DEFAULT_FAIL_ON, deadline=None, include_tokens=False, tokens=None, pages=None, created_since=None, newest=None
):
    """Keys and items of the v2 jobs the :class:`Search` ``search`` selects (every page of the search API, or the newest
    match alone with ``latest``); a name alone is searched as ``Search(name=...)``.

    Returns ``(keys, found)``: ``found[key]`` is the job's item, or the ``SchemaValidationError`` of a
    document that breaks the schema under ``validate=strict`` - one bad document never hides the
    others.  A document without a readable id, or whose id is not a training job id (:data:`JOB_ID_PATTERN`: the
    service's text never becomes a key, a URL or an event's id), cannot be keyed and is reported under
    ``("search", n)``.  ``pages``, a list, receives how many requests the search took.  ``created_since`` (epoch ms):
    only the jobs created since then, about (``search.jobs_matching``); ``newest``, a list, receives the latest
    ``metadata.create_time`` the answers hold.
    """
    if not isinstance(search, Search):
        search = Search(name=search)
    documents = client.search_training_jobs(search, deadline=deadline, pages=pages, created_since=created_since)
    return _keyed(documents, search, newest, validate=validate, fail_on=fail_on, include_tokens=include_tokens, tokens=tokens)


def _keyed(documents, search, newest=None, first_index=0, validate="strict", fail_on=DEFAULT_FAIL_ON, include_tokens=False, tokens=None):
    """``(keys, found)`` of search ``documents`` (see :func:`keys_for_search`); ``first_index`` numbers the first one."""
    if newest is not None:
        times = [document["metadata"].get("create_time") for document in documents if isinstance(document, dict) and isinstance(document.get("metadata"), dict)]
        times = [value for value in times if isinstance(value, (int, float)) and not isinstance(value, bool)]
        if times:
            newest.append(max(times))
    found = {}
    for index, document in enumerate(documents, first_index):
        ref = _document_ref(document, index)
        try:
            item = build_item(document, "v2", validate=validate, fail_on=fail_on, job_ref=ref)
        except SchemaValidationError as error:
            _mask_error(error, include_tokens, tokens)
            known = error.item.get("id") if isinstance(error.item, dict) else None
            if known is not None and not JOB_ID_PATTERN.fullmatch(known):
                found[("search", index)] = UnidentifiedJobError(index, search, error.item, job_id=known)
            else:
                found[v2_key(known) if known is not None else ("search", index)] = error
            continue
        _mask_item(item, include_tokens, tokens)
        if item["id"] is not None and JOB_ID_PATTERN.fullmatch(item["id"]):
            found[v2_key(item["id"])] = item
        else:
            # Under validate warn or off the item is built all the same; without an id it can be neither
            # keyed nor polled again, and dropping it could hide a Failed job from a gate.
            found[("search", index)] = UnidentifiedJobError(index, search, item, job_id=item["id"])
    return list(found), found


keys_for_name = keys_for_search


class UnidentifiedJobError(Exception):
    """A name search returned a job whose document has no readable ``metadata.id``: it cannot be followed.

    ``item`` is what the document says (its phase included), so the job still shows in the result.
    Neither ``transient`` nor ``not_found``: it ends a wait as an error, and fails a call that does not wait.
    """

    transient = False
    not_found = False

    def __init__(self, index, search, item, job_id=None):
        phase = item.get("phase") if isinstance(item, dict) else None
        if isinstance(search, Search) and (search.tags or search.workspace_id is not None or search.name is None):
            what = "the jobs %s" % search.describe()
        else:
            what = "the name '%s'" % label(search.name if isinstance(search, Search) else search)
        problem = "no readable metadata.id" if job_id is None else "metadata.id %r, which is not a training job id" % label(job_id, 80)
        super().__init__(
            "search result %d for %s (phase %s) has %s, so the job cannot be identified or followed"
            % (index, what, label(phase) if phase else "unknown", problem)
        )
        # What the document says of the job, its phase included, but never the id it cannot be followed by: no
        # result, event or message carries the service's text as a job's id (nor the document that holds it).
        self.item = dict(item, id=None, details=None) if isinstance(item, dict) and job_id is not None else item


def _document_ref(document, index):
    metadata = document.get("metadata") if isinstance(document, dict) else None
    job_id = metadata.get("id") if isinstance(metadata, dict) else None
    return name_key(job_id) if isinstance(job_id, str) else "search result %d" % index


def schema_warnings(items):
    """One warning per schema problem of ``items`` (``validate: warn``), naming the job, the JSON path and the problem."""
    return [
        "training job %s: %s: %s" % (label(item.get("id")), problem.get("path"), problem.get("message"))
        for item in items
        for problem in item.get("schema_errors") or []
    ]
