# Racing and interrupted compiles (issue 41): compiles of different models
# into one output folder and one artifact cache at once, some stopped by
# SIGINT or SIGKILL at a random moment, must never leave a cache entry or an
# output folder that holds another model's artifact. After every round each
# model compiled alone (so handed back by the cache when it holds an entry)
# must compute what the interpreter (`switchyard run-ir`) computes for it,
# and the shared folder must be one model's artifact, whole.
#
# The CI form runs a few rounds. By hand, for the long form:
#   SY_RACE_ROUNDS=125 python3 -m pytest -s tests/python/test_compile_race.py
# (8 racing compiles a round; SY_RACE_SEED picks other models and timings).
import os
import random
import signal
import subprocess
import time

import numpy as np

from mlp_cli import SWITCHYARD

ROUNDS = int(os.environ.get("SY_RACE_ROUNDS", "10"))
SEED = int(os.environ.get("SY_RACE_SEED", "41"))
COMPILES_PER_ROUND = 8
MODELS = 4
UNARY = ["nn.relu", "tanh", "sigmoid", "negative", "exp"]
# A compile that ends by a signal: SIGINT handled (128 + 2), or before the
# handler was installed (-2), or SIGKILL (-9).
INTERRUPTED = {128 + signal.SIGINT, -signal.SIGINT, -signal.SIGKILL}


def model_text(index, rng):
    scale, shift = rng.uniform(0.5, 2.0), rng.uniform(-1.0, 1.0)
    return ("def @main(%x: Tensor[(4, 16), float32]) -> Tensor[(4, 16), float32] {\n"
            f"  {UNARY[index % len(UNARY)]}(add(multiply(%x, {scale:.4f}f), {shift:.4f}f))\n"
            "}\n")


def run_artifact(artifact, inputs, out):
    result = subprocess.run([str(SWITCHYARD), "run", str(artifact), "--input", f"x={inputs}", "--output-dir", str(out)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{artifact}: {result.stderr}"
    return np.load(out / "output_0.npy")


def matching_models(output, references):
    return [k for k, reference in enumerate(references) if np.allclose(output, reference, rtol=1e-5, atol=1e-6)]


def compile_command(model, out, rebuild):
    return [str(SWITCHYARD), "compile", str(model), "-o", str(out), "--devices", "cpu:0"] + (["--rebuild"] if rebuild else [])


def race(rng, models, shared, private, env):
    """One round of racing compiles, some interrupted; returns how many ran and the exit
    statuses of those a signal stopped."""
    children = []
    for i in range(COMPILES_PER_ROUND):
        k = rng.randrange(len(models))
        out = shared if rng.random() < 0.85 else private / f"{i}"
        children.append(subprocess.Popen(compile_command(models[k], out, rng.random() < 0.8), env=env,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    signals = sorted((rng.uniform(0, 0.25), i, rng.choice([signal.SIGINT, signal.SIGKILL]))
                     for i in range(len(children)) if rng.random() < 0.4)
    start = time.monotonic()
    sent = set()
    for delay, i, signo in signals:
        time.sleep(max(0.0, start + delay - time.monotonic()))
        if children[i].poll() is None:
            children[i].send_signal(signo)
            sent.add(i)
    for i, child in enumerate(children):
        _, stderr = child.communicate(timeout=300)
        allowed = {0} | (INTERRUPTED if i in sent else set())
        assert child.returncode in allowed, f"compile {child.args} exited {child.returncode}: {stderr}"
    return len(children), [children[i].returncode for i in sent if children[i].returncode != 0]


def test_racing_and_interrupted_compiles_never_hand_back_another_model(tmp_path):
    rng = random.Random(SEED)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(SEED).standard_normal((4, 16)).astype(np.float32))
    models, references = [], []
    for k in range(MODELS):
        models.append(tmp_path / f"model{k}.sy")
        models[k].write_text(model_text(k, rng))
        reference = tmp_path / f"reference{k}"
        subprocess.run([str(SWITCHYARD), "run-ir", str(models[k]), "--input", f"x={x}", "--output-dir", str(reference)],
                       check=True, capture_output=True, timeout=120)
        references.append(np.load(reference / "output_0.npy"))
    for k in range(MODELS):
        assert matching_models(references[k], references) == [k], "two models compute the same"
    shared = tmp_path / "outputs" / "shared"
    private = tmp_path / "private"
    private.mkdir()
    compiles, interrupted = 0, []
    wrong = []
    for round_index in range(ROUNDS):
        raced, stopped = race(rng, models, shared, private, env)
        compiles += raced
        interrupted += stopped
        if shared.exists():
            found = matching_models(run_artifact(shared, x, tmp_path / "shared_run"), references)
            if len(found) != 1:
                wrong.append(f"round {round_index}: the shared folder computes none of the models")
        for k in range(MODELS):
            alone = tmp_path / "alone" / f"{k}"
            subprocess.run(compile_command(models[k], alone, False), env=env, check=True, capture_output=True,
                           timeout=300)
            found = matching_models(run_artifact(alone, x, tmp_path / f"alone_run{k}"), references)
            if found != [k]:
                wrong.append(f"round {round_index}: model {k} compiled alone computes model(s) {found}")
    # One more compile into the shared folder removes what killed ones left beside it.
    subprocess.run(compile_command(models[0], shared, False), env=env, check=True, capture_output=True, timeout=300)
    killed = sum(status == -signal.SIGKILL for status in interrupted)
    print(f"\n{compiles} racing compiles, {len(interrupted)} of them interrupted ({killed} by SIGKILL, "
          f"{len(interrupted) - killed} by SIGINT), {len(wrong)} wrong models handed back")
    assert wrong == []
    assert sorted(p.name for p in shared.parent.iterdir()) == ["shared"]
