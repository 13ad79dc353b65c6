# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters ``gate_record``, ``record_digest`` and ``promote_record``: a gate's decision record, the digest that
checks one, and the record a deployment promotes.

The role ``training_job_gate`` builds its record with ``gate_record`` and writes it (``training_job_gate_record``);
a later step checks it with ``record_digest`` (``record.sha256 == record | modelarts.training.record_digest``); once the
deployment succeeded, ``promote_record`` gives what is written to the production path.  What a
record holds and how its digest is computed is ``module_utils/results/record.py``; these filters only translate.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.modelarts.training.plugins.module_utils.door.metric_checks import bounds, shown_baseline
from ansible_collections.modelarts.training.plugins.module_utils.results.record import RecordError, decision_record, digest, promote


def _plain(value):
    """A templated value as plain data (ansible-core hands filters its own str, dict and list subclasses)."""
    if isinstance(value, dict):
        return dict((str(key), _plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    if type(value).__name__ == "AnsibleVaultEncryptedUnicode":
        # A vaulted value (ansible-core before 2.19 hands it to a filter still encrypted): its text, decrypted.
        return str(value)
    return value


def gate_record(result, decision, messages=None, selection=None, metrics=None, baseline=None, key=None):
    """The decision record of a gate, ``sha256`` included, and ``hmac_sha256`` with ``key`` (see ``module_utils/results/record.py``)."""
    try:
        # The baseline as the record shows it (never its record_key), and the bounds as checked with it (as given when they cannot be).
        shown = shown_baseline(_plain(baseline))
        return decision_record(_plain(result), decision, _plain(messages), _plain(selection), bounds(_plain(metrics), shown), shown, key=_plain(key) or None)
    except RecordError as error:
        raise AnsibleFilterError("modelarts.training.gate_record: %s" % error) from None


def record_digest(record):
    """The SHA-256 of a decision record's canonical JSON, without its ``sha256`` key: equal to its ``sha256`` unless edited."""
    if not isinstance(record, dict):
        raise AnsibleFilterError("modelarts.training.record_digest: the input must be a decision record (a dict), got a %s" % type(record).__name__)
    try:
        return digest(_plain(record))
    except RecordError as error:
        raise AnsibleFilterError("modelarts.training.record_digest: %s" % error) from None


def promote_record(record, key=None):
    """The open, verified decision ``record`` with ``promoted_at`` and its digests again (``hmac_sha256`` with ``key``)."""
    if not isinstance(record, dict):
        raise AnsibleFilterError("modelarts.training.promote_record: the input must be a decision record (a dict), got a %s" % type(record).__name__)
    try:
        return promote(_plain(record), _plain(key) or None)
    except RecordError as error:
        raise AnsibleFilterError("modelarts.training.promote_record: %s" % error) from None


class FilterModule(object):
    """modelarts.training filters."""

    def filters(self):
        return {"gate_record": gate_record, "record_digest": record_digest, "promote_record": promote_record}
