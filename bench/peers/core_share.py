"""How much of a core each of two cores keeps while both compute at once.

On a virtual machine two vCPUs may be two physical cores one moment and the
two hardware threads of one core the next: then every two-thread figure (a
model on two threads, two devices of one core each, a pipeline) halves with
no change to the code. This probe runs bench/fma_peak_bench's AVX-512 loop
on cores 0 and 1 alone, then on both at once, and reports the share each
keeps together: about 1.0 when the cores are independent, about 0.5 when
they share one core's FMA units. Benchmarks record it beside their two-core
figures so a reader can tell a slow machine from slow code.
"""
import json
import os
import subprocess
from pathlib import Path


def _start(binary, core):
    command = [str(binary), "--benchmark_filter=avx512", "--benchmark_format=json"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, {core}))


def _rate(process):
    out = process.communicate()[0]
    rates = [b["GFLOP/s"] for b in json.loads(out or "{}").get("benchmarks", []) if "GFLOP/s" in b]
    return max(rates) if rates else None


def two_core_share(build):
    """{"alone_gflops": [core 0, core 1], "together_gflops": [...], "share": s},
    or None where the probe cannot run (no fma_peak_bench, fewer than two
    cores available to this process)."""
    binary = Path(build) / "bin" / "fma_peak_bench"
    if not binary.exists() or not {0, 1} <= os.sched_getaffinity(0):
        return None
    alone = [_rate(_start(binary, core)) for core in (0, 1)]
    both = [_start(binary, core) for core in (0, 1)]
    together = [_rate(p) for p in both]
    if None in alone or None in together:
        return None
    share = sum(t / a for t, a in zip(together, alone)) / 2
    return {"alone_gflops": [round(r, 1) for r in alone], "together_gflops": [round(r, 1) for r in together],
            "share": round(share, 2)}


def describe(probe):
    """One line for a report: "two cores at once keep 0.98 of a core each"."""
    if probe is None:
        return "two-core probe not run (needs bin/fma_peak_bench and cores 0 and 1)"
    return (f"two cores at once keep {probe['share']:.2f} of a core each (FMA GFLOP/s alone "
            f"{probe['alone_gflops'][0]:.0f}/{probe['alone_gflops'][1]:.0f}, together "
            f"{probe['together_gflops'][0]:.0f}/{probe['together_gflops'][1]:.0f})")
