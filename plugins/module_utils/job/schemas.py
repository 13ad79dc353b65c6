# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""JSON schemas (draft 2020-12) of the ModelArts training-job documents.

This is the source that is edited; ``hacking/generate_schemas.py`` generates from it
``docs/schemas/*.json`` and ``schema_data.py``, the same schemas as JSON text in a ``.py`` file
(AnsiballZ ships only the ``.py`` files a module imports), which ``jobs.py`` imports: string
literals compile and load in a fraction of the time of these dictionaries, and every task
compiles what it imports.

How they were written:

* v2: the union of the fields of three editions of "Querying the Details About a Training
  Job" and of the official SDK's response model (huaweicloudsdkmodelarts 3.1.219).  Where the
  editions disagree both shapes are accepted (``spec.custom_metrics`` items carry
  ``metrics_url``/``metrics_port`` in one edition and ``exec``/``http_get`` in others).
* v1: "Querying the Details About a Training Job Version", widened where the documented
  example contradicts the table (numeric ``parameter[].value``, ``core`` and ``cpu``).
* Unknown fields are allowed everywhere (the API grows); documented fields are typed;
  ``status.phase`` (v2) and ``status`` (v1) are enums.
* Only the fields the normalised item depends on are required: v2 ``metadata``, ``metadata.id``,
  ``status`` and ``status.phase``; v1 ``job_id``, ``version_id`` and ``status``.  A valid
  document therefore always has a phase.
* Every other field also accepts ``null``: the v2 docs give ``NULL`` as the default of
  ``description`` and the SDK models every field as optional, so a service built on such models
  sends ``null`` for what it has not set.  The dictionaries below state each field's type once;
  ``with_nullable_optionals`` adds the null: ``"type": ["string", "null"]`` for an inline type,
  ``"anyOf": [{"$ref": ...}, {"type": "null"}]`` for a reference.  It applies to the members of
  objects (named fields and the values of maps such as ``annotations``), not to array elements:
  ``[null]`` is not an unset field.  A required field stays non-null.
* Epoch-millisecond times are bounded to 0 .. 9999-12-31T23:59:59.999Z so that every valid
  time converts to ISO 8601; durations to 0 .. 2**53-1 ms.
"""

from __future__ import annotations

V2_SCHEMA_ID = "https://modelarts.training/schemas/v2_training_job.json"
V1_SCHEMA_ID = "https://modelarts.training/schemas/v1_training_job_version.json"

# 9999-12-31T23:59:59.999Z: the largest instant datetime can render.
MAX_EPOCH_MS = 253402300799999
# 2**53 - 1: the largest integer every JSON parser keeps exactly; durations above it are garbage.
MAX_DURATION_MS = 9007199254740991


def _nullable(node):
    """``node`` that also accepts null."""
    if "$ref" in node:
        wrapped = {key: value for key, value in node.items() if key != "$ref"}
        wrapped["anyOf"] = [{"$ref": node["$ref"]}, {"type": "null"}]
        return wrapped
    if "type" not in node:
        return node  # no type constraint: null is already accepted
    types = node["type"] if isinstance(node["type"], list) else [node["type"]]
    if "null" in types:
        return node
    nullable = dict(node, type=types + ["null"])
    if "enum" in node:
        nullable["enum"] = list(node["enum"]) + [None]
    return nullable


def with_nullable_optionals(node):
    """A copy of the schema ``node`` in which every optional member of an object also accepts null.

    Optional: a property not listed in ``required`` of its object, or a value of a map
    (``additionalProperties``).  Array elements are left as they are.
    """
    if not isinstance(node, dict):
        return node  # a boolean schema
    result = dict(node)
    if "$defs" in node:
        result["$defs"] = {name: with_nullable_optionals(sub) for name, sub in node["$defs"].items()}
    if "properties" in node:
        required = frozenset(node.get("required", ()))
        result["properties"] = {
            name: with_nullable_optionals(sub) if name in required else _nullable(with_nullable_optionals(sub)) for name, sub in node["properties"].items()
        }
    if isinstance(node.get("additionalProperties"), dict):
        result["additionalProperties"] = _nullable(with_nullable_optionals(node["additionalProperties"]))
    if "items" in node:
        result["items"] = with_nullable_optionals(node["items"])
    if "anyOf" in node:
        result["anyOf"] = [with_nullable_optionals(sub) for sub in node["anyOf"]]
    return result


V2_TRAINING_JOB_SCHEMA = with_nullable_optionals(
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": V2_SCHEMA_ID,
        "title": "ModelArts v2 training job",
        "description": (
            "Response of GET /v2/{project_id}/training-jobs/{training_job_id} (also the items of "
            "POST /v2/{project_id}/training-job-searches). Unknown fields are allowed."
        ),
        "type": "object",
        "required": ["metadata", "status"],
        "properties": {
            "kind": {"type": "string", "description": "Job type, e.g. job, hetero_job, autosearch_job."},
            "metadata": {"$ref": "#/$defs/metadata"},
            "status": {"$ref": "#/$defs/status"},
            "algorithm": {"$ref": "#/$defs/algorithm"},
            "tasks": {
                "type": "array",
                "description": "Tasks of a heterogeneous training job.",
                "items": {"$ref": "#/$defs/task"},
            },
            "spec": {"$ref": "#/$defs/spec"},
            "endpoints": {"$ref": "#/$defs/endpoints"},
            "ftjob_config": {"$ref": "#/$defs/ftjob_config"},
        },
        "$defs": {
            "epoch_ms": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_EPOCH_MS,
                "description": "Unix time in milliseconds (0: not set).",
            },
            "string_map": {"type": "object", "additionalProperties": {"type": "string"}},
            "string_list": {"type": "array", "items": {"type": "string"}},
            "obs_url": {"type": "object", "properties": {"obs_url": {"type": "string"}}},
            "url_token": {
                "type": "object",
                "properties": {"url": {"type": "string"}, "token": {"type": "string"}},
            },
            "metadata": {
                "type": "object",
                "description": "Training job metadata.",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string", "description": "Training job ID."},
                    "name": {"type": "string", "description": "Training job name."},
                    "workspace_id": {"type": "string"},
                    "description": {"type": "string"},
                    "create_time": {"$ref": "#/$defs/epoch_ms"},
                    "user_name": {"type": "string"},
                    "annotations": {"$ref": "#/$defs/string_map"},
                    "training_experiment_reference": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "id": {"type": "string"},
                            "serial_number": {"type": "string"},
                        },
                    },
                },
            },
            "status": {
                "type": "object",
                "description": "Training job status.",
                "required": ["phase"],
                "properties": {
                    "phase": {
                        "type": "string",
                        "description": "Level-1 status of the job.",
                        "enum": ["Creating", "Pending", "Running", "Failed", "Completed", "Terminating", "Terminated", "Abnormal"],
                    },
                    "secondary_phase": {
                        "type": "string",
                        "description": "Level-2 status; internal, may change without notice, so not an enum.",
                    },
                    "duration": {"type": "integer", "minimum": 0, "maximum": MAX_DURATION_MS, "description": "Running duration in milliseconds."},
                    "node_count_metrics": {
                        "type": "array",
                        "description": "Pairs of [epoch ms, node count].",
                        "items": {"type": "array", "items": {"type": "integer"}},
                    },
                    "tasks": {"$ref": "#/$defs/string_list"},
                    "start_time": {"$ref": "#/$defs/epoch_ms"},
                    "task_statuses": {"type": "array", "items": {"$ref": "#/$defs/task_status"}},
                    "running_records": {"type": "array", "items": {"$ref": "#/$defs/running_record"}},
                    "retention_time": {"type": "integer"},
                    "task_ips": {"type": "array", "items": {"$ref": "#/$defs/task_ip"}},
                },
            },
            "task_status": {
                "type": "object",
                "properties": {
                    "task": {"type": "string", "description": "Task name, e.g. worker-0."},
                    "exit_code": {"type": "integer"},
                    "message": {"type": "string"},
                },
            },
            "running_record": {
                "type": "object",
                "description": "A running or fault-recovery record; times in Unix seconds.",
                "properties": {
                    "start_at": {"type": "integer"},
                    "end_at": {"type": "integer"},
                    "xpu_start_at": {"type": "integer"},
                    "start_type": {"type": "string"},
                    "end_reason": {"type": "string"},
                    "end_related_task": {"type": "string"},
                    "end_recover": {"type": "string"},
                    "end_recover_before_downgrade": {"type": "string"},
                    "recover_records": {"type": "array", "items": {"$ref": "#/$defs/recover_record"}},
                },
            },
            "recover_record": {
                "type": "object",
                "properties": {
                    "recover_start_at": {"type": "integer"},
                    "recover_end_at": {"type": "integer"},
                    "recover": {"type": "string"},
                    "fault_scenario": {"type": "string"},
                    "reason": {"type": "string"},
                    "related_task": {"type": "string"},
                    "recover_result": {"type": "string"},
                },
            },
            "task_ip": {
                "type": "object",
                "properties": {
                    "task": {"type": "string"},
                    "ip": {"type": "string"},
                    "host_ip": {"type": "string"},
                    "schedule_count": {"type": "integer"},
                },
            },
            "algorithm": {
                "type": "object",
                "description": "Algorithm of the training job.",
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "subscription_id": {"type": "string"},
                    "item_version_id": {"type": "string"},
                    "code_dir": {"type": "string"},
                    "boot_file": {"type": "string"},
                    "autosearch_config_path": {"type": "string"},
                    "autosearch_framework_path": {"type": "string"},
                    "command": {"type": "string"},
                    "parameters": {"type": "array", "items": {"$ref": "#/$defs/parameter"}},
                    "policies": {"$ref": "#/$defs/policies"},
                    "inputs": {"type": "array", "items": {"$ref": "#/$defs/input"}},
                    "outputs": {"type": "array", "items": {"$ref": "#/$defs/output"}},
                    "engine": {"$ref": "#/$defs/job_engine"},
                    "local_code_dir": {"type": "string"},
                    "working_dir": {"type": "string"},
                    "environments": {"type": "array", "items": {"$ref": "#/$defs/string_map"}},
                    "summary": {"$ref": "#/$defs/summary"},
                },
            },
            "parameter": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": "string"},
                    "description": {"type": "string"},
                    "constraint": {
                        "type": "object",
                        "properties": {
                            "type": {"type": "string"},
                            "editable": {"type": "boolean"},
                            "required": {"type": "boolean"},
                            "sensitive": {"type": "boolean"},
                            "valid_type": {"type": "string"},
                            "valid_range": {"$ref": "#/$defs/string_list"},
                        },
                    },
                    "i18n_description": {
                        "type": "object",
                        "properties": {"language": {"type": "string"}, "description": {"type": "string"}},
                    },
                },
            },
            "policies": {
                "type": "object",
                "properties": {
                    "auto_search": {
                        "type": "object",
                        "properties": {
                            "skip_search_params": {"type": "string"},
                            "reward_attrs": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string"},
                                        "mode": {"type": "string"},
                                        "regex": {"type": "string"},
                                    },
                                },
                            },
                            "search_params": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string"},
                                        "param_type": {"type": "string"},
                                        "lower_bound": {"type": "string"},
                                        "upper_bound": {"type": "string"},
                                        "discrete_points_num": {"type": "string"},
                                        "discrete_values": {"$ref": "#/$defs/string_list"},
                                    },
                                },
                            },
                            "algo_configs": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string"},
                                        "params": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "properties": {
                                                    "key": {"type": "string"},
                                                    "value": {"type": "string"},
                                                    "type": {"type": "string"},
                                                },
                                            },
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
            "input": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "local_dir": {"type": "string"},
                    "access_method": {"type": "string"},
                    "remote": {
                        "type": "object",
                        "properties": {
                            "dataset": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "string"},
                                    "version_id": {"type": "string"},
                                    "obs_url": {"type": "string"},
                                    "service_type": {"type": "string"},
                                    "name": {"type": "string"},
                                },
                            },
                            "obs": {"$ref": "#/$defs/obs_url"},
                        },
                    },
                    "remote_constraint": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"data_type": {"type": "string"}, "attributes": {"type": "string"}},
                        },
                    },
                },
            },
            "output": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "local_dir": {"type": "string"},
                    "access_method": {"type": "string"},
                    "remote": {"type": "object", "properties": {"obs": {"$ref": "#/$defs/obs_url"}}},
                },
            },
            "job_engine": {
                "type": "object",
                "properties": {
                    "engine_id": {"type": "string"},
                    "engine_name": {"type": "string"},
                    "engine_version": {"type": "string"},
                    "image_url": {"type": "string"},
                    "image_repo_id": {"type": "string"},
                    "install_sys_packages": {"type": "boolean"},
                },
            },
            "summary": {
                "type": "object",
                "properties": {
                    "log_type": {"type": "string"},
                    "log_dir": {
                        "type": "object",
                        "properties": {
                            "pfs": {"type": "object", "properties": {"pfs_path": {"type": "string"}}},
                        },
                    },
                    "data_sources": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "job": {"type": "object", "properties": {"job_id": {"type": "string"}}},
                            },
                        },
                    },
                },
            },
            "task": {
                "type": "object",
                "properties": {
                    "role": {"type": "string"},
                    "algorithm": {"$ref": "#/$defs/task_algorithm"},
                    "task_resource": {"$ref": "#/$defs/flavor_response"},
                    "log_export_path": {"$ref": "#/$defs/obs_url"},
                },
            },
            "task_channel": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "local_dir": {"type": "string"},
                    "remote": {"type": "object", "properties": {"obs": {"$ref": "#/$defs/obs_url"}}},
                    "mode": {"type": "string"},
                    "period": {"type": "string"},
                },
            },
            "task_algorithm": {
                "type": "object",
                "properties": {
                    "code_dir": {"type": "string"},
                    "boot_file": {"type": "string"},
                    "inputs": {"$ref": "#/$defs/task_channel"},
                    "outputs": {"$ref": "#/$defs/task_channel"},
                    "engine": {
                        "type": "object",
                        "properties": {
                            "engine_id": {"type": "string"},
                            "engine_name": {"type": "string"},
                            "engine_version": {"type": "string"},
                            "v1_compatible": {"type": "boolean"},
                            "run_user": {"type": "string"},
                            "image_url": {"type": "string"},
                        },
                    },
                    "local_code_dir": {"type": "string"},
                    "working_dir": {"type": "string"},
                    "environments": {"$ref": "#/$defs/string_map"},
                },
            },
            "billing": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "unit_num": {"type": "integer"}},
            },
            "cpu": {
                "type": "object",
                "properties": {"arch": {"type": "string"}, "core_num": {"type": "integer"}},
            },
            "gpu": {
                "type": "object",
                "properties": {
                    "unit_num": {"type": "integer"},
                    "product_name": {"type": "string"},
                    "memory": {"type": "string"},
                },
            },
            "npu": {
                "type": "object",
                "description": "Ascend NPU; unit_num is a string in both the docs and the SDK.",
                "properties": {
                    "unit_num": {"type": "string"},
                    "product_name": {"type": "string"},
                    "memory": {"type": "string"},
                },
            },
            "memory": {
                "type": "object",
                "properties": {"size": {"type": "integer"}, "unit": {"type": "string"}},
            },
            "flavor_info": {
                "type": "object",
                "description": "Flavor details of spec.resource.flavor_detail (disk size is a string here).",
                "properties": {
                    "max_num": {"type": "integer"},
                    "cpu": {"$ref": "#/$defs/cpu"},
                    "gpu": {"$ref": "#/$defs/gpu"},
                    "npu": {"$ref": "#/$defs/npu"},
                    "memory": {"$ref": "#/$defs/memory"},
                    "disk": {
                        "type": "object",
                        "properties": {"size": {"type": "string"}, "unit": {"type": "string"}},
                    },
                },
            },
            "flavor_info_response": {
                "type": "object",
                "description": "Flavor details of tasks[].task_resource (disk size is an integer here).",
                "properties": {
                    "max_num": {"type": "integer"},
                    "cpu": {"$ref": "#/$defs/cpu"},
                    "gpu": {"$ref": "#/$defs/gpu"},
                    "npu": {"$ref": "#/$defs/npu"},
                    "memory": {"$ref": "#/$defs/memory"},
                    "disk": {
                        "type": "object",
                        "properties": {"size": {"type": "integer"}, "unit": {"type": "string"}},
                    },
                },
            },
            "flavor_response": {
                "type": "object",
                "properties": {
                    "pool_id": {"type": "string"},
                    "flavor_id": {"type": "string"},
                    "flavor_name": {"type": "string"},
                    "max_num": {"type": "integer"},
                    "flavor_type": {"type": "string"},
                    "billing": {"$ref": "#/$defs/billing"},
                    "flavor_info": {"$ref": "#/$defs/flavor_info_response"},
                    "attributes": {"$ref": "#/$defs/string_map"},
                },
            },
            "spec": {
                "type": "object",
                "description": "Training job specification.",
                "properties": {
                    "resource": {"$ref": "#/$defs/resource"},
                    "volumes": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "nfs": {
                                    "type": "object",
                                    "properties": {
                                        "nfs_server_path": {"type": "string"},
                                        "local_path": {"type": "string"},
                                        "read_only": {"type": "boolean"},
                                    },
                                },
                            },
                        },
                    },
                    "log_export_path": {
                        "type": "object",
                        "properties": {"obs_url": {"type": "string"}, "host_path": {"type": "string"}},
                    },
                    "schedule_policy": {
                        "type": "object",
                        "properties": {
                            "required_affinity": {
                                "type": "object",
                                "properties": {
                                    "affinity_type": {"type": "string"},
                                    "job_level": {"type": "string"},
                                    "affinity_group_size": {"type": "integer"},
                                    "affinity_group_level": {"type": "string"},
                                },
                            },
                            "priority": {"type": "integer"},
                            "preemptible": {"type": "boolean"},
                        },
                    },
                    "custom_metrics": {"type": "array", "items": {"$ref": "#/$defs/custom_metric"}},
                    "output_model": {
                        "type": "object",
                        "properties": {
                            "obs": {
                                "type": "object",
                                "properties": {"obs_path": {"type": "string"}, "local_path": {"type": "string"}},
                            },
                        },
                    },
                    "asset_model": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "name": {"type": "string"},
                            "code": {"type": "string"},
                            "version": {"type": "string"},
                            "location": {"type": "string"},
                            "desc": {"type": "string"},
                            "series": {"type": "string"},
                            "type": {"type": "string"},
                        },
                    },
                },
            },
            "resource": {
                "type": "object",
                "properties": {
                    "policy": {"type": "string"},
                    "flavor_id": {"type": "string"},
                    "flavor_name": {"type": "string"},
                    "node_count": {"type": "integer"},
                    "pool_id": {"type": "string"},
                    "pool_name": {"type": "string"},
                    "pool_group_id": {"type": "string"},
                    "flavor_detail": {
                        "type": "object",
                        "properties": {
                            "flavor_type": {"type": "string"},
                            "billing": {"$ref": "#/$defs/billing"},
                            "flavor_info": {"$ref": "#/$defs/flavor_info"},
                        },
                    },
                    "main_container_allocated_resources": {
                        "type": "object",
                        "properties": {
                            "cpu_arch": {"type": "string"},
                            "cpu_core_num": {"type": "number"},
                            "mem_size": {"type": "number"},
                            "accelerator_num": {"type": "number"},
                            "accelerator_type": {"type": "string"},
                        },
                    },
                    "main_container_customized_flavor": {
                        "type": "object",
                        "properties": {
                            "cpu_core_num": {"type": "number"},
                            "mem_size": {"type": "number"},
                            "accelerator_num": {"type": "number"},
                        },
                    },
                },
            },
            "custom_metric": {
                "type": "object",
                "description": ("Metric collection. One edition documents metrics_url/metrics_port, others and the SDK exec/http_get; all four are accepted."),
                "properties": {
                    "metrics_url": {"type": "string"},
                    "metrics_port": {"type": "integer"},
                    "exec": {"type": "object", "properties": {"command": {"$ref": "#/$defs/string_list"}}},
                    "http_get": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "port": {"type": "integer"}},
                    },
                },
            },
            "endpoints": {
                "type": "object",
                "description": "Remote access endpoints of the job.",
                "properties": {
                    "ssh": {
                        "type": "object",
                        "properties": {
                            "key_pair_names": {"$ref": "#/$defs/string_list"},
                            "task_urls": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {"task": {"type": "string"}, "url": {"type": "string"}},
                                },
                            },
                        },
                    },
                    "jupyter_lab": {"$ref": "#/$defs/url_token"},
                    "tensorboard": {"$ref": "#/$defs/url_token"},
                    "mindstudio_insight": {"$ref": "#/$defs/url_token"},
                },
            },
            "ftjob_config": {
                "type": "object",
                "description": "Fine-tuning job configuration (SDK only).",
                "properties": {
                    "ft_job_uuid": {"type": "string"},
                    "ft_train_type": {"type": "string"},
                    "model_type": {"type": "string"},
                    "train_output_path": {"type": "string"},
                    "train_process": {"type": "number"},
                    "checkpoint_id": {"type": "string"},
                    "task_env": {
                        "type": "object",
                        "properties": {
                            "envs": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": {"type": "string"},
                                        "des": {"type": "string"},
                                        "env_name": {"type": "string"},
                                        "env_type": {"type": "string"},
                                        "value": {"type": "string"},
                                        "modifiable": {"type": "boolean"},
                                        "displayable": {"type": "boolean"},
                                        "used_steps": {"$ref": "#/$defs/string_list"},
                                    },
                                },
                            },
                        },
                    },
                    "checkpoint_config": {
                        "type": "object",
                        "properties": {
                            "checkpoint_id": {"type": "string"},
                            "save_checkpoints_max": {"type": "integer"},
                            "skipped_steps": {"type": "integer"},
                            "restore_training": {"type": "integer"},
                        },
                    },
                },
            },
        },
    }
)

V1_JOB_VERSION_SCHEMA = with_nullable_optionals(
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": V1_SCHEMA_ID,
        "title": "ModelArts v1 training job version",
        "description": ("Response of GET /v1/{project_id}/training-jobs/{job_id}/versions/{version_id}. Unknown fields are allowed."),
        "type": "object",
        "required": ["job_id", "version_id", "status"],
        "properties": {
            "is_success": {"type": "boolean"},
            "error_code": {"type": "string"},
            "error_message": {"type": "string"},
            "job_id": {"type": "integer", "description": "Training job ID."},
            "job_name": {"type": "string"},
            "job_desc": {"type": "string"},
            "version_id": {"type": "integer", "description": "Version ID of the training job."},
            "version_name": {"type": "string"},
            "pre_version_id": {"type": "integer"},
            "engine_type": {"type": "integer"},
            "engine_name": {"type": "string"},
            "engine_id": {"type": "integer"},
            "engine_version": {"type": "string"},
            "status": {
                "type": "integer",
                "description": "Job status code 0-22; see the v1 status table of the collection docs.",
                "enum": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22],
            },
            "app_url": {"type": "string"},
            "boot_file_url": {"type": "string"},
            "create_time": {"$ref": "#/$defs/epoch_ms"},
            "parameter": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "value": {
                            "type": ["string", "number", "boolean"],
                            "description": "Documented as a string; the documented example sends a number.",
                        },
                    },
                },
            },
            "duration": {"type": "integer", "minimum": 0, "maximum": MAX_DURATION_MS, "description": "Running duration in milliseconds."},
            "spec_id": {"type": "integer"},
            "core": {"type": ["string", "number"], "description": "Documented as a string; the example sends a number."},
            "cpu": {"type": ["string", "number"], "description": "Documented as a string; the example sends a number."},
            "gpu_num": {"type": "integer"},
            "gpu_type": {"type": "string"},
            "worker_server_num": {"type": "integer"},
            "data_url": {"type": "string"},
            "train_url": {"type": "string"},
            "log_url": {"type": "string"},
            "dataset_version_id": {"type": "string"},
            "dataset_id": {"type": "string"},
            "data_source": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "dataset_id": {"type": "string"},
                        "dataset_version": {"type": "string"},
                        "type": {"type": "string"},
                        "data_url": {"type": "string"},
                    },
                },
            },
            "model_id": {"type": "integer"},
            "model_metric_list": {
                "type": "string",
                "description": "Model metrics as a JSON-encoded string ({metric: [...], total_metric: {...}}).",
            },
            "system_metric_list": {
                "type": "object",
                "properties": {
                    "cpuUsage": {"$ref": "#/$defs/usage_series"},
                    "memUsage": {"$ref": "#/$defs/usage_series"},
                    "gpuUtil": {"$ref": "#/$defs/usage_series"},
                },
            },
            "user_image_url": {"type": "string"},
            "user_command": {"type": "string"},
            "resource_id": {"type": "string"},
            "dataset_name": {"type": "string"},
            "spec_code": {"type": "string"},
            "start_time": {"$ref": "#/$defs/epoch_ms"},
            "volumes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "nfs": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string"},
                                "src_path": {"type": "string"},
                                "dest_path": {"type": "string"},
                                "read_only": {"type": "boolean"},
                            },
                        },
                        "host_path": {
                            "type": "object",
                            "properties": {
                                "src_path": {"type": "string"},
                                "dest_path": {"type": "string"},
                                "read_only": {"type": "boolean"},
                            },
                        },
                    },
                },
            },
            "dataset_version_name": {"type": "string"},
            "pool_name": {"type": "string"},
            "pool_id": {"type": "string"},
            "nas_mount_path": {"type": "string"},
            "nas_share_addr": {"type": "string"},
            "nas_type": {"type": "string"},
        },
        "$defs": {
            "epoch_ms": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_EPOCH_MS,
                "description": "Unix time in milliseconds (0: not set).",
            },
            "usage_series": {
                "type": "array",
                "description": "Usage samples; the documented example sends numeric strings.",
                "items": {"type": ["string", "number"]},
            },
        },
    }
)
