# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Training job documents: v2 (``GET /v2/{project_id}/training-jobs/{id}``) and v1 job versions.

Field lists follow the union of the three editions of the v2 "Querying the Details About a Training
Job" page and the SDK's response model (3.1.219); the v1 document follows "Obtaining the Details About
a Training Job Version". Every time, duration and running record is derived from the job's lifecycle
snapshot, so a document never contradicts itself or the phases a client saw before.
"""

import json

from . import activity, failures
from .failures import DEFAULT_FAILURE, NOT_STARTED_MESSAGE
from .lifecycle import TERMINAL_PHASES

FLAVORS = {
    "gpu": {
        "flavor_id": "modelarts.p3.large.public",
        "flavor_name": "GPU: 1*NVIDIA-V100(32GB) | CPU: 8 vCPUs 64GB",
        "flavor_type": "GPU",
        "billing_code": "modelarts.vm.gpu.v100",
        "cpu_arch": "x86",
        "cpu_cores": 8,
        "memory_gb": 64,
        "disk_gb": "780",
        "gpu": {"unit_num": 1, "product_name": "NVIDIA-V100", "memory": "32GB"},
        "allocated": {"cpu_core_num": 7.5, "mem_size": 58.0, "accelerator_num": 1.0, "accelerator_type": "nvidia-v100-pcie32"},
        "v1_spec_id": 1,
        "v1_core": "8",
        "v1_cpu": "64",
        "v1_gpu_type": "V100",
    },
    "cpu": {
        "flavor_id": "modelarts.vm.cpu.8u",
        "flavor_name": "CPU: 8 vCPUs 32GB",
        "flavor_type": "CPU",
        "billing_code": "modelarts.vm.cpu.8u",
        "cpu_arch": "x86",
        "cpu_cores": 8,
        "memory_gb": 32,
        "disk_gb": "100",
        "allocated": {"cpu_core_num": 7.0, "mem_size": 28.0, "accelerator_num": 0.0, "accelerator_type": ""},
        "v1_spec_id": 3,
        "v1_core": "8",
        "v1_cpu": "32",
        "v1_gpu_type": "",
    },
    "npu": {
        "flavor_id": "modelarts.kat1.xlarge",
        "flavor_name": "Ascend: 1*Ascend-910(32GB) | ARM: 24 vCPUs 96GB",
        "flavor_type": "NPU",
        "billing_code": "modelarts.kat1.xlarge",
        "cpu_arch": "aarch64",
        "cpu_cores": 24,
        "memory_gb": 96,
        "disk_gb": "750",
        "npu": {"unit_num": "1", "product_name": "Ascend-910", "memory": "32GB"},
        "allocated": {"cpu_core_num": 22.0, "mem_size": 88.0, "accelerator_num": 1.0, "accelerator_type": "ascend-910"},
        "v1_spec_id": 8,
        "v1_core": "24",
        "v1_cpu": "96",
        "v1_gpu_type": "Ascend-910",
    },
}

ENGINES = {
    "pytorch": {
        "engine_id": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        "engine_name": "PyTorch",
        "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        "v1_type": 1,
        "v1_id": 122,
        "v1_version": "PyTorch-1.8.0-python3.7",
    },
    "tensorflow": {
        "engine_id": "tensorflow_2.1.0-cuda_10.1-py_3.7-ubuntu_18.04-x86_64",
        "engine_name": "TensorFlow",
        "engine_version": "tensorflow_2.1.0-cuda_10.1-py_3.7-ubuntu_18.04-x86_64",
        "v1_type": 1,
        "v1_id": 118,
        "v1_version": "TF-2.1.0-python3.7",
    },
    "mindspore": {
        "engine_id": "mindspore_1.7.0-cann_5.1.0-py_3.7-euler_2.8.3-aarch64",
        "engine_name": "Ascend-Powered-Engine",
        "engine_version": "mindspore_1.7.0-cann_5.1.0-py_3.7-euler_2.8.3-aarch64",
        "v1_type": 13,
        "v1_id": 130,
        "v1_version": "MindSpore-1.7.0-python3.7-aarch64",
    },
    "custom": {"engine_id": "", "engine_name": "", "engine_version": "", "v1_type": 0, "v1_id": 0, "v1_version": ""},
}

CUSTOM_METRICS_SHAPES = ("exec_http", "metrics_url")

V1_STATUS = {"Creating": 1, "Pending": 7, "Running": 8, "Terminating": 9, "Completed": 10, "Failed": 11, "Terminated": 12, "Abnormal": 14}


def failure_info(job, phase, ran=True):
    """Return {task, exit_code, message, kind} describing why a job ended in ``phase`` (or None); ``kind`` is the
    failure's story (failures.py) for a Failed or Abnormal job, None for a Terminated one."""
    if phase not in DEFAULT_FAILURE:
        return None
    info = dict(DEFAULT_FAILURE[phase])
    if phase == "Abnormal" and not ran:
        info["message"] = NOT_STARTED_MESSAGE
    info["task"] = "worker-0"
    if job.failure and phase in ("Failed", "Abnormal"):
        info.update({k: v for k, v in job.failure.items() if v is not None})
    info["kind"] = failures.kind(info, ran) if phase in ("Failed", "Abnormal") else None
    return info


