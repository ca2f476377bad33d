"""The imaging package on real files: Pillow-made images with planted metadata, pydicom's bundled DICOM
test data (and edited copies of it), hostile files, and the shared chest X-ray when it is present."""

from __future__ import annotations

import ast
import asyncio
import base64
import io
import os
import struct
import threading
import time
import warnings
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pydicom
import pytest
from PIL import Image, ImageCms, ImageFile, ImageOps
from PIL.PngImagePlugin import PngInfo
from pydicom.data import get_testdata_file

import imaging
from imaging import (
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PIXELS,
    DEFAULT_MAX_SIDE,
    ImagingError,
    PreparedImage,
    cache_info,
    content_parts,
    load_image,
    prepare_image,
    prepare_image_async,
    resolve_image_path,
    text_placeholder,
)
from tests.public_data import NIH_XRAY

REPO = Path(__file__).resolve().parents[2]
SECRETS = (b"SECRET", b"GPS", b"Exif", b"tEXt", b"iTXt", b"zTXt", b"eXIf", b"iCCP")


# ----------------------------------------------------------------------------------------------- helpers

def raw_bytes(prepared: PreparedImage) -> bytes:
    header, _, payload = prepared.data_url.partition(",")
    assert header == f"data:{prepared.mime};base64"
    return base64.b64decode(payload, validate=True)


def reopen(prepared: PreparedImage) -> Image.Image:
    img = Image.open(io.BytesIO(raw_bytes(prepared)))
    img.load()
    return img


def pixels(prepared: PreparedImage) -> np.ndarray:
    return np.asarray(reopen(prepared))


def png_chunk_types(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    types, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        types.append(data[pos + 4:pos + 8])
        pos += 12 + length
    return types


def jpeg_markers(data: bytes) -> list[int]:
    """Marker bytes of the segments before the scan data (APPn, COM, DQT, SOF, DHT, SOS)."""
    assert data[:2] == b"\xff\xd8"
    markers, pos = [], 2
    while pos < len(data):
        assert data[pos] == 0xFF
        marker = data[pos + 1]
        markers.append(marker)
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            break
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        pos += 2 + length
    return markers


def assert_clean(prepared: PreparedImage, *secrets: bytes) -> None:
    data = raw_bytes(prepared)
    for needle in SECRETS + secrets:
        assert needle not in data, needle
    again = reopen(prepared)
    assert again.mode in ("L", "RGB")
    assert not again.getexif()
    if prepared.mime == "image/png":
        assert set(png_chunk_types(data)) <= {b"IHDR", b"IDAT", b"IEND"}
        assert again.info == {}
    else:
        markers = jpeg_markers(data)
        assert 0xE1 not in markers and 0xE2 not in markers and 0xFE not in markers  # EXIF/XMP, ICC, comment
        assert not {"exif", "icc_profile", "comment", "xmp"} & set(again.info)


def prep(tmp_path: Path, name: str, **kwargs: object) -> PreparedImage:
    return prepare_image(name, base_dir=tmp_path, **kwargs)  # type: ignore[arg-type]


def opened(path: Path) -> Image.Image:
    """A file's image fully loaded, with the file closed again."""
    with Image.open(path) as img:
        img.load()
        return img


def noise_image(mode: str, size: tuple[int, int], seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    channels = {"L": 1, "RGB": 3}[mode]
    arr = rng.integers(0, 256, size=(size[1], size[0], channels), dtype=np.uint8)
    return Image.fromarray(arr[..., 0] if channels == 1 else arr)


def png_with_size(path: Path, width: int, height: int) -> None:
    """A real small PNG whose IHDR then claims width x height (CRC fixed), with no pixel data for it."""
    buf = io.BytesIO()
    Image.new("L", (8, 8), 128).save(buf, "PNG")
    data = bytearray(buf.getvalue())
    assert data[12:16] == b"IHDR"
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])) & 0xFFFFFFFF)
    path.write_bytes(bytes(data))


def dicom_copy(tmp_path: Path, name: str, out: str, edit: Callable[[pydicom.Dataset], None]) -> Path:
    ds = pydicom.dcmread(get_testdata_file(name))
    edit(ds)
    target = tmp_path / out
    ds.save_as(target)
    return target


def dicom_pixels(tmp_path: Path, path: Path) -> np.ndarray:
    return pixels(prepare_image(path.name, base_dir=tmp_path))


# ------------------------------------------------------------------------------------------- public face

