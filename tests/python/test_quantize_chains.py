"""SimplifyQuantizeChains: a dequantize right after a quantize reads the
clipped float instead of converting it to 8 bits and back, and a ReLU
before a quantize whose zero point is the type's lowest value is dropped.
Both are exact: the interpreter's result before and after the pass, and the
compiled artifact's, are equal bit for bit on inputs that probe the edges
(NaN, infinities, negative zero, values at halves of the scale, beyond the
range)."""
import numpy as np
import pytest

import switchyard as sy
from switchyard import transform as T

# quantize (zero point zp0) -> dequantize -> relu -> quantize (zero point zp1)
REQUANTIZED_RELU = """
def @main(%x: Tensor[(8, 32), float32]) -> Tensor[(8, 32), {dtype}] {{
  %0 = cast(clip(add(round(divide(%x, 0.05f)), {zp0}f), a_min={low}, a_max={high}), dtype="{dtype}");
  %1 = multiply(subtract(cast(%0, dtype="float32"), {zp0}f), 0.05f);
  %2 = nn.relu(%1);
  cast(clip(add(round(divide(%2, 0.03f)), {zp1}f), a_min={low}, a_max={high}), dtype="{dtype}")
}}
"""

# The first quantize's 8-bit value is also a result: its cast must stay.
READ_TWICE = """
def @main(%x: Tensor[(8, 32), float32]) -> (Tensor[(8, 32), uint8], Tensor[(8, 32), float32]) {
  %0 = cast(clip(add(round(divide(%x, 0.05f)), 3f), a_min=0, a_max=255), dtype="uint8");
  (%0, multiply(subtract(cast(%0, dtype="float32"), 3f), 0.05f))
}
"""

RANGES = {"uint8": (0, 255), "int8": (-128, 127)}


def probing_input():
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((8, 32)) * 4).astype(np.float32)
    halves = (np.arange(-16, 16) + 0.5).astype(np.float32) * np.float32(0.05)
    x[0] = halves
    x[1, :8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 3.4e38]
    return x


def simplified(mod):
    return T.Sequential([T.InferType(), T.PlanDevices(devices=["cpu:0"]), T.SimplifyQuantizeChains()])(mod)


def assert_same_everywhere(tmp_path, mod, x):
    want = sy.evaluate(mod, x=x)
    after = sy.evaluate(simplified(mod), x=x)
    sy.build(mod, ["cpu:0"], tmp_path / "artifact")
    compiled = sy.runtime.load(tmp_path / "artifact").run(x=x)
    for got in (after, compiled):
        if isinstance(want, (list, tuple)):
            for w, g in zip(want, got):
                np.testing.assert_array_equal(g, w)
        else:
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    return want


@pytest.mark.parametrize("dtype, zp0, zp1, relu_dropped", [
    ("uint8", 120, 0, True),     # zero point at uint8's lowest: every x <= 0 quantizes to 0 either way
    ("int8", 5, -128, True),     # int8's lowest
    ("uint8", 120, 10, False),   # relu(x) quantizes to 10 where x < 0, x itself lower: the relu stays
])
def test_a_requantized_relu_loses_its_8bit_round_trip_and_maybe_its_relu(tmp_path, dtype, zp0, zp1, relu_dropped):
    low, high = RANGES[dtype]
    mod = sy.parse(REQUANTIZED_RELU.format(dtype=dtype, zp0=zp0, zp1=zp1, low=low, high=high))
    text = str(simplified(mod))
    # One cast left (the result's): the dequantize reads the first clip.
    assert text.count("cast(") == 1, text
    assert ("nn.relu" not in text) == relu_dropped, text
    want = assert_same_everywhere(tmp_path, mod, probing_input())
    assert len(np.unique(want)) > 20  # the inputs reach many quanta, both ends included
    # The lowest quantum, and the highest the first quantize lets through (+inf reaches it).
    assert want.min() == max(low, zp1) and want.max() == want[1, 1]


def test_a_quantized_value_read_elsewhere_keeps_its_round_trip(tmp_path):
    mod = sy.parse(READ_TWICE)
    text = str(simplified(mod))
    assert text.count("cast(") == 2, text
    assert_same_everywhere(tmp_path, mod, probing_input())
