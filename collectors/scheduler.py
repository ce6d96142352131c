"""Which scheduler ran the job, from the environment it gives the job's processes: Slurm (job id,
node list, partition, the allocation's tasks and GPUs per node), Kubernetes (pod, namespace, job,
an Indexed Job's completion index and the node, as ci/k8s/jobset.yaml passes them; with
torchrun's PET_* variables as Kubeflow Trainer sets them), SkyPilot (task, nodes, node rank, head
node), or none.
Recorded in manifest.json under `scheduler`, so a report can say where a number came from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SLURM_FIELDS = {
    "job_id": "SLURM_JOB_ID",
    "job_name": "SLURM_JOB_NAME",
    "nodelist": "SLURM_JOB_NODELIST",
    "nnodes": "SLURM_JOB_NUM_NODES",
    "partition": "SLURM_JOB_PARTITION",
    "ntasks": "SLURM_NTASKS",
    "tasks_per_node": "SLURM_TASKS_PER_NODE",
    "cpus_on_node": "SLURM_CPUS_ON_NODE",
    "gpus_per_node": "SLURM_GPUS_PER_NODE",
    "gpus_on_node": "SLURM_GPUS_ON_NODE",
    "step_id": "SLURM_STEP_ID",
    "node_id": "SLURM_NODEID",
}
"""manifest key -> Slurm's variable; a variable Slurm did not set is recorded as null."""


def scheduler_facts(env: Mapping[str, str]) -> dict[str, Any]:
    """{'name': 'slurm' | 'kubernetes' | 'none', ...what that scheduler says about the job}."""
    if "SLURM_JOB_ID" in env:
        return {"name": "slurm", **{key: env.get(var) for key, var in SLURM_FIELDS.items()}}
    if "KUBERNETES_SERVICE_HOST" in env:
        pet = {k: v for k, v in sorted(env.items()) if k.startswith("PET_")}
        return {
            "name": "kubernetes",
            "pod": env.get("HOSTNAME"),
            "namespace": env.get("POD_NAMESPACE"),
            "job_name": env.get("JOB_NAME") or env.get("JOBSET_NAME"),
            "job_index": env.get("JOB_COMPLETION_INDEX"),
            "node": env.get("NODE_NAME"),
            **({"torchrun_env": pet} if pet else {}),
        }
    if "SKYPILOT_TASK_ID" in env or "SKYPILOT_NODE_RANK" in env:
        ips = env.get("SKYPILOT_NODE_IPS", "").split()
        return {
            "name": "skypilot",
            "task_id": env.get("SKYPILOT_TASK_ID"),
            "nnodes": env.get("SKYPILOT_NUM_NODES"),
            "node_rank": env.get("SKYPILOT_NODE_RANK"),
            "head": ips[0] if ips else None,
            "gpus_per_node": env.get("SKYPILOT_NUM_GPUS_PER_NODE"),
        }
    return {"name": "none"}