def task_names(job):
    return ["worker-%d" % i for i in range(job.node_count)]


def _bucket(job):
    return job.bucket


def _run_window(snapshot):
    """Return (start_ms, end_ms) of the job's run: first Running entry to the first stop (None when open)."""
    start = end = None
    for step, entered in snapshot.history:
        if step.phase == "Running" and start is None:
            start = entered
        elif start is not None and end is None and (step.phase in TERMINAL_PHASES or step.phase == "Terminating"):
            end = entered
    return start, end


def _running_records(job, snapshot):
    records = []
    history = snapshot.history
    failure = failure_info(job, snapshot.phase, _run_window(snapshot)[0] is not None)
    for index, (step, entered) in enumerate(history):
        if step.phase != "Running":
            continue
        record = {
            "start_at": entered // 1000,
            "xpu_start_at": entered // 1000 + 6,
            "start_type": "restarted" if step.restart else "init_or_rescheduled",
        }
        if index + 1 < len(history):
            nxt, left = history[index + 1]
            record["end_at"] = left // 1000
            if nxt.phase == "Running":
                # A restart: the process died and was recovered in place.
                record.update(
                    {
                        "end_reason": "exit with 137",
                        "end_related_task": "worker-0",
                        "end_recover": "proc_restart",
                        "end_recover_before_downgrade": "gpu_proc_restart",
                    }
                )
            elif nxt.phase == "Completed":
                record["end_reason"] = "job completed"
            elif nxt.phase in ("Failed", "Abnormal"):
                record["end_reason"] = "exit with %s" % failure["exit_code"] if nxt.phase == "Failed" else "node lost"
                record["end_related_task"] = failure["task"]
            elif nxt.phase in ("Terminating", "Terminated"):
                record["end_reason"] = "job terminated by user"
        records.append(record)
    # The service's hang verdicts (the scenario's activity.service_hang): recover records with fault_scenario job_hanged.
    return activity.decorate_running_records(job, snapshot, records)


def _task_statuses(job, snapshot):
    phase = snapshot.phase
    if phase not in TERMINAL_PHASES:
        return []
    failure = failure_info(job, phase, _run_window(snapshot)[0] is not None)
    statuses = []
    for task in task_names(job):
        if phase == "Completed":
            statuses.append({"task": task, "exit_code": 0, "message": ""})
        elif task == failure["task"] or phase == "Terminated":
            statuses.append({"task": task, "exit_code": failure["exit_code"], "message": failure["message"]})
        else:
            statuses.append({"task": task, "exit_code": 143, "message": "Stopped because %s ended" % failure["task"]})
    return statuses


def _custom_metrics(job):
    if job.custom_metrics == "metrics_url":
        return [{"metrics_url": "/metrics", "metrics_port": 9100}]
    return [{"exec": {"command": ["cat", "/home/ma-user/modelarts/metrics/custom.prom"]}}, {"http_get": {"path": "/raw_text", "port": 10001}}]


def _flavor_info(flavor, disk_as_string):
    info = {
        "max_num": 1 if flavor["flavor_type"] == "CPU" else 16,
        "cpu": {"arch": flavor["cpu_arch"], "core_num": flavor["cpu_cores"]},
        "memory": {"size": flavor["memory_gb"], "unit": "GB"},
        "disk": {"size": flavor["disk_gb"] if disk_as_string else int(flavor["disk_gb"]), "unit": "GB"},
    }
    if "gpu" in flavor:
        info["gpu"] = dict(flavor["gpu"])
    if "npu" in flavor:
        info["npu"] = dict(flavor["npu"])
    return info


