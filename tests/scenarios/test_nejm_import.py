"""AgentClinic's NEJM image cases: every row of the public dev file becomes an imaging item and an encounter, the
patient's second-person brief is told in the first person, a case without its image is imported as text only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scenarios import load_dir
from scenarios.importers import (
    ImportSourceError,
    ProvidedImage,
    RowContext,
    RowError,
    convert_agentclinic_row,
    image_name,
    import_agentclinic,
)
from scenarios.importers._nejm import nejm_converter, read_case
from scenarios.importers._second_person import to_first_person, to_third_person
from scenarios.schema import Scenario
from scorers import score_encounter
from sim.agents.scripted import ReferenceAgent
from sim.encounter import run_encounter
from sim.encounter.channel import TextChannel
from tests.public_data import NEJM_DEV
from tests.scenarios.test_loader import assert_every_fact_revealable

CTX = RowContext(line=1, file_name="nejm.jsonl")
ROWS = [json.loads(line) for line in NEJM_DEV.read_text(encoding="utf-8").splitlines()]
# what the patient says (not a finding the agent reads, not the image)
SPOKEN = ("history", "symptoms", "past_history", "medications", "allergies", "social", "family_history", "obstetric")


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, dict[str, Scenario]]:
    out = tmp_path_factory.mktemp("nejm")
    report = import_agentclinic(NEJM_DEV, out)
    return out, report, {item.scenario.id: item.scenario for item in load_dir(out)}


@pytest.mark.parametrize(("brief", "patient"), [
    ("You are a 55-year-old woman who has noticed your skin darkening.",
     "I am a 55-year-old woman who has noticed my skin darkening."),
    ("You have been experiencing a dry cough and you're worried.",
     "I have been experiencing a dry cough and I'm worried."),
    ("You've noticed that your arm is swollen.", "I've noticed that my arm is swollen."),
    ("You are tired and are short of breath.", "I am tired and am short of breath."),
    ("You weren't sure, so you were seen by a doctor who told you that you have anemia.",
     "I wasn't sure, so I was seen by a doctor who told me that I have anemia."),
    ("They found you have more eosinophils, which helps you breathe.",
     "They found I have more eosinophils, which helps me breathe."),
    ("You feel like you can't tell where your limbs are.", "I feel like I can't tell where my limbs are."),
    ("The rash doesn't bother you, and you treated it yourself.",
     "The rash doesn't bother me, and I treated it myself."),
])
def test_second_person_to_first(brief: str, patient: str) -> None:
    assert to_first_person(brief) == patient


@pytest.mark.parametrize(("brief", "pronoun", "told"), [
    ("You have had fevers and you haven't eaten.", "he", "He has had fevers and he hasn't eaten."),
    ("You are 5 years old and you feel pain when you walk.", "she",
     "She is 5 years old and she feels pain when she walks."),
    ("You also notice swelling and have pain; your mother is worried.", "he",
     "He also notices swelling and has pain; his mother is worried."),
    ("You don't know the results.", "they", "They don't know the results."),
])
def test_second_person_to_third_for_a_parent(brief: str, pronoun: str, told: str) -> None:
    assert to_third_person(brief, pronoun) == told


def test_every_row_converts_as_an_item_and_an_encounter(dev) -> None:
    out, report, scenarios = dev
    assert report.rows == 60 and report.failed == [] and report.converted_rows == list(range(1, 61))
    items = [s for s in scenarios.values() if s.suite == "imaging"]
    encounters = [s for s in scenarios.values() if s.suite == "ddx"]
    assert len(items) == len(encounters) == 60 and len(report.converted) == 120
    assert {s.source for s in items} == {s.source for s in encounters} == {
        f"agentclinic:{NEJM_DEV.name}#{i}" for i in range(1, 61)}
    # no image source given: every image missing, each case imported as text only and counted, none dropped
    assert report.image_counts() == {"fetched": 0, "present": 0, "missing": 60, "refused": 0}
    assert [o.row for o in report.images] == list(range(1, 61)) and all(o.reason for o in report.images)
    for s in scenarios.values():
        assert "image:not_available" in s.tags and "nejm" in s.tags and any(t.startswith("image_type:") for t in s.tags)
    for s in items:
        task = s.imaging
        assert task is not None and task.images == [] and task.image_unavailable.startswith("image not available")
        assert task.answer_type == "multiple_choice" and len(task.choices) >= 2


def test_items_keep_the_question_choices_and_answer(dev) -> None:
    _, _, scenarios = dev
    for row_no, row in enumerate(ROWS, start=1):
        item = next(s for s in scenarios.values() if s.suite == "imaging" and s.source.endswith(f"#{row_no}"))
        task = item.imaging
        assert task is not None
        assert task.question == " ".join(row["question"].split())
        assert task.choices == [" ".join(a["text"].split()) for a in row["answers"]]
        right = next(i for i, a in enumerate(row["answers"]) if a["correct"])
        assert task.answer == "ABCDEFGH"[right]
        types = row["type"] if isinstance(row["type"], list) else [row["type"]]
        assert {t for t in item.tags if t.startswith("image_type:")} == {f"image_type:{t}" for t in types}


def test_encounters_speak_in_the_first_person(dev) -> None:
    """The brief to the actor ("you ...") is what the patient says ("I ..."), never an actor's instruction."""
    _, _, scenarios = dev
    wrong_person = re.compile(r"\b(?:you|your|yours|yourself)\b", re.I)
    bad_agreement = re.compile(r"\bI (?:has|is|are|does|were)\b|\b(?:he|she) (?:have|are|were|don't|haven't)\b")
    notes = re.compile(r"\b(?:actor|portray\w*|your role|character|remember,)\b", re.I)
    spoken = 0
    for s in scenarios.values():
        if s.suite != "ddx":
            continue
        for text in [s.opening_line, *(f.answer for f in s.information_tree if f.category.value in SPOKEN)]:
            spoken += 1
            assert not wrong_person.search(text), (s.id, text)
            assert not bad_agreement.search(text), (s.id, text)
            assert not notes.search(text), (s.id, text)
    assert spoken > 300


