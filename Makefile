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
# Every ansible-core the collection supports (meta/runtime.yml: >=2.16.0), oldest first, each on one Python it
# supports as a controller (docs: README.md, "Support"). 2.19 is .venv's (the toolchain, on TEST_PYTHON), the newest is
# .venv-newest's (above); each other one has .venv-core-<core>, made from requirements/core-<core>.txt with the
# interpreter hacking/find_python.sh finds; PYTHON310=/path/to/python3.10 (PYTHON312, PYTHON313: PYTHON_NEWEST) chooses
# one. `make test` runs sanity, units and integration on the oldest and the newest; `make test-cores` on each core,
# with the in-process parity suite. Without the interpreter a core's suites are skipped in one line (failed under CI).
CORES := 2.16 2.17 2.18 2.19 2.20 2.21
OLDEST := 2.16
CORE_PYTHON_2.16 := 3.10
CORE_PYTHON_2.17 := 3.12
CORE_PYTHON_2.18 := 3.13
CORE_PYTHON_2.19 := $(TEST_PYTHON)
CORE_PYTHON_2.20 := 3.12
CORE_PYTHON_2.21 := 3.13
ifeq ($(origin PYTHON310),undefined)
PYTHON310 := $(shell hacking/find_python.sh 3.10)
endif
ifeq ($(origin PYTHON312),undefined)
PYTHON312 := $(shell hacking/find_python.sh 3.12)
endif
PYTHON313 := $(PYTHON_NEWEST)
# The in-process parity suite (the action plugin against the module, and the gate role), run with a core's venv.
PARITY := tests/system/test_in_process_parity.py
# The cores with a venv of their own, and the suites of every core.
OWN_VENV_CORES := $(filter-out 2.19 $(lastword $(CORES)),$(CORES))
CORE_SUITES := $(foreach suite,sanity parity integration units,$(foreach core,$(CORES),$(suite)-$(core)))
# `make importer`: galaxy-importer in a venv of its own (requirements/importer.txt).
VENV_IMPORTER := $(CURDIR)/.venv-importer
STAMP_IMPORTER := $(VENV_IMPORTER)/.installed
# `make demo` has its own small venv (requirements/demo.txt: ansible-core, the plugins' libraries and
# cryptography), so a first demo does not install the whole test toolchain.
VENV_DEMO := $(CURDIR)/.venv-demo
STAMP_DEMO := $(VENV_DEMO)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: test-cores test-cores-prepare importer role-paths-oldest sanity-oldest units-oldest integration-oldest $(CORE_SUITES) $(foreach core,$(OWN_VENV_CORES),get-pip-$(core))
.PHONY: help venv test-prepare docs bench bench-quick get-pip get-pip-newest sanity-newest units-newest integration-newest demo test test-quick units-quick sanity units emulator-tests system-tests molecule integration lint docs-lint changelog-lint ee clean ruff

help:
	@echo "make demo        run the deployment-gate demo against the ModelArts emulator"
	@echo "make test        run every test suite (what CI runs)"
	@echo "make test-quick  unit tests (plain pytest) and emulator tests only, for the inner loop: under a minute"
	@echo "make test-cores  sanity, units, integration and in-process parity on every ansible-core from $(OLDEST)"
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

parity-$(lastword $(CORES)): $(STAMP_NEWEST)
	$(BIN_NEWEST)/python -m pytest -q -p no:cacheprovider $(PARITY)
endif
sanity-$(lastword $(CORES)): sanity-newest
units-$(lastword $(CORES)): units-newest
integration-$(lastword $(CORES)): integration-newest

# A core's suites when its Python is missing: one line, a failure under CI=true.
# $(call absent,SUITE,WHY)
absent = case "$${CI:-}" in [Tt][Rr][Uu][Ee]|1) echo "$(1): failed: $(2)" >&2; exit 1 ;; *) echo "$(1): skipped: $(2) to run it" ;; esac

# $(call core_suites,CORE): .venv-core-CORE and the suites sanity-CORE, units-CORE, integration-CORE, parity-CORE.
define core_suites
CORE_INTERPRETER_$(1) := $$(PYTHON$$(subst .,,$$(CORE_PYTHON_$(1))))
CORE_ABSENT_$(1) := no Python $$(CORE_PYTHON_$(1)) found for ansible-core $(1) (looked in PYENV_ROOT, pyenv root, pyenv which, PATH); set PYTHON$$(subst .,,$$(CORE_PYTHON_$(1)))=/path/to/python$$(CORE_PYTHON_$(1))

$(CURDIR)/.venv-core-$(1)/.installed: requirements/core-$(1).txt requirements/runtime.txt emulator/pyproject.toml
	@test -n "$$(CORE_INTERPRETER_$(1))" || { echo "$$(CORE_ABSENT_$(1))" >&2; exit 1; }
	test -x $(CURDIR)/.venv-core-$(1)/bin/python || $$(CORE_INTERPRETER_$(1)) -m venv $(CURDIR)/.venv-core-$(1)
	$(CURDIR)/.venv-core-$(1)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements/core-$(1).txt
	touch $$@

ifeq ($$(strip $$(CORE_INTERPRETER_$(1))),)
sanity-$(1) units-$(1) integration-$(1) parity-$(1) get-pip-$(1):
	@$$(call absent,$$@,$$(CORE_ABSENT_$(1)))
else
get-pip-$(1): $(CURDIR)/.venv-core-$(1)/.installed
	@hacking/provide_get_pip.sh $(CURDIR)/.venv-core-$(1)/bin/python

sanity-$(1): get-pip-$(1)
	$$(IN_COPY) -- $(CURDIR)/.venv-core-$(1)/bin/ansible-test sanity --venv --python $$(CORE_PYTHON_$(1)) --color no

