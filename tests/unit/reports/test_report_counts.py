"""The report's opening line counts each kind of row it read: before, a report of collectives,
overlap, DDP and pipeline runs read '37 communication rows and 22 DDP rows' of 69 (the pipeline
rows unnamed, overlap's called communication rows)."""

from __future__ import annotations

from itertools import pairwise
from types import SimpleNamespace

import pandas as pd

from distbench.reports.report.page.build import row_counts


def test_every_kind_of_row_is_counted_by_its_name() -> None:
    comm = pd.DataFrame({"primitive": ["all_reduce"] * 37 + ["overlap"] * 6 + ["init"]})
    loaded = SimpleNamespace(comm=comm, ddp=pd.DataFrame(index=range(22)),
                             pipeline=pd.DataFrame(index=range(10)))  # fmt: skip
    assert row_counts(loaded) == (  # type: ignore[arg-type]
        "37 communication rows, 1 init row, 6 overlap rows, 22 DDP rows and 10 pipeline rows"
    )
    alone = SimpleNamespace(comm=comm.iloc[:3], ddp=pd.DataFrame(), pipeline=pd.DataFrame())
    assert row_counts(alone) == "3 communication rows"  # type: ignore[arg-type]


def test_nccl_variables_swept_on_gloo_are_named_as_noise() -> None:
    """--env NCCL_ALGO=Ring,Tree on gloo: a 3x gap between the combinations read as a finding in
    the report's key results; gloo reads no NCCL_* variable."""
    from distbench.options.envsweep import inert_env_note
    from distbench.reports.report.page.build import inert_env_notes

    env = ["NCCL_ALGO=Ring NCCL_PROTO=LL", "NCCL_ALGO=Tree", "NCCL_ALGO=Tree"]
    comm = pd.DataFrame({"backend": ["gloo", "gloo", "nccl"], "env": env})
    assert inert_env_notes(comm) == [
        "NCCL_ALGO, NCCL_PROTO have no effect on gloo, which reads no NCCL_* variable: gloo rows "
        "that differ only in them measure the same thing, and what separates them is noise"
    ]
    assert inert_env_note(["NCCL_ALGO"], "nccl") is None
    assert inert_env_note(["OMP_NUM_THREADS"], "gloo") is None


def test_line_colours_stay_apart_past_ten_lines() -> None:
    """Past 10 lines the palette was evenly spaced hues, whose neighbours in sorted order came
    out near twins (two pairs of DDP strategies); up to 20 lines tab20's distinct hues come
    first, every colour different."""
    from distbench.reports.report.figures.collectives import line_palette

    for count in (10, 11, 20):
        names = [f"line {i:02d}" for i in range(count)]
        colours = [line_palette(names)[name] for name in names]
        assert len(set(colours)) == count
        for one, two in pairwise(colours):  # neighbours: far apart
            assert sum(abs(a - b) for a, b in zip(one, two, strict=True)) > 0.25, (one, two)