def test_public_names_and_defaults() -> None:
    assert set(imaging.__all__) >= {"ImagingError", "DEFAULT_MAX_SIDE", "DEFAULT_MAX_FILE_BYTES", "DEFAULT_MAX_PIXELS",
                                    "resolve_image_path", "load_image", "PreparedImage", "prepare_image",
                                    "prepare_image_async", "content_parts", "text_placeholder"}
    assert (DEFAULT_MAX_SIDE, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_PIXELS) == (1024, 50 * 1024 * 1024, 40_000_000)
    assert issubclass(ImagingError, Exception)


def test_imaging_imports_only_scenarios_and_libraries() -> None:
    forbidden = {"sim", "scorers", "audio", "tui", "tests"}
    for module in (REPO / "imaging").glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                assert name.split(".")[0] not in forbidden, f"{module.name} imports {name}"


def test_importing_imaging_does_not_load_pydicom() -> None:
    import subprocess
    import sys

    code = "import sys, imaging; print('pydicom' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -------------------------------------------------------------------------------- photos and metadata

def test_jpeg_exif_orientation_applied_and_every_secret_stripped(tmp_path: Path) -> None:
    img = Image.new("RGB", (80, 40), "white")
    img.paste((255, 0, 0), (0, 0, 16, 16))  # marker in the stored top-left corner
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotate 90 degrees clockwise to display
    exif[0x010E] = "SECRET-DESCRIPTION"  # ImageDescription
    exif[0x013B] = "SECRET-ARTIST"
    exif.get_ifd(0x8769)[0x9286] = b"ASCII\x00\x00\x00SECRET-USER-COMMENT"  # Exif IFD: UserComment
    gps = exif.get_ifd(0x8825)  # GPSInfo IFD
    gps[1], gps[2], gps[3], gps[4] = "N", (51.0, 30.0, 12.0), "W", (0.0, 7.0, 39.0)
    img.save(tmp_path / "photo.jpg", "JPEG", exif=exif, comment=b"SECRET-COMMENT", quality=95)

    source = opened(tmp_path / "photo.jpg")  # the fixture really carries what must go
    assert source.getexif()[0x0112] == 6 and source.getexif().get_ifd(0x8825)[1] == "N"
    assert b"SECRET-USER-COMMENT" in (tmp_path / "photo.jpg").read_bytes()

    for fmt in ("png", "jpeg"):
        prepared = prep(tmp_path, "photo.jpg", fmt=fmt)
        assert (prepared.width, prepared.height) == (40, 80)
        assert (prepared.original_width, prepared.original_height) == (40, 80)
        arr = pixels(prepared).astype(int)
        assert arr[5, 35, 0] > 200 and arr[5, 35, 1] < 60  # marker now at the top right
        assert arr[5, 5].min() > 200 and arr[75, 35].min() > 200  # white elsewhere
        assert_clean(prepared, b"SECRET-")
    loaded = load_image(tmp_path / "photo.jpg")
    assert loaded.size == (40, 80) and loaded.mode == "RGB" and loaded.info == {} and not loaded.getexif()


def test_png_text_chunks_exif_and_icc_stripped(tmp_path: Path) -> None:
    info = PngInfo()
    info.add_text("Author", "SECRET-NAME")
    info.add_text("Comment", "SECRET-ZTXT " * 20, zip=True)
    info.add_itxt("Description", "SECRET-ITXT", lang="en")
    exif = Image.Exif()
    exif[0x010E] = "SECRET-EXIF-DESCRIPTION"
    exif.get_ifd(0x8825)[1] = "S"
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    noise_image("RGB", (30, 20)).save(tmp_path / "chart.png", pnginfo=info, exif=exif, icc_profile=srgb)
    raw = (tmp_path / "chart.png").read_bytes()
    assert {b"tEXt", b"zTXt", b"iTXt", b"eXIf", b"iCCP"} <= set(png_chunk_types(raw))

    prepared = prep(tmp_path, "chart.png")
    assert_clean(prepared)
    assert reopen(prepared).mode == "RGB"
    assert np.array_equal(pixels(prepared), np.asarray(opened(tmp_path / "chart.png").convert("RGB")))


def test_rgba_is_composited_on_white(tmp_path: Path) -> None:
    img = Image.new("RGBA", (20, 10), (0, 0, 255, 0))  # fully transparent blue
    img.paste((255, 0, 0, 255), (0, 0, 10, 10))  # opaque red left half
    img.paste((0, 0, 0, 128), (10, 0, 20, 5))  # half-transparent black
    img.save(tmp_path / "rgba.png")
    prepared = prep(tmp_path, "rgba.png")
    arr = pixels(prepared).astype(int)
    assert reopen(prepared).mode == "RGB"
    assert tuple(arr[2, 2]) == (255, 0, 0)
    assert tuple(arr[8, 15]) == (255, 255, 255)  # transparent -> white, not blue
    assert 120 <= arr[2, 15, 0] <= 135  # half black on white -> mid grey
    assert_clean(prepared)


