"""A clean clone runs with nothing beside it: no file of the project reads a folder next to the checkout, the
public files it needs are vendored with their sources and licences, and every library image is in the package.

.ci/run also runs the whole suite with the folder beside the checkout hidden (an empty mount over it), so a read
that this scan cannot see fails there too."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from scenarios import load_library
from tests import public_data

ROOT = Path(__file__).resolve().parents[1]
SIBLING = "shared"  # the name of the folder that sits beside the checkout on the team's machines
# spelled in pieces so that this file does not match what it looks for
PATTERNS = [re.compile(p) for p in (
    r"\.\./" + SIBLING + r"\b",
    "ENCSIM_" + SIBLING.upper() + "_DATA",
    r"parents?(\[\d\])?\s*/\s*['\"]" + SIBLING + "['\"]",
    r"['\"]" + SIBLING + r":[\w./-]+['\"]",
)]
VENDORED = {  # path under tests/data/public -> sha256 (tests/data/public/README.md gives sources and licences)
    "speech/whisper_jfk.flac": "63a4b1e4c1dc655ac70961ffbf518acd249df237e5a0152faae9a4a836949715",
    "speech/speechrecognition_english_one_two_three.wav":
        "a7c98ae0f53d5f4cd166483f807ebf9643a86e1e13da0c20b9d4f1c1f05a1d0a",
    "agentclinic/agentclinic_medqa.jsonl": "d91038a2984f21bb1d43edd88c7958d090ef42ba80f5be487b22b903bf3a35ea",
    "agentclinic/agentclinic_nejm_dev.jsonl": "e7673fe3526ce0ebd1a64614f537639cf3128541fea5a66ad10a50b65a4f043b",
}


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout (an sdist): walk the tree instead
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not {".venv", ".git", "runs", "__pycache__"} & set(p.relative_to(ROOT).parts)]
    return [ROOT / n for n in names]


def test_no_file_reads_a_folder_beside_the_checkout() -> None:
    texts = [p for p in tracked_files() if p.suffix in {".py", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".sh", ""}
             and p.is_file()]
    assert len(texts) > 100
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in texts
            for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if any(pat.search(line) for pat in PATTERNS)]
    assert not hits, "these lines read a folder beside the checkout, which a clone does not have:\n" + "\n".join(hits)


def test_the_scan_would_see_such_a_read(tmp_path: Path) -> None:
    lines = ['DATA = ROOT.parent / "' + SIBLING + '" / "data"', 'p = Path("../' + SIBLING + '/data/x.flac")',
             'os.environ["ENCSIM_' + SIBLING.upper() + '_DATA"]', 'path: "' + SIBLING + ':imaging/x.png"',
             'SPEECH = Path(__file__).parents[3] / "' + SIBLING + '" / "data"']
    assert all(any(p.search(line) for p in PATTERNS) for line in lines)
    assert not any(p.search("the shared scoring core; shared_scenarios = 3") for p in PATTERNS)


@pytest.mark.parametrize("rel", sorted(VENDORED))
def test_vendored_public_files_are_the_recorded_ones(rel: str) -> None:
    path = public_data.PUBLIC / rel
    assert hashlib.sha256(path.read_bytes()).hexdigest() == VENDORED[rel]
    readme = (public_data.PUBLIC / "README.md").read_text()
    assert f"`{rel}`" in readme and VENDORED[rel][:8] in readme
    licence = {"speech/whisper_jfk.flac": None, "speech/speechrecognition_english_one_two_three.wav":
               "speech/speech_recognition_LICENSE.txt"}.get(rel, "agentclinic/LICENSE.txt")
    assert licence is None or (public_data.PUBLIC / licence).is_file()


def test_every_library_image_ships_and_resolves() -> None:
    from imaging import prepare_image

    images = [(item, ref) for item in load_library() for ref in item.scenario.image_refs]
    assert len(images) >= 10
    for item, ref in images:
        assert not ref.path.startswith(SIBLING + ":"), item.scenario.id
        prepare_image(ref.path, base_dir=item.path.parent)  # raises ImagingError if the file is not there
    folder = ROOT / "scenarios" / "library" / "images"
    sources = (folder / "SOURCES.md").read_text()
    assert "nih_00000001_000.png" in sources and "CVPR 2017" in sources
    assert hashlib.sha256((folder / "nih_00000001_000.png").read_bytes()).hexdigest() in sources
