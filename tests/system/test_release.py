# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a release ships besides the code (issue 41): the changelog, the role's README, the README's sections.

* ``antsibull-changelog release``, run in a staged copy as the maintainers run it in the checkout, writes
  ``CHANGELOG.rst`` at the collection's root for galaxy.yml's version, from every fragment, and leaves no fragment.
* Once the checkout holds releases, its ``CHANGELOG.rst`` is what ``antsibull-changelog generate`` makes of
  ``changelogs/changelog.yaml`` (before the first release there is none).
* roles/training_job_gate/README.md names every variable of ``meta/argument_specs.yml`` with its default.
* README.md has the sections Automation Hub expects, and its support table agrees with meta/runtime.yml and the
  Makefile's cores.
"""

import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import BIN, ROOT, collection_plugins

ROLE = os.path.join(ROOT, "roles", "training_job_gate")


def load(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def text(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as handle:
        return handle.read()


def version():
    return load("galaxy.yml")["version"]


def staged_copy(tmp_path):
    """A fresh staged copy (``<tmp>/ansible_collections/modelarts/training``) and the environment to run tools in it."""
    base = tmp_path / "collections"
    base.mkdir()
    target = subprocess.run([os.path.join(ROOT, "hacking", "stage_collection.sh"), str(base)], check=True, capture_output=True, text=True).stdout.strip()
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update({"PATH": BIN + os.pathsep + env.get("PATH", ""), "ANSIBLE_COLLECTIONS_PATH": str(base), "ANSIBLE_HOME": str(tmp_path / "home")})
    return target, env


def changelog(args, cwd, env):
    result = subprocess.run([os.path.join(BIN, "antsibull-changelog")] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def next_version(released):
    """The version the next release takes: galaxy.yml's, or (once that was released) the patch release after it."""
    current = version()
    if current not in released:
        return current
    major, minor, patch = (int(part) for part in current.split("."))
    return "%d.%d.%d" % (major, minor, patch + 1)


def test_the_next_release_writes_changelog_rst_at_the_root_from_every_fragment(tmp_path):
    """The release as the maintainers run it: every fragment collected into changelogs/changelog.yaml and none left,
    CHANGELOG.rst at the root listing every release, each plugin under the release that brought it."""
    target, env = staged_copy(tmp_path)
    fragments_dir = os.path.join(target, "changelogs", "fragments")
    fragments = sorted(name for name in os.listdir(fragments_dir) if name.endswith((".yml", ".yaml")))
    released = load("changelogs", "changelog.yaml").get("releases") or {}
    if not released:
        assert fragments, "no changelog fragments for the first release"
        summaries = [name for name in fragments if "release_summary" in (load("changelogs", "fragments", name) or {})]
        assert summaries, "the first release has no release_summary fragment"
    upcoming = next_version(released)
    changelog(["release", "--version", upcoming], target, env)

    rst = os.path.join(target, "CHANGELOG.rst")
    assert os.path.isfile(rst), os.listdir(target)
    with open(rst, encoding="utf-8") as handle:
        written = handle.read()
    assert written.startswith("=" * 32 + "\nmodelarts.training Release Notes\n"), written[:200]
    for listed in sorted(set(released) | {upcoming}):
        assert "\nv%s\n" % listed in written, listed
    # The first release lists what it brings, plugin by plugin, from the collection's own ansible-doc.
    for name in ("modelarts_training_job_info", "training_job", "completed", "training_job_gate"):
        assert name in written, name
    with open(os.path.join(target, "changelogs", "changelog.yaml"), encoding="utf-8") as handle:
        releases = yaml.safe_load(handle)["releases"]
    assert sorted(releases[upcoming].get("fragments") or []) == fragments
    assert not [name for name in os.listdir(fragments_dir) if name.endswith((".yml", ".yaml"))], "fragments left after the release"
    changelog(["lint-changelog-yaml", "changelogs/changelog.yaml"], target, env)
    # What the release wrote is what generate makes of changelog.yaml: the check below holds after a release.
    os.rename(rst, rst + ".released")
    changelog(["generate"], target, env)
    with open(rst, encoding="utf-8") as handle:
        assert handle.read() == written