def test_palette_png_colour_grey_and_transparent(tmp_path: Path) -> None:
    colour = Image.new("P", (12, 12))
    colour.putpalette([255, 0, 0, 0, 255, 0, 0, 0, 255] + [0] * (253 * 3))
    colour.paste(1, (0, 0, 6, 12))
    colour.paste(2, (6, 0, 12, 12))
    colour.save(tmp_path / "palette.png")
    prepared = prep(tmp_path, "palette.png")
    arr = pixels(prepared)
    assert reopen(prepared).mode == "RGB"
    assert tuple(arr[3, 3]) == (0, 255, 0) and tuple(arr[3, 9]) == (0, 0, 255)

    grey = Image.new("P", (12, 12))
    grey.putpalette([v for i in range(256) for v in (i, i, i)])
    grey.paste(200, (0, 0, 6, 12))
    grey.save(tmp_path / "grey_palette.png")
    grey_prepared = prep(tmp_path, "grey_palette.png")
    assert reopen(grey_prepared).mode == "L"
    assert pixels(grey_prepared)[3, 3] == 200 and pixels(grey_prepared)[3, 9] == 0

    colour.save(tmp_path / "palette_transparent.png", transparency=0)  # index 0 (red) is transparent
    arr = pixels(prep(tmp_path, "palette_transparent.png"))
    assert tuple(arr[3, 3]) == (0, 255, 0)
    gif = Image.new("P", (12, 12))
    gif.putpalette([255, 0, 0, 0, 255, 0] + [0] * (254 * 3))
    gif.paste(1, (0, 0, 6, 12))
    gif.save(tmp_path / "t.gif", transparency=0)
    arr = pixels(prep(tmp_path, "t.gif"))
    assert tuple(arr[3, 3]) == (0, 255, 0) and tuple(arr[3, 9]) == (255, 255, 255)


def test_16_bit_grey_is_scaled_by_its_own_range(tmp_path: Path) -> None:
    ramp = np.tile(np.linspace(1000, 5000, 64).astype(np.uint16), (16, 1))
    Image.fromarray(ramp).save(tmp_path / "deep.png")
    assert opened(tmp_path / "deep.png").mode in ("I;16", "I")
    prepared = prep(tmp_path, "deep.png")
    assert reopen(prepared).mode == "L"
    arr = pixels(prepared).astype(int)
    assert arr.min() == 0 and arr.max() == 255
    assert np.all(np.diff(arr[0]) >= 0) and abs(arr[0, 32] - 128) <= 3  # monotone, linear

    Image.fromarray(np.full((8, 8), 3000, dtype=np.uint16)).save(tmp_path / "flat.png")
    assert pixels(prep(tmp_path, "flat.png")).min() == 255  # a flat non-zero picture does not turn black


@pytest.mark.parametrize(("name", "save"), [
    ("scan.webp", {"format": "WEBP", "lossless": True}),
    ("scan.tiff", {"format": "TIFF"}),
    ("scan.bmp", {"format": "BMP"}),
])
def test_other_formats(tmp_path: Path, name: str, save: dict[str, object]) -> None:
    img = noise_image("RGB", (40, 30), seed=3)
    img.save(tmp_path / name, **save)  # type: ignore[arg-type]
    prepared = prep(tmp_path, name)
    assert (prepared.width, prepared.height) == (40, 30)
    assert np.array_equal(pixels(prepared), np.asarray(img))
    assert_clean(prepared)