def test_one_case_in_detail(dev) -> None:
    _, _, scenarios = dev
    enc = next(s for s in scenarios.values() if s.suite == "ddx" and s.source.endswith("#1"))
    item = next(s for s in scenarios.values() if s.suite == "imaging" and s.source.endswith("#1"))
    assert enc.id.startswith("acnejm_enc_exogenous_ochronosis_") and item.id.startswith("acnejm_item_exogenous_")
    assert (enc.patient_profile.age, enc.patient_profile.sex, enc.patient_profile.speaker) == (55, "female", "patient")
    assert enc.opening_line == "I've come in because of my skin darkening on my face."
    assert enc.expected.diagnoses[0].name == "Exogenous ochronosis" and enc.turn_limit == 20
    history = [f.answer for f in enc.information_tree if f.category.value == "history"]
    assert history[0] == "I am a 55-year-old woman who has noticed my skin darkening on my face over the past year."
    exam = next(f for f in enc.information_tree if f.category.value == "exam")
    assert exam.answer.startswith("On examination: Bluish-brown patches") and "(left)" not in exam.answer
    assert "physical_exam" in exam.intents and exam.critical
    tests = {f.id: f for f in enc.information_tree if f.category.value == "test"}
    biopsy = next(f for fid, f in tests.items() if fid.startswith("test_skin_biopsy"))
    assert biopsy.answer.startswith("The skin biopsy results show: Extracellular deposition of yellow-brown")
    assert "test_pathology" in biopsy.intents and biopsy.critical
    assert item.imaging is not None and item.imaging.answer == "C" and item.imaging.modality == "photo"
    assert item.expected.escalation is None and "question:diagnosis" in item.tags


def test_a_child_is_brought_by_a_parent(dev) -> None:
    _, _, scenarios = dev
    boy = next(s for s in scenarios.values() if s.suite == "ddx" and s.source.endswith("#35"))
    assert boy.patient_profile.speaker == "parent" and "voice:carer" in boy.tags
    assert boy.opening_line == "I've brought my son in because of his intermittent abdominal pain."
    assert any(f.answer.startswith("He hasn't experienced any other symptoms") for f in boy.information_tree)


def test_questions_that_do_not_ask_the_diagnosis_are_tagged_and_warned(dev) -> None:
    _, report, scenarios = dev
    other = {s.source for s in scenarios.values() if "question:other" in s.tags}
    warned = {f"agentclinic:{NEJM_DEV.name}#{w.row}" for w in report.warnings if "question:other" in w.message}
    assert other and other == warned
    vector = next(w for w in report.warnings if "'Mosquito'" in w.message)
    assert "What vector is responsible" in vector.message


def test_every_fact_revealable(dev) -> None:
    _, _, scenarios = dev
    assert_every_fact_revealable([s for s in scenarios.values() if s.suite == "ddx"])


async def test_the_reference_control_names_every_diagnosis(dev) -> None:
    _, _, scenarios = dev
    for s in scenarios.values():
        if s.suite != "ddx":
            continue
        result = await run_encounter(s, ReferenceAgent(), TextChannel())
        card = score_encounter(result, s)
        assert card.diagnosis is not None and card.diagnosis.top1, (s.id, result.assessment.diagnoses)