def test_changelog_rst_is_generated_from_changelog_yaml(tmp_path):
    """After a release, CHANGELOG.rst (committed at the root) is antsibull-changelog's rendering of changelog.yaml; before
    the first one there is no CHANGELOG.rst to go stale."""
    releases = load("changelogs", "changelog.yaml").get("releases") or {}
    committed = os.path.join(ROOT, "CHANGELOG.rst")
    if not releases:
        assert not os.path.exists(committed), "CHANGELOG.rst without a release in changelogs/changelog.yaml"
        return
    assert os.path.isfile(committed), "changelogs/changelog.yaml has releases %s but there is no CHANGELOG.rst" % sorted(releases)
    target, env = staged_copy(tmp_path)
    os.unlink(os.path.join(target, "CHANGELOG.rst"))
    changelog(["generate"], target, env)
    with open(os.path.join(target, "CHANGELOG.rst"), encoding="utf-8") as generated:
        assert generated.read() == text("CHANGELOG.rst"), "CHANGELOG.rst differs from `antsibull-changelog generate`: run it"


def role_readme_rows():
    """The role README's variable table: ``{variable: default cell}``."""
    rows = {}
    for line in text("roles", "training_job_gate", "README.md").splitlines():
        found = re.match(r"^\| `(training_job_gate_\w+)` \| (.*?) \|", line)
        if found:
            rows[found.group(1)] = found.group(2).strip()
    return rows


def test_the_role_readme_names_every_variable_with_its_default():
    options = load("roles", "training_job_gate", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    rows = role_readme_rows()
    assert sorted(rows) == sorted(options), "README.md and meta/argument_specs.yml differ in variables"
    defaults = load("roles", "training_job_gate", "defaults", "main.yml")
    for name, spec in options.items():
        cell = rows[name]
        if "default" not in spec:
            assert cell == "unset", (name, cell)
            assert name not in defaults, name
            continue
        assert re.fullmatch(r"`[^`]*`", cell), (name, cell)
        assert yaml.safe_load(cell.strip("`")) == spec["default"], (name, cell, spec["default"])
        # defaults/main.yml (what the role really uses) says the same.
        assert defaults[name] == spec["default"], name


def test_the_role_readme_shows_a_working_shape_of_the_role():
    readme = text("roles", "training_job_gate", "README.md")
    for section in ("## Requirements", "## Role variables", "## Example", "## License"):
        assert section in readme, section
    example = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    assert example, "no example playbook"
    play = yaml.safe_load(example[0])[0]
    assert play["roles"][0]["role"] == "modelarts.training.training_job_gate"
    assert set(play["roles"][0]["vars"]) <= set(role_readme_rows())


README_SECTIONS = ("Requirements", "Installation", "Use", "Testing", "Support", "Release notes", "Release policy", "License")


def test_the_readme_has_the_sections_automation_hub_expects():
    headings = re.findall(r"^## (.+)$", text("README.md"), re.M)
    for section in README_SECTIONS:
        assert any(heading.startswith(section) for heading in headings), (section, headings)
    readme = text("README.md")
    for needed in ("ansible-galaxy collection install modelarts.training", "ansible-galaxy collection install modelarts-training-", "requests", "jsonschema"):
        assert needed in readme, needed


def support_rows():
    """The README's support table: ``{core: controller Python}`` of each tested core."""
    rows = {}
    for line in text("README.md").splitlines():
        found = re.match(r"^\| (2\.\d+) \| [^|]*? \| Python (3\.\d+) ", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def test_the_support_table_is_what_make_test_cores_runs():
    makefile = text("Makefile")
    cores = re.search(r"^CORES := (.+)$", makefile, re.M).group(1).split()
    pythons = dict(re.findall(r"^CORE_PYTHON_(2\.\d+) := (\S+)$", makefile, re.M))
    pythons = dict((core, "3.11" if python == "$(TEST_PYTHON)" else python) for core, python in pythons.items())
    assert support_rows() == dict((core, pythons[core]) for core in cores)
    assert load("meta", "runtime.yml")["requires_ansible"] == ">=%s.0" % cores[0]
    assert load("roles", "training_job_gate", "meta", "main.yml")["galaxy_info"]["min_ansible_version"] == cores[0]
    assert re.search(r"^OLDEST := %s$" % re.escape(cores[0]), makefile, re.M)


@pytest.mark.parametrize("kind,name", [(kind, name) for kind, name in collection_plugins() if kind in ("module", "lookup")])
def test_ansible_doc_lists_the_plugins_libraries(ansible_env, kind, name):
    result = subprocess.run([os.path.join(BIN, "ansible-doc"), "--json", "-t", kind, name], env=ansible_env, capture_output=True, text=True, check=True)
    requirements = json.loads(result.stdout)[name]["doc"]["requirements"]
    assert "requests" in requirements and "jsonschema" in requirements, requirements
