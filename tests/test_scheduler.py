"""manifest.json records the scheduler that ran the job (collectors/scheduler.py)."""

from __future__ import annotations

from distbench.collectors.scheduler import scheduler_facts


def test_slurm_job_facts_come_from_its_environment() -> None:
    env = {
        "SLURM_JOB_ID": "42",
        "SLURM_JOB_NODELIST": "n[1-2]",
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_JOB_PARTITION": "gpu",
        "SLURM_NTASKS": "2",
        "SLURM_TASKS_PER_NODE": "1(x2)",
        "SLURM_GPUS_ON_NODE": "8",
    }
    facts = scheduler_facts(env)
    assert facts["name"] == "slurm"
    assert (facts["job_id"], facts["nodelist"], facts["partition"]) == ("42", "n[1-2]", "gpu")
    assert (facts["ntasks"], facts["tasks_per_node"], facts["gpus_on_node"]) == ("2", "1(x2)", "8")
    assert facts["gpus_per_node"] is None  # not set by this allocation: null, never an error


def test_kubernetes_and_no_scheduler() -> None:
    pod = scheduler_facts({"KUBERNETES_SERVICE_HOST": "10.0.0.1", "HOSTNAME": "bench-0"})
    assert pod == {"name": "kubernetes", "pod": "bench-0", "namespace": None, "job_name": None}
    assert scheduler_facts({}) == {"name": "none"}
