# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The images `make ee` builds, run the way users run them, against the emulator on this machine.

hacking/check_ee.sh builds the images and runs this file with:

* ``MODELARTS_EE_IMAGE``: the execution environment (ansible-navigator, AWX, Automation Platform);
* ``MODELARTS_DE_IMAGE``: the decision environment (ansible-rulebook);
* ``MODELARTS_EE_RUN_ID``: the label value of every container started here (removed at the end);
* ``CONTAINERS_CONF``: the Podman settings (hacking/ee/containers.conf).

Without the two images only the credential type's own checks run. The emulator listens on 127.0.0.1 only and the
containers share the host's network to reach it; its CA is mounted into them.
"""

import json
import os
import re
import runpy
import shlex
import shutil
import ssl
import subprocess
import sys
import tempfile
import urllib.request
import uuid

import pytest
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment
from modelarts_emulator.launcher import running_emulator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BIN = os.path.dirname(sys.executable)
NAVIGATOR = os.path.join(BIN, "ansible-navigator")
PLAYBOOK = os.path.join(ROOT, "playbooks", "gate_deployment.yml")
CREDENTIAL_TYPE = os.path.join(ROOT, "extensions", "awx", "huaweicloud_credential_type.yml")
EE_IMAGE = os.environ.get("MODELARTS_EE_IMAGE")
DE_IMAGE = os.environ.get("MODELARTS_DE_IMAGE")
RUN_ID = os.environ.get("MODELARTS_EE_RUN_ID") or uuid.uuid4().hex[:12]
LABEL = "modelarts.training.ee-test=" + RUN_ID

GOOD_V2 = "6a0c7f9e-3d2b-4c18-9e5a-1f2d3c4b5a60"  # resnet50-flowers-train: completes ~15 s after the emulator starts
FAILING_V2 = "2b7e4d1c-8f3a-4e6b-a0c9-5d1e2f3a4b70"  # bert-intent-train: fails with OOMKilled
GOOD_V1 = {"job_id": 10, "version_id": 12}  # legacy-mnist-train: completes
COMPLETED_V2 = "9d3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a81"  # resnet50-flowers-train-baseline: Completed from the start

# ansible-runner's event stream, which ansible-navigator's stdout mode leaves in the output when it is
# not a terminal: "\x1b[K<base64>\x1b[<n>D" chunks followed by "\x1b[K".
RUNNER_EVENT = re.compile(r"\x1b\[K(?:[A-Za-z0-9+/=]+\x1b\[\d+D)+\x1b\[K|\x1b\[K")

# The tests that run the images; the credential type's own checks run without them.
needs_images = pytest.mark.skipif(not (EE_IMAGE and DE_IMAGE), reason="MODELARTS_EE_IMAGE and MODELARTS_DE_IMAGE name no images: run `make ee`")


@pytest.fixture(scope="module")
def emulator():
    """The demo jobs over HTTPS on 127.0.0.1; the containers started here are removed afterwards."""
    with running_emulator(scenario="demo", tls=True) as emu:
        yield emu
    ids = subprocess.run(["podman", "ps", "-a", "-q", "--filter", "label=" + LABEL], capture_output=True, text=True, check=False).stdout.split()
    if ids:
        subprocess.run(["podman", "rm", "-f"] + ids, capture_output=True, check=False)


@pytest.fixture
def shared_dir():
    """A directory mounted into a container at the same path, writable by its user (uid 1000)."""
    with tempfile.TemporaryDirectory(prefix="modelarts-ee-") as path:
        os.chmod(path, 0o777)  # nosec - a temporary test directory
        yield path


def clean(text):
    """Output without ansible-runner's event stream."""
    return RUNNER_EVENT.sub("", text)


def mount(path):
    """A volume that shows ``path`` at the same path in the container."""
    return "%s:%s:Z" % (path, path)


