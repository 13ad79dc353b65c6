# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time the validation of one job document, and the cost of importing jsonschema.

Usage: ``.venv/bin/python hacking/time_validation.py [--number N] [--repeat R]``.

Per document (best of R rounds of N calls, in microseconds):

* ``validate_document``: what every poll of a job pays for validation;
* ``jsonschema``: the compiled jsonschema validator alone (``iter_errors``, listing every error);
* ``build_item strict`` / ``build_item off``: validation plus normalisation, and normalisation alone;

on the documented v2 example (``tests/unit/fixtures/v2_example_rst.json``, 2.5 KB), a full-size
document with every field of the official SDK's model set (``sdk_documents.full_document()``, about
12 KB) and the same document with every optional field that holds a string, number or boolean set
to null; the one-off cost of compiling the pre-check.  Then the time ``import
jsonschema`` adds to a process that has already imported what a module run imports
(``ansible.module_utils.basic`` and ``requests``): the median of 7 fresh interpreters.

The collection is imported from a staged copy of this checkout (``hacking/stage_collection.sh``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "ansible_collections.modelarts.training"

IMPORT_PROBE = """
import time
import ansible.module_utils.basic, requests
start = time.perf_counter()
import jsonschema
from jsonschema import Draft202012Validator
print((time.perf_counter() - start) * 1000)
"""


def _load_by_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _import_collection(staging):
    staged = subprocess.run([os.path.join(ROOT, "hacking", "stage_collection.sh"), staging], check=True, capture_output=True, text=True).stdout.strip()
    sys.path.insert(0, staging)
    jobs = importlib.import_module(PACKAGE + ".plugins.module_utils.job.jobs")
    validation = importlib.import_module(PACKAGE + ".plugins.module_utils.job.validation")
    schemas = importlib.import_module(PACKAGE + ".plugins.module_utils.job.schemas")
    return staged, jobs, validation, schemas


def _per_call_us(func, number, repeat):
    return min(timeit.repeat(func, number=number, repeat=repeat)) / number * 1e6


def _import_cost_ms(runs=7):
    samples = []
    for _run in range(runs):
        out = subprocess.run([sys.executable, "-c", IMPORT_PROBE], check=True, capture_output=True, text=True).stdout
        samples.append(float(out))
    return statistics.median(samples), min(samples), max(samples)


def main(argv=None):
    """Print the timings; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=2000, help="calls per round (default 2000)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best is kept (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as staging:
        staged, jobs, validation, schemas = _import_collection(staging)
        sdk = _load_by_path("sdk_documents", os.path.join(staged, "tests", "unit", "plugins", "module_utils", "sdk_documents.py"))
        with open(os.path.join(staged, "tests", "unit", "fixtures", "v2_example_rst.json"), encoding="utf-8") as handle:
            example = json.load(handle)
        full = sdk.full_document()
        nulls = sdk.set_null(sdk.full_document(), sdk.optional_leaf_paths(full, sdk.V2_REQUIRED))
        schema = schemas.V2_TRAINING_JOB_SCHEMA
        documents = (("documented v2 example", example), ("SDK full document", full), ("SDK full, optional leaves null", nulls))
        validator = validation.get_validator(schema)
        print("%-32s %6s %12s %14s %10s %8s" % ("document", "bytes", "validate us", "jsonschema us", "strict us", "off us"))
        for label, doc in documents:
            errors = validation.validate_document(doc, schema)
            if errors:
                print("%-32s %6d rejected by the schema (%d errors)" % (label, len(json.dumps(doc)), len(errors)))
                continue
            print(
                "%-32s %6d %12.1f %14.1f %10.1f %8.1f"
                % (
                    label,
                    len(json.dumps(doc)),
                    _per_call_us(lambda doc=doc: validation.validate_document(doc, schema), args.number, args.repeat),
                    _per_call_us(lambda doc=doc: list(validator.iter_errors(doc)), args.number, args.repeat),
                    _per_call_us(lambda doc=doc: jobs.build_item(doc, "v2", validate="strict"), args.number, args.repeat),
                    _per_call_us(lambda doc=doc: jobs.build_item(doc, "v2", validate="off"), args.number, args.repeat),
                )
            )
        compile_ms = min(timeit.repeat(lambda: validation._FastChecker(schema).compile(schema), number=20, repeat=3)) / 20 * 1e3
        print("pre-check compiled once per process: %.2f ms" % compile_ms)
    median, low, high = _import_cost_ms()
    print("import jsonschema after ansible.module_utils.basic and requests: %.1f ms (median of 7, %.1f-%.1f)" % (median, low, high))
    return 0


if __name__ == "__main__":
    sys.exit(main())
