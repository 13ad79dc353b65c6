# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: training_job
short_description: Get Huawei Cloud ModelArts training jobs, validated and normalised
version_added: 1.0.0
author:
  - modelarts.training contributors (@modelarts-training)
description:
  - Returns one item per term, in the order of the terms, in the same shape as the items of
    M(modelarts.training.modelarts_training_job_info).
  - Terms are v2 training job ids, or dicts with C(job_id) and C(version_id) for legacy v1 job versions.
    A list given as one term is expanded.
  - Terms are fetched concurrently over one HTTP session.
  - Options come from keywords, inventory variables such as C(modelarts_region) and environment variables, in that
    order of precedence. The C(modelarts_*) variables are templates like any inventory value (vaulted values included) and
    are rendered before use; no other variable is read.
  - C(module_defaults) does not reach a lookup; ansible-core applies it to the arguments of a task's module, while a
    lookup runs as the task is templated and is given only its terms, its keywords and the variables in scope. Keep the
    connection in C(modelarts_*) variables and hand them to the module in C(module_defaults), or in the environment.
  - The credential kind comes from the highest of these levels that names any credential option, so a keyword
    O(auth_token) replaces AK/SK from C(modelarts_*) variables or E(HUAWEICLOUD_SDK_AK)/E(HUAWEICLOUD_SDK_SK).
  - A keyword that is not one of the options below is an error that names it and the closest option
    (C(unknown keyword auth_tokn (did you mean auth_token?))); it is never dropped.
options:
  _terms:
    description:
      - v2 training job ids, or dicts C({job_id, version_id}) for v1 job versions.
      - C(job_id) and C(version_id) are non-negative integers, or text of decimal digits (a templated value), as for the module;
        a float, a boolean or a negative number is refused, never rounded.
    required: true
    type: list
    elements: raw
  field:
    description:
      - A dotted path into each item, such as V(phase) or V(details.status.duration), to return instead of the whole item.
      - Numbers in the path index lists, for example V(details.status.task_statuses.0.exit_code).
      - With O(metrics), V(metrics.val_accuracy.value) is a metric's value and V(metrics_ok) the verdict on its bounds.
    type: str
extends_documentation_fragment:
  - modelarts.training.connection.plugins
  - modelarts.training.wait.plugins
  - modelarts.training.query
  - modelarts.training.metrics
  - modelarts.training.stall.plugins
notes:
  - Errors name the job, the service's error code and the request id; no secret ever appears in them.
seealso:
  - module: modelarts.training.modelarts_training_job_info
"""

EXAMPLES = r"""
# job_id is the id of a v2 job, such as 6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60 (a demo job of the emulator: each example
# runs against modelarts-emulator without --scenario).
- name: Phase of one job (credentials from HUAWEICLOUD_SDK_* environment variables)
  ansible.builtin.debug:
    msg: "{{ lookup('modelarts.training.training_job', job_id, field='phase', region='cn-north-4') }}"

- name: Several jobs at once, as a list
  ansible.builtin.set_fact:
    jobs: "{{ query('modelarts.training.training_job', '6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60', '9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81') }}"

- name: A legacy v1 job version
  ansible.builtin.debug:
    msg: "{{ lookup('modelarts.training.training_job', {'job_id': 10, 'version_id': 12}) }}"

- name: Wait for a job and read its output path
  ansible.builtin.set_fact:
    model_path: >-
      {{ lookup('modelarts.training.training_job', job_id, wait=true, wait_timeout=3600,
                field='details.algorithm.outputs.0.remote.obs.obs_url') }}

- name: What a job produced - the val_accuracy its log reports
  ansible.builtin.debug:
    msg: >-
      {{ lookup('modelarts.training.training_job', '5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52',
                metrics=[{'name': 'val_accuracy', 'regex': 'val_accuracy=([0-9.]+)'}], field='metrics.val_accuracy.value') }}

- name: Deploy only a model better than the one in production (the lookup fails when a bound fails, with wait)
  ansible.builtin.debug:
    msg: deploying
  when: >-
    lookup('modelarts.training.training_job', '5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52', wait=true,
           metrics=[{'name': 'val_accuracy', 'regex': 'val_accuracy=([0-9.]+)', 'min_improvement': 0}],
           baseline={'name': 'resnet50-flowers-train-baseline'}, field='metrics_ok')

- name: Deploy only when the job is completed
  ansible.builtin.debug:
    msg: deploying
  when: lookup('modelarts.training.training_job', job_id) is modelarts.training.completed
