# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pages a newcomer follows, run as they show them (issue 29).

docs/getting_started.md: the emulator started with the page's command, the page's exports, the page's
``first_job.yml`` run with ``ansible-playbook first_job.yml``; the output is what the page shows, short,
and the failed job's message comes first, while the registered result keeps every documented key. The
missing-library messages of getting_started.md and lookup.md, lookup.md's error lines, the documented
``validate_certs`` messages, role.md's installed-form command, event_source.md's quick start (its inventory,
the emulator variant), its controller variant and its credentials path for an EDA controller activation, and
the exchanges emulator.md says the emulator serves: each run and compared with the page.
"""

import json
import os
import re
import runpy
import signal
import socket
import subprocess
import time

import pytest
import yaml
from modelarts_emulator.client import ControlClient  # pylint: disable=import-error
from modelarts_emulator.scenario import load_file, resolve_scenario_path  # pylint: disable=import-error

from conftest import BIN, ROOT

DOCS = os.path.join(ROOT, "docs")
FAILED_JOB = "2b7e4d1c-8f3a-4e6b-a0c9-5d1e2f3a4b70"
COMPLETED_JOB = "6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60"
# A failed task's output at the default verbosity, the whole first_job.yml run included, stays below this.
OUTPUT_BOUND = 4000


def page(name):
    with open(os.path.join(DOCS, name)) as handle:
        return handle.read()


def blocks(text, language):
    return re.findall(r"```%s\n(.*?)```" % language, text, re.S)


def normalised(text):
    """A message with what changes from run to run (times, durations, request ids) replaced."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", text)
    text = re.sub(r"\b\d+\.\ds\b", "<seconds>", text)
    return re.sub(r"\[request id [0-9a-f]+\]", "[request id <id>]", text)


def pattern(documented):
    """A documented message as a regular expression: ``...`` and ``<placeholder>`` match anything."""
    parts = re.split(r"(\.\.\.|<[a-z ]+>)", normalised(documented))
    return re.compile("".join(".*?" if index % 2 else re.escape(part) for index, part in enumerate(parts)) + "$")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """The emulator started with getting_started.md's command (a free port, a private TLS folder); the page's exports."""
    text = page("getting_started.md")
    command = [line for block in blocks(text, "console") for line in block.splitlines() if line.startswith("$ modelarts-emulator ")]
    assert command == ["$ modelarts-emulator --port 8443 --tls-dir ~/.modelarts-emulator/tls"], command
    tls = str(tmp_path_factory.mktemp("ma-tls"))
    port = free_port()
    arguments = command[0].replace("8443", str(port)).replace("~/.modelarts-emulator/tls", tls).split()[2:]
    # The page's modelarts-emulator command: the emulator package `make venv` installs.
    server = subprocess.Popen(
        [os.path.join(BIN, "modelarts-emulator")] + arguments,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout.readline().strip() == "modelarts-emulator listening on https://127.0.0.1:%d" % port
        exports = {}
        found = [block for block in blocks(text, "console") if "HUAWEICLOUD_CA_BUNDLE=~/.modelarts-emulator/tls/ca.pem" in block]
        assert found, "getting_started.md exports no HUAWEICLOUD_CA_BUNDLE"
        block = found[0]
        for line in block.splitlines():
            name, _sep, value = line.partition("$ export ")[2].partition("=")
            exports[name] = value.replace("8443", str(port)).replace("~/.modelarts-emulator/tls", tls)
        yield exports
    finally:
        server.terminate()
        server.wait(timeout=30)


def environment(ansible_env, exports, **extra):
    env = dict((name, value) for name, value in ansible_env.items() if name != "ANSIBLE_PYTHON_INTERPRETER")
    env.update(exports, **extra)
    return env


def playbook(tmp_path, env, plays, *arguments):
    path = tmp_path / "playbook.yml"
    path.write_text(plays if isinstance(plays, str) else yaml.safe_dump(plays, sort_keys=False))
    command = [os.path.join(BIN, "ansible-playbook"), str(path)] + list(arguments)
    return subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=600, check=False)


