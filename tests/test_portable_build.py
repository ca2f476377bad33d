"""The embedded model's llama-cpp-python is built with portable CPU flags (tools/llama_build.py), and a built
``libggml-cpu.so`` with AMX or AVX-512 instructions (a native build on a CPU that reports them) is caught."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import llama_build  # noqa: E402

# the flags line of a Sapphire Rapids VM's /proc/cpuinfo (trimmed): it reports AMX and AVX-512
SAPPHIRE = ("processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx f16c fma avx2 bmi1 bmi2 avx512f "
            "avx512bw avx512vl avx512_vnni avx512_bf16 avx_vnni amx_bf16 amx_tile amx_int8\n")
# an older Atom-class CPU: SSE4.2, no AVX
GOLDMONT = "flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 popcnt aes\n"


def options(args: list[str]) -> dict[str, str]:
    return dict(a.removeprefix("-D").split("=", 1) for a in args)


def test_a_cpu_reporting_amx_and_avx512_gets_neither() -> None:
    got = options(llama_build.cmake_args("x86_64", llama_build.cpu_flags(SAPPHIRE)))
    assert got["GGML_NATIVE"] == "OFF" and got["LLAVA_BUILD"] == "OFF"
    assert all(got[o] == "ON" for o in ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2"))
    assert all(got[o] == "OFF" for o in ("GGML_AVX512", "GGML_AVX512_VNNI", "GGML_AVX512_BF16", "GGML_AVX_VNNI",
                                         "GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16"))


def test_a_cpu_without_avx_builds_without_it() -> None:
    got = options(llama_build.cmake_args("x86_64", llama_build.cpu_flags(GOLDMONT)))
    assert got["GGML_SSE42"] == "ON" and got["GGML_NATIVE"] == "OFF"
    assert all(got[o] == "OFF" for o in ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2"))


def test_aarch64_gets_the_generic_baseline() -> None:
    assert llama_build.cmake_args("aarch64", {"asimd", "sve"}) == ["-DLLAVA_BUILD=OFF", "-DGGML_NATIVE=OFF"]


def test_unknown_flags_keep_the_x86_64_v3_set() -> None:
    got = options(llama_build.cmake_args("x86_64", None))
    assert got["GGML_AVX2"] == "ON" and got["GGML_AVX512"] == "OFF" and got["GGML_AMX_TILE"] == "OFF"


def test_the_pinned_version_comes_from_constraints() -> None:
    import importlib.metadata

    assert llama_build.pinned_version() == importlib.metadata.version("llama_cpp_python")


def test_this_environment_was_built_by_the_tool_with_these_flags() -> None:
    """make's set-up ran tools/llama_build.py for this .venv: its record holds this machine's portable flags."""
    record = Path(sys.prefix) / llama_build.RECORD_NAME
    assert record.is_file(), f"{record} is missing: llama-cpp-python was not built by tools/llama_build.py"
    assert record.read_text() == llama_build.record_text(llama_build.pinned_version(),
                                                         llama_build.this_machine_args())
    assert "-DGGML_NATIVE=OFF" in record.read_text()


def test_the_disassembly_scan_finds_each_refused_set() -> None:
    lines = ["  41a2c0:\tldtilecfg (%rdi)", "  41a2c8:\ttileloadd (%rsi,%rax,1),%tmm0",
             "  41a2d0:\ttdpbssd %tmm2,%tmm1,%tmm0", "  5000:\tvmovups (%rax),%zmm0",
             "  5008:\tvaddps %ymm1,%ymm2,%ymm3{%k1}", "  5010:\tkmovw %eax,%k1",
             "  6000:\t{vex} vpdpbusd %ymm2,%ymm1,%ymm0",
             "  7000:\tvfmadd231ps %ymm1,%ymm2,%ymm3", "0000000000041a2c0 <ggml_amx_init>:"]
    assert llama_build.foreign_instructions(lines) == {"AMX": 3, "AVX-512": 3, "AVX-VNNI": 1}
    assert llama_build.foreign_instructions(lines[-2:]) == {}


@pytest.fixture(scope="module")
def objdump() -> str:
    found = shutil.which("objdump")
    assert found, "objdump is missing: install binutils (apt-get install binutils); .ci/run does"
    return found


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="AMX and AVX-512 are x86-64 instructions")
def test_the_check_refuses_a_library_with_amx(tmp_path: Path, objdump: str) -> None:
    """A real shared object with AMX and AVX-512 instructions (never executed) fails the check; a clean one passes."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (the README's prerequisites)"
    src = tmp_path / "amx.c"
    src.write_text('void tiles(void *cfg) { __asm__ volatile("ldtilecfg (%0)\\n\\ttilerelease" :: "r"(cfg)); }\n'
                   'void wide(void) { __asm__ volatile("vpxord %zmm0, %zmm0, %zmm0"); }\n')
    clean = tmp_path / "clean.c"
    clean.write_text("int add(int a, int b) { return a + b; }\n")
    for name in ("amx", "clean"):
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / f"lib{name}.so"), str(tmp_path / f"{name}.c")],
                       check=True)
    assert llama_build.scan_library(tmp_path / "libamx.so") == {"AMX": 2, "AVX-512": 1}
    assert llama_build.check(tmp_path / "libamx.so") == 1
    assert llama_build.check(tmp_path / "libclean.so") == 0


def test_the_installed_libggml_cpu_has_no_amx_or_avx512(objdump: str) -> None:
    lib = llama_build.default_library()
    assert lib is not None and lib.is_file(), "llama_cpp's libggml-cpu.so is not installed"
    assert llama_build.scan_library(lib) == {}
