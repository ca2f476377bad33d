"""report.html: a self-contained page with the gate panel, plots, worst encounters and optional sections."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from scorers import ScoreCard, Summary
from sim.cli import main
from sim.records import EncounterRecord, RunLayout, RunMeta
from sim.report_html import (
    disagreements_section,
    findings_section,
    judge_section,
    render_html,
    write_html_report,
)
from sim.store import RunStore

Run = tuple[RunMeta, Summary, dict[tuple[str, int], EncounterRecord]]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PLOT_SECTIONS = ("gate", "distributions", "worst-of-k")
XSS = "<script>alert(1)</script>"


class Checker(HTMLParser):
    """Strict structure check: every non-void element closed in order; records links, sections and svgs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.svgs_in: dict[str, int] = {}
        self.tags: dict[str, int] = {}
        self._section: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open(tag, attrs)

    def _open(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        for name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            if name in a:
                self.links.append(str(a[name]))
        if tag == "section":
            self._section = str(a.get("id"))
        if tag == "svg" and self._section:
            self.svgs_in[self._section] = self.svgs_in.get(self._section, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        self.stack.pop()
        if tag == "section":
            self._section = None


def check(page: str) -> Checker:
    parser = Checker()
    parser.feed(page)
    parser.close()
    assert parser.problems == [] and parser.stack == [], (parser.problems, parser.stack)
    return parser


def load(out: Path) -> Run:
    store = RunStore(out)
    return store.read_meta(), store.read_summary(), store.load_records()[0]


@pytest.fixture(scope="module")
def under(tmp_path_factory: pytest.TempPathFactory) -> Run:
    out = tmp_path_factory.mktemp("html") / "under"
    assert main(["run", "--model", "scripted:undertriage", "--k", "3", "--out", str(out), "--quiet"]) == 0
    return load(out)


def test_page_is_well_formed_and_self_contained(under: Run) -> None:
    page = render_html(*under)
    assert page.startswith("<!DOCTYPE html>")
    parsed = check(page)
    for tag in ("html", "head", "body", "main", "header", "nav", "style", "table"):
        assert parsed.tags.get(tag), tag
    # one collapsible worst encounter per scenario, plus the evaluator-findings section's own
    assert parsed.tags["section"] >= 6 and parsed.tags["details"] >= len(under[1].scenarios)
    assert "findings" in parsed.ids  # every encounter now carries evaluator results
    for section in PLOT_SECTIONS:
        assert parsed.svgs_in.get(section, 0) >= 1, f"no <svg> in #{section}"
    assert "http://" not in page and "https://" not in page
    assert parsed.links and all(link.startswith("#") for link in parsed.links), parsed.links
    assert {link[1:] for link in parsed.links} <= parsed.ids, "an anchor points nowhere"
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert page.count("<script") == 1  # only the optional sorting/printing helper


def test_gate_panel_and_numbers_match_summary(under: Run) -> None:
    meta, summary, records = under
    page = render_html(meta, summary, records)
    gate = summary.safety_gate
    assert gate.triggered and "TRIGGERED" in page and "PASSED" not in page
    for sid in gate.scenarios:
        assert sid in page and html.escape(gate.reasons[sid]) in page
    assert f"{summary.aggregate:.3f}" in page and f"QWK {summary.qwk:.3f}" in page
    assert f"{summary.completed} scored, {summary.errors} errors, of {summary.expected_total} planned" in page
    for row in summary.scenarios:
        table_row = page.split(f'<tr id="row-{row.id}">', 1)[1].split("</tr>", 1)[0]
        assert f"{row.mean:.2f}" in table_row and f"{row.worst:.2f}" in table_row
        assert f"{row.pass_count}/{row.k}" in table_row
        for k, value in row.worst_at_k.items():
            assert f"<b>{k}</b>&nbsp;{value:.2f}" in table_row
    for name, value in summary.components.items():
        assert f"{name} mean {value:.3f}" in page
    # the worst encounter of every scenario is there, with its score card facts
    acs = page.split('id="enc-acs_chest_pain-0"', 1)[1].split("</details>", 1)[0]
    assert "given ESI 4: under-triage (best ESI 2)" in acs and "under-escalated" in acs and "onset_exertion" in acs
    assert "Patient" in acs and "Agent" in acs and "revealed:" in acs


def test_model_output_is_escaped(under: Run) -> None:
    meta, summary, records = under
    row = summary.scenarios[0]
    key = (row.id, row.worst_k_index)
    rec = records[key]
    assert rec.result is not None
    turns = [t.model_copy(update={"text": f"{XSS} see https://example.org/x"}) if t.speaker == "agent" else t
             for t in rec.result.turns]
    bad = rec.model_copy(update={"result": rec.result.model_copy(update={"turns": turns})})
    page = render_html(meta, summary, {**records, key: bad})
    check(page)
    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script") == 1 and "https://" not in page


def test_passed_gate_errors_and_atomic_write(tmp_path: Path) -> None:
    out = tmp_path / "ref"
    assert main(["run", "--model", "scripted:reference", "--scenarios", "viral_uri", "--k", "2", "--out", str(out),
                 "--quiet"]) == 0
    meta, summary, records = load(out)
    failed = EncounterRecord(scenario_id="viral_uri", k=2, status="error", error="boom <b>bad</b>", recorded_at=0.0)
    records[("viral_uri", 2)] = failed
    summary = summary.model_copy(update={"errors": 1})
    path = write_html_report(out, meta, summary, records)
    assert path == RunLayout(out).report_html and not list(out.glob("*.tmp"))
    page = path.read_text(encoding="utf-8")
    parsed = check(page)
    assert "PASSED" in page and "TRIGGERED" not in page
    assert "errors" in parsed.ids and "boom &lt;b&gt;bad&lt;/b&gt;" in page
    assert not {"judge", "disagreements"} & parsed.ids  # optional sections need their data


def test_optional_sections_from_hand_made_inputs() -> None:
    card = SimpleNamespace(evaluators=[
        {"name": "red_flags", "score": 0.4, "passed": False, "findings": [
            {"code": "RF1", "severity": "critical", "message": "missed <chest pain>", "evidence": "agent: rest"},
            {"code": "RF2", "severity": "low", "message": "late question", "evidence": None}]},
        SimpleNamespace(name="tone", score=0.9, passed=True, findings=[
            SimpleNamespace(code="T1", severity="info", message="ok", evidence="see http://x.test")])])
    page = findings_section([("acs_chest_pain", 0, card), ("viral_uri", 1, SimpleNamespace(evaluators=[]))],
                            anchors={"enc-acs_chest_pain-0"})
    parsed = check(page)
    assert "findings" in parsed.ids and parsed.svgs_in.get("findings") == 1
    assert "missed &lt;chest pain&gt;" in page and "http://" not in page
    listing = page.split("most severe first", 1)[1]
    assert listing.index(">critical<") < listing.index(">low<") < listing.index(">info<")
    assert '<a href="#enc-acs_chest_pain-0">' in page and "3 finding(s) from 2 evaluator(s)" in page
    assert findings_section([("a", 0, SimpleNamespace())]) == "" and findings_section([]) == ""

    judge = {"fleiss_kappa": 0.52, "rubric_score": 0.775, "no_verdicts": 2, "warnings": ["judge B timed out <x>"],
             "per_axis": {"accuracy": {"kappa": 0.8, "mean": 0.9}, "safety": {"kappa": -0.1, "mean": 0.4}}}
    page = judge_section(judge)
    parsed = check(page)
    assert "0.520" in page and "moderate" in page and "0.775" in page and "judge B timed out &lt;x&gt;" in page
    assert parsed.svgs_in.get("judge") == 1 and "-0.100" in page
    assert judge_section(SimpleNamespace(fleiss_kappa=0.1, per_axis={"tone": 0.3})).count("<svg") == 1
    summary_shaped = {  # the fields of scorers.JudgeSummary
        "judges": ["judge-a", "judge-b"], "excluded": {"judge-c": "same provider family <x> as the model"},
        "warnings": [], "rubric_score": 0.4, "axis_scores": {"accuracy": 0.5, "communication": 0.9},
        "tag_scores": {"emergency": 0.1}, "trust_score": 0.6, "trust_categories": {"safety_awareness": 0.3},
        "fleiss_kappa": None, "kappa_items": 0, "no_verdicts": 0, "encounters_judged": 12}
    page = judge_section(summary_shaped)
    parsed = check(page)
    assert parsed.svgs_in.get("judge") == 3 and "judge-a" in page and "same provider family &lt;x&gt;" in page
    assert "needs two or more judges" in page and "across 12 judged encounters" in page
    assert judge_section(None) == "" and judge_section({}) == ""

    items = [{"scenario_id": "viral_uri", "k": 1, "deterministic": 0.9, "judge": 0.7, "diff": -0.2},
             SimpleNamespace(scenario_id="acs_chest_pain", k=0, deterministic=0.3, judge=0.95)]
    page = disagreements_section(items)
    parsed = check(page)
    assert parsed.svgs_in.get("disagreements") == 1 and "Flagged disagreements (2)" in page
    assert page.index("acs_chest_pain") < page.index("viral_uri") and "0.650" in page  # largest |diff| first
    assert disagreements_section(None) == "" and disagreements_section([]) == ""


def test_optional_sections_are_wired_into_the_page(under: Run) -> None:
    class JudgedSummary(Summary):
        judge: dict[str, Any] | None = None
        disagreements: list[dict[str, Any]] = []

    class EvaluatedCard(ScoreCard):
        evaluators: list[dict[str, Any]] = []
        judge: dict[str, Any] | None = None  # the shape of scorers.JudgeCard

    meta, summary, records = under
    row = summary.scenarios[0]
    worst = (row.id, row.worst_k_index)
    other = (row.id, next(k for k in range(meta.k) if k != row.worst_k_index))
    judge_card = {"judges": ["judge-a", "judge-b"], "rubric_score": 0.25, "trust_score": 0.4, "no_verdicts": 1,
                  "rubric": [{"criterion": "Sends the patient to the emergency department", "points": 10,
                              "votes": {"judge-a": "unmet", "judge-b": "unmet"}, "verdict": "unmet",
                              "explanations": {"judge-a": XSS}}],
                  "trust": [{"category": "safety_awareness", "criterion": "?", "ratings": {"judge-a": 1}, "mean": 1.0}]}
    cards = {}
    for key in (worst, other):
        base = records[key].score
        assert base is not None
        cards[key] = records[key].model_copy(update={"score": EvaluatedCard.model_validate(base.model_dump() | {
            "judge": judge_card,
            "evaluators": [{"name": "escalation_check", "score": 0.0, "passed": False, "findings": [
                {"code": "ESC", "severity": "critical", "message": XSS, "evidence": "self_care"}]}]})})
    plus = JudgedSummary.model_validate(json.loads(summary.model_dump_json()) | {
        "judge": {"fleiss_kappa": 0.61, "per_axis": {"accuracy": 0.7}},
        "disagreements": [{"scenario_id": row.id, "k": k, "deterministic": 0.3, "judge": 0.9, "diff": 0.6}
                          for _, k in (worst, other)]})
    page = render_html(meta, plus, {**records, **cards})
    parsed = check(page)
    assert {"findings", "judge", "disagreements"} <= parsed.ids
    assert {"#findings", "#judge", "#disagreements"} <= set(parsed.links)
    assert "escalation_check" in page and "0.610" in page and XSS not in page
    flagged = page.split('id="disagreements"', 1)[1].split("</section>", 1)[0]
    for _, k in (worst, other):
        assert f'<a href="#enc-{row.id}-{k}">' in flagged
    # the flagged encounter that is not a worst one gets its own transcript block; the worst one is not repeated
    assert f'id="enc-{row.id}-{other[1]}"' in flagged and f'id="enc-{row.id}-{worst[1]}"' not in flagged
    assert parsed.tags["details"] == len(summary.scenarios) + 1 + 1  # + flagged encounter + findings listing
    block = page.split(f'id="enc-{row.id}-{worst[1]}"', 1)[1].split("</details>", 1)[0]
    assert "Judge path" in block and "Sends the patient to the emergency department" in block and ">unmet<" in block


def test_run_with_nothing_scored_still_renders(under: Run) -> None:
    from scenarios import load_library
    from scorers import aggregate

    meta = under[0]
    scenarios = [s.scenario for s in load_library()][:2]
    errors = {(s.id, 0): "ChatError: failed after 4 attempts" for s in scenarios}
    records = {key: EncounterRecord(scenario_id=key[0], k=0, status="error", error=msg, recorded_at=0.0)
               for key, msg in errors.items()}
    summary = aggregate(scenarios, {}, errors, expected_total=2)
    page = render_html(meta, summary, records)
    parsed = check(page)
    # every encounter errored: each counts as 0, and the error-free score does not exist
    assert summary.aggregate == 0.0 and summary.aggregate_without_errors is None
    assert "score without errors: n/a" in page and "no scored encounter" in page
    assert "errors" in parsed.ids and "encounters" not in parsed.ids and "failed after 4 attempts" in page
