# One loaded artifact run from many threads at once (issue 41): each suite
# model is compiled and loaded once, then 8 threads each run it on an input
# of their own, every output compared bit for bit with the sequential run
# of that input. A run must own everything it writes (its arenas, every
# primitive's scratchpad and buffers); anything shared shows as outputs
# that differ.
#
# The short form (CI) makes 3 runs per thread. The long form is the same
# test with more, e.g. 250 runs per thread: 5 models x 8 threads x 250 =
# 10,000 concurrent runs:
#   SY_CONCURRENT_RUNS_PER_THREAD=250 PYTHONPATH=build/python \
#     /usr/bin/python3 -m pytest -q -s tests/python/test_concurrent_runs.py
import json
import os
import threading

import numpy as np
import pytest

import switchyard as sy

MODELS = ["mlp", "resnet18", "resnet50", "mobilenet_v2", "encoder"]
THREADS = 8
RUNS_PER_THREAD = int(os.environ.get("SY_CONCURRENT_RUNS_PER_THREAD", "3"))


def thread_inputs(x):
    """An input per thread: the suite's own, then others of its distribution."""
    rng = np.random.default_rng(41)
    return [x] + [rng.standard_normal(x.shape).astype(x.dtype) for _ in range(THREADS - 1)]


@pytest.mark.parametrize("name", MODELS)
def test_one_artifact_run_from_eight_threads_matches_its_sequential_runs_bit_for_bit(suite, name, tmp_path):
    info = json.loads((suite / f"{name}.json").read_text())
    mod = sy.frontend.from_onnx(suite / f"{name}.onnx")
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    model = sy.runtime.load(tmp_path / "artifact")
    inputs = thread_inputs(np.load(suite / f"{name}.input.npy"))
    expected = [model.run(**{info["input"]: x}, record_stats=False) for x in inputs]
    again = model.run(**{info["input"]: inputs[0]}, record_stats=False)
    assert again.tobytes() == expected[0].tobytes(), f"{name}: a sequential run is not repeatable"
    # A thread that read another's data would give that thread's output.
    assert len({y.tobytes() for y in expected}) == THREADS

    mismatches = [0] * THREADS
    largest_difference = [0.0] * THREADS
    errors = []
    start = threading.Barrier(THREADS)

    def work(t):
        try:
            start.wait()
            for _ in range(RUNS_PER_THREAD):
                y = model.run(**{info["input"]: inputs[t]}, record_stats=False)
                if y.tobytes() != expected[t].tobytes():
                    mismatches[t] += 1
                    difference = float(np.abs(y.astype(np.float64) - expected[t]).max())
                    largest_difference[t] = max(largest_difference[t], difference)
        except Exception as e:  # noqa: BLE001 - reported below, with the thread
            errors.append(f"thread {t}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    runs = THREADS * RUNS_PER_THREAD
    print(f"{name}: {runs} concurrent runs, {sum(mismatches)} outputs differ "
          f"(largest difference {max(largest_difference):.3g})")
    assert not errors, errors
    assert sum(mismatches) == 0, f"{name}: {sum(mismatches)} of {runs} outputs differ, by up to " \
                                 f"{max(largest_difference):.3g}; per thread {mismatches}"
