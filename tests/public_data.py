"""The public files the tests read, vendored under ``tests/data/public`` (sources and licences in its README.md).

Nothing here reads a folder beside the checkout: a clean clone alone runs the suite.
"""

from pathlib import Path

PUBLIC = Path(__file__).resolve().parent / "data" / "public"
SPEECH = PUBLIC / "speech"
JFK = SPEECH / "whisper_jfk.flac"
ONE_TWO_THREE = SPEECH / "speechrecognition_english_one_two_three.wav"
AGENTCLINIC = PUBLIC / "agentclinic"
MEDQA = AGENTCLINIC / "agentclinic_medqa.jsonl"
NEJM_DEV = AGENTCLINIC / "agentclinic_nejm_dev.jsonl"
NIH_XRAY = Path(__file__).resolve().parents[1] / "scenarios" / "library" / "images" / "nih_00000001_000.png"
