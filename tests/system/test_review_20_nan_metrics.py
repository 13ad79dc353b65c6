# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 20, item 12: a v1 job whose loss went to NaN, read under ``validate: strict``.

The service's ``model_metric_list`` is a JSON string, and the schema asks for nothing more; a
training framework writes ``NaN`` (and ``Infinity``) for a loss that diverged, and Python's json
parses them.  The collection refused them as "not valid JSON", so ``validate: strict`` failed the
task and the gate stayed closed on a Completed job.  Now the metrics are parsed, and the float NaN
travels through the module's result, a registered variable, ``debug``, the lookup and the role's
fact as Ansible carries it (``NaN`` in JSON output, ``nan`` in a template).
"""

METRICS = '{"total_metric": {"total_metric_values": {"loss": NaN, "grad_norm": Infinity, "lr_floor": -Infinity, "accuracy": 0.25}}}'
NAN_JOB = {"job_id": 1951, "version_id": 1}
LOSS = "details.metrics.total_metric.total_metric_values.loss"
ROLE = "modelarts.training.training_job_gate"


def add_diverged_job(emulator):
    emulator.add_job(name="legacy-diverged", api="v1", phase="Completed", model_metric_list=METRICS, **NAN_JOB)


def test_a_v1_job_with_a_nan_loss_passes_strict_validation_through_the_module_and_the_lookup(emulator, run_playbook):
    add_diverged_job(emulator)
    connection = emulator.connection("aksk")
    values = "job.training_job.details.metrics.total_metric.total_metric_values"
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": connection},
            "tasks": [
                {
                    "name": "read the job",
                    "modelarts.training.modelarts_training_job_info": dict(NAN_JOB, validate="strict"),
                    "register": "job",
                },
                {"name": "show the result", "ansible.builtin.debug": {"var": "job.training_job.details.metrics"}},
                {
                    "name": "read the metrics",
                    "ansible.builtin.debug": {
                        "msg": "PHASE={{ job.training_job.phase }} ERRORS={{ job.training_job.schema_errors | length }}"
                        " LOSS={{ %(v)s.loss }} LOSS_IS_NAN={{ %(v)s.loss != %(v)s.loss }}"
                        " GRAD={{ %(v)s.grad_norm }} FLOOR={{ %(v)s.lr_floor }} ACCURACY={{ %(v)s.accuracy }}" % {"v": values}
                    },
                },
                {
                    "name": "the lookup, strict too",
                    "ansible.builtin.debug": {
                        "msg": "LOOKUP_LOSS={{ lookup('modelarts.training.training_job', term, field=loss, validate='strict', **connection) }}"
                    },
                    "vars": {"term": NAN_JOB, "loss": LOSS, "connection": connection},
                },
            ],
        }
    ]
    result = run_playbook(playbook)
    output = result.stdout
    assert result.returncode == 0, output[-4000:]
    assert "not valid JSON" not in output
    assert '"loss": NaN' in output and '"grad_norm": Infinity' in output and '"lr_floor": -Infinity' in output, output[-4000:]
    assert "PHASE=Completed ERRORS=0 LOSS=nan LOSS_IS_NAN=True GRAD=inf FLOOR=-inf ACCURACY=0.25" in output, output[-4000:]
    assert "LOOKUP_LOSS=nan" in output, output[-4000:]


def test_the_gate_opens_on_a_completed_v1_job_with_a_nan_loss(emulator, run_playbook):
    add_diverged_job(emulator)
    playbook = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "module_defaults": {"group/modelarts.training.modelarts": emulator.connection("aksk")},
            "tasks": [
                {
                    "name": "gate on it",
                    "ansible.builtin.include_role": {"name": ROLE},
                    "vars": {"training_job_gate_v1_jobs": [NAN_JOB], "training_job_gate_poll": 0.1, "training_job_gate_timeout": 30},
                },
                {"name": "gate opened", "ansible.builtin.debug": {"msg": "GATE=open GATE_LOSS={{ modelarts_training_jobs[0].%s }}" % LOSS}},
            ],
        }
    ]
    result = run_playbook(playbook)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "GATE=open GATE_LOSS=nan" in result.stdout, result.stdout[-4000:]