def first_job_scenario():
    """The demo jobs with resnet50-flowers-train moving on one phase per poll (as `make demo` serves it), the others as
    shipped: the phases the page's wait shows no longer depend on how long after the emulator's start this test begins
    (its wait takes four polls, over 20 s: by then bert-intent-train has failed, as on the page)."""
    scenario = runpy.run_path(os.path.join(ROOT, "hacking", "demo.py"))["demo_scenario"]()
    # The shipped jobs by position: the scenario holds names used twice (resnet-nightly), and v1 jobs have no "id".
    shipped = load_file(resolve_scenario_path("demo"))["jobs"]
    scenario["jobs"] = [job if job.get("name") == "resnet50-flowers-train" else original for job, original in zip(scenario["jobs"], shipped)]
    return scenario


def test_getting_started_first_job_prints_the_message_first_and_briefly(started, ansible_env, tmp_path):
    text = page("getting_started.md")
    first_job = re.search(r"Save this playbook as `first_job.yml`:\n\n```yaml\n(.*?)```", text, re.S).group(1)
    (tmp_path / "first_job.yml").write_text(first_job)
    # The registered result, kept for the checks below by a second playbook file that imports the page's.
    saved = tmp_path / "bert.json"
    (tmp_path / "run.yml").write_text(
        yaml.safe_dump(
            [
                {"ansible.builtin.import_playbook": "first_job.yml"},
                {
                    "hosts": "localhost",
                    "gather_facts": False,
                    "tasks": [{"ansible.builtin.copy": {"content": "{{ bert | to_json }}", "dest": str(saved), "mode": "0600"}}],
                },
            ]
        )
    )
    env = environment(ansible_env, started)
    control = ControlClient(started["HUAWEICLOUD_MODELARTS_ENDPOINT"], ca_file=started["HUAWEICLOUD_CA_BUNDLE"])
    control.reset(scenario=first_job_scenario())
    run = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), "first_job.yml"], env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=600, check=False
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-3000:]
    assert len(output) < OUTPUT_BOUND, "%d characters at the default verbosity:\n%s" % (len(output), output[:3000])

    shown = re.search(r"```console\n\$ ansible-playbook first_job.yml\n(.*?)```", text, re.S).group(1)
    expected = json.loads("{%s}" % re.search(r'TASK \[Show why it failed\][^\n]*\nok: \[localhost\] => \{\n(\s+"msg": ".*")\n\}', shown).group(1))["msg"]
    said = json.loads("{%s}" % re.search(r'TASK \[Show why it failed\][^\n]*\nok: \[localhost\] => \{\n(\s+"msg": ".*")\n\}', run.stdout).group(1))["msg"]
    assert normalised(said) == normalised(expected)
    # The message comes first: the failed task prints one short line, and the next line naming the job is the message.
    failing = re.search(r"TASK \[Look at a job that failed, without failing the play\] \**\n(.*?)\n\n", run.stdout, re.S).group(1)
    assert failing == "ok: [localhost]", failing
    first_mention = next(line for line in run.stdout.splitlines() if "bert-intent-train" in line)
    assert first_mention.strip().startswith('"msg": "stopped waiting for Completed')
    completed = re.search(r'"msg": "(resnet50-flowers-train is Completed after [0-9.]+s of training; phases seen: [A-Za-z >-]+ -> Completed)"', run.stdout)
    assert completed, run.stdout
    assert re.search(r'"msg": "resnet50-flowers-train is Completed after [0-9.]+s of training; phases seen: [A-Za-z >-]+ -> Completed"', shown)

    # The registered result still holds every documented key of a failed task, whole.
    rerun = subprocess.run(
        [os.path.join(BIN, "ansible-playbook"), "run.yml"], env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=600, check=False
    )
    assert rerun.returncode == 0, (rerun.stdout + rerun.stderr)[-3000:]
    bert = json.loads(saved.read_text())
    assert normalised(bert["msg"]) == normalised(expected)
    assert len(bert["job_messages"]) == 1 and normalised(expected).endswith(": " + normalised(bert["job_messages"][0]))
    assert bert["training_job"] == bert["training_jobs"][0]
    item = bert["training_job"]
    assert item["id"] == FAILED_JOB and item["phase"] == "Failed" and item["failed"] is True
    assert item["details"]["metadata"]["name"] == "bert-intent-train" and item["details"]["status"]["phase"] == "Failed"
    assert len(item["diagnostics"]["tasks"][0]["log_tail"]) == 30 and item["diagnostics"]["events"]
    assert item["phase_history"] and "waited_seconds" in item and "polls" in item


BLOCKER = """import os, sys
for name in os.environ.get("MODELARTS_TEST_BLOCK", "").split(","):
    if name:
        sys.modules[name] = None  # import fails as if the library were not installed
"""


