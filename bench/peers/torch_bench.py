"""PyTorch eager peer for bench/peers/run_peers.py: times one model of the
suite or the zoo (tests/models/suites.py).

The model is rebuilt from the same seed as its ONNX export
(tests/models/model_zoo.py or zoo_models.py), run on the same input under
torch.no_grad, checked against the exported expected output, and one JSON
object is printed.

    /usr/bin/python3 bench/peers/torch_bench.py [--suite zoo] --model mlp [--threads 1] [--warmup 5] [--runs 50]
        [--expected M.expected.npy]
"""
import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "models"))
import suites  # noqa: E402


def summarise(ms):
    # Same definitions as `switchyard run`: median of the sorted times, p90
    # by nearest rank (always a measured run).
    s = sorted(ms)
    n = len(s)
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"median": median, "min": s[0], "p90": s[math.ceil(0.9 * n) - 1]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", choices=list(suites.MODULES), default="suite")
    parser.add_argument("--model", required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--expected", type=Path, help="NAME.expected.npy to check the output against")
    args = parser.parse_args()
    models = suites.models_of(args.suite)
    if args.model not in models.MODELS:
        parser.error(f"unknown {args.suite} model {args.model}; known: {', '.join(models.MODELS)}")

    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    model = models.build_model(args.model)
    build_seconds = time.perf_counter() - start
    x = torch.from_numpy(models.make_input(args.model))

    times = []
    with torch.no_grad():
        for _ in range(args.warmup):
            y = model(x)
        for _ in range(args.runs):
            start = time.perf_counter()
            y = model(x)
            times.append((time.perf_counter() - start) * 1e3)

    result = {
        "peer": "pytorch",
        "version": torch.__version__,
        "threads": torch.get_num_threads(),
        "warmup": args.warmup,
        "runs": args.runs,
        "build_s": build_seconds,
        "latency_ms": summarise(times),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # ru_maxrss is in KiB
    }
    if args.expected:
        expected = np.load(args.expected)
        error = float(np.abs(y.numpy() - expected).max())
        scale = float(np.abs(expected).max())
        result.update(max_abs_error=error, relative_error=error / scale if scale > 0 else error)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
