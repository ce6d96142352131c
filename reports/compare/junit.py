"""A Comparison as JUnit XML, the report GitLab (`artifacts:reports:junit`) and Jenkins (the
JUnit plugin) read: one test case per verdict, in three suites.

    <testsuites name="distbench compare" tests=.. failures=.. errors="0" skipped=.. time="0">
      <testsuite name="distbench compare: rows" ...>       one case per judged row
      <testsuite name="distbench compare: bands" ...>      one case per band (and the whole run)
      <testsuite name="distbench compare: not judged" ...> rows matched on one side only, ...

A `regressed` verdict is a <failure type="regressed">, a row of the baseline missing tonight a
<failure type="missing"> (unless --allow-missing), `cannot tell` a <skipped> with its reason;
`improved` and `no change seen` pass, each case's <system-out> saying what it could see (its
detectable change). So the report fails exactly when compare exits 1 or 4. The rows suite's
<system-out> holds the verdict and what the whole comparison could see; each suite's
<properties> the two sides, the metric, the status and the exit code. time is 0: compare judges
measurements, it runs nothing; the values are in the messages.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from distbench.reports.compare.judge import ONLY_BASELINE, Comparison, Unmatched
from distbench.reports.compare.render import (
    METRIC_DIGITS,
    context,
    headline,
    missing_line,
    verdict_lines,
)
from distbench.reports.compare.words import (
    band_name,
    relative_words,
    row_name,
    seen_header,
    seen_lines,
    verdict_line,
)
from distbench.stats.engine import WHOLE_RUN
from distbench.stats.verdict import (
    CANNOT_TELL,
    REGRESSED,
    Judged,
    catch_text,
    describe_change,
    describe_state,
)
from distbench.tables import format_number

SUITES = ("rows", "bands", "not judged")
SHOWN_MEMBERS = 10
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold (a control character in a run's path): shown as U+FFFD."""


def xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def element(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attributes.items()})
    if text is not None:
        node.text = xml_text(text)
    return node


def classname(judged: Judged) -> str:
    """'distbench.compare.all_reduce' for a row, '... .all_reduce.bands' for a band."""
    if judged.hypothesis.primitive == WHOLE_RUN:
        return "distbench.compare.whole_run"
    primitive = judged.hypothesis.primitive.split(":", 1)[1]
    return f"distbench.compare.{primitive}{'' if judged.hypothesis.is_row else '.bands'}"


def figures(comparison: Comparison, judged: Judged) -> list[str]:
    """What a case's text says beside its state: its change, the level it was tested at, what it
    could see, its launches and noise source."""
    shift = judged.shift
    lines = [
        f"state: {describe_state(judged)}",
        f"change: {describe_change(judged)}{relative_words(comparison, judged)}",
        f"q slower {judged.q_slower:.2g}, faster {judged.q_faster:.2g}; threshold floor "
        f"{judged.floor * 100:g} %; {catch_text(judged.detectable)} (80 % power)",
    ]
    if shift is not None:
        lines.append(
            f"launches: baseline {shift.n_base} in {shift.nights_base} night(s), current "
            f"{shift.n_current} in {shift.nights_current} night(s); prior: {shift.prior_source}"
        )
    return lines


def row_case(suite: ET.Element, comparison: Comparison, index: int, name: str) -> str:
    judged = comparison.outcome.rows[index]
    base, cur = comparison.values[index]
    unit = comparison.metric.unit
    values = (
        f"{comparison.columns[index]}: baseline {format_number(base, METRIC_DIGITS)} {unit}, "
        f"current {format_number(cur, METRIC_DIGITS)} {unit}"
    )
    return judged_case(suite, comparison, judged, name, [values, *figures(comparison, judged)])


def band_case(suite: ET.Element, comparison: Comparison, judged: Judged, name: str) -> str:
    rows = [row_name(dict(comparison.outcome.rows[i].hypothesis.band)) for i in
            judged.hypothesis.members]  # fmt: skip
    more = f" and {len(rows) - SHOWN_MEMBERS} more" if len(rows) > SHOWN_MEMBERS else ""
    members = f"rows ({len(rows)}): {'; '.join(rows[:SHOWN_MEMBERS])}{more}"
    return judged_case(suite, comparison, judged, name, [*figures(comparison, judged), members])


