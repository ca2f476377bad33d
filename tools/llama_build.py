"""Build the embedded model's llama-cpp-python with portable CPU flags, and check a built library for them.

``make``'s set-up step runs ``python tools/llama_build.py install`` with the virtual environment's python before it
installs the project. llama-cpp-python is compiled from source on the user's machine; its default is
``GGML_NATIVE=ON`` (``-march=native``), which compiles in every instruction set the building CPU *reports*. A cloud
VM may report AMX or AVX-512 without the hypervisor enabling its register state: the native build then dies with
SIGSEGV/SIGILL at its first matrix multiply (``ldtilecfg`` in ``libggml-cpu.so``). A ``.venv`` may also move to
another machine (an image, a Ray worker, a shared home).

So the build is ``GGML_NATIVE=OFF`` with explicit instruction sets:

- x86-64: at most x86-64-v3 (SSE4.2, AVX, AVX2, BMI2, FMA, F16C: every x86-64 server CPU since 2015, Intel
  Haswell and AMD Excavator/Zen on); each of those the building CPU lacks is turned off too (an older Atom or
  Pentium builds an SSE-only library of its own). AVX-512, AVX-VNNI and AMX are always off.
- aarch64 and anything else: ``GGML_NATIVE=OFF`` and no ``-march``: the compiler's generic baseline (armv8-a).

The flags are recorded in ``<venv>/.encsim-llama-build``; the build runs again (``--no-cache-dir``, so pip's wheel
cache, whose key does not include ``CMAKE_ARGS``, cannot hand back an old native wheel) only when that record or
the pinned version (``constraints.txt``) changes, or the installed version differs.

``python tools/llama_build.py check [LIB]`` disassembles ``libggml-cpu.so`` (objdump, from binutils) and exits 1
when it holds AMX, AVX-512 or AVX-VNNI instructions. Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RECORD_NAME = ".encsim-llama-build"

# ggml option -> the /proc/cpuinfo flag that must be present for it (x86-64-v3 at most)
X86_PORTABLE = {
    "GGML_SSE42": "sse4_2",
    "GGML_AVX": "avx",
    "GGML_AVX2": "avx2",
    "GGML_BMI2": "bmi2",
    "GGML_FMA": "fma",
    "GGML_F16C": "f16c",
}
# never compiled in, whatever the CPU reports
X86_NEVER = ("GGML_AVX_VNNI", "GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI", "GGML_AVX512_BF16",
             "GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")

# what `check` refuses in a disassembly, by name
_FOREIGN = {
    "AMX": re.compile(r"\b(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilerelease|tilezero|tdp\w+)\b"),
    "AVX-512": re.compile(r"%zmm\d|\{%k[1-7]\}|\bk(?:mov|and|andn|or|xor|xnor|not|shiftl|shiftr|test|ortest|unpck|add)"
                          r"[bwdq]\b"),
    "AVX-VNNI": re.compile(r"\{vex\}\s*vpdp"),
}


def pinned_version(constraints: Path = REPO / "constraints.txt") -> str:
    """The llama-cpp-python version pinned in ``constraints.txt``."""
    for line in constraints.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*llama[-_]cpp[-_]python\s*==\s*([^\s;#]+)", line, re.IGNORECASE)
        if m:
            return m.group(1)
    raise SystemExit(f"{constraints}: no 'llama_cpp_python==VERSION' line; pin the embedded model's version there.")


def cpu_flags(cpuinfo: str) -> set[str]:
    """The first ``flags`` line of a ``/proc/cpuinfo`` text, as a set."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def cmake_args(machine: str, flags: set[str] | None) -> list[str]:
    """The ``CMAKE_ARGS`` for a build on ``machine`` (``platform.machine()``) whose CPU reports ``flags``.

    ``flags`` is None where they cannot be read (not Linux): the x86-64-v3 set is kept then, as on a VM that
    reports everything.
    """
    args = ["-DLLAVA_BUILD=OFF", "-DGGML_NATIVE=OFF"]
    if machine.lower() in ("x86_64", "amd64", "x64"):
        for option, flag in X86_PORTABLE.items():
            on = flags is None or flag in flags
            args.append(f"-D{option}={'ON' if on else 'OFF'}")
        args += [f"-D{option}=OFF" for option in X86_NEVER]
    return args


