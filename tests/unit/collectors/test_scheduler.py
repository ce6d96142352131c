"""manifest.json records the scheduler that ran the job (collectors/scheduler.py)."""

from __future__ import annotations

from pathlib import Path

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
    assert pod == {
        "name": "kubernetes",
        "pod": "bench-0",
        "namespace": None,
        "job_name": None,
        "job_index": None,
        "node": None,
    }
    assert scheduler_facts({}) == {"name": "none"}


def test_a_lost_peer_is_named_by_rank_node_and_host(tmp_path: Path) -> None:
    """The failure diagnosis names the group's ranks on other nodes, from rank 0's map."""
    import json

    from distbench.collectors.schema import rank_map_path
    from distbench.launch.diagnose import other_nodes

    path = rank_map_path(tmp_path, 4)
    path.parent.mkdir(parents=True)
    ranks = {"0": ("a", 0), "1": ("a", 0), "2": ("b", 1), "3": ("b", 1)}
    path.write_text(json.dumps({r: {"node": n, "host": h} for r, (h, n) in ranks.items()}))
    assert other_nodes(tmp_path, 4, 0) == (
        "the group's ranks on other nodes: ranks 2,3 on node 1 (host b): see that node's output"
    )
    assert other_nodes(tmp_path, 2, 0) == "with several nodes, see the other nodes' output"
