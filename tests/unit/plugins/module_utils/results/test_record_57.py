# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 57, the record side: numbers canonical as JSON tools elsewhere write them, ``hmac_sha256`` with a key, a record
promoted, and a production record read as a baseline (``production.read_production``)."""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import shutil
import subprocess

import pytest

from ansible_collections.modelarts.training.plugins.module_utils.results import production
from ansible_collections.modelarts.training.plugins.module_utils.door import metric_checks
from ansible_collections.modelarts.training.plugins.module_utils.results import record as record_mod

NOW = datetime.datetime(2026, 7, 18, 10, 30, 0, tzinfo=datetime.timezone.utc)
LATER = datetime.datetime(2026, 7, 18, 11, 0, 0, tzinfo=datetime.timezone.utc)
KEY = "s3cr3t-record-key-57"
JOB = "3e9b6a1c-2f4d-4b8e-9a7c-1d2e3f4a5b60"
ITEM = {
    "id": JOB,
    "name": "churn-model",
    "api_version": "v2",
    "phase": "Completed",
    "phase_history": [{"phase": "Completed", "at": "2026-07-18T10:29:00Z"}],
    "create_time": 1784367000000,
    "metrics": {"acc": {"value": 0.86, "source": "log", "ok": True, "problems": [], "baseline_value": None, "improvement": None}},
    "metrics_ok": True,
}
NUMBERS = [
    0.86,
    1.0,
    100.0,
    1e16,
    1e20,
    1e21,
    1.5e21,
    1e-7,
    1.5e-7,
    1e-6,
    0.000001234,
    123.456,
    -0.0,
    -2.5e22,
    5e-324,
    1.7976931348623157e308,
    0.1 + 0.2,
    2.0**53,
    123456789012345.67,
    1e-5,
    0.5,
    3,
    -7,
    0,
    2**53 - 1,
]


def ecmascript(value):
    """Number.prototype.toString as ECMA-262 (7.1.12.1 Number::toString) writes it, from the shortest round-trip digits."""
    if isinstance(value, int):
        return str(value)
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _e, exp = repr(abs(value)).partition("e")
    whole, _point, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + (int(exp) if exp else 0) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    e = point - 1
    return sign + digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def test_numbers_are_written_as_ecmascript_writes_them():
    expected = {
        1.0: "1",
        100.0: "100",
        1e16: "10000000000000000",
        1e21: "1e+21",
        1e-7: "1e-7",
        1e-6: "0.000001",
        -0.0: "0",
        0.86: "0.86",
        1.5e21: "1.5e+21",
        -2.5e22: "-2.5e+22",
        5e-324: "5e-324",
        0.1 + 0.2: "0.30000000000000004",
    }
    for value, text in expected.items():
        assert record_mod.number_text(value) == text, value
    for value in NUMBERS:
        assert record_mod.number_text(value) == ecmascript(value), value
        assert float(record_mod.number_text(value)) == value


def _node_canonical(values):
    """What a verifier in JavaScript computes: JSON.stringify with the keys sorted and non-ASCII escaped as Python does."""
    script = r"""
const sortKeys = (v) => Array.isArray(v) ? v.map(sortKeys) : (v !== null && typeof v === 'object')
  ? Object.keys(v).sort().reduce((o, k) => { o[k] = sortKeys(v[k]); return o; }, {}) : v;
