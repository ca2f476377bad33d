"""Turn an image reference from a scenario into a file on disk.

Reference forms
---------------
A scenario's ``ImageRef.path`` is one of two strings:

``relative/path.png``
    A path relative to ``base_dir``, the folder of the scenario file. Its *real* path (symlinks
    followed) must stay inside ``base_dir``; absolute paths, ``..`` escapes and symlinks that point
    outside are refused unless the run allows them (``allow_outside=True``, the CLI's
    ``--allow-outside-images``). A scenario copied from somewhere else therefore cannot make a run
    read, and send to a remote model, an arbitrary file of the machine.

``pydicom:NAME``
    ``NAME`` is a file of the test data bundled in the installed pydicom wheel
    (``pydicom/data/test_files``), e.g. ``pydicom:CT_small.dcm``. It is looked up locally with
    ``get_testdata_file(NAME, download=False)``; nothing is ever downloaded.

URLs (``https://...``) are refused: images are never fetched at run time. The ``shared:REL`` form of earlier
versions (a data folder beside the checkout, which a user who clones the repository does not have) is refused
with a message saying what to write instead; the real images the library uses ship in
``scenarios/library/images``.

An image outside the scenario folder raises :class:`ImageOutsideFolder` (an ``ImagingError``): that is a
choice of the run (``--allow-outside-images``), so a run refuses to start on it, whereas a missing or unreadable
file is an error of the scenario that names it only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from imaging._errors import ImageOutsideFolder, ImagingError

__all__ = ["resolve_image_path"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
# get_testdata_file treats the name as a glob pattern: allow plain file names only
_PYDICOM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+\-]*$")


def resolve_image_path(ref: str, *, base_dir: Path, allow_outside: bool = False) -> Path:
    """Return the file an image reference points to; raise :class:`ImagingError` if it is unusable.

    Args:
        ref: the reference as written in the scenario (see the module docstring for the forms).
        base_dir: the scenario file's folder; relative references are resolved against it.
        allow_outside: accept absolute paths and paths whose real location is outside ``base_dir``.
    """
    if not ref or not ref.strip():
        raise ImagingError(f"An image path in a scenario under {base_dir} is empty: give a file path relative "
                           "to the scenario file, or 'pydicom:NAME'.")
    if _URL.match(ref):
        raise ImagingError(f"Image {ref!r} is a URL, and images are never downloaded at run time: save the image "
                           "next to the scenario file and give its relative path.")
    if ref.startswith("pydicom:"):
        return _resolve_pydicom(ref, ref[len("pydicom:"):])
    if ref.startswith("shared:"):
        rel = ref[len("shared:"):]
        raise ImagingError(f"Image {ref!r}: 'shared:' paths (a data folder beside the checkout) are no longer read. "
                           f"Copy the image next to the scenario file and write its relative path, e.g. "
                           f"'images/{Path(rel).name or 'image.png'}' (the library's NIH chest X-ray ships as "
                           "scenarios/library/images/nih_00000001_000.png).")
    return _resolve_local(ref, base_dir=base_dir, allow_outside=allow_outside)


def _resolve_local(ref: str, *, base_dir: Path, allow_outside: bool) -> Path:
    raw = Path(ref).expanduser() if ref.startswith("~") else Path(ref)
    if raw.is_absolute():
        if not allow_outside:
            raise ImageOutsideFolder(f"Image {ref!r} is an absolute path; scenario images must be given relative "
                                     f"to the scenario file's folder ({base_dir}) so that a scenario cannot read "
                                     "arbitrary files. Move the image next to the scenario and use a relative "
                                     "path, or run with --allow-outside-images if you trust this scenario.")
        candidate = raw
    else:
        candidate = base_dir / raw
        if not allow_outside:
            real = candidate.resolve()
            base_real = base_dir.resolve()
            if not real.is_relative_to(base_real):
                lexical = Path(os.path.normpath(base_real / raw))
                how = "through a symlink " if lexical.is_relative_to(base_real) else ""
                raise ImageOutsideFolder(f"Image {ref!r} resolves {how}to {real}, which is outside the scenario "
                                         f"folder {base_real}; scenario images must stay inside it so that a scenario "
                                         "cannot read arbitrary files. Move the image into the scenario folder, or run "
                                         "with --allow-outside-images if you trust this scenario.")
    return _existing_file(ref, candidate)


def _existing_file(ref: str, path: Path) -> Path:
    if not path.exists():
        raise ImagingError(f"Image {ref!r} was not found at {path}: check the path in the scenario (it is relative "
                           "to the scenario file's folder) and that the file exists.")
    if not path.is_file():
        raise ImagingError(f"Image {ref!r} points to {path}, which is not a file: give the path of an image file.")
    return path


def _resolve_pydicom(ref: str, name: str) -> Path:
    if not _PYDICOM_NAME.match(name):
        raise ImagingError(f"Image {ref!r}: after 'pydicom:' give the plain file name of a pydicom test file, such "
                           "as 'pydicom:CT_small.dcm' (no folders or wildcards).")
    try:
        import pydicom
        from pydicom.data import get_testdata_file
    except ImportError as exc:  # pragma: no cover - pydicom is a dependency
        raise ImagingError(f"Image {ref!r} needs pydicom, which cannot be imported ({exc}); reinstall the project "
                           "with its dependencies (make test sets up .venv).") from exc
    found: str | None = None
    try:
        hit = get_testdata_file(name, download=False)
        found = hit if isinstance(hit, str) else None
    except (ValueError, OSError):
        found = None
    if found is None:
        folder = Path(pydicom.__file__).resolve().parent / "data" / "test_files"
        fallback = folder / name
        if fallback.is_file() and fallback.resolve().is_relative_to(folder):
            found = os.fspath(fallback)
    if found is None or not Path(found).is_file():
        raise ImagingError(f"Image {ref!r}: pydicom {pydicom.__version__} has no bundled test file named {name!r} "
                           "(files are never downloaded). Check the spelling against the pydicom/data/test_files "
                           "folder of the installed package, e.g. 'pydicom:CT_small.dcm' or 'pydicom:MR_small.dcm'.")
    return Path(found)
