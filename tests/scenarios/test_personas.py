"""Persona presets (scenarios.personas), the lay table loader (scenarios.lay) and the lexicon's broad flag."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from scenarios import Scenario
from scenarios.lay import LayTableError, lay_words, to_lay
from scenarios.lexicon import broad_intents, load_lexicon
from scenarios.personas import DEFAULT_PERSONA, PERSONA_PRESETS, PersonaError, parse_personas, with_persona
from scenarios.schema import RED_FLAG_BARGE_IN_AFTER_S, VoiceBlock


def test_the_presets_the_sweep_names() -> None:
    assert list(PERSONA_PRESETS) == ["default", "poor-recall", "minimiser", "catastrophiser", "rambling", "lay",
                                     "carer", "limited-english", "red-flag-barge-in"]
    assert all(p.description for p in PERSONA_PRESETS.values())


def test_with_persona_overlays_only_its_fields(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["geriatric_fall_anticoagulant"]  # its own persona: confused, lay, low anxiety, recall poor
    assert with_persona(scenario, DEFAULT_PERSONA) is scenario
    carer = with_persona(scenario, "carer")
    own, now = scenario.patient_profile.persona, carer.patient_profile.persona
    assert now.relay and not own.relay
    assert (now.speaking_style, now.vocabulary, now.anxiety, now.recall) == (own.speaking_style, own.vocabulary,
                                                                            own.anxiety, own.recall)
    assert carer.information_tree == scenario.information_tree and carer.id == scenario.id
    minimiser = with_persona(scenario, "minimiser").patient_profile.persona
    assert minimiser.speaking_style == "minimiser" and minimiser.recall == "poor"
    assert with_persona(by_id["acs_chest_pain"], "limited-english").patient_profile.persona.language == "limited"


def test_the_voice_block_parses_the_red_flag_barge_in_and_its_default_delay(by_id: dict[str, Scenario]) -> None:
    assert VoiceBlock().barge_in_red_flag is False and VoiceBlock().barge_in_after() is None
    on = VoiceBlock.model_validate({"barge_in_red_flag": True})
    assert on.barge_in_after() == RED_FLAG_BARGE_IN_AFTER_S == 3.0
    assert VoiceBlock.model_validate({"barge_in_red_flag": True, "barge_in_after_s": 1.5}).barge_in_after() == 1.5
    assert VoiceBlock.model_validate({"barge_in_after_s": 2.0}).barge_in_after() == 2.0
    with pytest.raises(ValidationError, match="barge_in_red_flag"):
        VoiceBlock.model_validate({"barge_in_red_flag": "sometimes"})
    data = by_id["acs_chest_pain"].model_dump(mode="json", exclude_none=True)
    data["voice"] = {"preset": "phone", "barge_in_red_flag": True}
    assert Scenario.model_validate(data).voice == VoiceBlock(preset="phone", barge_in_red_flag=True)
    data["voice"] = {"barge_in_red_flags": True}
    with pytest.raises(ValidationError, match="barge_in_red_flags"):  # a misspelt option is an error, not ignored
        Scenario.model_validate(data)


def test_the_red_flag_barge_in_preset_turns_it_on_and_keeps_the_rest(by_id: dict[str, Scenario]) -> None:
    scenario = by_id["acs_chest_pain"]  # no voice block
    told = with_persona(scenario, "red-flag-barge-in")
    assert told.voice == VoiceBlock(barge_in_red_flag=True) and scenario.voice is None
    assert told.patient_profile == scenario.patient_profile and told.information_tree == scenario.information_tree
    own = scenario.model_copy(update={"voice": VoiceBlock(preset="bad-line", yield_on_overlap=False,
                                                          barge_in_after_s=2.0)})
    assert with_persona(own, "red-flag-barge-in").voice == VoiceBlock(preset="bad-line", yield_on_overlap=False,
                                                                      barge_in_after_s=2.0, barge_in_red_flag=True)
    assert with_persona(own, "carer").voice == own.voice  # a text preset leaves the voice block alone


def test_parse_personas_keeps_order_and_drops_repeats() -> None:
    assert parse_personas("default, carer,default,,lay") == ["default", "carer", "lay"]
    assert parse_personas(["minimiser"]) == ["minimiser"]


@pytest.mark.parametrize(("text", "needle"), [("", "give at least one persona"), (" , ", "give at least one"),
                                              ("default,shouty", "unknown persona 'shouty'")])
def test_parse_personas_errors_name_the_flag_in_one_paragraph(text: str, needle: str) -> None:
    with pytest.raises(PersonaError) as info:
        parse_personas(text)
    message = str(info.value)
    assert message.startswith("--personas") and needle in message and "\n" not in message
    assert "poor-recall" in message  # says what is known


def test_with_persona_rejects_an_unknown_name(by_id: dict[str, Scenario]) -> None:
    with pytest.raises(PersonaError, match="unknown persona 'grumpy'"):
        with_persona(by_id["acs_chest_pain"], "grumpy")


def test_the_lay_table_loads_and_a_broken_one_names_the_file(tmp_path: Path) -> None:
    table = lay_words()
    assert table["abdomen"] == "tummy" and table["ECG"] == "heart tracing" and table["urination"] == "waterworks"
    bad = tmp_path / "lay.yaml"
    bad.write_text("words:\n  abdomen: ''\n")
    with pytest.raises(LayTableError, match=r"lay\.yaml: not a lay table at words: .*non-blank"):
        lay_words(bad)
    bad.write_text("words: [unclosed\n")
    with pytest.raises(LayTableError, match="cannot read the lay table"):
        lay_words(bad)


def test_a_custom_table_is_used(tmp_path: Path) -> None:
    table = tmp_path / "lay.yaml"
    table.write_text("words:\n  pyrexia: a temperature\n")
    assert to_lay("Pyrexia since Monday.", table) == "A temperature since Monday."


def test_broad_intents_are_marked_in_the_lexicon() -> None:
    assert {"presenting_complaint", "other_symptoms"} <= broad_intents()
    assert not load_lexicon().intents["chest_pain"].broad
