# The fusion fuzzer's seeded fast run (tests/fuzz/fusion/fuzz.py): random
# graphs around every anchor the backend knows, compiled and compared with
# the reference interpreter, on one device and split. No graph may be wrong
# or crash; every kept finding (tests/fuzz/fusion/findings/) replays too.
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
FUZZ = REPO / "tests" / "fuzz" / "fusion" / "fuzz.py"
GRAPHS = 240


def test_seeded_graphs_match_the_interpreter(tmp_path):
    report_path = tmp_path / "fuzz.json"
    proc = subprocess.run([sys.executable, str(FUZZ), "--graphs", str(GRAPHS), "--json", str(report_path)],
                          capture_output=True, text=True, timeout=1200, env=dict(os.environ))
    print("\n" + proc.stdout[-4000:] + proc.stderr[-2000:])
    report = json.loads(report_path.read_text())
    counts = report["counts"]
    assert sum(counts.values()) == GRAPHS
    bad = [r for r in report["results"] if r["status"] in ("wrong", "crash")]
    assert not bad, "\n".join(f"graph {r['seed']} ({r['anchor']}): {r['status']}: {r['detail']}" for r in bad)
    # Refusals are allowed only with a reason; most graphs must compile.
    assert counts["pass"] >= 0.9 * GRAPHS, counts
    assert proc.returncode == 0


def test_kept_findings_replay():
    findings = sorted((REPO / "tests" / "fuzz" / "fusion" / "findings").glob("*.sy"))
    assert findings, "the findings folder holds the fuzzer's regression cases"
    proc = subprocess.run([sys.executable, str(FUZZ), "--replay"], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ))
    print("\n" + proc.stdout + proc.stderr)
    assert proc.stdout.count(": pass") == len(findings), proc.stdout
    assert proc.returncode == 0