units-$(1): get-pip-$(1)
	$$(IN_COPY) -- $(CURDIR)/.venv-core-$(1)/bin/ansible-test units --venv --python $$(CORE_PYTHON_$(1)) --color no --requirements

integration-$(1): get-pip-$(1)
	$$(IN_COPY) -- $(CURDIR)/.venv-core-$(1)/bin/python tests/integration/run.py --python $$(CORE_PYTHON_$(1))

parity-$(1): $(CURDIR)/.venv-core-$(1)/.installed
	$(CURDIR)/.venv-core-$(1)/bin/python -m pytest -q -p no:cacheprovider $$(PARITY)
endif
endef
$(foreach core,$(OWN_VENV_CORES),$(eval $(call core_suites,$(core))))

# 2.19 is the toolchain's own core.
sanity-2.19: sanity
units-2.19: units
integration-2.19: integration
parity-2.19: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PARITY)

# The gate role's every path (refuse, connection, wait; each with and without a record; its variables passed as facts,
# as the shipped playbook passes them) and the shipped playbook, on the oldest core: ansible-core 2.16 to 2.18 load the
# role's imports in a way 2.19 does not (issue 56, item 14), and hand a vaulted variable to the role's argument spec and
# to filters still encrypted (the vaulted record key). Part of `make test`.
ROLE_PATHS := tests/system/test_review_56_role.py tests/system/test_issue_57_role.py tests/system/test_issue_57_shapes.py
# The role with training_job_gate_stall (issue 59): its closing, never-closing and refusing paths.
STALL_ROLE_PATHS := tests/system/test_issue_59_stall.py tests/system/test_issue_59_shapes.py
ifeq ($(strip $(CORE_INTERPRETER_$(OLDEST))),)
role-paths-oldest:
	@$(call absent,$@,$(CORE_ABSENT_$(OLDEST)))
else
role-paths-oldest: $(CURDIR)/.venv-core-$(OLDEST)/.installed
	$(CURDIR)/.venv-core-$(OLDEST)/bin/python -m pytest -q -p no:cacheprovider -k "every_path or shipped or nobody or promote or vault or production_path" $(ROLE_PATHS)
	$(CURDIR)/.venv-core-$(OLDEST)/bin/python -m pytest -q -p no:cacheprovider -k "role" $(STALL_ROLE_PATHS)
endif

sanity-oldest: sanity-$(OLDEST)
units-oldest: units-$(OLDEST)
integration-oldest: integration-$(OLDEST)

# What the suites of every core share, made once before they run side by side: their venvs and pip bootstraps.
test-cores-prepare: venv get-pip $(if $(strip $(PYTHON_NEWEST)),get-pip-newest) $(foreach core,$(OWN_VENV_CORES),get-pip-$(core))

# Sanity, units, the integration targets and the in-process parity suite on every supported ansible-core (not part
# of `make test`, which runs the oldest and the newest): README.md's support table records what it found.
test-cores: venv
	@hacking/run_suites.sh --setup test-cores-prepare --jobs $(SUITE_JOBS) $(CORE_SUITES)

# ansible-test bootstraps pip in its venvs from a cached get-pip script; provide one that works offline.
get-pip: $(STAMP)
	@hacking/provide_get_pip.sh $(BIN)/python

$(STAMP_DEMO): requirements/runtime.txt requirements/demo.txt emulator/pyproject.toml
	test -x $(VENV_DEMO)/bin/python || $(PYTHON) -m venv $(VENV_DEMO)
	$(VENV_DEMO)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements/demo.txt
	touch $@

demo: $(STAMP_DEMO)
	@$(IN_COPY) -- $(VENV_DEMO)/bin/python $(CURDIR)/hacking/demo.py
	@echo "make demo: the emulator is stopped and its files removed; .venv-demo stays for the next run (rm -rf .venv-demo removes it)"

# What the suites share, made once before they run side by side: the venvs (.venv with the EE tools,
# .venv-newest when Python 3.13 is there) and ansible-test's offline pip bootstrap.
test-prepare: venv get-pip $(VENV)/.installed-ee $(VENV)/.installed-docs $(STAMP_IMPORTER) $(if $(strip $(PYTHON_NEWEST)),get-pip-newest) \
	get-pip-$(OLDEST)

# Three suites at a time on two cores, longest first (times measured in docs/architecture.md, "Which command
# for which change"): the system tests (mostly waiting on processes and the emulator, spread over
# SYSTEM_WORKERS) beside the others, each next one starting as soon as one ends.
SUITE_JOBS ?= 3
test: venv
	@hacking/run_suites.sh --setup test-prepare --jobs $(SUITE_JOBS) system-tests ee sanity-newest sanity-oldest units sanity \
		integration molecule importer units-newest units-oldest emulator-tests integration-newest integration-oldest docs \
		lint docs-lint changelog-lint ruff role-paths-oldest

# The inner loop: the unit tests under plain pytest from .venv (tests/unit/conftest.py installs the collection loader
# ansible-test would), beside the emulator tests. `make units` runs the same tests under ansible-test, in a venv of
# their own requirements (about 20 s of setup a run), for `make test`.
test-quick: venv
	@hacking/run_suites.sh --jobs 2 units-quick emulator-tests

units-quick: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 tests/unit

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

# Galaxy's and Automation Hub's import checks over the tarball built from a staged copy (hacking/check_importer.sh).
$(STAMP_IMPORTER): requirements/importer.txt
	test -x $(VENV_IMPORTER)/bin/python || $(PYTHON) -m venv $(VENV_IMPORTER)
	$(VENV_IMPORTER)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements/importer.txt
	touch $@

importer: $(STAMP_IMPORTER)
	$(IN_COPY) -- $(CURDIR)/hacking/check_importer.sh $(VENV_IMPORTER)/bin

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
