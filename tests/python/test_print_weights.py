# Printing a real model without its weights, as TVM prints
# meta[relay.Constant][i]: str(), astext(), and the CLI's import and opt
# write constants over 16 elements as numbered references with their type
# (print(mod) of ResNet-18 was 62 MB of base64), and only the full text,
# asked for with show_weights=True / --show-weights, parses back.
import os
import pathlib
import subprocess

import pytest

import switchyard as sy
from switchyard import ir

REPO = pathlib.Path(__file__).resolve().parents[2]
SWITCHYARD = pathlib.Path(os.environ.get("SY_BUILD_DIR", REPO / "build")) / "bin" / "switchyard"


def test_str_and_astext_elide_large_weights_and_say_so(conv_dense_onnx):
    mod = sy.frontend.from_onnx(conv_dense_onnx)
    text = str(mod)
    assert text == mod.astext()
    first_line = text.splitlines()[0]
    assert first_line.startswith("# meta[Constant][i]: constants over 16 elements are elided") and \
        "does not parse back" in first_line and "show_weights=True" in first_line
    assert "meta[Constant][0] /* Tensor[(8, 3, 3, 3), float32] */" in text
    assert "meta[Constant][1] /* Tensor[(128, 4), float32] */" in text
    assert "Tensor[(8), float32]{" in text, "a bias of 8 elements is written inline"
    assert "b64" not in text
    full = mod.astext(show_weights=True)
    assert "meta[" not in full and len(full) > 2 * len(text)
    body = mod["main"].body
    assert "meta[Constant][0]" in str(body) and "meta[" not in body.astext(show_weights=True)


def test_only_the_full_text_parses_back(conv_dense_onnx):
    mod = sy.frontend.from_onnx(conv_dense_onnx)
    with pytest.raises(sy.ParseError) as info:
        sy.parse(str(mod), source_name="elided.sy")
    assert "meta[Constant][0] is a constant the printer elided" in info.value.message
    assert "show_weights=True" in info.value.message and "--show-weights" in info.value.message
    again = sy.parse(mod.astext(show_weights=True), source_name="full.sy")
    assert ir.structural_equal(again, mod, compare_spans=False)
    with pytest.raises(TypeError, match="show_weights must be a bool"):
        mod.astext(show_weights="yes")


def run_cli(*args):
    return subprocess.run([str(SWITCHYARD), *map(str, args)], capture_output=True, text=True)


def test_cli_import_and_opt_elide_unless_show_weights(conv_dense_onnx, tmp_path):
    elided = run_cli("import", conv_dense_onnx)
    assert elided.returncode == 0, elided.stderr
    assert "meta[Constant][0] /* Tensor[(8, 3, 3, 3), float32] */" in elided.stdout and "b64" not in elided.stdout
    refused = run_cli("import", conv_dense_onnx, "-o", tmp_path / "elided.sy")
    assert refused.returncode == 0
    checked = run_cli("check", tmp_path / "elided.sy")
    assert checked.returncode == 1 and "printed without its weights" in checked.stderr
    full = run_cli("import", conv_dense_onnx, "--show-weights", "-o", tmp_path / "full.sy")
    assert full.returncode == 0, full.stderr
    assert run_cli("check", tmp_path / "full.sy").stdout.strip() == "ok"

    opt = run_cli("opt", tmp_path / "full.sy", "-p", "InferType,FoldConstant", "--print-ir-after", "InferType")
    assert opt.returncode == 0, opt.stderr
    assert "meta[Constant][0]" in opt.stdout and "b64" not in opt.stdout
    assert "meta[Constant][0]" in opt.stderr and "b64" not in opt.stderr, "dumps between passes elide too"
    opt_full = run_cli("opt", tmp_path / "full.sy", "-p", "InferType", "--show-weights")
    assert opt_full.returncode == 0 and "b64" in opt_full.stdout and "meta[" not in opt_full.stdout
    # fmt writes the canonical text, weights and all.
    fmt = run_cli("fmt", tmp_path / "full.sy")
    assert fmt.returncode == 0 and "b64" in fmt.stdout and "meta[" not in fmt.stdout
