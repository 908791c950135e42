"""The latency objective against the best single-device build (issue 38's
goal: never more than 5 % slower; predicted within 15 % of measured).

For each model (a zoo export, tests/models/export_models.py --suite zoo, or
the two towers of bench/device_queues_bench.py):

  profile   `switchyard profile M --device cpu:0 --device cpu:1 --cores
            cpu:0=0 --cores cpu:1=1`: each device on its core, cpu:0 with
            both cores, the run overheads and the hand-off between queues;
  latency   `compile --devices cpu:0,cpu:1 --objective latency --costs F
            --cores cpu:0=0 --cores cpu:1=1` (the split over one core each,
            or cpu:0 with both cores, whichever is predicted faster);
  one       `compile --devices cpu:0 --cores cpu:0=0-1` (one device, every
            core): the best single-device build on this two-core machine.

The two artifacts run `--rounds` times alternately (`switchyard run
--repeat`), so the shared machine's load touches both alike; each cell is
the median of the rounds' medians, and "latency / one" the median of each
round's ratio (a round runs the two back to back: this VM has spells of
tens of seconds in which two threads run no faster than one, and medians
taken apart can fall on either side of one, as AlexNet's 11.7 against
21.5 ms rounds of one program did). Printed per model: the choice, the
predicted and measured latency of the latency build, the one-device build,
and the ratios; the last, the one-device build's rounds over the profile's
own run of that program (its every-core candidate), is the machine's drift
between the profile and the rounds: a prediction cannot hold closer than it.

    /usr/bin/python3 bench/latency_choice_bench.py --build build --zoo DIR \\
        --models googlenet,resnet18,two_towers [--rounds 5] [--repeat 50]
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LATENCY_LINE = re.compile(r"^latency_ms median=([\d.]+)", re.M)
PREDICTED = re.compile(r"^predicted run time ([\d.]+) ms", re.M)
CHOICE = re.compile(r"^one device with every core: .*$", re.M)
CORES = ["--cores", "cpu:0=0", "--cores", "cpu:1=1"]


def run(cmd):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{result.stderr}")
    return result.stdout


def model_and_inputs(name, zoo, scratch):
    """The ONNX file and its --input flags."""
    if name == "two_towers":
        sys.path.insert(0, str(HERE))
        import device_queues_bench
        path = device_queues_bench.export(scratch, 28)
        return path, ["--input", f"a={scratch / 'a.npy'}", "--input", f"b={scratch / 'b.npy'}"]
    meta = json.loads((zoo / f"{name}.json").read_text())
    return zoo / f"{name}.onnx", ["--input", f"{meta['input']}={zoo / (name + '.input.npy')}"]


def measure(cli, artifact, inputs, out, repeat):
    text = run([cli, "run", artifact, *inputs, "-o", out, "--repeat", repeat])
    return float(LATENCY_LINE.search(text).group(1))


def bench_model(cli, name, zoo, rounds, repeat, profile_repeat):
    with tempfile.TemporaryDirectory(dir="/tmp") as scratch:
        scratch = Path(scratch)
        model, inputs = model_and_inputs(name, zoo, scratch)
        costs = scratch / "costs.json"
        run([cli, "profile", model, "--device", "cpu:0", "--device", "cpu:1", *CORES, "--repeat", profile_repeat,
             "-o", costs])
        compiled = run([cli, "compile", model, "-o", scratch / "latency.art", "--devices", "cpu:0,cpu:1",
                        "--objective", "latency", "--costs", costs, *CORES])
        run([cli, "compile", model, "-o", scratch / "one.art", "--devices", "cpu:0", "--cores", "cpu:0=0-1"])
        predicted = float(PREDICTED.search(compiled).group(1))
        # The profile ran the one-device program too (its every-core candidate): how far
        # the machine drifted between the profile and the rounds, apart from any model.
        profiled_one = json.loads(costs.read_text())["all_cores"]["run_ms"]
        choice = CHOICE.search(compiled).group(0)
        times = {"latency": [], "one": []}
        for _ in range(rounds):
            for cell in times:
                times[cell].append(measure(cli, scratch / f"{cell}.art", inputs, scratch / "out", repeat))
        medians = {cell: statistics.median(values) for cell, values in times.items()}
        paired = statistics.median(l / o for l, o in zip(times["latency"], times["one"]))
        chose = "one device" if choice.endswith("chose one device") else "split"
        return {"model": name, "chose": chose, "predicted": predicted, **medians, "choice": choice,
                "rounds": times, "profiled_one": profiled_one,
                "latency_over_one": paired}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--zoo", default=str(Path.home() / ".cache" / "switchyard" / "zoo"))
    parser.add_argument("--models", default="googlenet,resnet18,squeezenet1_1,mobilenet_v2,two_towers")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--profile-repeat", type=int, default=20)
    args = parser.parse_args()
    cli = Path(args.build).resolve() / "bin" / "switchyard"
    print("| model | chose | predicted ms | latency build ms | one device, 2 threads ms | latency / one "
          "| measured / predicted | one device / its profile run |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        r = bench_model(cli, name, Path(args.zoo), args.rounds, args.repeat, args.profile_repeat)
        print(f"| {name} | {r['chose']} | {r['predicted']:.2f} | {r['latency']:.2f} | {r['one']:.2f} "
              f"| {r['latency_over_one']:.2f} | {r['latency'] / r['predicted']:.2f} "
              f"| {r['one'] / r['profiled_one']:.2f} |", flush=True)
        print(f"    {r['choice']}; rounds {r['rounds']}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
