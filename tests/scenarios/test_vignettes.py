"""`encsim import vignettes`: symptom-checker vignettes (CSV or JSON Lines) become single-turn triage items
or encounters, scored on escalation and diagnosis, with one-paragraph errors for flags that do not fit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scenarios import ScenarioError, load_dir, parse_scenario
from scenarios.importers import (
    IMPORTERS,
    ImportReport,
    ImportSourceError,
    case_in_first_person,
    import_vignettes,
    parse_field_map,
    parse_urgency_map,
    read_vignette_file,
)
from scenarios.lexicon import intent_ids
from scenarios.schema import Scenario
from scorers import score_encounter
from sim.agents.scripted import ReferenceAgent, UndertriageAgent
from sim.cli import main
from sim.encounter import SINGLE_TURN, is_single_turn, run_encounter
from sim.encounter.channel import TextChannel
from sim.patient import PatientSimulator
from tests.scenarios.test_importers import FixedReply
from tests.scenarios.test_loader import assert_every_fact_revealable

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "vignettes"
CSV = DATA / "triage_vignettes.csv"
JSONL = DATA / "triage_vignettes.jsonl"
CSV_MAP = ("id=Case ID,case=Vignette,urgency=Triage,diagnosis=Correct diagnosis,diagnoses=Other acceptable diagnoses,"
           "age=Age,sex=Sex,complaint=Chief complaint,history=HPI,negatives=Pertinent negatives,past_history=PMH,"
           "medications=Meds,allergies=Allergies,social=Social,family=Family,exam=Exam,tests=Tests")
CSV_URGENCY = "Emergent=emergency,non-emergent=routine+urgent, SELF-CARE = self_care"
JSONL_MAP = "case=case_description,diagnosis=correct_diagnosis,urgency=urgency_level"
JSONL_URGENCY = "em=emergency,ne=routine+urgent,sc=self_care"
FIELD_TRIGGERS = {"what happened", "what brings you", "how it started", "presenting complaint", "tell me more",
                  "more about it", "more details", "other symptoms", "any other symptoms", "anything else",
                  "examine you", "physical examination", "physical exam", "on examination", "examination findings",
                  "test results", "any tests", "investigations", "blood tests", "scans", "medications", "medicines",
                  "tablets", "regular medication", "allergies", "allergic", "social history", "live with",
                  "your work", "occupation", "family history", "in your family", "runs in the family",
                  "medical history", "past medical", "medical conditions", "health problems"}


def _import(src: Path, out: Path, mode: str) -> tuple[ImportReport, dict[str, Scenario]]:
    mapping, urgency = (CSV_MAP, CSV_URGENCY) if src.suffix == ".csv" else (JSONL_MAP, JSONL_URGENCY)
    report = import_vignettes(src, out, mapping=mapping, urgency_map=urgency, mode=mode)
    return report, {i.scenario.id: i.scenario for i in load_dir(out)}


Imported = dict[tuple[str, str], tuple[ImportReport, dict[str, Scenario]]]  # (suffix, mode) -> (report, by id)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    out: Imported = {}
    for src in (CSV, JSONL):
        for mode in ("single-turn", "encounter"):
            out[(src.suffix, mode)] = _import(src, tmp_path_factory.mktemp(f"{src.suffix[1:]}-{mode}"), mode)
    return out


# --- both formats, both modes -------------------------------------------------------------------

@pytest.mark.parametrize("fmt", [".csv", ".jsonl"])
@pytest.mark.parametrize("mode", ["single-turn", "encounter"])
def test_every_row_of_both_formats_converts_in_both_modes(imported, fmt: str, mode: str) -> None:
    report, scenarios = imported[(fmt, mode)]
    assert not report.failed and report.rows == len(report.converted) == (12 if fmt == ".csv" else 9)
    assert sorted(scenarios) == sorted(report.converted)
    for s in scenarios.values():
        assert s.suite == "triage" and s.tier == "A" and s.expected.triage_level is None
        assert s.expected.escalation is not None and s.expected.diagnoses
        assert s.source is not None and s.source.startswith(f"vignettes:triage_vignettes{fmt}#")
        assert "source:vignettes" in s.tags and f"vignette:{mode.replace('-', '_')}" in s.tags
        assert s.expected.label_rationale and f"triage_vignettes{fmt}" in s.expected.label_rationale
        if mode == "single-turn":
            assert s.replay is not None and len(s.replay) == 1 and s.replay[0].role == "patient"
            assert not s.information_tree and is_single_turn(s)
        else:
            assert s.replay is None and s.information_tree and s.turn_limit is None
    if mode == "encounter":
        assert_every_fact_revealable(list(scenarios.values()))


def test_ids_labels_and_acceptable_sets(imported) -> None:
    csv = imported[(".csv", "single-turn")][1]
    assert sorted(csv) == [f"vig_v{i:02d}" for i in range(1, 13)]  # the mapped id column
    mi = csv["vig_v01"].expected
    assert (mi.escalation, mi.acceptable_escalations) == ("emergency", [])
    assert [d.name for d in mi.diagnoses] == ["Acute myocardial infarction (heart attack)", "Acute coronary syndrome"]
    assert mi.diagnoses[0].synonyms == ["Acute myocardial infarction", "heart attack"]
    uti = csv["vig_v06"].expected  # "Non-emergent" (any case) -> routine, urgent acceptable
    assert uti.escalation == "routine" and [e.value for e in uti.escalations_ok] == ["urgent", "routine"]
    assert "column 'Triage' = 'Non-emergent'" in (uti.label_rationale or "") and "row 7" in (uti.label_rationale or "")
    assert csv["vig_v12"].expected.escalation == "self_care"
    jl = imported[(".jsonl", "single-turn")][1]
    sepsis = next(s for i, s in jl.items() if i.startswith("vig_sepsis_"))  # vig_<slug>_<8 hex of the row>
    assert len(sepsis.id.rsplit("_", 1)[1]) == 8 and sepsis.expected.diagnoses[0].synonyms == ["Sepsis", "urosepsis"]
    assert len({s.canary for s in jl.values()}) == len(jl)


def test_single_turn_message_is_the_case_in_the_first_person(imported) -> None:
    jl = imported[(".jsonl", "single-turn")][1]
    by_diagnosis = {s.expected.diagnoses[0].name: s for s in jl.values()}
    pe = by_diagnosis["Pulmonary embolism"]
    assert pe.replay is not None and pe.replay[0].content == (
        "I'm a 61-year-old woman and I have sudden shortness of breath and sharp left-sided chest pain that is worse "
        "when I breathe in. Ten days ago I had a knee replacement. My left calf is swollen and tender.")
    assert (pe.patient_profile.age, pe.patient_profile.sex, pe.patient_profile.speaker) == (61, "female", "patient")
    hfmd = by_diagnosis["Hand, foot and mouth disease"]  # a child's case is told by a parent, in their words
    assert hfmd.replay is not None and hfmd.replay[0].content.startswith("My 2-year-old boy has a temperature of 38°C")
    assert hfmd.patient_profile.speaker == "parent" and hfmd.patient_profile.context.pediatric
    dka = by_diagnosis["Diabetic ketoacidosis"]  # the line break inside the JSON string is only whitespace
    assert dka.replay is not None and "\n" not in dka.replay[0].content
    assert "I have been passing a lot of urine and am very thirsty." in dka.replay[0].content


def test_first_person_changes_the_person_and_the_venue_only() -> None:
    case = ("A 45-year-old white man presents to the emergency department with a 1-hour history of sudden onset of "
            "left-sided flank pain radiating down toward his groin. He is writhing in pain. He denies fever. "
            "His wife says he looks pale. His brother had kidney stones when he was 40.")
    message, who, parent = case_in_first_person(case)
    assert (who, parent) == ("45-year-old white man", False)
    assert message == ("I'm a 45-year-old white man and I have a 1-hour history of sudden onset of left-sided flank "
                       "pain radiating down toward my groin. I am writhing in pain. I haven't had any fever. "
                       "My wife says I look pale. "  # someone of the other sex: "he" is still the patient
                       "My brother had kidney stones when he was 40.")  # a man named before "he": kept as written
    assert case_in_first_person("Severe headache since noon.") == ("Severe headache since noon.", None, False)
    assert case_in_first_person("An 18-month-old toddler presents with 1 week of cough.")[0] == \
        "My 18-month-old toddler has 1 week of cough."


def test_encounter_facts_categories_intents_triggers_and_critical(imported) -> None:
    mi = imported[(".csv", "encounter")][1]["vig_v01"]
    assert mi.opening_line == "I'm a 58-year-old man. I'd like some advice about my chest pain."  # who is asking
    by_cat: dict[str, list] = {}
    for f in mi.information_tree:
        by_cat.setdefault(f.category.value, []).append(f)
        assert set(f.triggers) <= FIELD_TRIGGERS, (f.id, f.triggers)  # the field's meaning, never the answer's words
    assert sorted(by_cat) == ["allergies", "exam", "family_history", "history", "medications", "past_history",
                              "social", "symptoms"]
    history = by_cat["history"]
    assert all(f.critical for f in history) and "radiation" in history[1].intents
    if "presenting_complaint" in intent_ids():  # the column's own intent, where the lexicon has it
        assert "presenting_complaint" in history[0].intents and "presenting_complaint" not in history[1].intents
    assert [f.answer for f in by_cat["symptoms"]] == ["No, I haven't had fever.", "No, I haven't had cough."]
    assert all("fever" in f.intents or "cough" in f.intents for f in by_cat["symptoms"])
    assert [f.answer for f in by_cat["medications"]] == ["I take amlodipine 5 mg daily.",
                                                         "I take atorvastatin 20 mg at night."]
    assert all(f.intents[0] == "medications" for f in by_cat["medications"])
    assert by_cat["allergies"][0].answer == "I don't have any allergies that I know of."
    assert by_cat["family_history"][0].critical  # "heart attack" names a word of the diagnosis
    assert by_cat["family_history"][0].intents[0] == "family_history"
    assert by_cat["past_history"][0].intents[0] == "medical_history"
    assert by_cat["social"][0].answer == "I smoke 20 cigarettes a day." and "smoking" in by_cat["social"][0].intents
    assert all(not set(f.intents) - {"physical_exam", "vital_signs", "tenderness"} - {
        i for i in f.intents if i.startswith("exam_")} for f in by_cat["exam"])
    stroke = imported[(".csv", "encounter")][1]["vig_v02"]
    assert [f.answer for f in stroke.information_tree if f.category.value == "test"] == \
        ["Test result - capillary glucose 7.2 mmol/L."]
    appendix = imported[(".csv", "encounter")][1]["vig_v05"]
    assert appendix.patient_profile.speaker == "parent"
    assert "No, he hasn't had diarrhoea." in [f.answer for f in appendix.information_tree]


def test_encounter_from_a_case_text_alone_asks_for_the_story(imported) -> None:
    jl = imported[(".jsonl", "encounter")][1]
    pe = next(s for s in jl.values() if s.expected.diagnoses[0].name == "Pulmonary embolism")
    assert pe.opening_line == ("I'm a 61-year-old woman and I have sudden shortness of breath and sharp left-sided "
                               "chest pain that is worse when I breathe in.")
    assert [(f.category.value, f.answer, f.critical) for f in pe.information_tree] == [
        ("history", "Ten days ago I had a knee replacement.", True),
        ("history", "My left calf is swollen and tender.", True)]
    patient = PatientSimulator(pe)
    assert patient.reply("What happened after that?")[1] == [pe.information_tree[0].id]
    assert patient.reply("Can you tell me more?")[1] == [pe.information_tree[1].id]


# --- the harness and the controls on a single-turn item ------------------------------------------

# An agent that replies once with a fixed text (the importers' tests use the same one).
OneReply = FixedReply


async def test_single_turn_reply_is_read_and_scored_even_in_prose(imported) -> None:
    mi = imported[(".csv", "single-turn")][1]["vig_v01"]
    agent = OneReply("This could be a heart attack. Call an ambulance now; do not drive yourself.\n\n"
                     "Diagnoses: 1. Heart attack; 2. Angina")
    r = await run_encounter(mi, agent, TextChannel())
    sent = agent.requests[0].messages[-1].content
    assert isinstance(sent, str) and sent.endswith(SINGLE_TURN) and sent.startswith("I'm a 58-year-old man")
    # a decision line and a labelled differential are a final by its fields (harness 1.6), not a prose reply
    assert [t.speaker for t in r.turns] == ["patient", "harness", "agent"] and r.termination == "assessment"
    assert r.assessment.escalation == "emergency" and r.assessment.form == "fields"
    card = score_encounter(r, mi)
    assert card.escalation is not None and card.escalation.score == 1.0 and card.escalation.verdict == "best"
    assert card.triage is None and card.information is None and card.efficiency is None  # not applicable, not 0
    assert card.diagnosis is not None and card.diagnosis.top1 and card.passed
    # the diagnosis counts beside the escalation (issue 16): the top one named first, but not every expected one
    named = len(card.diagnosis.matched) / len(mi.expected.diagnoses)
    assert len(mi.expected.diagnoses) > 1 and named < 1
    assert card.diagnosis.score == pytest.approx(0.7 + 0.3 * named)
    assert card.composite == pytest.approx((0.2 * 1.0 + 0.1 * card.diagnosis.score) / 0.3)


async def test_scripted_controls_give_a_scorable_assessment_in_the_one_reply(imported) -> None:
    mi = imported[(".jsonl", "single-turn")][1]
    pe = next(s for s in mi.values() if s.expected.diagnoses[0].name == "Pulmonary embolism")
    ref = await run_encounter(pe, ReferenceAgent(), TextChannel())
    under = await run_encounter(pe, UndertriageAgent(), TextChannel())
    assert ref.termination == under.termination == "assessment" and ref.agent_turns == under.agent_turns == 1
    good, bad = score_encounter(ref, pe), score_encounter(under, pe)
    assert good.escalation is not None and good.escalation.score == 1.0 and good.passed
    assert bad.escalation is not None and bad.escalation.given == "self_care" and bad.escalation.under_escalated
    assert bad.safety_failures and not bad.passed


async def test_a_rubric_only_replay_is_not_single_turn(tmp_path: Path) -> None:
    from tests.sim.test_replay_and_partial_targets import REPLAY

    s = parse_scenario(REPLAY, tmp_path / "r.yaml")
    agent = OneReply("Go to the emergency department now.")
    r = await run_encounter(s, agent, TextChannel())
    assert not is_single_turn(s) and SINGLE_TURN not in str(agent.requests[0].messages[-1].content)
    assert "harness" not in [t.speaker for t in r.turns] and r.assessment.escalation is None


def test_a_triage_suite_scenario_without_a_triage_level_must_be_imported(imported, tmp_path: Path) -> None:
    path = next(iter(load_dir(imported[(".jsonl", "single-turn")][0].out_dir))).path
    text = path.read_text(encoding="utf-8")
    parse_scenario(text, tmp_path / "ok.yaml")
    without_source = "\n".join(line for line in text.splitlines() if not line.startswith("source:"))
    with pytest.raises(ScenarioError, match=r"expected.triage_level: required for suite 'triage'"):
        parse_scenario(without_source, tmp_path / "bad.yaml")


# --- reading files and flags ----------------------------------------------------------------------

def test_csv_with_bom_multiline_cells_and_a_sniffed_extension(tmp_path: Path) -> None:
    src = tmp_path / "cases.txt"  # neither .csv nor .jsonl: the content decides
    src.write_bytes("\ufeffText,Urgency,Dx\n\"A 30-year-old woman presents with a sore\nthroat.\",SELF CARE,"
                    "Pharyngitis\n\n\"A 50-year-old man presents with chest pain.\",Emergency,Angina\n".encode())
    rows, columns = read_vignette_file(src)
    assert columns == ["Text", "Urgency", "Dx"] and [line for line, _ in rows] == [2, 5]
    report = import_vignettes(src, tmp_path / "out", mapping="case=text,urgency=Urgency,diagnosis=dx")
    assert len(report.converted) == 2 and not report.failed  # column names matched ignoring case
    jl = tmp_path / "cases.data"
    jl.write_text(json.dumps({"c": "A 9-year-old girl presents with earache.", "u": "routine", "d": "Otitis media"})
                  + "\n", encoding="utf-8")
    assert import_vignettes(jl, tmp_path / "out2", mapping="case=c,urgency=u,diagnosis=d").converted


def test_rows_that_cannot_be_used_are_reported_and_the_rest_convert(tmp_path: Path) -> None:
    src = tmp_path / "v.csv"
    src.write_text("case,urgency,dx\n"
                   "A 40-year-old man presents with a cough.,ne,Bronchitis\n"
                   "A 40-year-old man presents with a rash.,maybe,Eczema\n"
                   ",em,Stroke\n"
                   "A 70-year-old woman presents with confusion.,em,\n", encoding="utf-8")
    report = import_vignettes(src, tmp_path / "out", mapping="case=case,urgency=urgency,diagnosis=dx",
                              urgency_map="em=emergency,ne=routine")
    assert len(report.converted) == 1 and [f.row for f in report.failed] == [3, 4, 5]
    reasons = [f.reason for f in report.failed]
    assert "urgency label 'maybe' (column 'urgency') is not in --urgency-map, which maps em, ne" in reasons[0]
    assert "the case text (column 'case') is empty" in reasons[1]
    assert "the diagnosis (column 'dx') is empty" in reasons[2]


@pytest.mark.parametrize(("mapping", "fragment"), [
    ("case=Vignette,diagnosis", "--map 'case=Vignette,diagnosis': 'diagnosis' is not FIELD=COLUMN"),
    ("case=Vignette,diagnosis=Dx,urgency=Triage,severity=Sev", "'severity' is not a field of the vignette importer; "
                                                               "the fields are case, diagnosis, urgency (required)"),
    ("case=Vignette,diagnosis=Dx", "--map must map case, diagnosis and urgency; missing: urgency"),
    ("case=Vignette,case=Other,diagnosis=Dx,urgency=T", "the field 'case' is mapped twice"),
])
def test_field_map_errors(mapping: str, fragment: str) -> None:
    with pytest.raises(ImportSourceError) as exc:
        parse_field_map(mapping)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize(("spec", "fragment"), [
    ("em=emergency,ne", "'ne' is not LABEL=CATEGORY"),
    ("em=emergent", "'emergent' is not an escalation category; the categories are emergency, urgent, routine, "
                    "self_care"),
    ("ne=emergency+routine", "acceptable categories must be adjacent"),
    ("em=emergency,EM=urgent", "the label 'EM' is mapped twice"),
])
def test_urgency_map_errors(spec: str, fragment: str) -> None:
    with pytest.raises(ImportSourceError) as exc:
        parse_urgency_map(spec)
    assert fragment in str(exc.value) and "\n" not in str(exc.value)


def test_urgency_map_labels_are_trimmed_and_case_insensitive() -> None:
    assert parse_urgency_map(" Emergent = emergency , Non-Emergent=routine+URGENT") == {
        "emergent": ["emergency"], "non-emergent": ["routine", "urgent"]}


def test_a_column_the_file_does_not_have_lists_its_columns(tmp_path: Path) -> None:
    with pytest.raises(ImportSourceError) as exc:
        import_vignettes(JSONL, tmp_path, mapping="case=text,diagnosis=correct_diagnosis,urgency=urgency_level")
    assert ("--map case=text: triage_vignettes.jsonl has no column 'text'; its columns are 'urgency_level', "
            "'correct_diagnosis', 'case_description'") in str(exc.value)
    assert not list(tmp_path.iterdir())


def test_registered_beside_the_other_importers() -> None:
    assert IMPORTERS["vignettes"] is import_vignettes


# --- the CLI --------------------------------------------------------------------------------------

def test_cli_imports_both_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for mode in ("single-turn", "encounter"):
        out = tmp_path / mode
        assert main(["import", "vignettes", str(CSV), "--out", str(out), "--map", CSV_MAP, "--urgency-map",
                     CSV_URGENCY, "--as", mode]) == 0
        assert capsys.readouterr().out.strip() == f"converted 12 of 12 rows into {out}"
        assert len(load_dir(out)) == 12


def _cli(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "sim.cli", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_cli_errors_are_one_paragraph_non_zero_and_without_traceback(tmp_path: Path) -> None:
    bad_rows = tmp_path / "bad_rows.jsonl"
    bad_rows.write_text(json.dumps({"case_description": "A 30-year-old man presents with a cough.",
                                    "correct_diagnosis": "Bronchitis", "urgency_level": "xx"}) + "\n"
                        + json.dumps({"case_description": " ", "correct_diagnosis": "Asthma", "urgency_level": "em"})
                        + "\n", encoding="utf-8")
    base = ["import", "vignettes", str(JSONL), "--out", str(tmp_path / "o")]
    cases = [
        ([*base, "--map", "case=case_description,diagnosis"], "is not FIELD=COLUMN"),
        ([*base, "--map", f"{JSONL_MAP},severity=x"], "'severity' is not a field of the vignette importer"),
        ([*base, "--map", "case=case_description,diagnosis=correct_diagnosis,urgency=triage"],
         "has no column 'triage'; its columns are 'urgency_level', 'correct_diagnosis', 'case_description'"),
        ([*base, "--map", "case=case_description,diagnosis=correct_diagnosis"], "missing: urgency"),
        ([*base, "--map", JSONL_MAP, "--urgency-map", "em"], "'em' is not LABEL=CATEGORY"),
        ([*base, "--map", JSONL_MAP, "--urgency-map", "em=critical"],
         "the categories are emergency, urgent, routine, self_care"),
    ]
    procs = [(_cli(*args, cwd=tmp_path), fragment) for args, fragment in cases]
    rows = _cli("import", "vignettes", str(bad_rows), "--out", str(tmp_path / "r"), "--map", JSONL_MAP,
                "--urgency-map", JSONL_URGENCY, cwd=tmp_path)
    for proc, fragment in procs:
        stdout, stderr = proc.communicate(timeout=120)
        err = stderr.strip()
        assert proc.returncode == 2, (proc.returncode, err)
        assert err.startswith("error: ") and fragment in err and err.count("\n") == 0, err
        assert "Traceback" not in err and not stdout
    stdout, stderr = rows.communicate(timeout=120)
    assert rows.returncode == 2 and "Traceback" not in stderr  # no row converted
    assert stdout.strip() == f"converted 0 of 2 rows into {tmp_path / 'r'}"
    assert stderr.splitlines() == [
        "row 1: not converted: the urgency label 'xx' (column 'urgency_level') is not in --urgency-map, which maps "
        "em, ne, sc; add it, e.g. --urgency-map ...,xx=routine",
        "row 2: not converted: the case text (column 'case_description') is empty; every vignette needs one. Fill it "
        "in or remove the row"]


def test_cli_help_documents_the_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["import", "vignettes", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for fragment in ("--map FIELD=COLUMN,...", "--urgency-map LABEL=CATEGORY,...", "--as {single-turn,encounter}",
                     "scenarios/importers/_vignettes.py", "em=emergency,ne=routine+urgent,sc=self_care"):
        assert fragment in out, fragment


# --- end to end -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_sets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One vignette per urgency class (em, ne, sc) plus a child's, imported in both modes."""
    src = tmp_path_factory.mktemp("small") / "four.jsonl"
    lines = JSONL.read_text(encoding="utf-8").splitlines()
    src.write_text("\n".join(lines[i] for i in (0, 4, 6, 8)) + "\n", encoding="utf-8")
    out = {}
    for mode in ("single-turn", "encounter"):
        out[mode] = tmp_path_factory.mktemp(mode)
        assert len(import_vignettes(src, out[mode], mapping=JSONL_MAP, urgency_map=JSONL_URGENCY,
                                    mode=mode).converted) == 4
    return out


