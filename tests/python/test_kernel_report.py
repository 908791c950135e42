# How the command line reports what runs each kernel (issue 35): `compile`
# warns, naming the node, when a convolution, pool or product that carries
# much of the model's work runs as a generated loop (a float16 convolution,
# which oneDNN is not asked to run), again when the artifact comes from the
# artifact cache, and not at all when every convolution is a library call;
# `inspect` lists per kernel whether a library primitive (which) or a
# generated loop runs it, with its operators and span (and, asked, oneDNN's
# implementation), and `run --profile` says the same beside each kernel's
# time.
import os
import pathlib
import re
import subprocess

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"

CONVOLUTION = ("def @main(%x: Tensor[(1, 8, 16, 16), {dtype}], %w: Tensor[(16, 8, 3, 3), {dtype}]) {{\n"
               "  nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))\n"
               "}}\n")
CACHED = "from the artifact cache, nothing compiled"


def switchyard(*args, cache):
    result = subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, XDG_CACHE_HOME=str(cache)))
    assert result.returncode == 0, result.stderr
    return result


def model(tmp_path, dtype):
    path = tmp_path / f"conv_{dtype}.sy"
    path.write_text(CONVOLUTION.format(dtype=dtype))
    return path


def test_a_float16_convolution_in_a_loop_is_warned_about_naming_the_node(tmp_path):
    path = model(tmp_path, "float16")
    compiled = switchyard("compile", path, "-o", tmp_path / "first", cache=tmp_path / "cache")
    warning = (f"{path}:2:11: warning: nn.conv2d 1x8x16x16 float16 by 16x8x3x3 float16 -> 1x16x16x16 float16 runs as "
               "a generated loop (kernel 'fused_nn_conv2d_nn_relu_")
    assert warning in compiled.stderr, compiled.stderr
    assert "carries 99% of the model's estimated 0.59 MFLOPs" in compiled.stderr, compiled.stderr
    # The artifact is cached with its warning, which a hit prints again.
    again = switchyard("compile", path, "-o", tmp_path / "second", cache=tmp_path / "cache")
    assert CACHED in again.stdout, again.stdout
    assert again.stderr == compiled.stderr


def test_library_convolutions_are_not_warned_about(tmp_path):
    compiled = switchyard("compile", model(tmp_path, "float32"), "-o", tmp_path / "artifact", cache=tmp_path / "cache")
    assert "warning" not in compiled.stderr, compiled.stderr


def kernel_lines(text):
    return [line.strip() for line in text.splitlines() if line.startswith("    0 ")]


def test_inspect_and_profile_say_what_runs_each_kernel(tmp_path):
    half, single = model(tmp_path, "float16"), model(tmp_path, "float32")
    switchyard("compile", half, "-o", tmp_path / "half", cache=tmp_path / "cache")
    switchyard("compile", single, "-o", tmp_path / "single", cache=tmp_path / "cache")

    inspected = switchyard("inspect", tmp_path / "half", cache=tmp_path / "cache").stdout
    assert ("kernels: 1 calls, 0 run by a library primitive, 1 as generated loops (1 of them a convolution, pool or "
            "product no library took)") in inspected, inspected
    assert kernel_lines(inspected) == [
        f"0    cpu:0   loops: generated window loop (nn.conv2d: no library primitive): nn.conv2d -> nn.relu "
        f"(fused({half}:2:11, {half}:2:3))"], inspected

    inspected = switchyard("inspect", tmp_path / "single", cache=tmp_path / "cache").stdout
    assert "kernels: 1 calls, 1 run by a library primitive, 0 as generated loops" in inspected, inspected
    (line,) = kernel_lines(inspected)
    assert line.startswith("0    cpu:0   library: oneDNN convolution 3x3"), inspected
    assert line.endswith(f": nn.conv2d -> nn.relu (fused({single}:2:11, {single}:2:3))"), inspected
    # oneDNN names the implementation it picks on this machine (a JIT kernel, not its reference one).
    inspected = switchyard("inspect", tmp_path / "single", "--implementations", cache=tmp_path / "cache").stdout
    assert "; 0 run by a oneDNN reference implementation" in inspected, inspected
    (line,) = kernel_lines(inspected)
    assert re.search(r"library: oneDNN convolution 3x3 .*\[[a-z_0-9:]+\]", line), inspected
    (line,) = kernel_lines(inspected)
    assert re.match(r"0    cpu:0   library: oneDNN convolution 3x3[^\[]*\[[a-z_0-9]+:[a-z_0-9]+\]: nn.conv2d", line), line

    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal((1, 8, 16, 16)).astype(np.float32))
    np.save(tmp_path / "w.npy", rng.standard_normal((16, 8, 3, 3)).astype(np.float32))
    profiled = switchyard("run", tmp_path / "single", "--input", f"x={tmp_path / 'x.npy'}", "--input",
                          f"w={tmp_path / 'w.npy'}", "--output-dir", tmp_path / "out", "--repeat", 2, "--profile",
                          cache=tmp_path / "cache").stdout
    (line,) = [line for line in profiled.splitlines() if line.startswith("  0 ")]
    assert "ms  library: oneDNN convolution 3x3" in line and "fused_nn_conv2d_nn_relu_" in line, profiled