def navigator_run(image, job_env, extra_vars, mounts):
    """``ansible-navigator run`` the gate playbook in ``image`` with exactly ``job_env`` added; return (rc, output).

    Nothing of this process's environment reaches the container except ``job_env`` (through --penv)
    and ANSIBLE_PYTHON_INTERPRETER (ansible-navigator passes every ANSIBLE_* variable on). It runs in
    a directory of its own, which ansible-navigator mounts into the container too.
    """
    workdir = tempfile.mkdtemp(prefix="modelarts-ee-navigator-")
    command = [NAVIGATOR, "run", PLAYBOOK, "--mode", "stdout", "--container-engine", "podman", "--execution-environment-image", image]
    command += ["--pull-policy", "never", "--playbook-artifact-enable", "false", "--log-file", os.path.join(workdir, "navigator.log")]
    command += ["--container-options=--network=host", "--container-options=--label=" + LABEL]
    for path in mounts:
        command += ["--execution-environment-volume-mounts", mount(path)]
    for name in sorted(job_env):
        command += ["--pass-environment-variable", name]
    command += ["-i", "localhost,", "-c", "local", "-e", json.dumps(extra_vars)]
    env = {name: value for name, value in os.environ.items() if not name.startswith(("ANSIBLE_", "HUAWEICLOUD_"))}
    env.update(job_env, ANSIBLE_PYTHON_INTERPRETER="auto_silent")
    try:
        result = subprocess.run(command, env=env, cwd=workdir, capture_output=True, text=True, timeout=600, check=False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    output = clean(result.stdout + result.stderr)
    print(output)
    return result.returncode, output


def podman_run(image, command, env=None, mounts=(), workdir=None, timeout=300):
    """``podman run --rm`` a command in ``image`` on the host's network; return the completed process."""
    args = ["podman", "run", "--rm", "--network=host", "--label", LABEL, "--name", "modelarts-ee-test-" + uuid.uuid4().hex[:12]]
    for path in mounts:
        args += ["-v", mount(path)]
    for name, value in sorted((env or {}).items()):
        args += ["-e", "%s=%s" % (name, value)]
    if workdir:
        args += ["-w", workdir]
    result = subprocess.run(args + [image] + command, capture_output=True, text=True, timeout=timeout, check=False)
    print(result.stdout + result.stderr)
    return result


def gate_vars(release_dir, release, job_ids, v1_jobs=()):
    return {
        "training_job_ids": list(job_ids),
        "training_v1_jobs": list(v1_jobs),
        "release_name": release,
        "release_dir": release_dir,
        "gate_poll": 1,
        "gate_timeout": 120,
    }


# The demo ----------------------------------------------------------------------------------------------


def demo_by_polls():
    """The demo's jobs as `make demo` serves them (hacking/demo.py): each timed step lasting one poll, not its seconds."""
    return runpy.run_path(os.path.join(ROOT, "hacking", "demo.py"))["demo_scenario"]()


@needs_images
def test_demo_gate_opens_and_closes_through_ansible_navigator(emulator, shared_dir):
    """make demo's two runs, in the EE: the gate waits for two jobs and opens, then a failed job keeps it closed."""
    env = emulator.env("aksk")
    mounts = [os.path.dirname(emulator.ca_file), shared_dir]
    # The demo's jobs with lifecycles that move one phase per poll instead of per second: what the wait sees no
    # longer depends on how long a container takes to start on a loaded machine.
    emulator.reset(scenario=demo_by_polls())

    rc, output = navigator_run(EE_IMAGE, env, gate_vars(shared_dir, "demo-1", [GOOD_V2], [GOOD_V1]), mounts)
    assert rc == 0, output[-4000:]
    with open(os.path.join(shared_dir, "release-demo-1.json")) as handle:
        manifest = json.load(handle)
    assert [model["job_name"] for model in manifest["models"]] == ["resnet50-flowers-train", "legacy-mnist-train"]
    assert manifest["models"][0]["model_path"] == "obs://ml-team-bucket/output/resnet50-flowers-train/"
    assert "Creating -> Pending -> Running -> Completed" in output

    rc, output = navigator_run(EE_IMAGE, env, gate_vars(shared_dir, "demo-2", [GOOD_V2, FAILING_V2], [GOOD_V1]), mounts)
    assert rc != 0, output[-4000:]
    assert "OOMKilled" in output
    assert not os.path.exists(os.path.join(shared_dir, "release-demo-2.json"))


# ansible-doc -------------------------------------------------------------------------------------------


def checkout_plugins():
    """(type, FQCN) of every plugin and role in the checkout, found from the files themselves."""
    plugins = []
    for kind, directory, suffix in (("module", "modules", ".py"), ("lookup", "lookup", ".py"), ("filter", "filter", ".yml"), ("test", "test", ".yml")):
        path = os.path.join(ROOT, "plugins", directory)
        for name in sorted(os.listdir(path)) if os.path.isdir(path) else []:
            if name.endswith(suffix) and not name.startswith("_") and name != "__init__.py":
                plugins.append((kind, "modelarts.training." + name[: -len(suffix)]))
    for name in sorted(os.listdir(os.path.join(ROOT, "roles"))):
        plugins.append(("role", "modelarts.training." + name))
    return plugins


@needs_images
def test_ansible_doc_shows_every_plugin_and_role():
    """ansible-doc in the EE documents every module, lookup, Jinja test and role, and lists no other."""
    plugins = checkout_plugins()
    assert ("test", "modelarts.training.completed") in plugins and ("module", "modelarts.training.modelarts_training_job_info") in plugins
    kinds = sorted({kind for kind, name in plugins})
    script = ["set -e"]
    for kind, name in plugins:
        script.append("echo '=== %s %s'; ansible-doc -t %s %s" % (kind, name, kind, name))
    for kind in kinds:
        script.append("echo '=== list %s'; ansible-doc -t %s -l modelarts.training --json" % (kind, kind))
    result = podman_run(EE_IMAGE, ["bash", "-c", "\n".join(script)])
    assert result.returncode == 0, result.stderr[-4000:]
    sections = {}
    for chunk in result.stdout.split("=== ")[1:]:
        title, body = chunk.split("\n", 1)
        sections[title] = body
    for kind, name in plugins:
        body = sections["%s %s" % (kind, name)]
        assert name in body or name.rpartition(".")[2] in body, (kind, name, body[:500])
        assert len(body.splitlines()) > 5, (kind, name, body)
    for kind in kinds:
        listed = sorted(json.loads(sections["list " + kind]))
        assert listed == sorted(name for plugin_kind, name in plugins if plugin_kind == kind), kind


@needs_images
def test_event_source_documentation_in_the_decision_environment():
    """ansible-doc has no type for event sources (its -t takes no event_source), so read DOCUMENTATION as EDA tools do."""
    path = "/usr/share/ansible/collections/ansible_collections/modelarts/training/extensions/eda/plugins/event_source/training_job_phase.py"
    code = (
        "import runpy, yaml; "
        "source = runpy.run_path(%r); doc = yaml.safe_load(source['DOCUMENTATION']); yaml.safe_load(source['EXAMPLES']); "
        "print(doc['short_description']); print(' '.join(sorted(doc['options'])))" % path
    )
    script = "ansible-doc -t event_source modelarts.training.training_job_phase && exit 9; python3.11 -c %s" % shlex.quote(code)
    result = podman_run(DE_IMAGE, ["bash", "-c", script])
    assert result.returncode == 0, result.stderr[-4000:]
    assert "invalid choice: 'event_source'" in result.stderr
    assert "training_job_ids" in result.stdout and "interval" in result.stdout


# The AWX credential type -------------------------------------------------------------------------------


def load_credential_type():
    with open(CREDENTIAL_TYPE) as handle:
        return yaml.safe_load(handle)


class _Namespace:
    """AWX's ``tower`` template namespace (``tower.filename.<label>``)."""


def inject(credential_type, inputs, private_dir):
    """The environment AWX gives a job for a credential with ``inputs``, its files written under ``private_dir``.

    As AWX's CredentialType.inject_credential does it: inputs left blank are not in the template
    namespace, every file injector writes its file, and templates render in Jinja's immutable sandbox.
    """
    sandbox = ImmutableSandboxedEnvironment()
    tower = _Namespace()
    namespace = {name: value for name, value in inputs.items() if value not in (None, "")}
    namespace["tower"] = tower
    for label, template in credential_type["injectors"].get("file", {}).items():
        handle, path = tempfile.mkstemp(dir=private_dir)
        with os.fdopen(handle, "w") as out:
            out.write(sandbox.from_string(template).render(**namespace))
        os.chmod(path, 0o644)  # AWX makes it 0600 for the job's own user; here the container's uid 1000 reads it
        if "." in label:
            if not hasattr(tower, "filename"):
                tower.filename = _Namespace()
            setattr(tower.filename, label.split(".", 1)[1], path)
        else:
            tower.filename = path
    return {name: sandbox.from_string(template).render(**namespace) for name, template in credential_type["injectors"]["env"].items()}


def issue_token(emu):
    """An IAM token from the emulator (password authentication), to use as a pre-issued token."""
    identity = {"methods": ["password"], "password": {"user": {"name": emu.username, "password": emu.password, "domain": {"name": emu.domain_name}}}}
    body = json.dumps({"auth": {"identity": identity, "scope": {"project": {"id": emu.project_id}}}}).encode()
    request = urllib.request.Request(emu.url + "/v3/auth/tokens", data=body, method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=emu.ca_file), timeout=10) as response:  # nosec - loopback
        return response.headers["X-Subject-Token"]


