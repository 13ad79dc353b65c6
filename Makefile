# modelarts.training: the two commands a newcomer needs are `make demo` and `make test`.
# Everything runs from .venv, created from the pinned files in requirements/.

SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Suites that need the ansible_collections/modelarts/training layout run in a fresh
# staged copy outside the checkout (inside it, ansible-test would list files through
# git and find none); the copy also keeps ansible-lint and molecule on this checkout.
IN_COPY := hacking/in_staged_copy.sh
TEST_PYTHON ?= 3.11
export PATH := $(BIN):$(PATH)

.PHONY: help venv get-pip demo test test-quick sanity units emulator-tests system-tests molecule integration lint docs-lint changelog-lint clean

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

# ansible-test bootstraps pip in its venvs from a cached get-pip script; provide one that works offline.
get-pip: $(STAMP)
	@hacking/provide_get_pip.sh $(BIN)/python

demo: $(STAMP)
	@$(IN_COPY) -- $(BIN)/python $(CURDIR)/hacking/demo.py

test: venv
	@hacking/run_suites.sh sanity units emulator-tests integration system-tests lint docs-lint changelog-lint

test-quick: venv
	@hacking/run_suites.sh units emulator-tests

sanity: get-pip
	$(IN_COPY) -- $(BIN)/ansible-test sanity --venv --python $(TEST_PYTHON) --color no

units: get-pip
	$(IN_COPY) -- $(BIN)/ansible-test units --venv --python $(TEST_PYTHON) --color no --requirements

emulator-tests: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/emulator/tests

# End-to-end: real ansible-playbook / ansible-rulebook processes against the emulator.
system-tests: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/system

integration: get-pip
	$(IN_COPY) -- $(BIN)/python tests/integration/run.py --python $(TEST_PYTHON)

# The role's scenarios run on localhost (no containers); each starts its own emulator.
molecule: venv
	$(IN_COPY) roles/training_job_gate -- $(BIN)/molecule test --all

lint: venv
	$(IN_COPY) -- $(BIN)/ansible-lint --profile production

docs-lint: venv
	$(IN_COPY) -- sh -c '$(BIN)/antsibull-docs lint-collection-docs --plugin-docs "$$PWD"' 

changelog-lint: venv
	$(BIN)/antsibull-changelog lint

clean:
	rm -rf .cache tests/output
