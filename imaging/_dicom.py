"""DICOM pixel data to an 8-bit picture, with pydicom.

Pipeline
--------
1. ``dcmread`` the bytes (files without the 128-byte preamble are read with ``force=True`` when
   their name ends in ``.dcm``/``.dicom``; a missing Transfer Syntax UID is inferred from the
   encoding the dataset was read with).
2. Refuse datasets without ``PixelData`` (structured reports, RT plans, ...) and datasets whose
   Rows x Columns exceed ``max_pixels``, before decoding anything.
3. Decode one frame only: the middle one of a multi-frame dataset (``NumberOfFrames // 2``), with
   ``YBR_FULL``/``YBR_FULL_422`` converted to RGB by pydicom; any other ``YBR_*`` left after
   decoding goes through :func:`pydicom.pixels.convert_color_space`.
4. Grey (``MONOCHROME1``/``MONOCHROME2``): the modality LUT or rescale slope/intercept
   (:func:`pydicom.pixels.apply_modality_lut`; in enhanced multi-frame files the Pixel Value
   Transformation of the frame's functional groups), then the VOI: the first Window Center/Width
   of the file (or of the frame's Frame VOI LUT), with its VOI LUT Function (LINEAR, LINEAR_EXACT,
   SIGMOID); else a VOI LUT Sequence; else the 0.5th-99.5th percentile of the frame. The result is
   scaled to 0-255 and ``MONOCHROME1`` is inverted so that air is black as in ``MONOCHROME2``.
5. ``PALETTE COLOR`` goes through :func:`pydicom.pixels.apply_color_lut`; RGB deeper than 8 bits is
   scaled by its Bits Stored.

Only the pixels leave this module: no tag value (patient name, IDs, dates, institution) is copied
into the picture. Overlays and burned-in annotations are not touched: an overlay plane is not drawn,
and text burned into the pixels stays there (de-identify such files before use).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from imaging._errors import ImagingError, exception_reason, pixel_limit_error

if TYPE_CHECKING:
    from pydicom.dataset import Dataset

__all__ = ["decode_dicom"]


def decode_dicom(data: bytes, *, path: Path, max_pixels: int) -> Image.Image:
    """Decode a DICOM file's bytes into an ``L`` or ``RGB`` image (see the module docstring)."""
    ds = _read(data, path=path)
    if "PixelData" not in ds and "FloatPixelData" not in ds and "DoubleFloatPixelData" not in ds:
        sop = ds.get("SOPClassUID")
        kind = f"; it is a {getattr(sop, 'name', sop)} instance" if sop else ""
        raise ImagingError(f"DICOM file {path} has no image in it (no Pixel Data element{kind}): reference a DICOM "
                           "file that holds an image, such as a CT, MR, X-ray or ultrasound instance.")
    rows, cols = ds.get("Rows"), ds.get("Columns")
    if not rows or not cols:
        raise ImagingError(f"DICOM file {path} has pixel data but no Rows/Columns: the file is corrupt. Re-export "
                           "it from the viewer or PACS and try again.")
    if int(rows) * int(cols) > max_pixels:
        raise pixel_limit_error(path, f"{cols}x{rows} ({int(rows) * int(cols):,} pixels per frame)", max_pixels)
    try:
        frames = max(int(ds.get("NumberOfFrames") or 1), 1)
    except (TypeError, ValueError):
        frames = 1
    index = frames // 2
    try:
        arr, photometric = _decode_frame(ds, index)
        return Image.fromarray(np.ascontiguousarray(_to_8bit(arr, photometric, ds, index)))
    except ImagingError:
        raise
    except Exception as exc:  # untrusted bytes: any decoder failure is the file's fault
        tsyntax = ds.file_meta.get("TransferSyntaxUID") if hasattr(ds, "file_meta") else None
        name = getattr(tsyntax, "name", None) or "unknown transfer syntax"
        reason = exception_reason(exc)
        raise ImagingError(f"DICOM file {path} ({name}) could not be decoded ({reason}): it is truncated, corrupt, or "
                           "compressed in a way the installed decoders cannot read. Convert it to an uncompressed "
                           "DICOM or a PNG (e.g. gdcmconv --raw, or dcmj2pnm) and reference that file.") from None


def _read(data: bytes, *, path: Path) -> Dataset:
    import pydicom
    from pydicom.errors import InvalidDicomError
    from pydicom.uid import ExplicitVRBigEndian, ExplicitVRLittleEndian, ImplicitVRLittleEndian

    has_magic = data[128:132] == b"DICM"
    try:
        ds = pydicom.dcmread(io.BytesIO(data), force=not has_magic)
    except InvalidDicomError as exc:
        raise ImagingError(f"File {path} is not a valid DICOM file ({exc}): check that it is the image you meant, or "
                           "export it again from the viewer or PACS.") from None
    except Exception as exc:
        reason = exception_reason(exc)
        raise ImagingError(f"DICOM file {path} could not be read ({reason}): it is truncated or corrupt. Export it "
                           "again from the viewer or PACS and try again.") from None
    meta = ds.file_meta
    if "TransferSyntaxUID" not in meta and "PixelData" in ds:
        implicit, little = ds.original_encoding
        if implicit is not None and little is not None:
            meta.TransferSyntaxUID = (ImplicitVRLittleEndian if implicit else
                                      ExplicitVRLittleEndian if little else ExplicitVRBigEndian)
    return ds