def this_machine_args() -> list[str]:
    """:func:`cmake_args` for the CPU this runs on."""
    try:
        flags: set[str] | None = cpu_flags(Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace"))
    except OSError:
        flags = None
    return cmake_args(platform.machine(), flags)


def record_text(version: str, args: Iterable[str]) -> str:
    """What the build record holds: the version and the flags, one line."""
    return f"llama-cpp-python=={version} CMAKE_ARGS={' '.join(args)}\n"


def installed_version() -> str | None:
    """The llama-cpp-python version installed for this interpreter, or None."""
    from importlib import metadata

    try:
        return metadata.version("llama_cpp_python")
    except metadata.PackageNotFoundError:
        return None


def install(force: bool = False) -> int:
    """Build and install the pinned llama-cpp-python for this interpreter with portable flags, unless done already.

    Run it with the virtual environment's python: the record goes in ``sys.prefix``. ``force`` builds again anyway.
    """
    version = pinned_version()
    args = this_machine_args()
    record = Path(sys.prefix) / RECORD_NAME
    want = record_text(version, args)
    have = record.read_text(encoding="utf-8") if record.is_file() else ""
    if have == want and installed_version() == version and not force:
        return 0
    print(f"building llama-cpp-python {version} with portable CPU flags ({' '.join(args)}); "
          "a few minutes on 2 cores", flush=True)
    env = dict(os.environ, CMAKE_ARGS=" ".join(args))
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-cache-dir",
           "--force-reinstall", "--no-deps", "--no-binary", "llama-cpp-python", f"llama-cpp-python=={version}"]
    done = subprocess.run(cmd, env=env)
    if done.returncode != 0:
        print(f"tools/llama_build.py: building llama-cpp-python {version} failed (pip exit {done.returncode}). "
              "It needs a C and C++ compiler and cmake's build tools (pip installs cmake and ninja itself); "
              "the compiler's error is above.", file=sys.stderr)
        return done.returncode
    record.write_text(want, encoding="utf-8")
    return 0


def default_library() -> Path | None:
    """The installed ``libggml-cpu.so`` of this interpreter's llama_cpp, or None."""
    import importlib.util

    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        return None
    libs = sorted((Path(spec.origin).parent / "lib").glob("libggml-cpu*.so*"))
    return libs[0] if libs else None


def foreign_instructions(disassembly: Iterable[str]) -> dict[str, int]:
    """Counts of AMX, AVX-512 and AVX-VNNI instructions in ``objdump -d`` output lines (only the non-zero ones)."""
    counts = dict.fromkeys(_FOREIGN, 0)
    for line in disassembly:
        if "\t" not in line:  # labels, headers: instructions are tab-separated in objdump's output
            continue
        for name, pattern in _FOREIGN.items():
            if pattern.search(line):
                counts[name] += 1
    return {k: v for k, v in counts.items() if v}


def scan_library(lib: Path) -> dict[str, int]:
    """:func:`foreign_instructions` of ``objdump -d lib``; raises ``FileNotFoundError`` if objdump is missing."""
    objdump = shutil.which("objdump")
    if objdump is None:
        raise FileNotFoundError("objdump is not installed (it comes with binutils: apt-get install binutils)")
    with subprocess.Popen([objdump, "-d", "--no-show-raw-insn", str(lib)], stdout=subprocess.PIPE, text=True,
                          errors="replace") as proc:
        assert proc.stdout is not None
        counts = foreign_instructions(proc.stdout)
    if proc.returncode != 0:
        raise RuntimeError(f"objdump -d {lib} exited {proc.returncode}")
    return counts


def check(lib: Path | None) -> int:
    """Exit status of ``check``: 0 when ``lib`` holds none of the refused instruction sets."""
    lib = lib or default_library()
    if lib is None:
        print("tools/llama_build.py check: llama_cpp is not installed here; run 'make setup' first.", file=sys.stderr)
        return 2
    try:
        counts = scan_library(lib)
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"tools/llama_build.py check: {exc}", file=sys.stderr)
        return 2
    if counts:
        found = ", ".join(f"{n} {name}" for name, n in counts.items())
        print(f"{lib}: {found} instructions; it crashes on machines that report these without enabling them. "
              "Rebuild it with '.venv/bin/python tools/llama_build.py install --force'.", file=sys.stderr)
        return 1
    print(f"{lib}: no AMX, AVX-512 or AVX-VNNI instructions")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: ``install``, ``args`` or ``check [LIB]``."""
    parser = argparse.ArgumentParser(prog="tools/llama_build.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_install = sub.add_parser("install", help="build llama-cpp-python with portable flags unless already done "
                               "(run it with the virtual environment's python)")
    p_install.add_argument("--force", action="store_true", help="build again even if the record matches")
    sub.add_parser("args", help="print the CMAKE_ARGS for this machine")
    p_check = sub.add_parser("check", help="refuse a libggml-cpu with AMX, AVX-512 or AVX-VNNI instructions")
    p_check.add_argument("lib", nargs="?", type=Path, help="default: the installed llama_cpp's libggml-cpu.so")
    ns = parser.parse_args(argv)
    if ns.cmd == "install":
        return install(ns.force)
    if ns.cmd == "args":
        print(" ".join(this_machine_args()))
        return 0
    return check(ns.lib)


if __name__ == "__main__":
    sys.exit(main())