def test_multi_frame_tiff_and_gif_give_the_first_frame(tmp_path: Path) -> None:
    frames = [Image.new("RGB", (16, 16), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    frames[0].save(tmp_path / "pages.tiff", save_all=True, append_images=frames[1:])
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    with Image.open(tmp_path / "pages.tiff") as pages:
        assert pages.n_frames == 3
    for name in ("pages.tiff", "anim.gif"):
        assert tuple(pixels(prep(tmp_path, name))[8, 8]) == (255, 0, 0), name


def test_cmyk_jpeg_and_bilevel(tmp_path: Path) -> None:
    Image.new("CMYK", (24, 24), (0, 255, 255, 0)).save(tmp_path / "cmyk.jpg", quality=95)
    assert opened(tmp_path / "cmyk.jpg").mode == "CMYK"
    prepared = prep(tmp_path, "cmyk.jpg")
    r, g, b = pixels(prepared)[12, 12].astype(int)
    assert reopen(prepared).mode == "RGB" and r > 200 and g < 60 and b < 60
    assert_clean(prepared)

    Image.new("1", (10, 10), 1).save(tmp_path / "mask.bmp")
    bilevel = prep(tmp_path, "mask.bmp")
    assert reopen(bilevel).mode == "L" and pixels(bilevel).min() == 255


# ------------------------------------------------------------------------------------------------ DICOM

@pytest.mark.parametrize(("name", "size", "mode"), [
    ("CT_small.dcm", (128, 128), "L"),
    ("MR_small.dcm", (64, 64), "L"),
    ("examples_overlay.dcm", (484, 300), "L"),
    ("examples_rgb_color.dcm", (320, 240), "RGB"),
    ("examples_palette.dcm", (800, 350), "RGB"),
])
def test_bundled_dicom(name: str, size: tuple[int, int], mode: str, tmp_path: Path) -> None:
    if get_testdata_file(name, download=False) is None:
        pytest.skip(f"{name} is not bundled with this pydicom")
    prepared = prepare_image(f"pydicom:{name}", base_dir=tmp_path)
    img = reopen(prepared)
    assert img.size == size and img.mode == mode
    assert prepared.source == f"pydicom:{name}"
    arr = np.asarray(img)
    assert arr.std() > 10  # a real picture, not a flat field
    if mode == "RGB":
        assert np.abs(arr[..., 0].astype(int) - arr[..., 2]).max() > 30  # colour kept
    assert_clean(prepared)


def test_dicom_identifying_tags_never_reach_the_output(tmp_path: Path) -> None:
    def identify(ds: pydicom.Dataset) -> None:
        ds.PatientName = "DOE^SECRET"
        ds.PatientID = "SECRETID12345"
        ds.PatientBirthDate = "19010203"
        ds.InstitutionName = "SECRET GENERAL HOSPITAL"
        ds.ReferringPhysicianName = "WHO^SECRETDOC"

    path = dicom_copy(tmp_path, "CT_small.dcm", "identified.dcm", identify)
    assert b"DOE^SECRET" in path.read_bytes() and b"SECRETID12345" in path.read_bytes()
    for fmt in ("png", "jpeg"):
        prepared = prepare_image("identified.dcm", base_dir=tmp_path, fmt=fmt)
        assert_clean(prepared, b"DOE", b"SECRETID12345", b"19010203", b"HOSPITAL")
    assert load_image(path).info == {}


def test_dicom_found_by_magic_without_extension(tmp_path: Path) -> None:
    path = dicom_copy(tmp_path, "MR_small.dcm", "scan_no_extension", lambda ds: None)
    assert path.read_bytes()[128:132] == b"DICM"
    assert load_image(path).size == (64, 64)


def test_monochrome1_is_inverted(tmp_path: Path) -> None:
    normal = dicom_copy(tmp_path, "MR_small.dcm", "m2.dcm", lambda ds: None)
    inverted = dicom_copy(tmp_path, "MR_small.dcm", "m1.dcm",
                          lambda ds: setattr(ds, "PhotometricInterpretation", "MONOCHROME1"))
    a2, a1 = dicom_pixels(tmp_path, normal).astype(int), dicom_pixels(tmp_path, inverted).astype(int)
    assert np.array_equal(a1, 255 - a2)
    assert abs(a1.mean() - (255 - a2.mean())) < 1e-9 and abs(a1.mean() - a2.mean()) > 20


def _linear_window(values: np.ndarray, center: float, width: float) -> np.ndarray:
    unit = (values - (center - 0.5)) / (width - 1) + 0.5
    return np.clip(np.rint(unit * 255), 0, 255)


def test_window_from_the_file_is_honoured(tmp_path: Path) -> None:
    ds = pydicom.dcmread(get_testdata_file("MR_small.dcm"))
    assert (float(ds.WindowCenter), float(ds.WindowWidth)) == (600.0, 1600.0)
    expected = _linear_window(ds.pixel_array.astype(float), 600, 1600)
    got = pixels(prepare_image("pydicom:MR_small.dcm", base_dir=tmp_path)).astype(float)
    assert np.abs(got - expected).max() <= 1

    overlay = pydicom.dcmread(get_testdata_file("examples_overlay.dcm"))  # two windows: the first is used
    assert len(overlay.WindowCenter) == 2
    expected = _linear_window(overlay.pixel_array.astype(float), float(overlay.WindowCenter[0]),
                              float(overlay.WindowWidth[0]))
    got = pixels(prepare_image("pydicom:examples_overlay.dcm", base_dir=tmp_path)).astype(float)
    assert np.abs(got - expected).max() <= 1


def test_rescale_applied_before_the_window(tmp_path: Path) -> None:
    def soft_tissue(ds: pydicom.Dataset) -> None:
        ds.WindowCenter, ds.WindowWidth = 40, 400

    path = dicom_copy(tmp_path, "CT_small.dcm", "ct_window.dcm", soft_tissue)
    ds = pydicom.dcmread(path)
    assert (float(ds.RescaleSlope), float(ds.RescaleIntercept)) == (1.0, -1024.0)
    hounsfield = ds.pixel_array.astype(float) * 1.0 - 1024.0
    got = dicom_pixels(tmp_path, path).astype(float)
    assert np.abs(got - _linear_window(hounsfield, 40, 400)).max() <= 1
    assert np.abs(got - _linear_window(hounsfield + 1024, 40, 400)).max() > 100  # the unrescaled result differs


def test_percentile_fallback_without_window_tags(tmp_path: Path) -> None:
    def drop_window(ds: pydicom.Dataset) -> None:
        del ds.WindowCenter
        del ds.WindowWidth

    path = dicom_copy(tmp_path, "MR_small.dcm", "no_window.dcm", drop_window)
    got = dicom_pixels(tmp_path, path)
    windowed = pixels(prepare_image("pydicom:MR_small.dcm", base_dir=tmp_path))
    assert got.dtype == np.uint8 and not np.array_equal(got, windowed)
    assert got.min() == 0 and got.max() == 255 and len(np.unique(got)) > 100 and got.std() > 40
    values = pydicom.dcmread(path).pixel_array.astype(float)
    lo, hi = np.percentile(values, [0.5, 99.5])
    assert np.abs(got - np.clip(np.rint((values - lo) / (hi - lo) * 255), 0, 255)).max() <= 1


def test_multi_frame_dicom_gives_the_middle_frame(tmp_path: Path) -> None:
    name = "examples_ybr_color.dcm"
    ds = pydicom.dcmread(get_testdata_file(name))
    frames = int(ds.NumberOfFrames)
    assert frames > 2 and ds.PhotometricInterpretation.startswith("YBR")
    middle = pydicom.pixels.pixel_array(ds, index=frames // 2)  # RGB after pydicom's colour conversion
    got = pixels(prepare_image(f"pydicom:{name}", base_dir=tmp_path))
    assert got.shape == middle.shape and np.array_equal(got, middle)
    assert not np.array_equal(got, pydicom.pixels.pixel_array(ds, index=0))


def test_dicom_without_pixels_or_with_huge_dimensions(tmp_path: Path) -> None:
    with pytest.raises(ImagingError, match=r"rtplan\.dcm.*no image"):
        prepare_image("pydicom:rtplan.dcm", base_dir=tmp_path)

    def huge(ds: pydicom.Dataset) -> None:
        ds.Rows, ds.Columns = 50000, 50000

    path = dicom_copy(tmp_path, "MR_small.dcm", "huge.dcm", huge)
    with pytest.raises(ImagingError, match=r"huge\.dcm.*pixel limit"):
        load_image(path)


def test_truncated_dicom(tmp_path: Path) -> None:
    data = Path(get_testdata_file("CT_small.dcm")).read_bytes()
    (tmp_path / "cut.dcm").write_bytes(data[: len(data) // 2])
    with pytest.raises(ImagingError, match=r"cut\.dcm"):
        prepare_image("cut.dcm", base_dir=tmp_path)
    (tmp_path / "fake.dcm").write_text("this is not DICOM at all\n" * 20)
    with pytest.raises(ImagingError, match=r"fake\.dcm"):
        prepare_image("fake.dcm", base_dir=tmp_path)


# ---------------------------------------------------------------------------------------------- resizing

def test_downscale_keeps_aspect_and_never_upscales(tmp_path: Path) -> None:
    wide = Image.new("RGB", (3000, 1000), "white")
    wide.paste((0, 0, 0), (0, 0, 1500, 1000))
    wide.save(tmp_path / "wide.png", compress_level=1)
    prepared = prep(tmp_path, "wide.png")
    assert (prepared.width, prepared.height) == (1024, 341)
    assert (prepared.original_width, prepared.original_height) == (3000, 1000)
    assert reopen(prepared).size == (1024, 341)
    assert prep(tmp_path, "wide.png", max_side=300).width == 300

    noise_image("L", (50, 30)).save(tmp_path / "small.png")
    small = prep(tmp_path, "small.png")
    assert (small.width, small.height, small.original_width, small.original_height) == (50, 30, 50, 30)
    assert np.array_equal(pixels(small), np.asarray(opened(tmp_path / "small.png")))


def test_jpeg_output_and_data_url(tmp_path: Path) -> None:
    noise_image("RGB", (64, 48)).save(tmp_path / "x.png")
    jpeg = prep(tmp_path, "x.png", fmt="jpeg", jpeg_quality=80)
    assert jpeg.mime == "image/jpeg" and jpeg.data_url.startswith("data:image/jpeg;base64,")
    data = raw_bytes(jpeg)
    assert data[:3] == b"\xff\xd8\xff" and jpeg.nbytes == len(data)
    import hashlib

    assert jpeg.sha256 == hashlib.sha256(data).hexdigest()
    png = prep(tmp_path, "x.png")
    assert png.mime == "image/png" and png.data_url.startswith("data:image/png;base64,")
    assert png.sha256 != jpeg.sha256
    assert "base64" not in repr(png)  # the megabytes of a data URL stay out of logs
    with pytest.raises(ValueError):
        prep(tmp_path, "x.png", fmt="gif")
    with pytest.raises(ValueError):
        prep(tmp_path, "x.png", max_side=0)


# ------------------------------------------------------------------------------------------- bad input

def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ImagingError, match=r"nope\.png.*not found"):
        prep(tmp_path, "nope.png")
    with pytest.raises(ImagingError, match=r"gone\.png"):
        load_image(tmp_path / "gone.png")


def test_corrupt_and_truncated_files(tmp_path: Path) -> None:
    (tmp_path / "garbage.png").write_bytes(b"definitely not a PNG" * 50)
    with pytest.raises(ImagingError, match=r"garbage\.png.*corrupt"):
        prep(tmp_path, "garbage.png")

    for name, fmt in (("half.png", "PNG"), ("half.jpg", "JPEG")):
        buf = io.BytesIO()
        noise_image("RGB", (200, 200), seed=7).save(buf, fmt)
        (tmp_path / name).write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
        with pytest.raises(ImagingError, match=rf"{name.replace('.', chr(92) + '.')}.*truncated") as err:
            prep(tmp_path, name)
        assert "Traceback" not in str(err.value) and "\n" not in str(err.value)
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


def test_huge_dimensions_refused_from_the_header(tmp_path: Path) -> None:
    png_with_size(tmp_path / "bomb.png", 50000, 50000)
    limit = Image.MAX_IMAGE_PIXELS
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ImagingError, match=r"bomb\.png.*pixel limit") as err:
            prep(tmp_path, "bomb.png")
        assert "50000x50000" in str(err.value) or "too large" in str(err.value)
        # a caller who raises max_pixels still meets Pillow's own bomb guard, turned into the same error
        with pytest.raises(ImagingError, match=r"bomb\.png.*pixel limit"):
            prep(tmp_path, "bomb.png", max_pixels=10**12)
        png_with_size(tmp_path / "big.png", 10000, 10000)  # 100 MP: above Pillow's warning threshold
        with pytest.raises(ImagingError, match=r"big\.png.*(10000x10000|100000000 pixels).*pixel limit"):
            load_image(tmp_path / "big.png")
        png_with_size(tmp_path / "mid.png", 5000, 5000)  # 25 MP: under 40 MP, over a lower limit
        with pytest.raises(ImagingError, match=r"mid\.png.*5000x5000.*1,000,000"):
            load_image(tmp_path / "mid.png", max_pixels=1_000_000)
    assert time.perf_counter() - started < 2  # nothing was decoded or allocated
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]  # none leaks out
    assert Image.MAX_IMAGE_PIXELS == limit


def test_file_over_the_size_limit(tmp_path: Path) -> None:
    noise_image("RGB", (64, 64)).save(tmp_path / "large.png")
    with pytest.raises(ImagingError, match=r"large\.png.*limit"):
        prep(tmp_path, "large.png", max_file_bytes=1000)
    with pytest.raises(ImagingError, match=r"large\.png.*limit"):
        load_image(tmp_path / "large.png", max_file_bytes=1000)
    assert prep(tmp_path, "large.png").width == 64


def test_unsupported_format_lists_the_supported_ones(tmp_path: Path) -> None:
    (tmp_path / "icon.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
    (tmp_path / "notes.txt").write_text("an X-ray, honestly\n")
    for name in ("icon.svg", "notes.txt"):
        with pytest.raises(ImagingError, match=rf"{name.split('.')[0]}\.{name.split('.')[1]}") as err:
            prep(tmp_path, name)
        message = str(err.value)
        assert "not in a supported format" in message
        for fmt in ("PNG", "JPEG", "WebP", "TIFF", "GIF", "BMP", "DICOM"):
            assert fmt in message


# ------------------------------------------------------------------------------------------- references

@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    base = tmp_path / "scenarios"
    base.mkdir()
    noise_image("L", (8, 8)).save(base / "inside.png")
    noise_image("L", (9, 9)).save(tmp_path / "outside.png")
    return base


def test_relative_paths_stay_inside_the_scenario_folder(scenario_dir: Path) -> None:
    assert resolve_image_path("inside.png", base_dir=scenario_dir) == scenario_dir / "inside.png"
    (scenario_dir / "sub").mkdir()
    noise_image("L", (8, 8)).save(scenario_dir / "sub" / "deep.png")
    assert prepare_image("sub/../sub/deep.png", base_dir=scenario_dir).width == 8

    outside = scenario_dir.parent / "outside.png"
    (scenario_dir / "link.png").symlink_to(outside)
    (scenario_dir / "inner_link.png").symlink_to(scenario_dir / "inside.png")
    for ref in ("../outside.png", str(outside), "link.png"):
        with pytest.raises(ImagingError, match="--allow-outside-images") as err:
            prepare_image(ref, base_dir=scenario_dir)
        assert "outside.png" in str(err.value) or "link.png" in str(err.value)
        assert prepare_image(ref, base_dir=scenario_dir, allow_outside=True).width == 9
    with pytest.raises(ImagingError, match="symlink"):
        resolve_image_path("link.png", base_dir=scenario_dir)
    assert resolve_image_path("inner_link.png", base_dir=scenario_dir).name == "inner_link.png"
    # an absolute reference is reported by its name only, never as a path of the user's machine
    assert prepare_image(str(outside), base_dir=scenario_dir, allow_outside=True).source == "outside.png"
    assert prepare_image("inside.png", base_dir=scenario_dir).source == "inside.png"
    with pytest.raises(ImagingError, match="never downloaded"):
        resolve_image_path("https://example.org/x.png", base_dir=scenario_dir)
    with pytest.raises(ImagingError, match="not a file"):
        resolve_image_path("sub", base_dir=scenario_dir)


def test_pydicom_references(tmp_path: Path) -> None:
    path = resolve_image_path("pydicom:CT_small.dcm", base_dir=tmp_path)
    assert path.is_file() and path.name == "CT_small.dcm" and "pydicom" in str(path)
    with pytest.raises(ImagingError, match=r"NO_SUCH\.dcm.*never downloaded"):
        resolve_image_path("pydicom:NO_SUCH.dcm", base_dir=tmp_path)
    for bad in ("pydicom:*.dcm", "pydicom:../../__init__.py", "pydicom:"):
        with pytest.raises(ImagingError, match="pydicom"):
            resolve_image_path(bad, base_dir=tmp_path)


def test_shared_references_are_refused_with_what_to_write(tmp_path: Path) -> None:
    """The old 'shared:' form read a folder beside the checkout, which a clone does not have: refused, with the fix."""
    old = "shared" + ":imaging/film.png"  # (tests/test_self_contained.py scans for such references in quotes)
    with pytest.raises(ImagingError) as err:
        resolve_image_path(old, base_dir=tmp_path)
    message = str(err.value)
    assert repr(old) in message and "images/film.png" in message and "relative path" in message
    assert "SHARED_DATA" not in message and "\n" not in message


def test_real_chest_xray_ships_with_the_library() -> None:
    library = NIH_XRAY.parent.parent
    img = load_image(NIH_XRAY)
    assert img.size == (512, 512) and img.mode == "L" and img.info == {}
    prepared = prepare_image("images/nih_00000001_000.png", base_dir=library)
    assert (prepared.width, prepared.height) == (512, 512) and reopen(prepared).mode == "L"
    assert np.array_equal(pixels(prepared), np.asarray(img))
    assert_clean(prepared)


# ------------------------------------------------------------------------------------ parts and caching

def test_content_parts_shape(tmp_path: Path) -> None:
    noise_image("RGB", (10, 10)).save(tmp_path / "a.png")
    noise_image("L", (10, 10), seed=1).save(tmp_path / "b.png")
    a, b = prep(tmp_path, "a.png"), prep(tmp_path, "b.png")
    assert content_parts("What is this rash?", [a, b], detail="high") == [
        {"type": "text", "text": "What is this rash?"},
        {"type": "image_url", "image_url": {"url": a.data_url, "detail": "high"}},
        {"type": "image_url", "image_url": {"url": b.data_url, "detail": "high"}},
    ]
    assert content_parts("Hi", [])[0] == {"type": "text", "text": "Hi"}
    assert content_parts("Look", [a])[1]["image_url"]["detail"] == "auto"
    assert [p["type"] for p in content_parts("", [a])] == ["image_url"]


def test_text_placeholder_wording() -> None:
    assert text_placeholder(["A red, raised rash on the forearm."]) == (
        "[The patient sent an image: A red, raised rash on the forearm. This model cannot view images, "
        "so only this description is given.]")
    two = text_placeholder(["chest X-ray", "ECG strip"])
    assert two.splitlines() == [
        "[The patient sent an image: chest X-ray. This model cannot view images, so only this description is given.]",
        "[The patient sent an image: ECG strip. This model cannot view images, so only this description is given.]",
    ]
    assert text_placeholder([]) == ""


def test_cache_serves_the_second_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import imaging._encode as encode

    decodes: list[Path] = []
    real_decode = encode.decode_image

    def counting_decode(data: bytes, *, path: Path, max_pixels: int) -> Image.Image:
        decodes.append(path)
        return real_decode(data, path=path, max_pixels=max_pixels)

    monkeypatch.setattr(encode, "decode_image", counting_decode)
    noise_image("RGB", (33, 17), seed=int(time.time_ns() % 10**6)).save(tmp_path / "c.png")
    before = cache_info()
    first = prep(tmp_path, "c.png")
    second = prep(tmp_path, "c.png")
    after = cache_info()
    assert second is first and len(decodes) == 1
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 1)

    assert prep(tmp_path, "c.png", max_side=16) is not first and len(decodes) == 2  # another option: miss
    copy = tmp_path / "copy.png"
    copy.write_bytes((tmp_path / "c.png").read_bytes())
    same_bytes = prep(tmp_path, "copy.png")  # same content, other name: cached pixels, its own source
    assert same_bytes.sha256 == first.sha256 and same_bytes.source == "copy.png" and len(decodes) == 2
    noise_image("RGB", (33, 17), seed=99).save(tmp_path / "c.png")  # edited file: new content hash
    assert prep(tmp_path, "c.png").sha256 != first.sha256 and len(decodes) == 3


def test_cache_prepares_once_under_concurrency(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import imaging._encode as encode

    calls = 0
    lock = threading.Lock()
    real_decode = encode.decode_image

    def slow_decode(data: bytes, *, path: Path, max_pixels: int) -> Image.Image:
        nonlocal calls
        with lock:
            calls += 1
        time.sleep(0.2)
        return real_decode(data, path=path, max_pixels=max_pixels)

    monkeypatch.setattr(encode, "decode_image", slow_decode)
    noise_image("RGB", (21, 13), seed=int(time.time_ns() % 10**6) + 1).save(tmp_path / "busy.png")
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: prep(tmp_path, "busy.png"), range(6)))
    assert calls == 1 and all(r is results[0] for r in results)


async def test_prepare_image_async(tmp_path: Path) -> None:
    noise_image("RGB", (40, 20), seed=5).save(tmp_path / "async.png")
    loop_thread = threading.get_ident()
    prepared, _ = await asyncio.gather(prepare_image_async("async.png", base_dir=tmp_path, max_side=20),
                                       asyncio.sleep(0))
    assert (prepared.width, prepared.height) == (20, 10) and loop_thread == threading.get_ident()
    assert prepared == prep(tmp_path, "async.png", max_side=20)
    with pytest.raises(ImagingError, match=r"absent\.png"):
        await prepare_image_async("absent.png", base_dir=tmp_path)


def test_loaded_images_are_detached_from_their_files(tmp_path: Path) -> None:
    src = noise_image("RGB", (12, 12))
    exif = Image.Exif()
    exif[0x010E] = "SECRET"
    src.save(tmp_path / "d.jpg", exif=exif)
    img = load_image(tmp_path / "d.jpg")
    os.remove(tmp_path / "d.jpg")
    assert img.mode == "RGB" and img.info == {} and not img.getexif() and img.getpixel((0, 0)) is not None
    assert ImageOps.exif_transpose(img).size == (12, 12)