const ascii = (s) => s.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
const records = JSON.parse(require('fs').readFileSync(0, 'utf8'));
records.forEach((r) => { delete r.sha256; delete r.hmac_sha256; });
process.stdout.write(JSON.stringify(records.map((r) => ascii(JSON.stringify(sortKeys(r))))));
"""
    done = subprocess.run(["node", "-e", script], input=json.dumps(values), capture_output=True, text=True, check=True, timeout=60)
    return json.loads(done.stdout)


def _reimplemented(value):
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + _reimplemented(value[k]) for k in sorted(value, key=lambda k: k.encode("utf-16-be"))) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_reimplemented(v) for v in value) + "]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ecmascript(value)
    return json.dumps(value)


def test_a_verifier_in_javascript_computes_the_same_canonical_text_and_digest():
    records = [{"n": value, "list": [value, {"x": value}], "é": "naïve ✓ 😀 \x7f \x01 /", "z": None, "b": True} for value in NUMBERS]
    records.append(record_mod.decision_record({"training_jobs": [ITEM]}, "open", ["open"], {"ids": [JOB]}, now=NOW))
    if shutil.which("node"):
        texts = _node_canonical(records)
    else:  # the same rules, reimplemented from ECMA-262 rather than from record.py
        texts = [_reimplemented(dict((k, v) for k, v in record.items() if k not in ("sha256", "hmac_sha256"))) for record in records]
    for record, text in zip(records, texts):
        assert record_mod.canonical(record) == text
        assert record_mod.digest(record) == hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_keys_are_sorted_by_utf16_code_units():
    record = {"\U0001f600": 1, "\uff21": 2}
    assert record_mod.canonical(record) == '{"\\ud83d\\ude00":1,"\\uff21":2}'


def test_an_integer_beyond_what_every_json_tool_reads_back_is_refused():
    with pytest.raises(record_mod.RecordError, match=r"record.n is 9007199254740993"):
        record_mod.canonical({"n": 2**53 + 1})


def test_a_record_written_before_the_number_rules_still_verifies_and_one_with_only_such_floats_has_the_same_text():
    old = {"decision": "open", "bounds": [{"name": "acc", "min": 0.9, "min_improvement": 0.0}], "v": 1e-07}
    old_text = json.dumps(old, sort_keys=True, separators=(",", ":"))
    old["sha256"] = hashlib.sha256(old_text.encode("utf-8")).hexdigest()
    assert record_mod.canonical(old) != old_text and record_mod.verify(old)
    old["v"] = 2e-07
    assert not record_mod.verify(old)
    plain = {"decision": "open", "acc": 0.86, "n": 3}
    assert record_mod.canonical(plain) == json.dumps(plain, sort_keys=True, separators=(",", ":"))


def test_a_record_holds_integral_numbers_as_integers_so_that_pythons_own_json_dumps_verifies_it_too():
    checked = metric_checks.bounds([{"name": "acc", "regex": "acc=([0-9.]+)", "min_improvement": 0.0}], {"name": "p"})
    made = record_mod.decision_record({"training_jobs": [ITEM]}, "open", [], {}, checked, {"name": "p"}, now=NOW)
    assert made["bounds"][0]["min_improvement"] == 0 and isinstance(made["bounds"][0]["min_improvement"], int)
    read = json.loads(json.dumps(made, indent=2))
    digest = read.pop("sha256")
    assert hashlib.sha256(json.dumps(read, sort_keys=True, separators=(",", ":")).encode()).hexdigest() == digest


def test_with_a_key_the_record_carries_an_hmac_over_the_same_text_and_a_wrong_or_missing_one_is_named():
    made = record_mod.decision_record(
        {"training_jobs": [ITEM]}, "open", ["open"], {"ids": [JOB]}, baseline={"record": "/p", "record_key": KEY}, now=NOW, key=KEY
    )
    text = record_mod.canonical(made)
    assert made["hmac_sha256"] == hmac.new(KEY.encode(), text.encode(), hashlib.sha256).hexdigest()
    assert made["sha256"] == hashlib.sha256(text.encode()).hexdigest()
    assert KEY not in json.dumps(made), "a key is never in a record"
    assert record_mod.check(made, KEY) is None and record_mod.check(made) is None
    why = record_mod.check(made, "another-key")
    assert "hmac_sha256 does not verify with record_key" in why and "another-key" not in why
    edited = dict(made, decision="closed")
    edited["sha256"] = record_mod.digest(edited)  # an edit by someone who can compute sha256 but holds no key
    assert record_mod.check(edited) is None
    assert "hmac_sha256 does not verify" in record_mod.check(edited, KEY)
    unkeyed = record_mod.decision_record({"training_jobs": [ITEM]}, "open", ["open"], {"ids": [JOB]}, now=NOW)
    assert "hmac_sha256" not in unkeyed
    assert "has no hmac_sha256, and record_key is given" in record_mod.check(unkeyed, KEY)


def test_promote_adds_promoted_at_and_signs_again_and_refuses_what_is_not_an_open_verified_record():
    made = record_mod.decision_record({"training_jobs": [ITEM]}, "open", ["open"], {"ids": [JOB]}, now=NOW, key=KEY)
    promoted = record_mod.promote(made, KEY, now=LATER)
    assert promoted["promoted_at"] == "2026-07-18T11:00:00Z" and "promoted_at" not in made
    assert record_mod.check(promoted, KEY) is None and promoted["sha256"] != made["sha256"]
    with pytest.raises(record_mod.RecordError, match="hmac_sha256 does not verify") as raised:
        record_mod.promote(made, "wrong-key", now=LATER)
    assert "wrong-key" not in str(raised.value)
    with pytest.raises(record_mod.RecordError, match="no key is given"):
        record_mod.promote(made, now=LATER)
    closed = record_mod.decision_record({"training_jobs": [ITEM]}, "closed", ["no"], {"ids": [JOB]}, now=NOW)
    with pytest.raises(record_mod.RecordError, match="its decision is closed, not open"):
        record_mod.promote(closed, now=LATER)
    edited = dict(record_mod.decision_record({"training_jobs": [ITEM]}, "open", ["open"], {"ids": [JOB]}, now=NOW), messages=["x"])
    with pytest.raises(record_mod.RecordError, match="sha256 does not verify"):
        record_mod.promote(edited, now=LATER)
    assert record_mod.check(record_mod.promote(record_mod.decision_record({"training_jobs": [ITEM]}, "open", [], {}, now=NOW), now=LATER)) is None


# -- a production record read as a baseline --------------------------------------------------------------------------------


def _write(path, record, key=None, promote=True):
    data = record_mod.promote(record, key, now=LATER) if promote else record
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    return str(path)


def _open_record(items=(ITEM,), key=None):
    return record_mod.decision_record({"training_jobs": list(items)}, "open", ["open"], {"ids": [JOB]}, now=NOW, key=key)


def test_a_good_record_gives_the_job_and_the_values_it_holds(tmp_path):
    path = _write(tmp_path / "production.json", _open_record(key=KEY), KEY)
    found = production.read_production(path, key=KEY)
    assert found.status == "found", found.why
    assert found.job.key == JOB and found.job.name == "churn-model" and found.job.api_version == "v2" and found.job.values == {"acc": 0.86}


def test_a_v1_job_in_a_record_is_keyed_by_job_and_version(tmp_path):
    item = dict(ITEM, id="1234", api_version="v1", version_id=5678)
    found = production.read_production(_write(tmp_path / "p.json", _open_record([item])))
    assert found.status == "found", found.why
    assert found.job.key == ("v1", 1234, 5678)


def test_a_path_that_does_not_exist_is_missing_and_nothing_else_is(tmp_path):
    found = production.read_production(str(tmp_path / "nothing-yet.json"))
    assert found.status == "missing" and "does not exist" in found.why and "nothing-yet.json" in found.why
    found = production.read_production(str(tmp_path / "no-dir" / "p.json"))
    assert found.status == "missing"


def _failure(path, **kwargs):
    found = production.read_production(str(path), **kwargs)
    assert found.status == "failed", found
    assert str(path) in found.why
    return found.why


def test_every_bad_record_fails_naming_the_file_and_what_is_wrong(tmp_path):
    good = _write(tmp_path / "good.json", _open_record())
    link = tmp_path / "link.json"
    os.symlink(good, str(link))
    assert "symbolic link" in _failure(link)
    assert "not a regular file" in _failure(tmp_path)
    (tmp_path / "text.json").write_text("not json {", encoding="utf-8")
    assert "not JSON" in _failure(tmp_path / "text.json")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    assert "not a JSON object" in _failure(tmp_path / "list.json")
    (tmp_path / "nan.json").write_text('{"a": NaN}', encoding="utf-8")
    assert "NaN, which is not a JSON number" in _failure(tmp_path / "nan.json")
    (tmp_path / "twice.json").write_text('{"a": 1, "a": 2}', encoding="utf-8")
    assert "key a twice" in _failure(tmp_path / "twice.json")
    (tmp_path / "bytes.json").write_bytes(b'{"a": "\xff"}')
    assert "not UTF-8" in _failure(tmp_path / "bytes.json")
    edited = json.loads((tmp_path / "good.json").read_text(encoding="utf-8"))
    edited["jobs"][0]["metrics"]["acc"]["value"] = 0.99
    (tmp_path / "edited.json").write_text(json.dumps(edited), encoding="utf-8")
    assert "sha256 does not verify" in _failure(tmp_path / "edited.json")
    closed = record_mod.decision_record({"training_jobs": [ITEM]}, "closed", ["no"], {}, now=NOW)
    assert "decision is closed" in _failure(_write(tmp_path / "closed.json", closed, promote=False))
    two = _open_record([ITEM, dict(ITEM, id="4f0c7b2d-3a5e-4c9f-8b1d-2e3f4a5b6c71", name="other-model")])
    assert "holds 2 jobs" in _failure(_write(tmp_path / "two.json", two))
    assert "no job" in _failure(_write(tmp_path / "none.json", _open_record([])))
    assert "hmac_sha256 does not verify with record_key" in _failure(_write(tmp_path / "keyed.json", _open_record(key=KEY), KEY), key="wrong")
    assert "has no hmac_sha256" in _failure(good, key=KEY)
    not_completed = _open_record([dict(ITEM, phase="Running")])
    assert "is Running, not Completed" in _failure(_write(tmp_path / "running.json", not_completed))
    (tmp_path / "big.json").write_text(" " * (production.MAX_RECORD_BYTES + 1) + "{}", encoding="utf-8")
    assert "larger than" in _failure(tmp_path / "big.json")


def test_name_picks_one_of_the_records_jobs(tmp_path):
    other = dict(ITEM, id="4f0c7b2d-3a5e-4c9f-8b1d-2e3f4a5b6c71", name="other-model", metrics={"acc": {"value": 0.5}})
    path = _write(tmp_path / "two.json", _open_record([ITEM, other]))
    found = production.read_production(path, name="other-model")
    assert found.status == "found" and found.job.key == "4f0c7b2d-3a5e-4c9f-8b1d-2e3f4a5b6c71" and found.job.values == {"acc": 0.5}
    assert "no job named 'absent'" in _failure(path, name="absent")


def test_a_key_never_appears_in_a_failure(tmp_path):
    path = _write(tmp_path / "keyed.json", _open_record(key=KEY), KEY)
    assert KEY not in production.read_production(path, key=KEY + "x").why


def test_a_signed_record_read_without_its_key_fails_closed(tmp_path):
    """A fifth review: an edit that kept the old hmac_sha256 and computed the sha256 again verified when the run that read
    the record had no key (a cron job without MODELARTS_GATE_RECORD_KEY): the sha256 alone proves nothing."""
    path = _write(tmp_path / "keyed.json", _open_record(key=KEY), KEY)
    edited = json.loads((tmp_path / "keyed.json").read_text(encoding="utf-8"))
    edited["jobs"][0]["id"] = "4f0c7b2d-3a5e-4c9f-8b1d-2e3f4a5b6c71"
    edited["jobs"][0]["metrics"]["acc"]["value"] = 0.5
    edited["sha256"] = record_mod.digest(edited)
    (tmp_path / "edited.json").write_text(json.dumps(edited), encoding="utf-8")
    for signed in (path, str(tmp_path / "edited.json")):
        assert "carries hmac_sha256 and no record_key is given" in _failure(signed)
        assert "carries hmac_sha256 and no record_key is given" in _failure(signed, key="")
    assert production.read_production(path, key=KEY).status == "found"
    assert "hmac_sha256 does not verify" in _failure(tmp_path / "edited.json", key=KEY)


def test_a_decision_record_never_promoted_is_not_production(tmp_path):
    """A gate's open decision record copied to the production path (its deployment failed, or a --check run wrote it)
    has no promoted_at: not the model in production."""
    for key in (None, KEY):
        unpromoted = _write(tmp_path / ("decision-%s.json" % bool(key)), _open_record(key=key), key, promote=False)
        assert "has no promoted_at: it is a gate's decision record that was never promoted" in _failure(unpromoted, key=key)
    bad = record_mod.sign(dict(record_mod._unsigned(_open_record()), promoted_at=""))  # pylint: disable=protected-access
    assert "has no promoted_at" in _failure(_write(tmp_path / "blank.json", bad, promote=False))


def test_a_record_nested_too_deeply_fails_naming_the_file_without_a_traceback(tmp_path):
    nested = []
    for _level in range(5000):
        nested = [nested]
    deep = {"collection": "modelarts.training", "sha256": "x", "x": nested}
    assert record_mod.check(deep) == "it is nested too deeply to compute its digest"
    text = '{"collection": "modelarts.training", "sha256": "x", "x": ' + "[" * 700 + "]" * 700 + "}"
    (tmp_path / "deep.json").write_text(text, encoding="utf-8")
    assert "nested too deeply" in _failure(tmp_path / "deep.json")
