"""The lines compare prints when it judged nothing: why, and what would let it judge (a new
user's first comparison, two single runs, read `cannot tell` on every row and nothing said what
to do next; the summary gave another reason than the rows)."""

from __future__ import annotations

import pytest

from distbench.cli.app import run_cli
from tests.paths import ROOT

DATA = ROOT / "tests" / "data"


def test_two_single_runs_say_why_they_cannot_tell_and_what_would_let_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = DATA / "cluster-a" / "allreduce", DATA / "cluster-b" / "allreduce"
    assert run_cli(["compare", str(a), str(b)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("nothing judged yet, no row could be told from the noise")
    assert lines[1] == (
        "cannot tell: learning the noise: 1 of 5 nights: no row or band past the noise and the "
        "threshold"
    )  # the rows' own reason, not another
    assert lines[2].startswith("to judge, give the baseline nights: save each night into a ")
    assert "distbench baseline save RUN --name NAME" in lines[2]


def test_many_priors_read_as_one_phrase_few_are_named() -> None:
    """A window that learnt its noise estimates a prior per primitive and size band: 14 such
    sources made a noise line of 1,066 characters."""
    from distbench.reports.compare.words import prior_text

    many = [
        f"estimated from {n} rows of p{n}, small sizes in this comparison" for n in range(4, 18)
    ]
    text = prior_text([*many, "the default spread of a shared 2-core box"])
    assert text.startswith("estimated in each of 14 groups of similar rows")
    assert "4-17 rows a group" in text and text.endswith(
        "; the default spread of a shared 2-core box"
    )
    assert len(text) < 220
    few = ["estimated from 12 rows of all_reduce in this comparison", "the default spread"]
    assert prior_text(few) == "; ".join(few) and prior_text([]) == "none"


def test_a_comparison_that_judged_nothing_gives_its_hypotheses_own_reasons() -> None:
    """Past learning, every hypothesis `cannot tell`: the verdict line names their reasons
    (blind, no launch on one side), not one reason for all."""
    import math
    from types import SimpleNamespace

    from distbench.reports.compare.render import verdict_lines
    from distbench.stats.family import Hypothesis
    from distbench.stats.verdict import BLIND, CANNOT_TELL, Judged

    def judged(reason: str) -> Judged:
        return Judged(Hypothesis("comm:all_reduce", (0,), ()), None, 1.0, 1.0, 1.0, 1.0,
                      CANNOT_TELL, math.inf, 0.05, reason)  # fmt: skip

    outcome = SimpleNamespace(box="", split="", learning="", rows=[judged(BLIND)],
                              bands=[judged("no launch on one side")])  # fmt: skip
    (line,) = verdict_lines(SimpleNamespace(outcome=outcome))  # type: ignore[arg-type]
    assert line == (
        "cannot tell: no launch on one side; would catch nothing below 10x: no row or band past "
        "the noise and the threshold"
    )
