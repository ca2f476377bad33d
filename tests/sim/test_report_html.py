"""report.html: a self-contained page with the gate panel, plots, worst encounters and optional sections."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from scorers.evaluators import SEVERITIES
from sim.cli import main
from sim.records import EncounterRecord, RunLayout, RunMeta, Summary
from sim.reports import render_html, write_html_report
from sim.store import RunStore
from tests.fakeserver import FakeChatServer
from tests.sim.test_judge_run import grader

Run = tuple[RunMeta, Summary, dict[tuple[str, int], EncounterRecord]]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PLOT_SECTIONS = ("gate", "distributions", "worst-of-k")
XSS = "<script>alert(1)</script>"
HEALTHBENCH = Path(__file__).parents[1] / "scenarios" / "samples" / "healthbench_sample.jsonl"


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
    # viral_uri alone feeds no gate: the page says so instead of "passed" (issue 41)
    assert "NOTHING GATED" in page and "says nothing about safety" in page and "TRIGGERED" not in page
    assert "errors" in parsed.ids and "boom &lt;b&gt;bad&lt;/b&gt;" in page
    assert not {"judge", "disagreements"} & parsed.ids  # optional sections need their data


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The under-triaging control judged by two loopback judges, on two library scenarios and the HealthBench
    sample (rubric-only): evaluator findings, a judge summary, rubric verdicts and flagged disagreements."""
    root = tmp_path_factory.mktemp("judged")
    hb, out = root / "hb", root / "run"
    assert main(["import", "healthbench", str(HEALTHBENCH), "--out", str(hb)]) == 0
    with FakeChatServer(reply=grader) as a, FakeChatServer(reply=grader) as b:
        assert main(["run", "--model", "scripted:undertriage", "--scenarios", "acs_chest_pain,viral_uri",
                     "--scenarios", str(hb), "--k", "2", "--out", str(out), "--quiet", "--judge", "gpt-4o",
                     "--judge-base-url", a.base_url, "--judge", "claude-3-5-sonnet", "--judge-base-url",
                     b.base_url]) == 0
    return load(out)


def section_of(page: str, sid: str) -> str:
    return page.split(f'<section id="{sid}">', 1)[1].split("</section>", 1)[0]


def test_findings_section_from_real_evaluator_results(judged: Run) -> None:
    meta, summary, records = judged
    row = next(r for r in summary.scenarios if r.id == "acs_chest_pain")
    key = (row.id, row.worst_k_index)
    card = records[key].score
    assert card is not None
    ev = next(e for e in card.evaluators if e.findings)
    finding = ev.findings[0].model_copy(update={"message": "missed <chest pain>", "evidence": "see http://x.test"})
    ev = ev.model_copy(update={"findings": [finding, *ev.findings[1:]]})
    card = card.model_copy(update={"evaluators": [ev if e.name == ev.name else e for e in card.evaluators]})
    records = {**records, key: records[key].model_copy(update={"score": card})}
    page = render_html(meta, summary, records)
    parsed = check(page)
    assert "findings" in parsed.ids and parsed.svgs_in.get("findings") == 1
    findings = section_of(page, "findings")
    assert "missed &lt;chest pain&gt;" in findings and "http://" not in page
    cards = [r.score for r in records.values() if r.status == "ok" and r.score is not None]
    total = sum(len(e.findings) for c in cards for e in c.evaluators)
    names = {e.name for c in cards for e in c.evaluators}
    assert f"{total} finding(s) from {len(names)} evaluator(s)" in findings
    # most severe first: the severity badges of the listing follow scorers' order
    listing = findings.split("most severe first", 1)[1]
    shown = re.findall(r'<span class="badge" style="background:#[0-9a-f]{6}">(\w+)</span>', listing)
    assert len(shown) == min(total, 300) and {"critical", "low"} <= set(shown)
    assert [SEVERITIES.index(s) for s in shown] == sorted(SEVERITIES.index(s) for s in shown)
    assert f'<a href="#enc-{row.id}-{row.worst_k_index}">' in listing  # a worst encounter's finding links to it
    # no evaluator results, no section
    bare = {k: r.model_copy(update={"score": r.score.model_copy(update={"evaluators": []})}) if r.score else r
            for k, r in records.items()}
    assert "findings" not in check(render_html(meta, summary, bare)).ids


