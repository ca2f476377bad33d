"""`encsim import agentclinic --fetch-images` end to end: rows of the public NEJM dev file pointed at a loopback server
that serves generated images and misbehaves on purpose; every failure is named, the rest of the import goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios import load_dir
from sim.cli import main
from tests.imageserver import ImageServer, closed_port
from tests.public_data import NEJM_DEV

ROWS = [json.loads(line) for line in NEJM_DEV.read_text(encoding="utf-8").splitlines()][:8]
BAD = {3: "html", 4: "big", 5: "loop"}  # row -> how its image misbehaves; row 6's host is unreachable


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


def _source(tmp_path: Path, srv: ImageServer) -> Path:
    lines = []
    for n, row in enumerate(ROWS, start=1):
        image_id = f"CASE{n}"
        url = f"http://127.0.0.1:{closed_port()}/images?id={image_id}" if n == 6 else srv.url(image_id)
        if n in BAD:
            srv.modes[image_id] = BAD[n]
        lines.append(json.dumps({**row, "image_url": url}))
    src = tmp_path / "nejm_loopback.jsonl"
    src.write_text("\n".join(lines) + "\n")
    return src


def test_fetch_import_names_each_failure_and_goes_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    with ImageServer() as srv:
        src = _source(tmp_path, srv)
        args = ["import", "agentclinic", str(src), "--out", str(out), "--fetch-images", "--fetch-delay", "0",
                "--max-image-mb", "0.1"]
        assert main(args) == 0
        first = capsys.readouterr()
        asked = len(srv.requests)
        assert main(args) == 0  # again: the images already there are not downloaded again
        second = capsys.readouterr()
        assert len(srv.requests) - asked == 3 + 5  # the three refused answers are asked for again (loop: 1 + 5)
    assert f"converted 8 of 8 rows into 16 scenarios (8 imaging items, 8 encounters) in {out}" in first.out
    assert "images: 4 fetched, 0 already present, 1 missing, 3 refused" in first.out
    assert "images: 0 fetched, 4 already present, 1 missing, 3 refused" in second.out
    assert "4 case(s) without their image were imported as text only" in first.out
    err = first.err
    assert "row 3: image refused: CASE3: 127.0.0.1:" in err and "sent text/html, not an image" in err
    assert "row 4: image refused: CASE4:" in err and "over the 102 KiB limit" in err
    assert "row 5: image refused: CASE5:" in err and "more than 5 redirects" in err
    assert "row 6: image missing: CASE6:" in err and "is unreachable (ConnectError" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in (out / "images").iterdir()) == [f"CASE{n}.png" for n in (1, 2, 7, 8)]
    report = json.loads((out / "import_report.json").read_text())
    assert report["image_counts"] == {"fetched": 0, "present": 4, "missing": 1, "refused": 3}  # the second import's
    by_row = {o["row"]: o for o in report["images"]}
    assert by_row[3]["status"] == "refused" and "text/html" in by_row[3]["reason"]
    assert by_row[6]["status"] == "missing" and by_row[1]["file"] == "images/CASE1.png"
    scenarios = {i.scenario.source.rsplit("#", 1)[1] + i.scenario.suite: i.scenario for i in load_dir(out)}
    assert len(scenarios) == 16
    for n in range(1, 9):
        item, enc = scenarios[f"{n}imaging"], scenarios[f"{n}ddx"]
        assert item.imaging is not None
        if n in (1, 2, 7, 8):
            assert item.imaging.images[0].path == f"images/CASE{n}.png" and item.imaging.image_unavailable is None
            assert any(f.image is not None for f in enc.information_tree)
            assert "image:not_available" not in item.tags
        else:
            assert item.imaging.images == [] and "image:not_available" in item.tags + enc.tags
            assert not any(f.image is not None for f in enc.information_tree)


def test_images_flag_needs_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "no_such_folder"
    assert main(["import", "agentclinic", str(NEJM_DEV), "--out", str(tmp_path / "out"), "--images",
                 str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --images {missing}: does not exist.") and "\n" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("flags", "fragment"), [
    (["--images", ".", "--fetch-images"], "not allowed with argument"),
    (["--max-image-mb", "0"], "--max-image-mb must be a number above 0"),
    (["--fetch-delay", "-1"], "--fetch-delay must be a number of at least 0"),
])
def test_bad_image_flags_are_one_paragraph(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
                                           fragment: str) -> None:
    assert main(["import", "agentclinic", str(NEJM_DEV), "--out", str(tmp_path / "out"), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and fragment in err and "\n" not in err and "Traceback" not in err
