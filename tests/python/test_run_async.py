# Requests in flight (issue 38, "Streams of requests"): Module.run_async
# returns a future at once; many requests with distinct inputs, from one
# thread or several, each get exactly their own outputs (those of run()); a
# failed request raises its error from its own future only; a module
# dropped with requests in flight ends them; bad arguments are refused.
import threading

import numpy as np
import pytest

import switchyard as sy

# Two stages of convolutions: the first on cpu:0, the second on cpu:1.
TWO_STAGES = """
def @main(%x: Tensor[(1, 8, 16, 16), float32] @cpu:0, %w: Tensor[(8, 8, 3, 3), float32]) -> Tensor[(1, 8, 16, 16), float32] {
  %0 = on_device(nn.relu(nn.conv2d(%x, %w, padding=[1, 1])), device="cpu:0");
  %1 = on_device(nn.relu(add(nn.conv2d(%0, %w, padding=[1, 1]), %x)), device="cpu:0");
  %2 = on_device(nn.relu(nn.conv2d(%1, %w, padding=[1, 1])), device="cpu:1");
  on_device(nn.relu(add(nn.conv2d(%2, %w, padding=[1, 1]), %1)), device="cpu:1")
}
"""

FAULT = """
def @main(%x: Tensor[(64), int32] @cpu:0, %y: Tensor[(64), int32] @cpu:1) -> Tensor[(64), int32] @cpu:0 {
  %0 = multiply(add(%x, 3), %x);
  %1 = on_device(divide(%x, %y), device="cpu:1");
  add(%0, %1)
}
"""


@pytest.fixture(scope="module")
def two_stages(tmp_path_factory):
    mod = sy.parse(TWO_STAGES)
    out = tmp_path_factory.mktemp("two_stages") / "artifact"
    sy.build(mod, devices=["cpu:0", "cpu:1"], output=out)
    return mod, out


def requests(count, seed=0):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    return [dict(x=rng.standard_normal((1, 8, 16, 16)).astype(np.float32), w=w) for _ in range(count)]


def test_many_requests_in_flight_each_get_exactly_their_own_outputs(two_stages):
    mod, out = two_stages
    model = sy.runtime.load(out)
    assert model.max_in_flight == 4  # two per device queue
    inputs = requests(20)
    expected = [model.run(**i) for i in inputs]
    np.testing.assert_allclose(expected[0], sy.evaluate(mod, inputs[0]), rtol=1e-4, atol=1e-4)
    futures = [model.run_async(**i) for i in inputs]  # more than may be in flight: it waits for places
    for future, want in zip(futures, expected):
        assert np.array_equal(future.result(timeout=60), want)
        assert future.done() and future.exception() is None
        assert future.stats.devices == {"cpu:0", "cpu:1"}
    # Positional inputs, statistics off.
    assert np.array_equal(model.run_async(inputs[3]["x"], inputs[3]["w"], record_stats=False).result(), expected[3])


def test_requests_from_several_threads_match_their_runs(two_stages):
    _, out = two_stages
    model = sy.runtime.load(out, max_in_flight=3)
    inputs = requests(24, seed=1)
    expected = [model.run(**i) for i in inputs]
    mismatches = []

    def client(first):
        futures = [(k, model.run_async(**inputs[k])) for k in range(first, len(inputs), 3)]
        mismatches.extend(k for k, f in futures if not np.array_equal(f.result(), expected[k]))

    threads = [threading.Thread(target=client, args=(t,)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mismatches == []


def test_a_failed_request_raises_from_its_own_future_only(tmp_path):
    out = tmp_path / "fault"
    sy.build(sy.parse(FAULT), devices=["cpu:0", "cpu:1"], output=out)
    model = sy.runtime.load(out)
    inputs = []
    for r in range(9):
        x = np.arange(64, dtype=np.int32) + r
        y = np.full(64, 1 + r, np.int32)
        if r % 3 == 1:
            y[40] = 0
        inputs.append(dict(x=x, y=y))
    futures = [model.run_async(**i) for i in inputs]
    for r, (future, i) in enumerate(zip(futures, inputs)):
        if r % 3 == 1:
            with pytest.raises(sy.RuntimeError, match="integer division by zero"):
                future.result()
            assert isinstance(future.exception(), sy.RuntimeError)
        else:
            assert np.array_equal(future.result(), (i["x"] + 3) * i["x"] + i["x"] // i["y"])


def test_a_module_dropped_with_requests_in_flight_ends_them(two_stages):
    _, out = two_stages
    model = sy.runtime.load(out, max_in_flight=8)
    inputs = requests(8, seed=2)
    expected = [model.run(**i) for i in inputs]
    futures = [model.run_async(**i) for i in inputs]
    del model
    assert all(np.array_equal(f.result(), want) for f, want in zip(futures, expected))
    # Neither the module nor the future kept: the artifact goes once the request ended.
    sy.runtime.load(out).run_async(**inputs[0])


def test_bad_arguments_are_refused(two_stages):
    _, out = two_stages
    model = sy.runtime.load(out)
    with pytest.raises(sy.UsageError, match=r"input 'x': expected"):
        model.run_async(x=np.zeros((1, 8, 16, 15), np.float32), w=np.zeros((8, 8, 3, 3), np.float32))
    future = model.run_async(**requests(1)[0])
    with pytest.raises(sy.UsageError, match="timeout must be a number of seconds or None"):
        future.result(timeout="soon")
    future.result()
    with pytest.raises(sy.UsageError, match="max_in_flight must be an int >= 0"):
        sy.runtime.load(out, max_in_flight=-1)