def _engine(job):
    engine = ENGINES[job.engine]
    if job.engine == "custom":
        return {"image_url": job.image_url, "install_sys_packages": False, "image_repo_id": job.uid[:32]}
    return {"engine_id": engine["engine_id"], "engine_name": engine["engine_name"], "engine_version": engine["engine_version"], "install_sys_packages": True}


def algorithm_name(job):
    """The algorithm name of a job created from algorithm management or a subscription ('' for code)."""
    if job.algorithm == "managed":
        return "algo-%s" % job.code_name
    if job.algorithm == "subscription":
        return "market-%s" % job.code_name
    return ""


def _algorithm(job):
    bucket = _bucket(job)
    code_dir = "obs://%s/code/%s/" % (bucket, job.code_name)
    algorithm = {
        "code_dir": code_dir,
        "boot_file": code_dir + "train.py",
        "autosearch_config_path": "",
        "autosearch_framework_path": "",
        "parameters": [
            {
                "name": "learning_rate",
                "value": str(job.parameters.get("learning_rate", "0.01")),
                "description": "Initial learning rate",
                "constraint": {"type": "Float", "editable": True, "required": False, "sensitive": False, "valid_type": "None", "valid_range": []},
                "i18n_description": {"language": "en-us", "description": "Initial learning rate"},
            },
            {
                "name": "epochs",
                "value": str(job.parameters.get("epochs", "30")),
                "description": "Number of epochs",
                "constraint": {"type": "Integer", "editable": True, "required": True, "sensitive": False, "valid_type": "Range", "valid_range": ["1", "1000"]},
                "i18n_description": {"language": "en-us", "description": "Number of epochs"},
            },
        ],
        "inputs": [
            {
                "name": "data_url",
                "description": "Training data",
                "local_dir": "/home/ma-user/modelarts/inputs/data_url_0",
                "access_method": "parameter",
                "remote": {"obs": {"obs_url": "obs://%s/datasets/%s/" % (bucket, job.dataset)}},
                "remote_constraint": [{"data_type": "obs", "attributes": "data_format=Default"}],
            },
            {
                "name": "labels",
                "description": "Labelled dataset version",
                "local_dir": "/home/ma-user/modelarts/inputs/labels_1",
                "access_method": "parameter",
                "remote": {
                    "dataset": {
                        "id": job.uid[:20],
                        "version_id": job.uid[20:32],
                        "name": job.dataset,
                        "obs_url": "obs://%s/datasets/%s/annotations/" % (bucket, job.dataset),
                        "service_type": "modelarts",
                    }
                },
                "remote_constraint": [{"data_type": "dataset", "attributes": "dataset_type=0"}],
            },
        ],
        "outputs": [
            {
                "name": "train_url",
                "description": "Model output",
                "local_dir": "/home/ma-user/modelarts/outputs/train_url_0",
                "access_method": "parameter",
                "remote": {"obs": {"obs_url": "obs://%s/output/%s/" % (bucket, job.name)}},
            },
        ],
        "engine": _engine(job),
        "local_code_dir": "/home/ma-user/modelarts/user-job-dir",
        "working_dir": "/home/ma-user/modelarts/user-job-dir/%s" % job.code_name,
        "environments": [{"MA_LOG_LEVEL": "INFO"}, {"NCCL_DEBUG": "WARN"}],
        "summary": {
            "log_type": "tensorboard",
            "log_dir": {"pfs": {"pfs_path": "obs://%s/tensorboard/%s/" % (bucket, job.name)}},
            "data_sources": [{"job": {"job_id": job.v2_id or ""}}],
        },
    }
    if job.algorithm == "managed":
        algorithm.update({"id": job.uid_b, "name": algorithm_name(job)})
    elif job.algorithm == "subscription":
        algorithm.update({"id": job.uid_b, "name": algorithm_name(job), "subscription_id": job.uid[:32], "item_version_id": job.uid_b[:32]})
    if job.engine == "custom":
        algorithm["command"] = "bash /home/ma-user/modelarts/user-job-dir/%s/run_train.sh" % job.code_name
    if job.kind == "autosearch_job":
        algorithm["autosearch_config_path"] = "obs://%s/autosearch/%s.yaml" % (bucket, job.code_name)
        algorithm["autosearch_framework_path"] = "obs://%s/autosearch/framework/" % bucket
        algorithm["policies"] = {
            "auto_search": {
                "skip_search_params": "",
                "reward_attrs": [{"name": "accuracy", "mode": "max", "regex": "accuracy=([0-9.]+)"}],
                "search_params": [
                    {
                        "name": "learning_rate",
                        "param_type": "continuous",
                        "lower_bound": "0.0001",
                        "upper_bound": "0.1",
                        "discrete_points_num": "10",
                        "discrete_values": [],
                    }
                ],
                "algo_configs": [{"name": "bayes_opt_search", "params": [{"key": "num_samples", "value": "20", "type": "Integer"}]}],
            }
        }
    else:
        algorithm["policies"] = {}
    return algorithm


