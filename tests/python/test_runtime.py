# Evaluation and execution from Python: sy.evaluate with NumPy in and out,
# sy.build into an artifact, sy.runtime.load(...).run(...) with run
# statistics, and the errors of each.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir

TWO_OUTPUTS = """
def @main(%a: Tensor[(2, 3), float32] @cpu:0, %b: Tensor[(2, 3), float32]) {
  %0 = add(%a, %b);
  %1 = on_device(nn.relu(%0), device="cpu:1");
  (%0, negative(%1))
}
"""


def inputs():
    rng = np.random.default_rng(3)
    return {"a": rng.standard_normal((2, 3)).astype(np.float32),
            "b": rng.standard_normal((2, 3)).astype(np.float32)}


def expected(values):
    total = values["a"] + values["b"]
    return total, -np.maximum(total, 0)


def test_evaluate_returns_numpy_arrays_and_tuples():
    mod = sy.parse(TWO_OUTPUTS)
    values = inputs()
    first, second = sy.evaluate(mod, **values)
    assert isinstance(first, np.ndarray) and first.dtype == np.float32
    np.testing.assert_allclose(first, expected(values)[0], rtol=1e-6)
    np.testing.assert_allclose(second, expected(values)[1], rtol=1e-6)
    by_dict = sy.evaluate(mod, values)
    np.testing.assert_array_equal(by_dict[0], first)
    as_lists = sy.evaluate(mod, a=values["a"].tolist(), b=values["b"].tolist())
    np.testing.assert_allclose(as_lists[0], first, rtol=1e-6)


def test_evaluate_other_dtypes_and_entries():
    x = ir.Var("x", ir.TensorType((3,), "int32"))
    helper = ir.Function([x], sy.op.multiply(x, ir.const(2, dtype="int32")))
    mod = ir.IRModule({"main": helper, "twice": helper})
    out = sy.evaluate(mod, None, "twice", x=np.array([1, 2, 3], np.int32))
    assert out.dtype == np.int32 and out.tolist() == [2, 4, 6]
    h = ir.Var("h", ir.TensorType((2,), "float16"))
    half = sy.evaluate(ir.Function([h], sy.op.add(h, h)), h=np.array([0.5, 1.5], np.float16))
    assert half.dtype == np.float16 and half.tolist() == [1.0, 3.0]


def test_build_load_run_with_stats(tmp_path):
    mod = sy.parse(TWO_OUTPUTS)
    report = sy.build(mod, devices=["cpu:0", "cpu:1"], output=tmp_path / "two", opt_level=2)
    assert report.output_dir.endswith("two") and report.copies >= 1
    assert "kernel" in report.summary() and report.total_milliseconds > 0
    assert [stage for stage, _ in report.stages]
    model = sy.runtime.load(tmp_path / "two")
    assert model.input_names == ["a", "b"] and len(model.output_names) == 2
    assert [d["name"] for d in model.manifest["devices"]] == ["cpu:0", "cpu:1"]
    values = inputs()
    first, second = model.run(**values)
    reference = expected(values)
    np.testing.assert_allclose(first, reference[0], rtol=1e-5)
    np.testing.assert_allclose(second, reference[1], rtol=1e-5)
    stats = model.last_stats
    assert stats.devices == {"cpu:0", "cpu:1"}
    assert all(c.src == "cpu:0" and c.dst == "cpu:1" and c.bytes == 24 for c in stats.copies)
    assert stats.total_ns > 0
    positional = model.run(values["a"], values["b"])
    np.testing.assert_array_equal(positional[0], first)
    # The same class as sy.evaluate raises for the same mistake.
    with pytest.raises(sy.UsageError, match="input 'a': expected"):
        model.run(a=np.ones((3, 3), np.float32), b=values["b"])
    with pytest.raises(TypeError, match="twice"):
        model.run(values["a"], a=values["a"])


def test_build_errors(tmp_path):
    mod = sy.parse(TWO_OUTPUTS)
    with pytest.raises(sy.UsageError):
        sy.build(mod, devices=["cpu:0", "cpu:zero"], output=tmp_path / "bad")
    with pytest.raises(ValueError):
        sy.build(mod, devices=[], output=tmp_path / "bad")
    with pytest.raises(sy.PlacementError):
        sy.build(mod, devices=["cpu:0"], output=tmp_path / "bad")
    with pytest.raises(TypeError):
        sy.build(mod["main"], devices=["cpu:0"], output=tmp_path / "bad")
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("not an artifact")
    with pytest.raises(sy.UsageError):
        sy.build(mod, devices=["cpu:0", "cpu:1"], output=occupied)
