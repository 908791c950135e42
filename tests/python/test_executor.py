# The executor-style interface of a loaded artifact, as TVM's graph executor
# has it: set_input, run() on the set inputs, get_output into a preallocated
# array, and benchmark's median/min/p90; run(**inputs) keeps working.
import numpy as np
import pytest

import switchyard as sy
from conftest import mlp_reference


@pytest.fixture
def model(mlp_artifact):
    return sy.runtime.load(mlp_artifact[1])


def set_all(model, inputs):
    for name, value in inputs.items():
        model.set_input(name, value)


def test_set_input_run_get_output_matches_numpy(model, mlp_inputs):
    set_all(model, mlp_inputs)
    returned = model.run()
    expected = mlp_reference(mlp_inputs)
    np.testing.assert_allclose(returned, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(model.get_output(0), returned)
    np.testing.assert_array_equal(model.get_output(model.output_names[0]), returned)
    np.testing.assert_array_equal(model.get_output(-1), returned)
    assert model.last_stats.devices == {"cpu:0", "cpu:1"}


def test_set_input_copies_and_later_runs_see_new_inputs(model, mlp_inputs):
    set_all(model, mlp_inputs)
    x = mlp_inputs["x"].copy()
    model.set_input("x", x)
    x[:] = 0  # the model keeps its own copy
    np.testing.assert_allclose(model.run(), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    model.set_input("x", -mlp_inputs["x"])
    flipped = dict(mlp_inputs, x=-mlp_inputs["x"])
    np.testing.assert_allclose(model.run(), mlp_reference(flipped), rtol=1e-4, atol=1e-5)
    # Keyword inputs run on those instead and leave the set ones alone.
    np.testing.assert_allclose(model.run(**mlp_inputs), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.run(), mlp_reference(flipped), rtol=1e-4, atol=1e-5)


def test_get_output_writes_into_a_preallocated_array(model, mlp_inputs):
    set_all(model, mlp_inputs)
    model.run()
    out = np.full((1, 10), np.nan, np.float32)
    assert model.get_output(0, out=out) is out
    np.testing.assert_allclose(out, mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    view = np.zeros((3, 10), np.float32)[1:2]  # a view into a larger buffer
    model.get_output(0, out=view)
    np.testing.assert_array_equal(view, out)


@pytest.mark.parametrize("out, words", [
    (np.zeros((10,), np.float32), r"expected shape \(1, 10\) float32, got shape \(10,\) float32"),
    (np.zeros((1, 10), np.float64), r"expected shape \(1, 10\) float32, got shape \(1, 10\) float64"),
])
def test_get_output_refuses_a_mismatched_buffer(model, mlp_inputs, out, words):
    model.run(**mlp_inputs)
    with pytest.raises(sy.UsageError, match=words):
        model.get_output(0, out=out)
    assert not out.any(), "nothing written"


def test_get_output_refuses_read_only_buffers_and_bad_indices(model, mlp_inputs):
    with pytest.raises(sy.UsageError, match="before run"):
        model.get_output(0)
    model.run(**mlp_inputs)
    frozen = np.zeros((1, 10), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(sy.UsageError, match="read-only"):
        model.get_output(0, out=frozen)
    with pytest.raises(TypeError, match="NumPy array"):
        model.get_output(0, out=[0.0] * 10)
    with pytest.raises(IndexError, match="1 outputs"):
        model.get_output(1)
    with pytest.raises(sy.UsageError, match="unknown output 'logits'"):
        model.get_output("logits")


def test_set_input_checks_now_and_run_names_what_is_missing(model, mlp_inputs):
    with pytest.raises(sy.UsageError, match=r"input 'x': expected Tensor\[\(1, 784\), float32\]"):
        model.set_input("x", np.ones((784,), np.float32))
    with pytest.raises(sy.UsageError, match="unknown input 'y'"):
        model.set_input("y", mlp_inputs["x"])
    with pytest.raises(TypeError):
        model.set_input(0, mlp_inputs["x"])
    model.set_input("x", mlp_inputs["x"])
    with pytest.raises(sy.UsageError, match="missing input 'w1'"):
        model.run()


def test_set_input_takes_lists_in_the_input_dtype(model, mlp_inputs):
    set_all(model, mlp_inputs)
    model.set_input("b2", mlp_inputs["b2"].tolist())
    np.testing.assert_allclose(model.run(), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)


def test_benchmark_reports_median_min_p90(model, mlp_inputs):
    set_all(model, mlp_inputs)
    result = model.benchmark(repeat=7)
    assert result.repeat == 7 and len(result.times_ms) == 7
    assert 0 < result.min_ms <= result.median_ms <= result.p90_ms <= max(result.times_ms)
    assert result.min_ms == min(result.times_ms)
    assert result.median_ms == pytest.approx(float(np.median(result.times_ms)))
    assert "median" in str(result) and "7 runs" in str(result)
    on_keywords = model.benchmark(repeat=2, **mlp_inputs)
    assert on_keywords.repeat == 2
    with pytest.raises(ValueError, match="positive"):
        model.benchmark(repeat=0)


def misaligned(array):
    """A C-contiguous copy of `array` whose data starts one byte past an aligned address."""
    raw = np.empty(array.nbytes + 1, np.uint8)
    copy = raw[1:].view(array.dtype).reshape(array.shape)
    copy[...] = array
    assert copy.flags.c_contiguous and not copy.flags.aligned
    return copy


def test_run_copies_a_misaligned_input_as_set_input_does(model, mlp_inputs):
    # run(**inputs) used to pass a C-contiguous but misaligned float32 array
    # through as it lay and refuse it, though set_input copied it.
    inputs = dict(mlp_inputs, x=misaligned(mlp_inputs["x"]))
    expected = mlp_reference(mlp_inputs)
    np.testing.assert_allclose(model.run(**inputs), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.run(*[inputs[n] for n in model.input_names]), expected, rtol=1e-4, atol=1e-5)
    set_all(model, mlp_inputs)
    model.set_input("x", inputs["x"], copy=False)
    np.testing.assert_allclose(model.run(), expected, rtol=1e-4, atol=1e-5)


def counting_runs(model):
    """Counts the runs a model makes from now on (benchmark's warm-up included)."""
    calls = []
    run = model._run

    def counted(arrays, record_stats):
        calls.append(1)
        return run(arrays, record_stats)

    model._run = counted
    return calls


def test_benchmark_takes_number_and_min_repeat_ms_as_options_as_tvm_does(model, mlp_inputs):
    # TVM's time_evaluator options were taken as model inputs ("unknown input 'number'").
    set_all(model, mlp_inputs)
    calls = counting_runs(model)
    result = model.benchmark(repeat=3, number=4)
    assert len(calls) == 1 + 3 * 4, "one warm-up, then repeat measurements of number runs each"
    assert result.repeat == 3 and result.number == 4 and len(result.times_ms) == 3
    # min_repeat_ms raises number until one measurement lasts that long, as TVM's does.
    slow = model.benchmark(repeat=2, number=1, min_repeat_ms=30)
    assert slow.number >= 1 and min(slow.times_ms) * slow.number >= 30
    on_keywords = model.benchmark(repeat=1, number=2, **mlp_inputs)
    assert on_keywords.number == 2


@pytest.mark.parametrize("options, words", [
    ({"repeats": 3}, r"benchmark\(\) got an unknown keyword 'repeats': neither an option \(repeat, number, "
                     r"min_repeat_ms\) nor an input \(x, w1, b1, w2, b2\)"),
    ({"number": 0}, "number must be a positive int, got 0"),
    ({"min_repeat_ms": -1}, "min_repeat_ms must be a number >= 0, got -1"),
    ({"repeat": 2.5}, "repeat must be a positive int, got 2.5"),
])
def test_benchmark_refuses_unknown_and_bad_options(model, mlp_inputs, options, words):
    set_all(model, mlp_inputs)
    with pytest.raises(sy.UsageError, match=words):
        model.benchmark(**options)


def test_get_input_and_the_counts_of_tvms_graph_executor(model, mlp_inputs):
    assert model.get_num_inputs() == 5 and model.get_num_outputs() == 1
    with pytest.raises(sy.UsageError, match=r"input 'w1' has not been set \(set_input\('w1', \.\.\.\) first\)"):
        model.get_input("w1")
    set_all(model, mlp_inputs)
    np.testing.assert_array_equal(model.get_input("w1"), mlp_inputs["w1"])
    np.testing.assert_array_equal(model.get_input(1), mlp_inputs["w1"])
    np.testing.assert_array_equal(model.get_input(-1), mlp_inputs["b2"])
    copy = model.get_input("x")
    copy[:] = 0
    assert model.get_input("x").any(), "get_input returns a copy"
    out = np.empty((10,), np.float32)
    assert model.get_input("b2", out=out) is out
    np.testing.assert_array_equal(out, mlp_inputs["b2"])
    with pytest.raises(sy.UsageError, match="unknown input 'y'"):
        model.get_input("y")
    with pytest.raises(IndexError, match="input index 5 out of range: the model has 5 inputs"):
        model.get_input(5)


def test_load_threads_is_checked(mlp_artifact, mlp_inputs):
    model = sy.runtime.load(mlp_artifact[1], threads=1)
    np.testing.assert_allclose(model.run(**mlp_inputs), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    with pytest.raises(sy.UsageError, match="threads must be an int from 0 .default. to 1024, got -1"):
        sy.runtime.load(mlp_artifact[1], threads=-1)
    with pytest.raises(TypeError, match="threads must be an int from 0"):
        sy.runtime.load(mlp_artifact[1], threads="2")