def _decode_frame(ds: Dataset, index: int) -> tuple[np.ndarray, str]:
    """One frame as an array, and its photometric interpretation after decoding."""
    from pydicom.pixels.decoders.base import get_decoder
    from pydicom.pixels.processing import convert_color_space

    decoder = get_decoder(ds.file_meta.TransferSyntaxUID)
    # pydicom 3 annotates **kwargs as DecodeOptions instead of Unpack[DecodeOptions]; as_rgb is a valid option
    arr, meta = decoder.as_array(ds, index=index, as_rgb=True)  # type: ignore[arg-type]
    photometric = str(meta.get("photometric_interpretation") or ds.get("PhotometricInterpretation") or "MONOCHROME2")
    if arr.ndim == 3 and arr.shape[-1] != 3:  # a single frame decoded with a leading frame axis
        arr = arr[0]
    if photometric.startswith("YBR"):
        arr = convert_color_space(arr, photometric, "RGB")
        photometric = "RGB"
    return arr, photometric.strip().upper()


def _to_8bit(arr: np.ndarray, photometric: str, ds: Dataset, index: int) -> np.ndarray:
    if photometric == "PALETTE COLOR":
        from pydicom.pixels.processing import apply_color_lut

        rgb = apply_color_lut(arr, ds)
        return _scale_by_depth(rgb, 8 if rgb.dtype.itemsize == 1 else 16)
    if arr.ndim == 3:  # RGB (YBR already converted)
        bits = int(ds.get("BitsStored") or arr.dtype.itemsize * 8)
        return _scale_by_depth(arr, bits)
    values = _modality(arr, ds, index)
    grey = _voi(values, ds, index)
    if photometric == "MONOCHROME1":
        grey = 255 - grey
    return grey


def _scale_by_depth(arr: np.ndarray, bits: int) -> np.ndarray:
    if arr.dtype == np.uint8 and bits <= 8:
        return arr
    top = float(2 ** max(bits, 1) - 1)
    return np.clip(np.rint(arr.astype(np.float64) * (255.0 / top)), 0, 255).astype(np.uint8)


def _frame_value(ds: Dataset, index: int, sequence: str, keyword: str) -> Any:
    """``keyword`` at the top level, else in the frame's (then the shared) functional group ``sequence``."""
    if keyword in ds:
        return ds[keyword].value
    for groups_kw, i in (("PerFrameFunctionalGroupsSequence", index), ("SharedFunctionalGroupsSequence", 0)):
        groups = ds.get(groups_kw)
        if groups and len(groups) > i:
            inner = groups[i].get(sequence)
            if inner and keyword in inner[0]:
                return inner[0][keyword].value
    return None


def _first(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)) or type(value).__name__ == "MultiValue":
        value = value[0] if len(value) else None
    try:
        return float(value) if value is not None and value != "" else None
    except (TypeError, ValueError):
        return None


def _modality(arr: np.ndarray, ds: Dataset, index: int) -> np.ndarray:
    from pydicom.pixels.processing import apply_modality_lut

    if ds.get("ModalityLUTSequence") or ("RescaleSlope" in ds and "RescaleIntercept" in ds):
        return np.asarray(apply_modality_lut(arr, ds), dtype=np.float64)
    slope = _first(_frame_value(ds, index, "PixelValueTransformationSequence", "RescaleSlope"))
    intercept = _first(_frame_value(ds, index, "PixelValueTransformationSequence", "RescaleIntercept"))
    values = arr.astype(np.float64)
    if slope is not None or intercept is not None:
        values = values * (1.0 if slope is None else slope) + (0.0 if intercept is None else intercept)
    return values


def _voi(values: np.ndarray, ds: Dataset, index: int) -> np.ndarray:
    """Window (or VOI LUT, or percentiles) into 0..255 as uint8."""
    center = _first(_frame_value(ds, index, "FrameVOILUTSequence", "WindowCenter"))
    width = _first(_frame_value(ds, index, "FrameVOILUTSequence", "WindowWidth"))
    function = str(_frame_value(ds, index, "FrameVOILUTSequence", "VOILUTFunction") or "LINEAR").strip().upper()
    if center is not None and width is not None and width > 0:
        unit = _window(values, center, width, function)
    elif ds.get("VOILUTSequence") and "LUTDescriptor" in ds.VOILUTSequence[0]:
        from pydicom.pixels.processing import apply_voi

        lut = apply_voi(values.astype(np.int64), ds, 0)
        bits = int(ds.VOILUTSequence[0].LUTDescriptor[2] or 16)
        unit = lut.astype(np.float64) / float(2 ** bits - 1)
    else:
        lo, hi = (float(v) for v in np.percentile(values, [0.5, 99.5]))
        if hi <= lo:
            lo, hi = float(values.min()), float(values.max())
        unit = (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)
    return np.clip(np.rint(unit * 255.0), 0, 255).astype(np.uint8)


def _window(values: np.ndarray, center: float, width: float, function: str) -> np.ndarray:
    """DICOM PS3.3 C.11.2.1.2 windowing onto [0, 1]."""
    if function == "SIGMOID":
        return 1.0 / (1.0 + np.exp(-4.0 * (values - center) / width))
    if function == "LINEAR_EXACT":
        return (values - (center - width / 2.0)) / width
    if width <= 1:  # LINEAR needs width >= 1; a width of 1 is a threshold at the centre
        return (values >= center).astype(np.float64)
    return ((values - (center - 0.5)) / (width - 1.0)) + 0.5
