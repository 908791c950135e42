"""How the Python test harnesses compare an output with its reference: the
ONNX conformance runner (against ONNX's stored outputs) and the fusion
fuzzer (against the interpreter) hold results to the same rules, with
their own tolerances.

compare(actual, expected, ...) is None when they match, else what differs:
the same shape and dtype; integers and booleans equal; NaN, +inf and -inf
at the same places; each finite element within
  scale_tolerance * (the expected output's largest finite magnitude, or 1)
  + element_tolerance * |expected element| + floor.
"""
import numpy as np


def compare(actual, expected, scale_tolerance=1e-4, element_tolerance=1e-4, floor=0.0):
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if expected.size == 0:
        return None
    if expected.dtype.kind != "f":
        if np.array_equal(actual, expected):
            return None
        bad = np.argwhere(actual != expected)
        i = tuple(bad[0])
        return f"{len(bad)} of {expected.size} values differ; at {list(i)}: {actual[i]!r}, expected {expected[i]!r}"
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    for what, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        if not np.array_equal(test(a), test(e)):
            i = tuple(np.argwhere(test(a) != test(e))[0])
            return f"{what} mismatch at {list(i)}: {a[i]!r}, expected {e[i]!r}"
    finite = np.isfinite(e)
    if not finite.any():
        return None
    scale = float(np.abs(e[finite]).max())
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(finite, np.abs(a - e), 0.0)
        bound = scale_tolerance * (scale if scale > 0 else 1.0) + element_tolerance * np.abs(e) + floor
    bad = np.argwhere(finite & ~(err <= bound))
    if len(bad) == 0:
        return None
    i = tuple(bad[0])
    worst = float(np.nanmax(np.where(finite, err, 0.0)))
    return (f"{len(bad)} of {e.size} values differ (largest error {worst:.3g}, scale {scale:.3g}); "
            f"at {list(i)}: {a[i]!r}, expected {e[i]!r}")