def _task_response(job):
    flavor = FLAVORS[job.flavor]
    bucket = _bucket(job)
    engine = ENGINES[job.engine]
    return {
        "role": "worker",
        "algorithm": {
            "code_dir": "/%s/code/%s/" % (bucket, job.code_name),
            "boot_file": "/%s/code/%s/train.py" % (bucket, job.code_name),
            "inputs": {
                "name": "data_url",
                "local_dir": "/home/ma-user/modelarts/inputs/data_url_0",
                "remote": {"obs": {"obs_url": "/%s/datasets/%s/" % (bucket, job.dataset)}},
            },
            "outputs": {
                "name": "train_url",
                "local_dir": "/home/ma-user/modelarts/outputs/train_url_0",
                "remote": {"obs": {"obs_url": "/%s/output/%s/" % (bucket, job.name)}},
                "mode": "upload_periodically",
                "period": "30s",
            },
            "engine": {
                "engine_id": engine["engine_id"],
                "engine_name": engine["engine_name"],
                "engine_version": engine["engine_version"],
                "v1_compatible": False,
                "run_user": "1000",
                "image_url": job.image_url if job.engine == "custom" else "",
            },
            "local_code_dir": "/home/ma-user/modelarts/user-job-dir",
            "working_dir": "/home/ma-user/modelarts/user-job-dir/%s" % job.code_name,
            "environments": {"MA_LOG_LEVEL": "INFO"},
        },
        "task_resource": {
            "pool_id": job.pool_id or "",
            "flavor_id": flavor["flavor_id"],
            "flavor_name": flavor["flavor_name"],
            "max_num": 16,
            "flavor_type": flavor["flavor_type"],
            "billing": {"code": flavor["billing_code"], "unit_num": 1},
            "flavor_info": _flavor_info(flavor, disk_as_string=False),
            "attributes": {"resource_type": "public" if not job.pool_id else "dedicated"},
        },
        "log_export_path": {"obs_url": "obs://%s/logs/%s/" % (bucket, job.name)},
    }


def _spec(job):
    flavor = FLAVORS[job.flavor]
    resource = {
        "policy": "regular",
        "flavor_id": flavor["flavor_id"],
        "flavor_name": flavor["flavor_name"],
        "node_count": job.node_count,
        "flavor_detail": {
            "flavor_type": flavor["flavor_type"],
            "billing": {"code": flavor["billing_code"], "unit_num": 1},
            "flavor_info": _flavor_info(flavor, disk_as_string=True),
        },
        "main_container_allocated_resources": dict(flavor["allocated"], cpu_arch=flavor["cpu_arch"]),
    }
    if job.pool_id:
        resource["pool_id"] = job.pool_id
        resource["pool_name"] = "pool-%s" % job.pool_id[-8:]
    spec = {
        "resource": resource,
        "volumes": [{"nfs": {"nfs_server_path": "192.168.0.169:/share/datasets", "local_path": "/home/ma-user/work/nfs", "read_only": True}}],
        "log_export_path": {"obs_url": "obs://%s/logs/%s/" % (_bucket(job), job.name)},
        "schedule_policy": {"required_affinity": {"affinity_type": "cabinet", "affinity_group_size": 1}, "priority": 1, "preemptible": False},
        "custom_metrics": _custom_metrics(job),
    }
    if job.pool_id:
        spec["log_export_path"]["host_path"] = "/var/log/modelarts/%s" % job.name
    return spec


