"""What a caller passes as a model input, made a NumPy array, or refused.

``sy.evaluate`` and ``sy.runtime.Module`` (``run``, ``set_input``,
``benchmark``) take NumPy arrays, NumPy and Python scalars, (nested) lists,
DLPack tensors and bare DLPack capsules; anything else, or a value that
does not fit, is a ``sy.UsageError`` naming the input, the type it expects
and what it got, on both paths in the same words. Arrays of a supported
dtype pass through unchanged: their shape and dtype are checked in C++,
which words its errors the same way.
"""
import ctypes as _ctypes
import numbers as _numbers

import numpy as _np

from ._errors import error as _error

# NumPy dtypes a tensor can have (bfloat16 has no NumPy dtype).
SUPPORTED_DTYPES = ("float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "bool")

# The dtypes of Python values given for an input whose type is unknown: the
# text's literals' (and ir.const's).
_PYTHON_DTYPES = {bool: "bool", int: "int32", float: "float32"}

_KDL_CPU, _KDL_CUDA_HOST = 1, 3


def tensor_text(shape, dtype):
    """A tensor type as the text format writes it: ``Tensor[(2, 2), float32]``, or ``float32`` when 0-d."""
    if len(shape) == 0:
        return str(dtype)
    # A symbolic dimension is its text ("n", "196*n").
    return "Tensor[(" + ", ".join(d if isinstance(d, str) else str(int(d)) for d in shape) + f"), {dtype}]"


def _clipped(value, limit=40):
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _describe(value):
    """What a refused value is, for 'got ...'."""
    if value is None:
        return "None"
    if isinstance(value, (_np.ndarray, _np.generic)):
        return tensor_text(_np.shape(value), _np.asarray(value).dtype.name)
    if isinstance(value, (str, bytes)):
        return f"{type(value).__name__} {_clipped(value)}"
    return type(value).__name__


def _refuse(what, expected, value, reason="", builtin=ValueError):
    detail = f" ({reason})" if reason else ""
    return _error("UsageError", f"{what}: expected {expected}, got {_describe(value)}{detail}", builtin)


def _capsule_view(what, capsule):
    """A NumPy view of a bare DLPack capsule (``torch.utils.dlpack.to_dlpack(t)``)."""
    get_name = _ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = _ctypes.c_char_p, [_ctypes.py_object]
    name = get_name(capsule)
    if name == b"used_dltensor":
        raise _error("UsageError", f"{what}: the DLPack capsule was already consumed (a capsule is read once: "
                                   "make a new one, or pass the tensor itself)")
    if name != b"dltensor":
        raise _error("UsageError", f"{what}: a capsule named {name!r} is no DLPack tensor", TypeError)
    get_pointer = _ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = _ctypes.c_void_p, [_ctypes.py_object, _ctypes.c_char_p]
    # DLManagedTensor starts with DLTensor {void* data; DLDevice {int32 type, int32 id}; ...}.
    address = get_pointer(capsule, b"dltensor") + _ctypes.sizeof(_ctypes.c_void_p)
    device = (_ctypes.c_int32.from_address(address).value, _ctypes.c_int32.from_address(address + 4).value)

    class Tensor:
        def __dlpack__(self, stream=None):
            return capsule

        def __dlpack_device__(self):
            return device

    return from_dlpack(what, Tensor())


def from_dlpack(what, value):
    """A NumPy view of a DLPack tensor (no copy); only host memory can be read."""
    try:
        device_type, device_id = value.__dlpack_device__()
    except (AttributeError, TypeError):
        device_type, device_id = _KDL_CPU, 0
    if device_type not in (_KDL_CPU, _KDL_CUDA_HOST):
        raise _error("UsageError", f"{what} lives on DLPack device type {device_type} (id {device_id}); "
                                   "the model reads host (CPU) memory: move it to the CPU first")
    try:
        return _np.from_dlpack(value)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        raise _error("UsageError", f"{what}: cannot be read through DLPack ({e})") from None


def _is_capsule(value):
    return type(value).__name__ == "PyCapsule"


def dlpack_view(what, value):
    """A NumPy view of a DLPack tensor or bare capsule; anything else is refused."""
    if _is_capsule(value):
        return _capsule_view(what, value)
    if not hasattr(value, "__dlpack__"):
        raise _error("UsageError", f"{what} must be a DLPack tensor or capsule, got {type(value).__name__}",
                     TypeError)
    return from_dlpack(what, value)


def _from_python(what, value, expected, dtype):
    """A Python number or (nested) list as an array of ``dtype`` (None: the value's own kind)."""
    try:
        natural = _np.asarray(value)
    except (ValueError, TypeError):
        raise _refuse(what, expected, value, "rows of different lengths") from None
    kind = natural.dtype.kind
    if kind not in "biuf":
        # Strings, objects: nothing a tensor holds.
        reason = ("" if natural.ndim == 0 else
                  "strings among its elements" if kind in "US" else "elements that are no numbers")
        raise _refuse(what, expected, value, reason, TypeError)
    if dtype is None:
        dtype = _PYTHON_DTYPES[float if kind == "f" else bool if kind == "b" else int]
    target = _np.dtype(dtype)
    if kind == "f" and target.kind in "iub":
        raise _refuse(what, expected, value, f"a float for {target.name}, which would be truncated")
    if kind in "iu" and target.kind in "iu" and natural.size:
        info = _np.iinfo(target)
        low, high = int(natural.min()), int(natural.max())
        if low < info.min or high > info.max:
            bad = low if low < info.min else high
            raise _refuse(what, expected, value, f"{bad} is out of range for {target.name}")
    return natural.astype(target)


def input_array(name, value, shape=None, dtype=None):
    """``value`` as an array for input ``name`` of type (``shape``, ``dtype``); either may be None (unknown).

    An array or DLPack tensor is returned as it is when its dtype is one a
    tensor can have (its shape and dtype are checked later, in C++); a
    Python value is converted to ``dtype``. Anything else is refused.
    """
    what = f"input '{name}'"
    known = shape is not None and dtype is not None
    expected = tensor_text(shape, dtype) if known else "a tensor"
    if _is_capsule(value) or (not isinstance(value, (_np.ndarray, _np.generic)) and hasattr(value, "__dlpack__")):
        value = dlpack_view(what, value)
    if isinstance(value, (_np.ndarray, _np.generic)):
        if _np.asarray(value).dtype.name not in SUPPORTED_DTYPES:
            raise _refuse(what, expected, value, "" if known else "unsupported dtype")
        return value
    if isinstance(value, (_numbers.Number, list, tuple)) and not isinstance(value, complex):
        return _from_python(what, value, expected, dtype if dtype in SUPPORTED_DTYPES else None)
    raise _refuse(what, expected, value, builtin=TypeError)
