"""Imported NEJM image cases run end to end: the reference control answers every item (image shown) and names every
diagnosis; a text-only model is not applicable on the items that need their image and answers those without one;
report.md gives the accuracy with its CI by image type."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from sim.cli import main
from tests.fakeserver import FakeChatServer
from tests.imageserver import image_bytes
from tests.public_data import NEJM_DEV
from tests.sim.test_cli_errors import encsim

ROWS = [json.loads(line) for line in NEJM_DEV.read_text(encoding="utf-8").splitlines()][:6]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows 1-6 imported with a folder of generated images: row 4's is not there, row 5's is not an image."""
    root = tmp_path_factory.mktemp("nejm_run")
    mine = root / "my_images"
    mine.mkdir()
    for n, row in enumerate(ROWS, start=1):
        name = row["image_url"].split("id=")[1].split("&")[0]
        if n == 5:
            (mine / f"{name}.jpg").write_text("<html>not an image</html>")
        elif n != 4:
            (mine / f"{name}.jpg").write_bytes(image_bytes(name, "JPEG"))
    src = root / "six.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    out = root / "imported"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["import", "agentclinic", str(src), "--out", str(out), "--images", str(mine)]) == 0
    assert "images: 0 fetched, 4 already present (4 copied from --images), 1 missing, 1 refused" in printed.getvalue()
    report = json.loads((out / "import_report.json").read_text())
    assert report["image_counts"] == {"fetched": 0, "present": 4, "missing": 1, "refused": 1}
    return out


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def test_the_reference_scores_one_on_items_and_encounters(imported: Path, tmp_path: Path) -> None:
    done = encsim("run", "--scenarios", str(imported), "--model", "scripted:reference", "--k", "1", "--out",
                  str(tmp_path / "run"), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ia = _summary(tmp_path / "run")["image_accuracy"]
    overall = ia["overall"]
    assert (overall["choice"]["count"], overall["choice"]["n"], overall["choice"]["value"]) == (6, 6, 1.0)
    assert overall["text_only"] == 2 and ia["not_applicable"] == 0
    assert (overall["top1"]["value"], overall["top3"]["value"], overall["top1"]["n"]) == (1.0, 1.0, 6)
    types = {t["image_type"]: t for t in ia["by_type"]}
    assert types["CT scan"]["choice"]["n"] == 3 and types["dermatology"]["choice"]["n"] == 2
    assert "Image accuracy: multiple choice 1.00 [1.00, 1.00] (6/6)" in done.stdout
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    shown = [img["shown"] for r in records if r["scenario_id"].startswith("acnejm_item_")
             for img in r["result"]["turns"][0]["images"]]
    assert sorted(shown) == ["image"] * 4  # the four items with their image showed it; two were text only
    report = (tmp_path / "run" / "report.md").read_text()
    assert "Accuracy by image type:" in report
    assert "| all | 6/6 (2 without image) | 1.00 | 1.00-1.00 | 6 | 1.00 | 1.00-1.00 | 1.00 | 1.00-1.00 |" in report
    assert "| CT scan | 3/3 (1 without image) |" in report
    assert "Accuracy by image type" in (tmp_path / "run" / "report.html").read_text()


def test_a_text_only_model_is_not_applicable_on_items_that_need_the_image(imported: Path, tmp_path: Path) -> None:
    items = sorted(str(p) for p in imported.glob("acnejm_item_*.yaml"))
    srv = FakeChatServer(default=("ok", "Answer: A\nEscalation: routine"))
    with srv:
        done = encsim("run", "--model", "text-model", "--base-url", srv.base_url, "--text-only", "--k", "1",
                      "--out", str(tmp_path / "run"), "--quiet", *(x for p in items for x in ("--scenarios", p)),
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    s = _summary(tmp_path / "run")
    assert len(s["not_applicable"]) == 4 and s["completed"] == 2  # the two items without their image were asked
    assert len(srv.requests) == 2 and all(isinstance(r["messages"][-1]["content"], str) for r in srv.requests)
    assert "Its image is not available" in srv.requests[0]["messages"][-1]["content"]
    ia = s["image_accuracy"]
    assert ia["not_applicable"] == 4 and ia["overall"]["choice"]["n"] == 2 and ia["overall"]["text_only"] == 2
    assert "4 item encounter(s) not applicable to this text-only model" in (tmp_path / "run" / "report.md").read_text()