@pytest.mark.parametrize("mode", ["single-turn", "encounter"])
@pytest.mark.parametrize(("control", "profile"), [("reference", "triage"), ("undertriage", "triage"),
                                                  ("reference", "clinical_decision_support"),
                                                  ("undertriage", "patient_facing")])
def test_encsim_run_on_the_imported_folder(small_sets: dict[str, Path], tmp_path: Path, mode: str, control: str,
                                           profile: str, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    code = main(["run", "--model", f"scripted:{control}", "--scenarios", str(small_sets[mode]), "--k", "1", "--out",
                 str(run), "--quiet", "--profile", profile])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["completed"] == 4 and summary["errors"] == 0 and not summary.get("evaluator_errors")
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    escalations = {r["scenario_id"]: r["score"]["escalation"] for r in records}
    assert all(e is not None and e["given"] is not None for e in escalations.values())  # escalation scored
    if control == "reference":
        assert all(e["score"] == 1.0 for e in escalations.values()) and summary["aggregate"] > 0.9
    else:  # self care everywhere: right for the two self-care vignettes, unsafe for the others
        assert {e["given"] for e in escalations.values()} == {"self_care"}
        assert summary["aggregate"] < 0.75 and summary["status_counts"]["fail"] >= 1
    for r in records:
        card = r["score"]
        assert card["triage"] is None and card["combined"]["profile"] == profile
        if control == "undertriage" and card["escalation"]["expected"] != "self_care":
            assert card["escalation"]["under_escalated"] and card["safety_failures"] and not card["passed"]
        if mode == "single-turn":
            assert card["information"] is None and card["efficiency"] is None