def _endpoints(job):
    host = "modelarts-%s.ssh.%s.example.invalid" % (job.uid[:8], job.region)
    return {
        "ssh": {
            "key_pair_names": ["KeyPair-ml-team"],
            "task_urls": [{"task": t, "url": "ssh://ma-user@%s:%d" % (host, 30022 + i)} for i, t in enumerate(task_names(job))],
        },
        "jupyter_lab": {"url": "https://authoring-%s.%s.example.invalid/lab" % (job.uid[:8], job.region), "token": job.uid_b[:24]},
        "tensorboard": {"url": "https://authoring-%s.%s.example.invalid/tensorboard" % (job.uid[:8], job.region), "token": job.uid_b[8:32]},
        "mindstudio_insight": {"url": "https://authoring-%s.%s.example.invalid/mindstudio" % (job.uid[:8], job.region), "token": job.uid_b[4:28]},
    }


def v2_status(job, snapshot):
    """Return the v2 ``status`` object for a snapshot."""
    start, end = _run_window(snapshot)
    tasks = task_names(job)
    duration = 0
    if start is not None:
        duration = (end if end is not None else snapshot.now_ms) - start
    metrics = [[snapshot.created_ms, 0]]
    if start is not None:
        metrics.append([start, job.node_count])
    if end is not None:
        metrics.append([end, 0])
    status = {
        "phase": snapshot.phase,
        "secondary_phase": snapshot.step.secondary_phase,
        "duration": duration,
        "node_count_metrics": metrics,
        "tasks": tasks,
        "start_time": start if start is not None else 0,
        "task_statuses": _task_statuses(job, snapshot),
        "running_records": _running_records(job, snapshot),
    }
    if start is not None:
        status["task_ips"] = [
            {"task": t, "ip": "172.16.%d.%d" % (job.seed % 200, 10 + i), "host_ip": "192.168.0.%d" % (20 + i), "schedule_count": 1} for i, t in enumerate(tasks)
        ]
    return status


def v2_document(job, snapshot):
    """Return the full v2 training job document for a snapshot."""
    annotations = {
        "fault-tolerance/job-retry-num": "3",
        "fault-tolerance/job-unconditional-retry": "false",
        "fault-tolerance/hang-retry": "true",
        "jupyter-lab/enable": "true",
        "tensorboard/enable": "true",
        "mindstudio-insight/enable": "false",
    }
    annotations.update(job.annotations)
    return {
        "kind": job.kind,
        "metadata": {
            "id": job.v2_id,
            "name": job.name,
            "workspace_id": job.workspace_id,
            "description": job.description,
            "create_time": snapshot.created_ms,
            "user_name": job.user_name,
            "annotations": annotations,
        },
        "status": v2_status(job, snapshot),
        "algorithm": _algorithm(job),
        "tasks": [_task_response(job)],
        "spec": _spec(job),
        "endpoints": _endpoints(job),
    }


def _model_metric_list(job, phase):
    if isinstance(getattr(job, "model_metric_list", None), tuple):
        return job.model_metric_list[-1]  # texts given once each in the body (routes.py); a JSON reader keeps the last
    if getattr(job, "model_metric_list", None) is not None:
        return job.model_metric_list  # the scenario's text, as given (NaN and all)
    if phase != "Completed":
        return "{}"
    accuracy = round(0.80 + (job.seed % 150) / 1000.0, 4)
    metrics = {
        "metric": [
            {
                "metric_values": {"recall": round(accuracy - 0.012, 4), "precision": round(accuracy + 0.004, 4), "accuracy": accuracy},
                "reserved_data": {},
                "metric_meta": {"class_name": 0, "class_id": 0},
            },
            {
                "metric_values": {"recall": round(accuracy - 0.031, 4), "precision": round(accuracy - 0.007, 4), "accuracy": accuracy},
                "reserved_data": {},
                "metric_meta": {"class_name": 1, "class_id": 1},
            },
        ],
        "total_metric": {
            "total_metric_meta": {},
            "total_reserved_data": {},
            "total_metric_values": {"recall": round(accuracy - 0.02, 4), "id": 0, "precision": accuracy, "accuracy": accuracy},
        },
    }
    return json.dumps(metrics, separators=(",", ":"))


