"""Where a zoo model's time goes in Switchyard: per kernel, per way it runs,
and per oneDNN implementation.

For each model it compiles the export (the artifact cache makes that quick
after a zoo run), runs it with `switchyard run --profile` and sums the
kernels' mean times by how each runs (`library: oneDNN convolution 3x3`,
`loops: generated window loop (nn.conv2d ...)`, ...), printing the largest
kernels with their operators' spans and the oneDNN implementation
`switchyard inspect --implementations` names. It then runs it once more under
ONEDNN_VERBOSE=1 and sums oneDNN's own execution times by primitive,
implementation and memory formats, marking the reference implementations
(`ref:`, `simple_`, `gemm:ref`) that are oneDNN's slow fallbacks.

    /usr/bin/python3 bench/zoo/profile_kernels.py --build build --models squeezenet1_1,regnet_y_400mf [--threads 1]
        [--repeat 20] [--top 8]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "models"))
from suites import default_cache_dir  # noqa: E402

# "  12         cpu:0            3.257 ms  library: oneDNN convolution 3x3, nhwc: NAME (SPAN)"
KERNEL_LINE = re.compile(r"^  (\d+)\s+(\S+)\s+([\d.]+) ms  (library|loops): (.*?): (\S+) \((.*)\)$")
LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+)", re.M)
SLOW_IMPLEMENTATIONS = ("ref:", "simple", "gemm:ref")
# "    12   cpu:0   library: oneDNN convolution 3x3, nhwc [brgconv:avx512_core]: OPERATORS (SPAN)"
INSPECT_LINE = re.compile(r"^    (\d+)\s+\S+\s+library: [^\[]*\[([^\]]+)\]")


def run(command, env=None, timeout=900):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command[:3]))}: {(result.stderr or result.stdout).strip()[:400]}")
    return result


def profile(switchyard, artifact, inputs, threads, repeat, out):
    command = [switchyard, "run", artifact, "--output-dir", out, "--repeat", repeat + 1, "--threads", threads,
               "--profile", *inputs]
    text = run(command).stdout
    kernels = []
    for line in text.splitlines():
        if m := KERNEL_LINE.match(line):
            kernels.append(dict(index=int(m[1]), ms=float(m[3]), runs_as=f"{m[4]}: {m[5]}", name=m[6], span=m[7]))
    latency = LATENCY_LINE.findall(text)
    return kernels, float(latency[-1]) if latency else None


def implementations(switchyard, artifact):
    """oneDNN's implementation of each kernel's primitive, by kernel index."""
    text = run([switchyard, "inspect", artifact, "--implementations"]).stdout
    return {int(m[1]): m[2] for line in text.splitlines() if (m := INSPECT_LINE.match(line))}


def onednn_executions(switchyard, artifact, inputs, threads, out):
    """oneDNN's exec lines of the second of two runs (the first is the
    warm-up, which also makes primitives): [(primitive, implementation,
    formats, problem, ms)]."""
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    text = run([switchyard, "run", artifact, "--output-dir", out, "--repeat", 2, "--threads", threads, *inputs],
               env=env).stdout
    lines = [line.split(",") for line in text.splitlines() if line.startswith("onednn_verbose,exec,")]
    second = lines[len(lines) // 2:]
    # onednn_verbose,exec,cpu,PRIMITIVE,IMPLEMENTATION,PROP,FORMATS,ATTRS,ALG,PROBLEM,TIME
    return [(f[3], f[4], f[6], f"{f[8]} {f[9]}".strip(), float(f[-1])) for f in second if len(f) >= 11]


def formats_text(formats):
    """"src_f32::blocked:abcd:f0 dst_f32::blocked:acdb:f0" -> "src abcd, dst acdb"."""
    parts = []
    for token in formats.split():
        fields = token.split(":")
        if len(fields) >= 4 and fields[2] == "blocked":
            parts.append(f"{token.split('_')[0]} {fields[3]}")
    return ", ".join(parts)


def report(name, kernels, latency, executions, implementation_of, top):
    total = sum(k["ms"] for k in kernels) or 1.0
    print(f"## {name}: {latency} ms a run (median), kernels sum to {total:.3f} ms")
    by_way = collections.defaultdict(lambda: [0.0, 0])
    for k in kernels:
        by_way[k["runs_as"]][0] += k["ms"]
        by_way[k["runs_as"]][1] += 1
    print("\nby how the kernel runs (share of the kernels' time, calls):")
    for way, (ms, calls) in sorted(by_way.items(), key=lambda x: -x[1][0])[:top]:
        print(f"  {100 * ms / total:5.1f}%  {ms:9.3f} ms  {calls:3d} calls  {way}")
    print("\nlargest kernels:")
    for k in sorted(kernels, key=lambda k: -k["ms"])[:top]:
        implementation = f" [{implementation_of[k['index']]}]" if k["index"] in implementation_of else ""
        print(f"  {100 * k['ms'] / total:5.1f}%  {k['ms']:9.3f} ms  #{k['index']} {k['runs_as']}{implementation}  "
              f"({k['span'][:100]})")
    if executions:
        onednn_total = sum(e[4] for e in executions)
        by_implementation = collections.defaultdict(lambda: [0.0, 0])
        for primitive, implementation, formats, problem, ms in executions:
            key = (primitive, implementation, formats_text(formats))
            by_implementation[key][0] += ms
            by_implementation[key][1] += 1
        print(f"\noneDNN's own time {onednn_total:.3f} ms, by primitive, implementation and formats:")
        for (primitive, implementation, formats), (ms, calls) in sorted(by_implementation.items(),
                                                                       key=lambda x: -x[1][0])[:top]:
            slow = "  <- reference implementation" if implementation.startswith(SLOW_IMPLEMENTATIONS) else ""
            print(f"  {ms:9.3f} ms {calls:3d}x  {primitive} {implementation}  {formats}{slow}")
        slow = [e for e in executions if e[1].startswith(SLOW_IMPLEMENTATIONS)]
        for primitive, implementation, formats, problem, ms in sorted(slow, key=lambda e: -e[4])[:top]:
            print(f"  slow: {ms:9.3f} ms  {primitive} {implementation} ({formats_text(formats)}) {problem}")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", type=Path, default=REPO / "build")
    parser.add_argument("--models", required=True, help="comma-separated zoo (or suite, with --suite suite) models")
    parser.add_argument("--suite", default="zoo")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    switchyard = (args.build / "bin" / "switchyard").resolve()
    exports = default_cache_dir(args.suite)
    with tempfile.TemporaryDirectory(prefix="sy-profile-") as work:
        for name in args.models.split(","):
            description = json.loads((exports / f"{name}.json").read_text())
            inputs = ["--input", f"{description['input']}={exports / (name + '.input.npy')}"]
            artifact, out = Path(work) / name, Path(work) / f"{name}.out"
            try:
                run([switchyard, "compile", exports / f"{name}.onnx", "-o", artifact, "--devices", "cpu:0"])
                kernels, latency = profile(switchyard, artifact, inputs, args.threads, args.repeat, out)
                executions = onednn_executions(switchyard, artifact, inputs, args.threads, out)
                implementation_of = implementations(switchyard, artifact)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"## {name}: {str(e).splitlines()[0]}\n")
                continue
            report(name, kernels, latency, executions, implementation_of, args.top)


if __name__ == "__main__":
    main()
