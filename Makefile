# modelarts.training: the two commands a newcomer needs are `make demo` and `make test`.
# Everything runs from .venv, created from the pinned files in requirements/.

SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Outside the checkout: inside it, ansible-test would list files through git and find none.
STAGE_ROOT := /tmp/modelarts.training-$(shell printf %s "$(CURDIR)" | md5sum | cut -c1-8)
STAGED := $(STAGE_ROOT)/ansible_collections/modelarts/training
TEST_PYTHON ?= 3.11
# ansible-lint and molecule must use this checkout, never a stray installed copy.
export ANSIBLE_COLLECTIONS_PATH := $(STAGE_ROOT)
export PATH := $(BIN):$(PATH)

.PHONY: help venv demo test test-quick sanity units emulator-tests system-tests integration lint docs-lint changelog-lint stage clean

help:
	@echo "make demo        run the deployment-gate demo against the ModelArts emulator"
	@echo "make test        run every test suite (what CI runs)"
	@echo "make test-quick  unit and emulator tests only, for the inner loop"

$(STAMP): requirements/runtime.txt requirements/test.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/test.txt
	touch $@

venv: $(STAMP)

stage: $(STAMP)
	@hacking/stage_collection.sh $(STAGE_ROOT) >/dev/null
	@hacking/provide_get_pip.sh $(BIN)/python

demo: $(STAMP) stage
	$(BIN)/python hacking/demo.py

test: venv
	@hacking/run_suites.sh sanity units emulator-tests integration system-tests lint docs-lint changelog-lint

test-quick: venv
	@hacking/run_suites.sh units emulator-tests

sanity: stage
	cd $(STAGED) && $(BIN)/ansible-test sanity --venv --python $(TEST_PYTHON) --color no

units: stage
	cd $(STAGED) && $(BIN)/ansible-test units --venv --python $(TEST_PYTHON) --color no --requirements

emulator-tests: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/emulator/tests

# End-to-end: real ansible-playbook / ansible-rulebook processes against the emulator.
system-tests: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/system

integration: stage
	cd $(STAGED) && $(BIN)/python tests/integration/run.py --python $(TEST_PYTHON)

lint: stage
	cd $(STAGED) && $(BIN)/ansible-lint --profile production

docs-lint: stage
	$(BIN)/antsibull-docs lint-collection-docs --plugin-docs $(STAGED)

changelog-lint: venv
	$(BIN)/antsibull-changelog lint

clean:
	rm -rf .cache tests/output