def judged_case(
    suite: ET.Element, comparison: Comparison, judged: Judged, name: str, lines: list[str]
) -> str:
    """One verdict's <testcase>: a failure if regressed, skipped if cannot tell, else a pass
    with what it could see in its <system-out>. Returns the outcome counted."""
    case = element(suite, "testcase", classname=classname(judged), name=name, time="0")
    text = "\n".join(lines)
    if judged.state == REGRESSED:
        element(case, "failure", text, message=verdict_line(comparison, judged), type=REGRESSED)
        return "failures"
    if judged.state == CANNOT_TELL:
        element(case, "skipped", text, message=describe_state(judged))
        return "skipped"
    element(case, "system-out", text)
    return "passed"


def unmatched_case(suite: ET.Element, comparison: Comparison, unmatched: Unmatched) -> str:
    name = row_name(unmatched.key)
    primitive = unmatched.key.get("primitive", "?")
    case = element(suite, "testcase", classname=f"distbench.compare.{primitive}", name=name,
                   time="0")  # fmt: skip
    message = f"{unmatched.outcome}: {unmatched.reason}"
    if unmatched.outcome == ONLY_BASELINE and not comparison.allow_missing:
        text = f"{message}: a case of the baseline was lost (--allow-missing lets this pass)"
        element(case, "failure", text, message=message, type="missing")
        return "failures"
    element(case, "skipped", message, message=message)
    return "skipped"


def unique(names: list[str]) -> list[str]:
    """Case names as they are, numbered where two would be alike (CI tracks a case by name)."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [f"{name} (#{i + 1})" if seen[name] > 1 else name for i, name in enumerate(names)]


def summary_text(comparison: Comparison) -> str:
    """The verdict and what the comparison could see, as compare's table opens."""
    lines = [headline(comparison), *verdict_lines(comparison)]
    lines += [line] if (line := missing_line(comparison)) is not None else []
    lines += ["", seen_header(comparison)]
    lines += [f"  {s}" for s in seen_lines(comparison)]
    lines += ["", *context(comparison), *comparison.notes]
    return "\n".join(lines)


def facts(comparison: Comparison) -> ET.Element:
    """The suite's <properties>: the two sides, the metric, the status and compare's exit code."""
    properties = ET.Element("properties")
    for key, value in (
        ("baseline", str(comparison.baseline.path)),
        ("current", str(comparison.current.path)),
        ("metric", comparison.metric.name),
        ("status", comparison.status()),
        ("exit_code", str(comparison.exit_code)),
    ):
        element(properties, "property", name=key, value=value)
    return properties


def render_junit(comparison: Comparison) -> str:
    root = ET.Element("testsuites", name="distbench compare")
    outcome = comparison.outcome
    suites = {}
    for name in SUITES:
        suites[name] = element(root, "testsuite", name=f"distbench compare: {name}")
        suites[name].append(facts(comparison))  # JUnit's order: properties, cases, system-out
    counted = {
        "rows": [row_case(suites["rows"], comparison, index, name)
                 for index, name in enumerate(unique([band_name(j) for j in outcome.rows]))],
        "bands": [band_case(suites["bands"], comparison, judged, name)
                  for judged, name in zip(outcome.bands, unique([band_name(j) for j in
                                                                 outcome.bands]), strict=True)],
        "not judged": [unmatched_case(suites["not judged"], comparison, unmatched)
                       for unmatched in comparison.unmatched],
    }  # fmt: skip
    element(suites["rows"], "system-out", summary_text(comparison))
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for name, suite in suites.items():
        found = counted[name]
        numbers = {"tests": len(found), "failures": found.count("failures"),
                   "skipped": found.count("skipped")}  # fmt: skip
        suite.attrib.update({k: str(v) for k, v in numbers.items()}, errors="0", time="0")
        totals = {k: totals[k] + numbers[k] for k in totals}
    root.attrib.update({k: str(v) for k, v in totals.items()}, errors="0", time="0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