def blocked(tmp_path, library):
    """Environment additions that make ``library`` fail to import in ansible-playbook's Python."""
    folder = tmp_path / "block"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(BLOCKER)
    return {"PYTHONPATH": str(folder), "MODELARTS_TEST_BLOCK": library}


def module_play(**options):
    return [{"hosts": "localhost", "gather_facts": False, "tasks": [{"modelarts.training.modelarts_training_job_info": options}]}]


def lookup_play(*arguments):
    return [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "tasks": [{"ansible.builtin.debug": {"msg": "{{ lookup('modelarts.training.training_job', %s) }}" % ", ".join(arguments)}, "ignore_errors": True}],
        }
    ]


def lookup_errors(output):
    prefix = "The lookup plugin 'modelarts.training.training_job' failed: "
    return [normalised(line.split(prefix, 1)[1].rstrip('"}')) for line in output.splitlines() if line.startswith("fatal:") and prefix in line]


def test_missing_library_messages_are_the_pages(started, ansible_env, tmp_path):
    getting_started = " ".join(page("getting_started.md").split())
    module_documented = re.search(r"A missing library fails the module's task with `([^`]+)`", getting_started).group(1)
    lookup_documented = re.search(r"and the lookup with `([^`]+)`", getting_started).group(1)
    env = environment(ansible_env, started, **blocked(tmp_path, "requests"))
    module = playbook(tmp_path, env, module_play(training_job_id=COMPLETED_JOB))
    message = json.loads(next(line for line in module.stdout.splitlines() if line.startswith("fatal:")).partition(" => ")[2])["msg"]
    assert pattern(module_documented).match(message), (module_documented, message)
    lookup = playbook(tmp_path, env, lookup_play("'%s'" % COMPLETED_JOB))
    assert lookup_errors(lookup.stdout) == [lookup_documented]
    # lookup.md lists both libraries' messages.
    documented = blocks(page("lookup.md").split("## Errors", 1)[1], "text")[0].splitlines()
    assert lookup_documented in documented
    jsonschema = playbook(tmp_path, environment(ansible_env, started, **blocked(tmp_path, "jsonschema")), lookup_play("'%s'" % COMPLETED_JOB))
    assert lookup_errors(jsonschema.stdout)[0] in documented


def test_lookup_error_lines_are_the_pages(started, ansible_env, tmp_path):
    documented = blocks(page("lookup.md").split("## Errors", 1)[1], "text")[0].splitlines()
    plays = lookup_play("'00000000-dead-4bee-8000-000000000000'")
    plays[0]["tasks"] += lookup_play("'%s'" % FAILED_JOB, "wait=true")[0]["tasks"]
    plays[0]["tasks"] += lookup_play("'%s'" % COMPLETED_JOB, "wait=true", "wait_for='Done'")[0]["tasks"]
    plays[0]["tasks"] += lookup_play("'%s'" % COMPLETED_JOB, "field='phase'", "validate_certs='ture'")[0]["tasks"]
    run = playbook(tmp_path, environment(ansible_env, started), plays)
    errors = lookup_errors(run.stdout)
    assert len(errors) == 4, run.stdout[-3000:]
    for line, error in zip(documented[:3], errors[:3]):
        assert pattern(line).match(error), (line, error)
    # The validate_certs messages troubleshooting.md and lookup.md quote.
    assert errors[3] == "training_job lookup: validate_certs (keyword) must be a boolean (true or false), got 'ture'"
    troubleshooting = page("troubleshooting.md")
    assert "`(keyword)` from the lookup (after `training_job lookup: `)" in troubleshooting
    variable = playbook(tmp_path, environment(ansible_env, started), lookup_play("'%s'" % COMPLETED_JOB), "-e", "modelarts_validate_certs=ture")
    assert lookup_errors(variable.stdout) == [
        re.search(r"`(training_job lookup: validate_certs \(variable modelarts_validate_certs\)[^`]*)`", " ".join(page("lookup.md").split())).group(1)
    ]
    task = playbook(
        tmp_path,
        environment(ansible_env, started),
        module_play(training_job_id=COMPLETED_JOB, validate_certs="ture"),
    )
    message = json.loads(next(line for line in task.stdout.splitlines() if line.startswith("fatal:")).partition(" => ")[2])["msg"]
    documented_task = re.search(r"a module's task option is checked by Ansible first: `([^`]+)`", troubleshooting).group(1)
    assert pattern(documented_task).match(message), (documented_task, message)