def v1_status_code(snapshot):
    """Return the v1 integer status for a snapshot (a step's ``v1_status`` wins)."""
    step = snapshot.step
    if step.v1_status is not None:
        return step.v1_status
    return V1_STATUS[step.phase]


def v1_document(job, snapshot):
    """Return the v1 job version document for a snapshot (consistent with the v2 twin, if any)."""
    flavor = FLAVORS[job.flavor]
    engine = ENGINES[job.engine]
    bucket = _bucket(job)
    start, end = _run_window(snapshot)
    duration = 0
    if start is not None:
        duration = (end if end is not None else snapshot.now_ms) - start
    started = start is not None
    cpu = ["0", "3.10", "5.76", "12.40", "11.95"] if started else []
    mem = ["0", "0.77", "2.09", "4.31", "4.28"] if started else []
    gpu = ["0", "0.25", "0.88", "0.93", "0.91"] if started else []
    return {
        "is_success": True,
        "job_id": job.v1_job_id,
        "job_name": job.name,
        "job_desc": job.description,
        "version_id": job.v1_version_id,
        "version_name": job.v1_version_name,
        "pre_version_id": job.v1_pre_version_id,
        "engine_type": engine["v1_type"],
        "engine_name": engine["engine_name"] or "Custom",
        "engine_id": engine["v1_id"],
        "engine_version": engine["v1_version"],
        "status": v1_status_code(snapshot),
        "app_url": "/%s/code/%s/" % (bucket, job.code_name),
        "boot_file_url": "/%s/code/%s/train.py" % (bucket, job.code_name),
        "create_time": snapshot.created_ms,
        "parameter": [
            {"label": "learning_rate", "value": str(job.parameters.get("learning_rate", "0.01"))},
            {"label": "epochs", "value": str(job.parameters.get("epochs", "30"))},
        ],
        "duration": duration,
        "spec_id": flavor["v1_spec_id"],
        "core": flavor["v1_core"],
        "cpu": flavor["v1_cpu"],
        "gpu_num": int(flavor.get("gpu", flavor.get("npu", {})).get("unit_num", 0)),
        "gpu_type": flavor["v1_gpu_type"],
        "worker_server_num": job.node_count,
        "data_url": "/%s/datasets/%s/" % (bucket, job.dataset),
        "train_url": "/%s/output/%s/" % (bucket, job.name),
        "log_url": "/%s/logs/%s/" % (bucket, job.name),
        "dataset_version_id": job.uid[:8] + "-" + job.uid[8:12] + "-" + job.uid[12:16] + "-" + job.uid[16:20] + "-" + job.uid[20:32],
        "dataset_id": job.uid_b[:8] + "-" + job.uid_b[8:12] + "-" + job.uid_b[12:16] + "-" + job.uid_b[16:20] + "-" + job.uid_b[20:32],
        "data_source": [{"dataset_id": "", "dataset_version": "", "type": "obs", "data_url": "/%s/datasets/%s/" % (bucket, job.dataset)}],
        "model_id": job.seed % 97 + 1,
        "model_metric_list": _model_metric_list(job, snapshot.phase),
        "system_metric_list": {"cpuUsage": cpu, "memUsage": mem, "gpuUtil": gpu},
        "user_image_url": job.image_url if job.engine == "custom" else "",
        "user_command": ("bash -x /home/work/run_train.sh python /home/work/user-job-dir/%s/train.py" % job.code_name) if job.engine == "custom" else "",
        "resource_id": "jobd%s" % job.uid[:24],
        "dataset_name": job.dataset,
        "spec_code": flavor["flavor_id"],
        "start_time": start if started else 0,
        "volumes": [
            {
                "nfs": {
                    "id": job.uid_b[:8] + "-9afa-4855-8174-" + job.uid[:12],
                    "src_path": "192.168.8.150:/",
                    "dest_path": "/home/work/nas",
                    "read_only": False,
                }
            },
            {"host_path": {"src_path": "/root/work", "dest_path": "/home/mind", "read_only": False}},
        ],
        "dataset_version_name": "V002",
        "pool_name": "pool-%s" % job.pool_id[-8:] if job.pool_id else "",
        "pool_id": job.pool_id or "",
        "nas_mount_path": "/home/work/nas",
        "nas_share_addr": "192.168.8.150:/",
        "nas_type": "nfs",
    }