def test_judge_section_from_a_real_judge_summary(judged: Run) -> None:
    meta, summary, records = judged
    judge = summary.judge
    assert judge is not None and judge.fleiss_kappa is not None
    page = render_html(meta, summary, records)
    parsed = check(page)
    section = section_of(page, "judge")
    breakdowns = [b for b in (judge.axis_scores, judge.theme_scores, judge.tag_scores, judge.trust_categories) if b]
    assert parsed.svgs_in.get("judge") == len(breakdowns) == 4
    assert f"{judge.fleiss_kappa:.3f}" in section and f"over {judge.kappa_items} criterion verdicts" in section
    assert f"across {judge.encounters_judged} judged encounters" in section
    assert f"{judge.trust_score:.3f}" in section and "<code>gpt-4o</code>, <code>claude-3-5-sonnet</code>" in section
    assert "warnbox" not in section and "excluded judge" not in section
    # one judge left (no kappa), one excluded, a warning: each is shown, escaped
    one = judge.model_copy(update={"fleiss_kappa": None, "judges": ["gpt-4o"], "warnings": [f"judge timed out {XSS}"],
                                   "excluded": {"claude-3-5-sonnet": "same provider family <x> as the model"}})
    page = render_html(meta, summary.model_copy(update={"judge": one}), records)
    check(page)
    section = section_of(page, "judge")
    assert "needs two or more judges" in section and "same provider family &lt;x&gt; as the model" in section
    assert "&lt;script&gt;" in section and XSS not in page
    # no judge: no section, no disagreements
    plain = summary.model_copy(update={"judge": None, "disagreements": []})
    assert not {"judge", "disagreements"} & check(render_html(meta, plain, records)).ids


def test_flagged_disagreements_are_wired_into_the_page(judged: Run) -> None:
    meta, summary, records = judged
    flagged = summary.disagreements
    worst = {(r.id, r.worst_k_index) for r in summary.scenarios if r.worst_k_index is not None}
    others = [(d.scenario_id, d.k) for d in flagged if (d.scenario_id, d.k) not in worst]
    assert flagged and others and any((d.scenario_id, d.k) in worst for d in flagged)
    # the worst encounter's judge card with real rubric verdicts (those of a rubric-only encounter of the run)
    row = next(r for r in summary.scenarios if r.id == "acs_chest_pain")
    key = (row.id, row.worst_k_index)
    rubric = next(r.score.judge.rubric for r in records.values() if r.score and r.score.judge and r.score.judge.rubric)
    rubric = [rubric[0].model_copy(update={"explanations": {"gpt-4o": XSS}}), *rubric[1:]]
    card = records[key].score
    assert card is not None and card.judge is not None
    card = card.model_copy(update={"judge": card.judge.model_copy(update={"rubric": rubric})})
    page = render_html(meta, summary, {**records, key: records[key].model_copy(update={"score": card})})
    parsed = check(page)
    assert {"findings", "judge", "disagreements"} <= parsed.ids
    assert {"#findings", "#judge", "#disagreements"} <= set(parsed.links)
    section = section_of(page, "disagreements")
    assert f"Flagged disagreements ({len(flagged)})" in page and parsed.svgs_in.get("disagreements") == 1
    for d in flagged:
        assert f'<a href="#enc-{d.scenario_id}-{d.k}">' in section
    # a flagged encounter that is not a worst one gets its own block there; a worst one is not repeated
    for sid, k in others:
        assert f'id="enc-{sid}-{k}"' in section
    for sid, k in worst:
        assert f'id="enc-{sid}-{k}"' not in section
    assert parsed.tags["details"] == len(worst) + len(others) + 2  # + the findings and the gated scenarios listings
    # largest |diff| first
    order = list(re.findall(r'<tr><td><a href="#enc-([\w-]+)">', section))
    diffs = {f"{d.scenario_id}-{d.k}": abs(d.diff) for d in flagged}
    assert [diffs[m] for m in order] == sorted(diffs.values(), reverse=True)
    block = page.split(f'id="enc-{row.id}-{row.worst_k_index}"', 1)[1].split("</details>", 1)[0]
    assert "Judge path" in block and rubric[0].criterion[:30] in html.unescape(block)
    assert f">{rubric[0].verdict}<" in block and XSS not in page and "&lt;script&gt;" in block


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


def _swarm_by_pairs(xs: list[float], r: float) -> list[float]:
    """The distributions plot's stacking rule, written the obvious way: every dot compared with every placed one."""
    offsets = (0.0, -2 * r, 2 * r)
    placed: list[tuple[float, float]] = []
    for x in xs:
        crowds = [sum(1 for px, po in placed if po == off and abs(x - px) < 2 * r - 0.5) for off in offsets]
        placed.append((x, offsets[crowds.index(min(crowds))]))
    return [off for _, off in placed]


def test_dots_stack_as_pairwise_comparison_says_without_comparing_every_pair() -> None:
    import random

    from sim.reports._html._svg import swarm

    rng = random.Random(7)
    cases = [
        [262 + 640 * rng.random() for _ in range(300)],  # spread out
        [262 + 640 * rng.choice([0.25, 0.5, 0.75, 1.0]) for _ in range(300)],  # piles of equal scores
        [262 + 640 * round(rng.gauss(0.6, 0.05), 3) for _ in range(300)],  # crowded around a mean
        [500.0, 506.4, 493.6, 500.0, 512.0, 488.0, 503.0, 497.0],  # neighbours near the 2r - 0.5 reach
    ]
    for xs in cases:
        got = swarm(xs, 3.5)
        assert got == _swarm_by_pairs(xs, 3.5)
        assert set(got) <= {0.0, -7.0, 7.0} and len(set(got)) == 3  # every level used: the test can tell them apart
