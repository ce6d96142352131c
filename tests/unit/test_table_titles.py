"""Every table a measuring command prints opens with a `#` line that says what was measured and
how its time cells read (the collectives' tables always did; init, rpc and overlap since
2026-12-06), read from the rows themselves."""

from __future__ import annotations

import csv
import io

from distbench.init.table import render_init_table
from distbench.overlap.table import render_overlap_table
from distbench.rpc.table import render_rpc_table

COMMON = {"backend": "gloo", "device": "cpu", "timer": "perf_counter", "mode": "latency"}


def rows(text: str) -> list[dict[str, str]]:
    return [{**COMMON, **row} for row in csv.DictReader(io.StringIO(text))]


def test_init_rpc_and_overlap_tables_say_how_they_were_measured() -> None:
    init = rows(
        "world_size,pattern,trials,time_us_p50,time_us_min,time_us_max\n"
        "2,tcp:init_process_group,3,4500,3900,5000\n4,tcp:init_process_group,3,6500,5900,7000\n"
    )
    rpc = rows("world_size,pattern,size_bytes,time_us_p50,algbw_GBps\n3,sync,1024,900,0.001\n")
    overlap = rows(
        "world_size,collective,size_bytes,compute_n,compute_iters,compute_threads,t_compute_us,"
        "t_comm_us,t_both_us,overlap_efficiency,compute_slowdown,comm_slowdown\n"
        "2,all_reduce,1048576,1024,1,1,1000,900,1200,0.8,1.1,1.2\n"
    )
    titles = {
        "init": render_init_table(init).splitlines()[0],
        "rpc": render_rpc_table(rpc).splitlines()[0],
        "overlap": render_overlap_table(overlap).splitlines()[0],
    }
    assert titles["init"].startswith("# init  backend=gloo  device=cpu  world_size=2,4  ")
    assert "time=each trial the slowest rank's, in ms" in titles["init"]
    assert titles["rpc"].startswith("# rpc  backend=gloo  device=cpu  world_size=3  ")
    assert "slowest caller's time per call" in titles["rpc"]
    assert "timer=perf_counter  time=each phase's p50 of max over ranks" in titles["overlap"]
