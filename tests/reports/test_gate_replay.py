"""The shipped gate's false-alarm property, pinned on canned data: per-trial samples of 13
independent launches of ci/sweep-nightly-cpu.toml on a shared 2-core box (tests/data/
gate-launches.json, written by `python ci/bench_gate.py LAUNCHES --export`). Nights are replayed
as ci/bench_gate.py does: baseline and tonight are two different launches, 12 trials drawn from
each, thresholds from the spread of the other launches only.

On that box launches differ by 2-10x row by row (other jobs shared the two cores), so the shipped
rule, quiet on unchanged code, catches a primitive slowed by 5x and not one slowed by 25 %
(docs: the nightly gate, where the table and what it would take are). The same holds for DDP
rows, whose samples are windows of steps (tests/data/gate-launches-ddp.json: 10 launches of
`distbench ddp --world-sizes 1,2 --strategies ddp,ddp-nocomm,grad-avg`).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "gate-launches.json"
DDP_DATA = ROOT / "tests" / "data" / "gate-launches-ddp.json"


def bench_gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_gate", ROOT / "ci" / "bench_gate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_gate"] = module
    spec.loader.exec_module(module)
    return module


def test_the_canned_launches_are_independent_and_complete() -> None:
    gate = bench_gate()
    launches = gate.load_launches(DATA)
    assert len(launches) >= 10
    assert {len(launch) for launch in launches.values()} == {108}
    assert all(len(t) == 12 for launch in launches.values() for t in launch.values())


def test_unchanged_nights_pass_and_slowed_nights_name_the_primitive() -> None:
    gate = bench_gate()
    launches = gate.load_launches(DATA)
    shipped = gate.alternatives()[0]
    assert shipped.label.startswith("shipped")
    rates = gate.replay(launches, shipped, nights=20, seed=1, factor=5.0)
    assert rates.aa_failed <= 1  # 20 resampled unchanged nights: at most one fails
    assert rates.ab_caught >= 19  # one primitive 5x slower: it fails, naming that primitive
    assert rates.ab_other <= 1  # and (almost) never another one


def test_the_shipped_thresholds_file_is_the_canned_data_s(tmp_path: Path) -> None:
    gate = bench_gate()
    out = tmp_path / "thresholds.toml"
    assert (
        gate.main([str(DATA), "--nights", "1", "--only-shipped", "--write-thresholds", str(out)])
        == 0
    )
    shipped = (ROOT / "ci" / "thresholds-nightly-cpu.toml").read_text()
    assert out.read_text().split("default")[1] == shipped.split("default")[1]


def test_ddp_windows_meet_the_same_rule() -> None:
    """Two identical DDP runs: the rank test compares windows (independent), the thresholds come
    from the spread between launches (ci/thresholds-ddp-cpu.toml); <= 5 % of unchanged pairs fail,
    a 3x slower step fails."""
    gate = bench_gate()
    launches = gate.load_launches(DDP_DATA)
    assert len(launches) >= 10
    rates = gate.replay(launches, gate.alternatives()[0], nights=100, seed=0, factor=3.0)
    assert rates.aa_failed <= 5
    assert rates.ab_caught >= 95
