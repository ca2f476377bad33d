"""The images of an import (imaging._fetch): downloaded once from a real loopback server that misbehaves on purpose,
or copied from a folder; each failure named, and the next image still fetched."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from PIL import Image

from imaging import ImportImages
from tests.imageserver import ImageServer, closed_port, image_bytes


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loopback server is reached directly, whatever proxy the machine names."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


def _fetcher(**kw: object) -> ImportImages:
    images = ImportImages(fetch=True, delay_s=0.0, progress=False, **kw)  # type: ignore[arg-type]
    images.start(10)
    return images


def test_a_good_image_is_downloaded_checked_and_named_by_its_format(tmp_path: Path) -> None:
    with ImageServer() as srv:
        images = _fetcher()
        png = images.provide(srv.url("IC1"), "IC1", tmp_path / "images")
        jpg = images.provide(srv.url("IC2jpg"), "IC2jpg", tmp_path / "images")
        images.finish()
    assert (png.status, png.path) == ("fetched", tmp_path / "images" / "IC1.png")
    assert (jpg.status, jpg.path) == ("fetched", tmp_path / "images" / "IC2jpg.jpg")
    assert png.path.read_bytes() == image_bytes("IC1")
    assert Image.open(io.BytesIO(jpg.path.read_bytes())).format == "JPEG"
    assert not list((tmp_path / "images").glob(".*"))  # no partial file left behind


def test_an_image_already_there_is_not_downloaded_again(tmp_path: Path) -> None:
    with ImageServer() as srv:
        first = _fetcher()
        assert first.provide(srv.url("IC1"), "IC1", tmp_path).status == "fetched"
        second = _fetcher()
        again = second.provide(srv.url("IC1"), "IC1", tmp_path)
        assert len(srv.requests) == 1
    assert (again.status, again.reason) == ("present", "already in the output folder")


@pytest.mark.parametrize(("mode", "status", "reason"), [
    ("html", "refused", "sent text/html, not an image"),
    ("lie", "refused", "sent image/png but not an image Pillow reads"),
    ("big", "refused", "over the 64 KiB limit"),
    ("big_chunked", "refused", "the download was stopped there"),
    ("loop", "refused", "more than 5 redirects"),
    ("missing", "missing", "answered HTTP 404"),
])
def test_each_bad_answer_is_named_and_the_next_image_still_comes(tmp_path: Path, mode: str, status: str,
                                                                 reason: str) -> None:
    with ImageServer({"BAD": mode}) as srv:
        images = _fetcher(max_bytes=64 * 1024)
        bad = images.provide(srv.url("BAD"), "BAD", tmp_path)
        good = images.provide(srv.url("GOOD"), "GOOD", tmp_path)
        images.finish()
    assert bad.status == status and reason in (bad.reason or ""), bad
    assert bad.path is None and not list(tmp_path.glob("BAD*")) and not list(tmp_path.glob(".BAD*"))
    assert good.status == "fetched" and good.path is not None and good.path.is_file()
    assert images.counts == {"fetched": 1, "present": 0, "missing": int(status == "missing"),
                             "refused": int(status == "refused")}


def test_an_unreachable_url_is_missing_with_the_reason(tmp_path: Path) -> None:
    images = _fetcher(timeout_s=5.0)
    got = images.provide(f"http://127.0.0.1:{closed_port()}/images?id=IC9", "IC9", tmp_path)
    images.finish()
    assert got.status == "missing" and "is unreachable (ConnectError" in (got.reason or "")


def test_only_http_urls_are_fetched(tmp_path: Path) -> None:
    images = _fetcher()
    got = images.provide("file:///etc/passwd", "passwd", tmp_path)
    assert got.status == "refused" and "not an http(s) URL" in (got.reason or "")
    assert not list(tmp_path.iterdir())


def test_downloads_are_spaced_by_the_delay(tmp_path: Path) -> None:
    """The polite rate limit: three downloads 0.3 s apart take at least 0.6 s (a lower bound, not a race)."""
    with ImageServer() as srv:
        images = ImportImages(fetch=True, delay_s=0.3, progress=False)
        images.start(3)
        t0 = time.monotonic()
        for i in range(3):
            assert images.provide(srv.url(f"IC{i}"), f"IC{i}", tmp_path).status == "fetched"
        elapsed = time.monotonic() - t0
        images.finish()
    assert elapsed >= 0.6 and len(srv.requests) == 3


def test_a_folder_of_images_is_checked_and_copied(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "IC1.jpg").write_bytes(image_bytes("IC1", "JPEG"))
    (mine / "IC2.png").write_text("not a picture")
    (mine / "IC3.png").write_bytes(image_bytes("IC3", size=(400, 400)))
    images = ImportImages(folder=mine, progress=False, max_bytes=100_000)
    images.start(4)
    out = tmp_path / "out" / "images"
    got = {n: images.provide(f"https://example.invalid/{n}", n, out) for n in ("IC1", "IC2", "IC3", "IC4")}
    images.finish()
    assert got["IC1"].status == "present" and got["IC1"].path == out / "IC1.jpg"
    assert (out / "IC1.jpg").read_bytes() == (mine / "IC1.jpg").read_bytes()
    assert got["IC2"].status == "refused" and "is not an image this project reads" in (got["IC2"].reason or "")
    assert got["IC3"].status == "refused" and "over the 98 KiB limit" in (got["IC3"].reason or "")
    assert got["IC4"].status == "missing" and f"no file IC4.jpg (or .png, ...) in --images {mine}" in \
        (got["IC4"].reason or "")
    assert sorted(p.name for p in out.iterdir()) == ["IC1.jpg"]


def test_without_a_source_every_image_is_missing_and_nothing_is_fetched(tmp_path: Path) -> None:
    with ImageServer() as srv:
        images = ImportImages(progress=False)
        images.start(1)
        got = images.provide(srv.url("IC1"), "IC1", tmp_path)
        images.finish()
        assert srv.requests == []
    assert got.status == "missing" and "--fetch-images" in (got.reason or "")


def test_progress_is_one_line_per_image_off_a_terminal(tmp_path: Path) -> None:
    stream = io.StringIO()
    with ImageServer({"IC2": "html"}) as srv:
        images = ImportImages(fetch=True, delay_s=0.0, stream=stream)
        images.start(2)
        images.provide(srv.url("IC1"), "IC1", tmp_path)
        images.provide(srv.url("IC2"), "IC2", tmp_path)
        images.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("images [1/2] IC1: fetched (") and lines[1].startswith("images [2/2] IC2: refused (")