def credential_inputs(emu, kind):
    """What a user types into a credential of the type, for the emulator's account."""
    with open(emu.ca_file) as handle:
        inputs = {"region": emu.region, "project_id": emu.project_id, "endpoint": emu.url, "iam_endpoint": emu.url, "ca_bundle": handle.read()}
    if kind == "aksk":
        inputs.update(access_key=emu.ak, secret_key=emu.sk)
    elif kind == "temporary":
        inputs.update(access_key=emu.temp_ak, secret_key=emu.temp_sk, security_token=emu.security_token)
    elif kind == "token":
        inputs.update(auth_token=issue_token(emu))
    else:
        inputs.update(username=emu.username, password=emu.password, domain_name=emu.domain_name)
    return inputs


def test_credential_type_is_what_awx_accepts_and_the_collection_reads():
    credential_type = load_credential_type()
    assert sorted(credential_type) == ["description", "injectors", "inputs", "kind", "name"]
    assert credential_type["kind"] == "cloud"
    fields = {field["id"]: field for field in credential_type["inputs"]["fields"]}
    assert set(credential_type["inputs"]["required"]) <= set(fields)
    for field in fields.values():
        assert set(field) <= {"id", "label", "type", "secret", "multiline", "help_text", "default", "choices", "format"}, field
        assert field["type"] == "string" and field["label"]
    secrets = {name for name, field in fields.items() if field.get("secret")}
    assert secrets == {"secret_key", "security_token", "auth_token", "password", "id_token", "oidc_id_token"}
    injectors = credential_type["injectors"]
    assert sorted(injectors) == ["env", "file"] and all(label.startswith("template.") for label in injectors["file"])
    # Every variable injected is one the collection reads, and every field reaches one.
    with open(os.path.join(ROOT, "plugins", "module_utils", "service", "connection.py")) as handle:
        read_by_collection = set(re.findall(r'"(HUAWEICLOUD_[A-Z_]+)"', handle.read()))
    assert set(injectors["env"]) <= read_by_collection, set(injectors["env"]) - read_by_collection
    templates = " ".join(list(injectors["env"].values()) + list(injectors["file"].values()))
    assert {name for name in fields if not re.search(r"\b%s\b" % name, templates)} == set()