def test_role_page_runs_the_gate_playbook_in_its_installed_form(started, ansible_env, tmp_path):
    """role.md's CI step, from a folder that is not a checkout: the playbook by its collection name."""
    command = [line.strip()[2:] for line in page("role.md").splitlines() if "ansible-playbook" in line and "gate_deployment" in line]
    assert command == ["ansible-playbook modelarts.training.gate_deployment -e @ci/gate-vars.yml"], command
    (tmp_path / "ci").mkdir()
    release_dir = tmp_path / "releases"
    (tmp_path / "ci" / "gate-vars.yml").write_text(
        yaml.safe_dump({"training_job_ids": [COMPLETED_JOB], "release_name": "docs", "release_dir": str(release_dir), "gate_poll": 1, "gate_timeout": 120})
    )
    run = subprocess.run(
        [os.path.join(BIN, command[0].split()[0])] + command[0].split()[1:],
        env=environment(ansible_env, started),
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert (release_dir / "release-docs.json").exists()


# -- docs/event_source.md --------------------------------------------------------------------------------------------


def quick_start():
    """(inventory.yml, the emulator variant's vars.yml, the command) as event_source.md's quick start shows them."""
    consoles = blocks(page("event_source.md").split("## Quick start", 1)[1], "console")
    inventory = re.search(r"\$ cat inventory.yml\n(.*?)\n\$ ", consoles[0], re.S).group(1) + "\n"
    emulator_variant = next(block for block in consoles if "stop_when_done: true" in block)
    variables = re.search(r"\$ cat vars.yml\n(.*?)\n\$ ", emulator_variant, re.S).group(1) + "\n"
    command = re.search(r"^\$ (ansible-rulebook .*)$", emulator_variant, re.M).group(1).split()
    return inventory, variables, command


def rulebook(command, env, cwd):
    # HOME in the test's directory: the shipped rulebook keeps its state file under ~/.local/state by default.
    env = dict(env, HOME=str(cwd))
    return subprocess.run([os.path.join(BIN, command[0])] + command[1:], env=env, cwd=str(cwd), capture_output=True, text=True, timeout=300, check=False)


def test_event_source_quick_start_runs_against_the_emulator(started, ansible_env, tmp_path):
    inventory, variables, command = quick_start()
    (tmp_path / "inventory.yml").write_text(inventory)
    (tmp_path / "vars.yml").write_text(variables)
    run = rulebook(command, environment(ansible_env, started, TMPDIR=str(tmp_path)), tmp_path)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    releases = list((tmp_path / "modelarts-releases").glob("release-*.json"))
    assert len(releases) == 1 and COMPLETED_JOB in releases[0].read_text(), run.stdout[-3000:]


def test_event_source_fit_to_ship_rulebook_deploys_the_better_model_and_says_why_not_the_worse(started, ansible_env, tmp_path):
    """event_source.md, "Deploy only a fit model": its rulebook as the page shows it, with the quick start's inventory,
    against the emulator's demo jobs: resnet50-flowers-v3 (better than production) is deployed, resnet50-flowers-v2
    (worse) is not, and the notification is the page's line.  A tag watch never ends: the rulebook is stopped once both
    events were acted on."""
    section = page("event_source.md").split("## Deploy only a fit model", 1)[1].split("\n## ", 1)[0]
    (book,) = blocks(section, "yaml")
    (console,) = blocks(section, "console")
    documented = next(line for line in console.splitlines() if line.startswith("NOT FIT TO SHIP"))
    inventory, _variables, _command = quick_start()
    (tmp_path / "inventory.yml").write_text(inventory)
    (tmp_path / "fit_to_ship.yml").write_text(book)
    env = dict(environment(ansible_env, started, TMPDIR=str(tmp_path)), HOME=str(tmp_path), PYTHONUNBUFFERED="1")
    command = [os.path.join(BIN, "ansible-rulebook"), "--rulebook", "fit_to_ship.yml", "-i", "inventory.yml"]
    assert re.search(r"^\$ ansible-rulebook --rulebook fit_to_ship.yml -i inventory.yml$", console, re.M)
    releases = tmp_path / "modelarts-releases"
    out = open(tmp_path / "rulebook.out", "w")
    process = subprocess.Popen(command, env=env, cwd=str(tmp_path), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _tick in range(1200):
            text = (tmp_path / "rulebook.out").read_text()
            if "NOT FIT TO SHIP" in text and list(releases.glob("release-*.json")) and "Report the release" in text:
                break
            if process.poll() is not None:
                break
            time.sleep(0.25)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        out.close()
    text = (tmp_path / "rulebook.out").read_text()
    notified = [" ".join(line.split()) for line in text.splitlines() if "NOT FIT TO SHIP" in line and "msg" not in line]
    notified = notified or [" ".join(match.split()) for match in re.findall(r'"msg": "(NOT FIT TO SHIP[^"]*)"', text)]
    assert notified and all(pattern(documented).match(line.strip()) for line in notified), (notified, text[-3000:])
    written = list(releases.glob("release-*.json"))
    assert len(written) == 1, text[-3000:]
    assert "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d52" in written[0].read_text() and "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d51" not in written[0].read_text()
    assert "5b1d7e2a-3c4f-4a6b-8d9e-0f1a2b3c4d51" not in (releases / "deployed-training-jobs").read_text()


def test_event_source_controller_variant_passes_what_the_gate_playbook_reads():
    variant = page("event_source.md").split("### Variant for AWX", 1)[1]
    rule = yaml.safe_load(blocks(variant, "yaml")[0])[0]
    extra_vars = rule["action"]["run_job_template"]["job_args"]["extra_vars"]
    with open(os.path.join(ROOT, "playbooks", "gate_deployment.yml")) as handle:
        reads = yaml.safe_load(handle)[0]["vars"]
    assert set(extra_vars) <= set(reads), (sorted(extra_vars), sorted(reads))


def test_eda_controller_credential_reaches_the_shipped_rulebook(emulator, ansible_env, tmp_path):
    """event_source.md's path for an activation: the AWX type's injectors with eda.filename, the shipped rulebook as is."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment  # pylint: disable=import-outside-toplevel

    text = " ".join(page("event_source.md").split())
    assert "changing `tower.filename` to `eda.filename`" in text
    with open(os.path.join(ROOT, "extensions", "awx", "huaweicloud_credential_type.yml")) as handle:
        injectors = yaml.safe_load(handle.read().replace("tower.filename", "eda.filename"))["injectors"]
    with open(emulator.ca_file) as handle:
        inputs = dict(emulator.connection("aksk"), ca_bundle=handle.read())
    inputs = {
        "region": inputs["region"],
        "project_id": inputs["project_id"],
        "access_key": inputs["access_key"],
        "secret_key": inputs["secret_key"],
        "endpoint": inputs["endpoint"],
        "iam_endpoint": inputs["iam_endpoint"],
        "ca_bundle": inputs["ca_bundle"],
    }
    # As the controller injects a credential: each file injector's file, then the env injectors rendered in a sandbox.
    sandbox = ImmutableSandboxedEnvironment()
    files = {}
    for label, template in injectors["file"].items():
        path = tmp_path / ("credential-" + label.split(".", 1)[1])
        path.write_text(sandbox.from_string(template).render(**inputs))
        files[label.split(".", 1)[1]] = str(path)
    namespace = dict(inputs, eda={"filename": files})
    injected = dict((name, sandbox.from_string(template).render(**namespace)) for name, template in injectors["env"].items())
    assert injected["HUAWEICLOUD_SDK_SK"] == emulator.sk and injected["HUAWEICLOUD_CA_BUNDLE"] == files["ca_bundle"]

    job = "docs-eda-%s" % os.urandom(6).hex()
    emulator.add_jobs([{"id": job, "name": "docs-eda", "timeline": ["Running", "Completed"]}])
    inventory, _variables, command = quick_start()
    (tmp_path / "inventory.yml").write_text(inventory)
    (tmp_path / "vars.yml").write_text(yaml.safe_dump({"training_job_ids": [job], "poll_interval": 0.3, "stop_when_done": True}))
    # Credentials only in the variables the credential injects: ansible_env holds no HUAWEICLOUD_* of its own.
    env = environment(ansible_env, injected, TMPDIR=str(tmp_path))
    assert [name for name in env if name.startswith("HUAWEICLOUD_") and name not in injected] == ["HUAWEICLOUD_METADATA_ENDPOINT"]
    run = rulebook(command, env, tmp_path)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    releases = list((tmp_path / "modelarts-releases").glob("release-*.json"))
    assert len(releases) == 1 and job in releases[0].read_text(), run.stdout[-3000:]


# -- docs/emulator.md ------------------------------------------------------------------------------------------------


def test_emulator_differences_deny_no_call_the_emulator_serves(emulator):
    """Every IAM/STS exchange emulator.md lists is served (not the gateway's 404), and "Differences" denies none of them."""
    import ssl  # pylint: disable=import-outside-toplevel
    import urllib.error  # pylint: disable=import-outside-toplevel
    import urllib.request  # pylint: disable=import-outside-toplevel

    text = page("emulator.md")
    exchanges = text.split("## Credential exchanges", 1)[1].split("\n## ", 1)[0]
    calls = re.findall(r"`(POST) (/v[0-9.]+/[^`\s]+)`", exchanges)
    assert ("POST", "/v3.0/OS-CREDENTIAL/securitytokens") in calls, calls
    context = ssl.create_default_context(cafile=emulator.ca_file)
    for method, path in calls:
        request = urllib.request.Request(emulator.url + path, data=b"{}", method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:  # nosec - loopback
                body = response.read()
        except urllib.error.HTTPError as error:
            body = error.read()
        assert b"APIG.0101" not in body, (path, body)
    differences = text.split("## Differences from the real service", 1)[1].split("\n## ", 1)[0]
    for _method, path in calls:
        root = "/".join(path.split("/")[:3])  # /v3.0/OS-CREDENTIAL
        for sentence in re.split(r"(?<=\.)\s", " ".join(differences.split())):
            assert not (root in sentence and re.search(r"\bno\b", sentence) and "mints" not in sentence), sentence


# -- docs/module.md: waiting in the background -----------------------------------------------------------------------

BASELINE_JOB = "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81"  # resnet50-flowers-train-baseline: Completed in the demo scenario


def test_module_page_async_wait_runs_with_home_elsewhere_given_the_pages_async_dir(started, ansible_env, tmp_path):
    """module.md's async example, run with ``HOME`` in a folder that is not the account's home directory: with the
    page's ``ANSIBLE_ASYNC_DIR`` it collects the wait; without it, async_status fails as the page says."""
    section = page("module.md").split("### Waiting in the background: `async`", 1)[1].split("\n## ", 1)[0]
    play = {"hosts": "localhost", "gather_facts": False, "tasks": yaml.safe_load(blocks(section, "yaml")[0])}
    play["tasks"][-1]["delay"] = 1  # the page polls every 30 s; the job is Completed already
    exports = [line for line in blocks(section, "console")[0].splitlines() if line.startswith("$ export ")]
    assert exports == ['$ export ANSIBLE_ASYNC_DIR="$HOME/.ansible_async"'], exports
    home = tmp_path / "work-home"
    home.mkdir()
    env = environment(ansible_env, started, HOME=str(home), ANSIBLE_PYTHON_INTERPRETER=ansible_env["ANSIBLE_PYTHON_INTERPRETER"])
    del env["ANSIBLE_ASYNC_DIR"]
    documented = "could not find job"
    assert documented in " ".join(section.split())
    without = playbook(tmp_path, env, [play], "-e", "job_id=%s" % BASELINE_JOB)
    assert without.returncode != 0 and documented in without.stdout, (without.stdout + without.stderr)[-3000:]
    env["ANSIBLE_ASYNC_DIR"] = os.path.join(str(home), ".ansible_async")
    given = playbook(tmp_path, env, [play], "-e", "job_id=%s" % BASELINE_JOB)
    assert given.returncode == 0, (given.stdout + given.stderr)[-3000:]
    assert re.search(r"failed=0 ", given.stdout) and os.listdir(env["ANSIBLE_ASYNC_DIR"]), given.stdout[-3000:]


# -- docs/getting_started.md: one place for the module and the lookup -------------------------------------------------


def test_getting_started_group_variables_serve_the_module_and_the_lookup(started, ansible_env, tmp_path):
    """The page's group_vars file and play, the vaulted values given as extra variables: the module (through the play's
    module_defaults) and the lookup (by itself) read the same variables, and no AK/SK is exported."""
    section = page("getting_started.md").split("## Set the connection once", 1)[1].split("\n## ", 1)[0]
    group_vars, plays = blocks(section, "yaml")
    assert group_vars.startswith("# group_vars/all/modelarts.yml")
    (tmp_path / "group_vars" / "all").mkdir(parents=True)
    (tmp_path / "group_vars" / "all" / "modelarts.yml").write_text(group_vars)
    vaulted = {
        "vault_modelarts_project_id": started["HUAWEICLOUD_SDK_PROJECT_ID"],
        "vault_huaweicloud_ak": started["HUAWEICLOUD_SDK_AK"],
        "vault_huaweicloud_sk": started["HUAWEICLOUD_SDK_SK"],
    }
    (tmp_path / "vault.yml").write_text(yaml.safe_dump(vaulted))
    # The endpoints and the CA stay exported (the page's emulator settings); the credentials come from the variables only.
    exports = dict((name, value) for name, value in started.items() if name not in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "HUAWEICLOUD_SDK_PROJECT_ID"))
    env = environment(ansible_env, exports)
    assert not [name for name in env if name.startswith("HUAWEICLOUD_SDK_") and name.endswith(("_AK", "_SK"))]
    run = playbook(tmp_path, env, plays, "-e", "@vault.yml")
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-3000:]
    assert re.search(r'"msg": "deploying 4c8e2a10-7b3d-4f5e-9a1c-2d3e4f5a6b02"', run.stdout), output[-3000:]
    assert "[WARNING]" not in output, output[-3000:]
    # Without the play's module_defaults the module has no credentials, as the page says.
    bare = yaml.safe_load(plays)
    del bare[0]["module_defaults"]
    refused = playbook(tmp_path, env, bare, "-e", "@vault.yml")
    documented = re.search(r"fails with `([^`]+)`", " ".join(section.split())).group(1)
    assert refused.returncode != 0 and documented in refused.stdout, (refused.stdout + refused.stderr)[-3000:]


# -- every link between the pages ----------------------------------------------------------------------------------


def slug(heading):
    """The anchor GitHub and the docsite (MyST, ``myst_heading_anchors``) give a Markdown heading."""
    text = re.sub(r"[`*_]{2,}|`", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found, seen = set(), {}
    in_code = False
    with open(path) as handle:
        for line in handle:
            if line.startswith("```"):
                in_code = not in_code
            elif not in_code and re.match(r"#{1,6} ", line):
                base = slug(line.lstrip("#"))
                count = seen.get(base, 0)
                found.add(base if not count else "%s-%d" % (base, count))
                seen[base] = count + 1
    return found


MARKDOWN_PAGES = sorted(
    [os.path.join(DOCS, name) for name in os.listdir(DOCS) if name.endswith(".md")]
    + [os.path.join(ROOT, name) for name in ("README.md", "CONTRIBUTING.md", os.path.join("benchmarks", "README.md"), os.path.join("emulator", "README.md"))]
    + [os.path.join(ROOT, "roles", "training_job_gate", "README.md")]
)


@pytest.mark.parametrize("path", MARKDOWN_PAGES, ids=[os.path.relpath(path, ROOT) for path in MARKDOWN_PAGES])
def test_every_link_between_the_pages_reaches_a_file_and_a_heading(path):
    """A relative link names a file of the checkout, and its ``#anchor`` a heading of that page."""
    with open(path) as handle:
        text = re.sub(r"```.*?```", "", handle.read(), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        name, _sep, anchor = target.partition("#")
        linked = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
        if not os.path.exists(linked):
            broken.append("%s: no such file" % target)
        elif anchor and linked.endswith(".md") and anchor not in anchors(linked):
            broken.append("%s: no such heading" % target)
    assert not broken, broken


def test_readme_and_contributing_state_the_same_measured_time_of_make_test_quick():
    """Issue 60, item 7: the time `make test-quick` takes is one measurement (a fresh clone, two idle cores, the first
    `make venv` counted apart), stated alike in README and CONTRIBUTING; a change of one without the other fails."""
    stated = {}
    for name in ("README.md", "CONTRIBUTING.md"):
        with open(os.path.join(ROOT, name)) as handle:
            text = " ".join(handle.read().split())
        quick = re.search(r"(\d+) s on a fresh clone on an idle two-core machine \((\d+-\d+) s over three runs", text) or re.search(
            r"On a fresh clone on an idle two-core machine it took (\d+) s \((\d+-\d+) s over three runs", text
        )
        venv = re.search(r"the first `make venv`, which took (\d+) s more with pip's cache empty", text)
        assert quick and venv, "%s states the measured time of make test-quick and of the first make venv" % name
        stated[name] = (quick.groups(), venv.group(1))
    assert stated["README.md"] == stated["CONTRIBUTING.md"], stated