"""

RETURN = r"""
_list:
  description:
    - One item per term, in order, shaped like the C(training_jobs) items of M(modelarts.training.modelarts_training_job_info)
      (C(id), C(name), C(api_version), C(phase), C(terminal), C(completed), C(failed), C(create_time), C(start_time),
      C(duration_seconds), C(failure_reason), C(details), C(schema_errors), C(diagnostics), and with O(wait) C(waited_seconds),
      C(polls), C(phase_history)); or the value at O(field) of each item.
    - With O(metrics), C(metrics) and C(metrics_ok) say what each C(Completed) job produced and whether it meets its bounds.
    - C(progress) says whether a C(Running) job still makes progress (O(stall)); null for other phases and without O(stall).
    - C(diagnostics) holds, for a v2 job in a O(fail_on) phase, the job's error events and the last O(log_lines) lines of each
      task's log (null for other jobs); with O(wait), a failure's error message quotes the last error event and log lines.
  type: list
  elements: raw
"""

from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.lookup import LookupBase
from ansible.utils.display import Display

from ansible_collections.modelarts.training.plugins.module_utils.text import LEVEL_KEYWORD, LEVEL_VARIABLE
from ansible_collections.modelarts.training.plugins.module_utils.door.options import ConnectionConfigError, check_known, variable_names
from ansible_collections.modelarts.training.plugins.module_utils.door.query import Query, Selection, check_job_id, v1_selection_key, v2_key

display = Display()

_MISSING = object()


def term_key(term, index):
    """The job key of one term: a v2 id string or a ``{job_id, version_id}`` dict."""
    if isinstance(term, dict):
        unknown = sorted(set(term) - {"job_id", "version_id"})
        if unknown or "job_id" not in term or "version_id" not in term:
            raise AnsibleLookupError("term %d: a v1 term is a dict with exactly the keys job_id and version_id" % index)
        try:
            return v1_selection_key(term, "term %d: " % index)
        except ConnectionConfigError as error:
            raise AnsibleLookupError("training_job lookup: %s" % error) from None
    if isinstance(term, (bool, int, float)) or term is None:
        raise AnsibleLookupError("term %d: expected a training job id (string) or a {job_id, version_id} dict, got %s" % (index, type(term).__name__))
    try:
        return v2_key(check_job_id(to_text(term), "term %d" % index))
    except ConnectionConfigError as error:
        raise AnsibleLookupError("training_job lookup: %s" % error) from None


def flatten_terms(terms):
    """Expand lists given as a single term, as ``lookup('...', ids)`` passes them."""
    flat = []
    for term in terms:
        if isinstance(term, (list, tuple)):
            flat.extend(term)
        else:
            flat.append(term)
    return flat


def pick(item, path):
    """The value at a dotted ``path`` inside ``item``; numbers index lists."""
    value = item
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part, _MISSING)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            value = _MISSING
        if value is _MISSING:
            raise AnsibleLookupError("field %r: %r is not in training job %s" % (path, part, item.get("id")))
    return value


class LookupModule(LookupBase):
    """Look up training jobs through the collection's one door, ``module_utils.door.query.Query``."""

    def run(self, terms, variables=None, **kwargs):
        # Inventory values are templates: render the modelarts_* variables (only those) before use.
        names = variable_names()
        given = dict((name, variables[var]) for name, var in names.items() if variables and var in variables)
        rendered = self._templar.template(given) if given else {}
        rendered = dict((name, _plain(value)) for name, value in rendered.items())
        # ansible-core drops a keyword it has no definition for: refuse it, naming the documented one meant.
        try:
            check_known(kwargs, [name for name in self.option_definitions if not name.startswith("_")], "keyword")
        except ConnectionConfigError as error:
            raise AnsibleLookupError("training_job lookup: %s" % error) from None
        keys = [term_key(term, index) for index, term in enumerate(flatten_terms(terms))]
        # The door reads the raw values itself, strictly, and names their origin in its errors.
        try:
            # The lookup selects by id only: a "not found" for a value that cannot be an id says where names are searched.
            query = Query([(LEVEL_KEYWORD, kwargs), (LEVEL_VARIABLE, rendered)], Selection(dict.fromkeys(keys), name_option=None))
        except ConnectionConfigError as error:
            raise AnsibleLookupError("training_job lookup: %s" % error) from None
        with query:
            # Ansible checks the keywords' types against the documentation and serves field.
            self.set_options(var_options=None, direct=kwargs)
            result = query.run()
        for warning in result.warnings:
            display.warning(warning)
        if not result.ok:
            raise AnsibleLookupError(result.msg)
        field = self.get_option("field")
        # One element per term, in order, duplicates included.
        by_key = dict(zip(dict.fromkeys(keys), result.items))
        items = [by_key[key] for key in keys]
        return [pick(item, field) for item in items] if field else items


def _plain(value):
    # A vaulted value is a str-like object; the door wants plain str for strings.
    return to_text(value) if hasattr(value, "_ciphertext") or value.__class__.__name__ in ("EncryptedString", "AnsibleVaultEncryptedUnicode") else value
