# libgomp's waiting threads (oneDNN's and the runtime pool's) spin briefly,
# then block, whether `import switchyard` or NumPy brought libgomp into the
# process (src/runtime/openmp_wait_policy.h). Issue 39: with another process
# holding a core, ResNet-18 through Python with two threads took 167-217 ms
# against 16-18 with one: the threads spun for 300,000 rounds whenever they
# waited, because NumPy's OpenBLAS had loaded libgomp before the package set
# GOMP_SPINCOUNT. Each case runs in a fresh interpreter, as a user's would.
import os
import pathlib
import subprocess
import sys

import pytest

import switchyard as sy

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build"))
SWITCHYARD = BUILD / "bin" / "switchyard"

MODEL = """def @main(%x: Tensor[(16, 512), float32], %w: Tensor[(512, 512), float32]) {
  nn.relu(nn.dense(%x, %w))
}
"""

# Runs the artifact on two threads ten times, sleeping 30 ms after each run,
# and prints the process's CPU time during the sleeps: a thread that spins
# instead of blocking spends milliseconds of it each time.
IDLE_CPU = """
import sys, time
if sys.argv[2] == "numpy first":
    import numpy
import switchyard as sy
import numpy as np
model = sy.runtime.load(sys.argv[1], threads=2)
inputs = {"x": np.ones((16, 512), np.float32), "w": np.ones((512, 512), np.float32)}
idle = 0.0
for _ in range(10):
    model.run(**inputs)
    before = time.process_time()
    time.sleep(0.03)
    idle += time.process_time() - before
print(idle * 1e3)
"""


def clean_environment(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_DISPLAY_ENV")}
    env["PYTHONPATH"] = os.pathsep.join([str(BUILD / "python"), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def spin_count_libgomp_read(code, **extra):
    """GOMP_SPINCOUNT as libgomp reports it when it initialises (OMP_DISPLAY_ENV)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=clean_environment(OMP_DISPLAY_ENV="VERBOSE", **extra))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "GOMP_SPINCOUNT" in line]
    assert len(lines) <= 1, done.stderr
    return lines[0].split("=")[1].strip().strip("'") if lines else None  # None: libgomp was not loaded


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("openmp") / "dense.art"
    sy.build(sy.parse(MODEL, source_name="dense.sy"), ["cpu:0"], out)
    return out


def test_importing_switchyard_first_sets_the_short_spin_before_libgomp_reads_it():
    assert spin_count_libgomp_read("import switchyard") == "3000"


def test_a_users_setting_is_kept():
    assert spin_count_libgomp_read("import switchyard", GOMP_SPINCOUNT="12345") == "12345"


@pytest.mark.skipif(not SWITCHYARD.exists(), reason="the switchyard CLI is not built")
def test_the_cli_sets_the_short_spin_without_restarting():
    done = subprocess.run([str(SWITCHYARD), "--help"], capture_output=True, text=True, timeout=60,
                          env=clean_environment(OMP_DISPLAY_ENV="VERBOSE"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("GOMP_SPINCOUNT = '3000'") == 1, done.stderr


@pytest.mark.parametrize("order", ["switchyard first", "numpy first"])
def test_waiting_threads_block_instead_of_spinning(artifact, order):
    if order == "numpy first":
        # The case the package could not reach: libgomp read its default first.
        numpy_spin = spin_count_libgomp_read("import numpy")
        if numpy_spin is None:
            pytest.skip("this NumPy does not load libgomp (its OpenBLAS is not the OpenMP one): nothing comes first")
        assert numpy_spin == "300000"
    done = subprocess.run([sys.executable, "-c", IDLE_CPU, str(artifact), order], capture_output=True, text=True,
                          timeout=120, env=clean_environment())
    assert done.returncode == 0, done.stderr
    idle_cpu_ms = float(done.stdout.strip().splitlines()[-1])
    assert idle_cpu_ms < 15.0, f"{order}: {idle_cpu_ms:.1f} ms of CPU while the process slept 300 ms"
