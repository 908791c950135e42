"""scripts/check_layers.py: the repository's includes follow the layer order,
and an upward include or a folder of no layer is reported with exit 1."""
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check_layers.py"


def check(root):
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def test_the_repository_has_no_upward_include():
    result = check(REPO)
    assert result.returncode == 0, result.stdout
    assert "0 upward includes" in result.stdout


def test_an_upward_include_and_an_unknown_folder_are_reported(tmp_path):
    (tmp_path / "src" / "ir").mkdir(parents=True)
    (tmp_path / "src" / "lower").mkdir()
    (tmp_path / "src" / "gadgets").mkdir()
    (tmp_path / "src" / "ir" / "node.cc").write_text('#include "ir/node.h"\n#include "lower/lower.h"\n')
    (tmp_path / "src" / "lower" / "lower.cc").write_text('#include "ir/node.h"\n#include "placement/plan.h"\n')
    (tmp_path / "src" / "gadgets" / "gadget.cc").write_text("")
    result = check(tmp_path)
    assert result.returncode == 1
    assert ("src/ir/node.cc:2: includes \"lower/lower.h\": layer 'ir' may not include layer 'backend'"
            in result.stdout)
    assert "src/lower/lower.cc" not in result.stdout  # downward includes are fine
    assert "src/gadgets/gadget.cc: folder 'gadgets' belongs to no layer" in result.stdout
    assert "2 upward includes" in result.stdout


def test_a_targets_runtime_half_may_not_include_the_compiler(tmp_path):
    runtime = tmp_path / "src" / "targets" / "gpu" / "runtime"
    compiler = tmp_path / "src" / "targets" / "gpu" / "compiler"
    runtime.mkdir(parents=True)
    compiler.mkdir(parents=True)
    (runtime / "gpu_device.cc").write_text('#include "runtime/device.h"\n#include "codegen/kernel.h"\n')
    (compiler / "gpu_codegen.cc").write_text('#include "codegen/kernel.h"\n#include "targets/gpu/runtime/gpu_device.h"\n')
    (tmp_path / "src" / "targets" / "gpu" / "stray.cc").write_text("")
    result = check(tmp_path)
    assert result.returncode == 1
    assert ("src/targets/gpu/runtime/gpu_device.cc:2: includes \"codegen/kernel.h\": layer 'runtime' may not "
            "include layer 'codegen'" in result.stdout)
    assert "gpu_codegen.cc" not in result.stdout  # the compiler half sees the runtime half
    assert "src/targets/gpu/stray.cc: a target's file outside its compiler/ and runtime/ halves" in result.stdout


def test_a_target_may_not_include_another_target(tmp_path):
    gpu = tmp_path / "src" / "targets" / "gpu" / "compiler"
    gpu.mkdir(parents=True)
    (tmp_path / "src" / "targets" / "cpu" / "runtime").mkdir(parents=True)
    (gpu / "gpu_render.cc").write_text('#include "targets/cpu/runtime/cpu_device.h"\n')
    (tmp_path / "src" / "targets" / "registry.cc").write_text(
        '#include "targets/gpu/compiler/gpu_render.h"\n#include "lower/lower.h"\n')
    result = check(tmp_path)
    assert result.returncode == 1
    assert ("src/targets/gpu/compiler/gpu_render.cc:1: includes \"targets/cpu/runtime/cpu_device.h\": "
            "target 'gpu' may not include target 'cpu'" in result.stdout)
    assert "registry.cc" not in result.stdout  # the registry names every target, in the back end's layer
    assert "1 upward include," in result.stdout


def test_only_a_registry_outside_targets_may_include_a_target(tmp_path):
    cpu = tmp_path / "src" / "targets" / "cpu" / "runtime"
    cpu.mkdir(parents=True)
    (tmp_path / "src" / "runtime").mkdir()
    (tmp_path / "src" / "runtime" / "artifact.cc").write_text('#include "targets/cpu/runtime/cpu_device.h"\n')
    (tmp_path / "src" / "runtime" / "device_registry.cc").write_text('#include "targets/cpu/runtime/cpu_device.h"\n')
    (cpu / "cpu_device.cc").write_text('#include "targets/cpu/runtime/cpu_device.h"\n')
    result = check(tmp_path)
    assert result.returncode == 1
    assert ("src/runtime/artifact.cc:1: includes \"targets/cpu/runtime/cpu_device.h\": only a registry outside "
            "src/targets/ may name target 'cpu'" in result.stdout)
    assert "device_registry.cc" not in result.stdout  # the runtime's registry row
    assert "cpu_device.cc" not in result.stdout  # a target names its own files
    assert "1 upward include," in result.stdout