def test_credential_type_injects_blank_variables_and_no_file_path_for_blank_fields(tmp_path):
    env = inject(load_credential_type(), {"region": "cn-north-4", "access_key": "AK", "secret_key": "SK"}, str(tmp_path))
    assert env["HUAWEICLOUD_SDK_REGION"] == "cn-north-4" and env["HUAWEICLOUD_SDK_AK"] == "AK"
    assert env["HUAWEICLOUD_CA_BUNDLE"] == "" and env["HUAWEICLOUD_SDK_ID_TOKEN_FILE"] == ""
    assert {name for name, value in env.items() if value} == {"HUAWEICLOUD_SDK_REGION", "HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK"}


def test_credential_type_writes_the_federated_id_token_to_a_file(tmp_path):
    inputs = {"region": "cn-north-4", "idp_id": "corp-idp", "id_token": "eyJhbGciOi.header.signature"}
    env = inject(load_credential_type(), inputs, str(tmp_path))
    assert env["HUAWEICLOUD_SDK_IDP_ID"] == "corp-idp"
    with open(env["HUAWEICLOUD_SDK_ID_TOKEN_FILE"]) as handle:
        assert handle.read() == "eyJhbGciOi.header.signature"
    oidc = {"region": "cn-north-4", "oidc_provider_urn": "urn:p", "oidc_agency_urn": "urn:a", "oidc_id_token": "eyJ.x.y"}
    env = inject(load_credential_type(), oidc, str(tmp_path))
    assert (env["HUAWEICLOUD_OIDC_PROVIDER_URN"], env["HUAWEICLOUD_OIDC_AGENCY_URN"], env["HUAWEICLOUD_OIDC_ID_TOKEN"]) == ("urn:p", "urn:a", "eyJ.x.y")


