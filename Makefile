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
# The version matrix: the newest ansible-core on Python 3.13. hacking/find_python.sh looks for
# the interpreter in PYENV_ROOT, `pyenv root`, `pyenv which python3.13`, then PATH; set
# PYTHON_NEWEST=/path/to/python3.13 to choose one. Without one, the *-newest suites say so in
# one line and are skipped, except under CI=true, where that is a failure.
ifeq ($(origin PYTHON_NEWEST),undefined)
PYTHON_NEWEST := $(shell hacking/find_python.sh 3.13)
endif
NEWEST_ABSENT := no Python 3.13 found (looked in PYENV_ROOT, pyenv root, pyenv which python3.13, PATH); set PYTHON_NEWEST=/path/to/python3.13
VENV_NEWEST := $(CURDIR)/.venv-newest
BIN_NEWEST := $(VENV_NEWEST)/bin
STAMP_NEWEST := $(VENV_NEWEST)/.installed
# `make demo` has its own small venv (requirements/demo.txt: ansible-core, the plugins' libraries and
# cryptography), so a first demo does not install the whole test toolchain.
VENV_DEMO := $(CURDIR)/.venv-demo
STAMP_DEMO := $(VENV_DEMO)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: help venv test-prepare docs bench bench-quick get-pip get-pip-newest sanity-newest units-newest integration-newest demo test test-quick sanity units emulator-tests system-tests molecule integration lint docs-lint changelog-lint ee clean ruff

help:
	@echo "make demo        run the deployment-gate demo against the ModelArts emulator"
	@echo "make test        run every test suite (what CI runs)"
	@echo "make test-quick  unit and emulator tests only, for the inner loop"
	@echo "make docs        render the docsite into docs/build/html"
	@echo "make bench       the benchmarks behind docs/performance.md and docs/reliability.md"

$(STAMP): requirements/runtime.txt requirements/test.txt emulator/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/test.txt
	touch $@

venv: $(STAMP)

$(VENV)/.installed-docs: $(STAMP) requirements/docs.txt
	$(BIN)/python -m pip install --quiet -r requirements/docs.txt
	touch $@

# The rendered docsite (build output, not committed): docs/build/html/index.html.
docs: $(VENV)/.installed-docs
	rm -rf docs/build/html
	$(IN_COPY) -- hacking/build_docs.sh $(BIN) $(CURDIR)/docs/build/html

$(VENV)/.installed-bench: $(STAMP) requirements/bench.txt
	$(BIN)/python -m pip install --quiet -r requirements/bench.txt
	touch $@

# Benchmarks behind docs/performance.md and docs/reliability.md (not part of `make test`).
bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/emulator_throughput.py
	$(BIN)/python benchmarks/eda_latency.py
	$(BIN)/python benchmarks/fault_soak.py
	$(BIN)/python benchmarks/diagnostics_bench.py

bench-quick: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py --quick

$(STAMP_NEWEST): requirements/matrix-newest.txt emulator/pyproject.toml
	@test -n "$(PYTHON_NEWEST)" || { echo "$(NEWEST_ABSENT)" >&2; exit 1; }
	test -x $(BIN_NEWEST)/python || $(PYTHON_NEWEST) -m venv $(VENV_NEWEST)
	$(BIN_NEWEST)/python -m pip install --quiet --upgrade pip
	$(BIN_NEWEST)/python -m pip install --quiet -r requirements/matrix-newest.txt
	touch $@

get-pip-newest: $(STAMP_NEWEST)
	@hacking/provide_get_pip.sh $(BIN_NEWEST)/python

# Sanity, units and integration again with the newest ansible-core on Python 3.13.
ifeq ($(strip $(PYTHON_NEWEST)),)
sanity-newest units-newest integration-newest:
	@case "$${CI:-}" in \
		[Tt][Rr][Uu][Ee]|1) echo "$@: failed: $(NEWEST_ABSENT)" >&2; exit 1 ;; \
		*) echo "$@: skipped: $(NEWEST_ABSENT) to run it" ;; \
	esac
else
sanity-newest: get-pip-newest
	$(IN_COPY) -- $(BIN_NEWEST)/ansible-test sanity --venv --python 3.13 --color no

units-newest: get-pip-newest
	$(IN_COPY) -- $(BIN_NEWEST)/ansible-test units --venv --python 3.13 --color no --requirements