def test_an_image_fact_is_shared_when_asked(tmp_path: Path) -> None:
    """With its image the encounter has one more fact: the image, revealed when the agent asks to see it."""

    class Present:
        def start(self, total: int) -> None: ...

        def provide(self, url: str, name: str, folder: Path) -> ProvidedImage:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.png").write_bytes(b"x")
            return ProvidedImage("present", folder / f"{name}.png", "a test's file")

        def finish(self) -> None: ...

    outcomes: list = []
    scenarios = nejm_converter(tmp_path, Present(), outcomes)(ROWS[1], RowContext(line=2, file_name="f.jsonl"))
    item, enc = (c.data for c in scenarios)
    assert outcomes[0].file == "images/IC20240118.png" and outcomes[0].status == "present"
    assert item["imaging"]["images"][0]["path"] == "images/IC20240118.png" and "image_unavailable" not in \
        item["imaging"]
    image = enc["information_tree"][-1]
    assert image["image"]["path"] == "images/IC20240118.png" and image["critical"]
    assert {"photo", "test_imaging", "test_pathology"} <= set(image["intents"])
    assert "image:not_available" not in enc["tags"] and image["answer"].startswith("Here are the pictures I was given")
    assert Scenario.model_validate(enc) and Scenario.model_validate(item)


def test_image_names_come_from_the_url() -> None:
    assert image_name("https://csvc.nejm.org/ContentServer/images?id=IC20240111&width=1500&height=4000") == \
        "IC20240111"
    assert image_name("https://example.org/cases/rash%20photo.JPG") == "rash_20photo"
    assert image_name("https://example.org/").startswith("image_")


@pytest.mark.parametrize(("change", "fragment"), [
    ({"answers": [{"text": "A", "correct": False}, {"text": "B", "correct": False}]}, "marks 0 choices correct"),
    ({"answers": [{"text": "A", "correct": True}, {"text": "B", "correct": True}]}, "marks 2 choices correct"),
    ({"answers": [{"text": "A", "correct": True}]}, "at least two choices"),
    ({"answers": [{"text": " ", "correct": True}, {"text": "B", "correct": False}]}, "answers\\[0\\] has no 'text'"),
    ({"question": ""}, "'question' is missing"),
    ({"patient_info": None}, "'patient_info' is missing"),
])
def test_row_checks(change: dict, fragment: str) -> None:
    with pytest.raises(RowError, match=fragment):
        read_case({**ROWS[0], **change})


def test_a_row_of_neither_shape_says_both(tmp_path: Path) -> None:
    with pytest.raises(RowError, match="NEJM image case"):
        convert_agentclinic_row({"image_url": "x", "question": "?"}, CTX)


def test_a_row_without_url_or_type_is_text_only_and_other(tmp_path: Path) -> None:
    src = tmp_path / "one.jsonl"
    row = {k: v for k, v in ROWS[5].items() if k not in ("image_url", "type")}
    src.write_text(json.dumps(row) + "\n")
    report = import_agentclinic(src, tmp_path / "out")
    assert len(report.converted) == 2 and report.images[0].reason == "the row has no image_url"
    assert all("image_type:other" in s.scenario.tags for s in load_dir(tmp_path / "out"))
    assert "no 'type'" in report.warnings[0].message


def test_labels_are_refused_for_image_cases(tmp_path: Path) -> None:
    labels = tmp_path / "labels.yaml"
    labels.write_text("labeller: Dr A\nlabels: []\n")
    with pytest.raises(ImportSourceError, match="NEJM image cases .* take no triage labels"):
        import_agentclinic(NEJM_DEV, tmp_path / "out", labels=labels)
    assert not (tmp_path / "out").exists()


def test_an_item_without_images_must_say_why() -> None:
    from pydantic import ValidationError

    from scenarios.schema import ImageRef, ImagingTask

    base = {"question": "?", "answer_type": "multiple_choice", "choices": ["a", "b"], "answer": "A",
            "modality": "photo", "body_part": "skin"}
    with pytest.raises(ValidationError, match="give one to four images"):
        ImagingTask(**base)
    with pytest.raises(ValidationError, match="image_unavailable is only for an item without"):
        ImagingTask(**base, images=[ImageRef(path="x.png", description="d")], image_unavailable="gone")
    assert ImagingTask(**base, image_unavailable="image not available: not fetched").images == []


def test_who_the_patient_is_is_the_profile_not_a_fact_or_the_complaint(dev) -> None:
    from scenarios.importers._nejm import _ONLY_WHO

    assert _ONLY_WHO.match("I am a 59-year-old woman.") and _ONLY_WHO.match("He's a 4-month-old baby boy")
    assert not _ONLY_WHO.match("I am a 60-year-old woman who has come in because my hand is numb.")
    encounters = [s for s in dev[2].values() if s.information_tree]
    assert encounters
    for s in encounters:
        assert not _ONLY_WHO.match(s.opening_line) and not _ONLY_WHO.match(s.chief_complaint), s.id
        assert not [f.id for f in s.information_tree if _ONLY_WHO.match(f.answer)], s.id