@needs_images
@pytest.mark.parametrize("kind", ["aksk", "temporary", "token", "password"])
def test_credential_type_injectors_run_the_gate_in_the_image(emulator, shared_dir, kind):
    """The gate in the EE with exactly the environment (and files) a credential of the type injects."""
    private_dir = os.path.join(shared_dir, "env")  # AWX writes injected files to the job's private data dir
    os.mkdir(private_dir)
    inputs = credential_inputs(emulator, kind)
    env = inject(load_credential_type(), inputs, private_dir)
    assert os.path.dirname(env["HUAWEICLOUD_CA_BUNDLE"]) == private_dir
    extra_vars = gate_vars(shared_dir, "cred-" + kind, [COMPLETED_V2])
    rc, output = navigator_run(EE_IMAGE, env, extra_vars, [shared_dir])
    assert rc == 0, output[-4000:]
    with open(os.path.join(shared_dir, "release-cred-%s.json" % kind)) as handle:
        assert [model["job_id"] for model in json.load(handle)["models"]] == [COMPLETED_V2]
    for secret in ("secret_key", "security_token", "auth_token", "password"):
        assert not inputs.get(secret) or inputs[secret] not in output, secret


# The event source under ansible-rulebook, in the decision environment ---------------------------------


@needs_images
def test_rulebook_deploys_a_completed_job_in_the_decision_environment(emulator, shared_dir):
    """modelarts.training.deploy_on_completed in the DE: the Completed job is deployed, the failed one reported."""
    with open(os.path.join(shared_dir, "inventory.yml"), "w") as handle:
        handle.write("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n      ansible_python_interpreter: /usr/bin/python3.11\n")
    with open(os.path.join(shared_dir, "vars.yml"), "w") as handle:
        yaml.safe_dump({"training_job_ids": [COMPLETED_V2, FAILING_V2], "poll_interval": 1, "stop_when_done": True}, handle)
    # The DE runs as its image's user (uid 1000), which cannot enter the emulator's private TLS directory: copy the CA in.
    ca_bundle = os.path.join(shared_dir, "ca.pem")
    shutil.copyfile(emulator.ca_file, ca_bundle)
    env = dict(emulator.env("aksk"), HUAWEICLOUD_CA_BUNDLE=ca_bundle, TMPDIR=shared_dir, HOME=shared_dir)
    command = [
        "ansible-rulebook",
        "--rulebook",
        "modelarts.training.deploy_on_completed",
        "-i",
        "inventory.yml",
        "--vars",
        "vars.yml",
        # stop_when_done ends the source once both jobs are final; ansible-rulebook then cancels an action still running
        # after this delay: on a loaded machine the deployment playbook takes minutes (docs/event_source.md).
        "--shutdown-delay",
        "600",
    ]
    result = podman_run(DE_IMAGE, command, env=env, mounts=[shared_dir], workdir=shared_dir, timeout=900)
    output = clean(result.stdout + result.stderr)
    assert result.returncode == 0, output[-4000:]
    # The release manifests, beside the jobs the playbook deployed (deployed-training-jobs: a job is deployed once).
    written = os.listdir(os.path.join(shared_dir, "modelarts-releases"))
    releases = [name for name in written if name.startswith("release-") and name.endswith(".json")]
    assert len(releases) == 1 and sorted(written) == sorted(releases + ["deployed-training-jobs"]), written
    # The shipped rulebook's state file, under the DE user's HOME (made for it, mode 0700).
    state = os.path.join(shared_dir, ".local", "state", "modelarts.training", "deploy_on_completed.json")
    with open(state) as handle:
        assert json.load(handle)["jobs"] == {COMPLETED_V2: "Completed", FAILING_V2: "Failed"}
    with open(os.path.join(shared_dir, "modelarts-releases", releases[0])) as handle:
        assert [model["job_id"] for model in json.load(handle)["models"]] == [COMPLETED_V2]
    assert "bert-intent-train (%s) is Failed" % FAILING_V2 in output and "Nothing is deployed" in output