integration-newest: get-pip-newest
	$(IN_COPY) -- $(BIN_NEWEST)/python tests/integration/run.py --python 3.13
endif

# ansible-test bootstraps pip in its venvs from a cached get-pip script; provide one that works offline.
get-pip: $(STAMP)
	@hacking/provide_get_pip.sh $(BIN)/python

$(STAMP_DEMO): requirements/runtime.txt requirements/demo.txt emulator/pyproject.toml
	test -x $(VENV_DEMO)/bin/python || $(PYTHON) -m venv $(VENV_DEMO)
	$(VENV_DEMO)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements/demo.txt
	touch $@

demo: $(STAMP_DEMO)
	@$(IN_COPY) -- $(VENV_DEMO)/bin/python $(CURDIR)/hacking/demo.py

# What the suites share, made once before they run side by side: the venvs (.venv with the EE tools,
# .venv-newest when Python 3.13 is there) and ansible-test's offline pip bootstrap.
test-prepare: venv get-pip $(VENV)/.installed-ee $(if $(strip $(PYTHON_NEWEST)),get-pip-newest)

# Three suites at a time on two cores, longest first (times measured in docs/architecture.md, "Which command
# for which change"): the system tests (mostly waiting on processes and the emulator, spread over
# SYSTEM_WORKERS) beside the others, each next one starting as soon as one ends.
SUITE_JOBS ?= 3
test: venv
	@hacking/run_suites.sh --setup test-prepare --jobs $(SUITE_JOBS) system-tests ee sanity-newest units sanity \
		integration molecule units-newest emulator-tests integration-newest lint docs-lint changelog-lint ruff

test-quick: venv
	@hacking/run_suites.sh --setup get-pip --jobs 2 units emulator-tests

sanity: get-pip
	$(IN_COPY) -- $(BIN)/ansible-test sanity --venv --python $(TEST_PYTHON) --color no

units: get-pip
	$(IN_COPY) -- $(BIN)/ansible-test units --venv --python $(TEST_PYTHON) --color no --requirements

emulator-tests: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider emulator/tests

# The emulator package's wheel and sdist, into dist/ (`pip install ./emulator` needs neither).
.PHONY: emulator-dist
emulator-dist: venv
	rm -f dist/modelarts_emulator-*
	$(BIN)/python -m build --outdir dist emulator

# End-to-end: real ansible-playbook / ansible-rulebook processes against the emulator.
# Spread over SYSTEM_WORKERS pytest-xdist workers, each with its own staged collection and emulator; the
# slowest tests are listed at the end so that it is clear where the time goes.
SYSTEM_WORKERS ?= 4
system-tests: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(SYSTEM_WORKERS) --durations=15 tests/system

integration: get-pip
	$(IN_COPY) -- $(BIN)/python tests/integration/run.py --python $(TEST_PYTHON)

# The role's scenarios run on localhost (no containers); each starts its own emulator. ANSIBLE_HOME in the
# staged copy's directory keeps molecule's state (ansible's tmp/molecule.*) out of ~/.ansible, and the scenarios'
# `prerun: false` keeps it from installing this collection into ~/.ansible/collections.
molecule: venv
	$(IN_COPY) roles/training_job_gate -- sh -c 'ANSIBLE_HOME="$$ANSIBLE_COLLECTIONS_PATH/ansible-home" exec $(BIN)/molecule test --all'

# House style (ruff.toml): lint and format, zero findings.
ruff: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

lint: venv
	$(IN_COPY) -- $(BIN)/ansible-lint --profile production

docs-lint: venv
	$(IN_COPY) -- sh -c '$(BIN)/antsibull-docs lint-collection-docs --plugin-docs "$$PWD"' 

changelog-lint: venv
	$(BIN)/antsibull-changelog lint

$(VENV)/.installed-ee: $(STAMP) requirements/ee.txt
	$(BIN)/python -m pip install --quiet -r requirements/ee.txt
	touch $@

# The execution and decision environments, built with ansible-builder and Podman and run against the
# emulator (docs/execution_environment.md); installs Podman, runc and debootstrap as root if missing.
ee: $(VENV)/.installed-ee
	hacking/check_ee.sh $(BIN)/python

clean:
	rm -rf .cache tests/output dist emulator/build emulator/dist
