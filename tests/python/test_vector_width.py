"""Generated loops use the widest vectors the target's instruction set has.

GCC's tuning for Intel's AVX-512 servers prefers 256-bit vectors and for
Zen 1 128-bit ones; the toolchain asks for the widest instead
(Toolchain::cpu_flags), since oneDNN's kernels in the same run use them
anyway. Checked on the disassembly of an element-wise kernel (GELU with
erf) compiled for those CPUs: nothing needs to run, so any x86-64 machine
checks every target.
"""
import os
import pathlib
import platform
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"

GELU = ("def @main(%x: Tensor[(64, 384), float32]) -> Tensor[(64, 384), float32] {\n"
        "  multiply(multiply(%x, 0.5f), add(erf(multiply(%x, 0.70710678f)), 1f))\n"
        "}\n")


def widest_register_used(tmp_path, mcpu):
    model = tmp_path / "gelu.sy"
    model.write_text(GELU)
    out = tmp_path / mcpu
    subprocess.run([str(SWITCHYARD), "compile", str(model), "--devices", f"cpu:0=cpu -mcpu={mcpu}", "-o", str(out)],
                   check=True, capture_output=True, text=True, timeout=300,
                   env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache")))
    disassembly = subprocess.run(["objdump", "-d", str(out / "model.so")], check=True, capture_output=True,
                                 text=True).stdout
    for register, bits in (("zmm", 512), ("ymm", 256), ("xmm", 128)):
        # Arithmetic, not just the moves a calling convention makes.
        if re.search(rf"\bv(fmadd|mul|add|sub)\w*ps\s+%{register}", disassembly):
            return bits
    return 0


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 vector widths; this is "
                    + platform.machine())
@pytest.mark.parametrize("mcpu,bits", [("icelake-server", 512), ("sapphirerapids", 512), ("skylake-avx512", 512),
                                       ("znver1", 256), ("znver3", 256), ("haswell", 256)])
def test_generated_loops_use_the_targets_widest_vectors(tmp_path, mcpu, bits):
    assert widest_register_used(tmp_path, mcpu) == bits
