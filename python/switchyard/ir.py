"""The IR: expression nodes, types, devices, spans, modules and visitors.

Every node carries ``.virtual_device``, ``.span`` and ``.checked_type`` and
is rebuilt with ``node.with_fields(**changes)``, which carries every field not
named. ``str(node)`` prints the text format; ``==`` on nodes is identity, use
``structural_equal`` to compare structure (devices included unless turned
off; spans only with ``compare_spans=True``, as in TVM).
"""
import numbers as _numbers

import numpy as _np

from ._errors import error as _error
from ._inputs import SUPPORTED_DTYPES as _SUPPORTED_DTYPES
from ._switchyard import ir as _ir

Expr = _ir.Expr
Var = _ir.Var
Constant = _ir.Constant
Call = _ir.Call
Function = _ir.Function
Let = _ir.Let
If = _ir.If
Tuple = _ir.Tuple
TupleGetItem = _ir.TupleGetItem
GlobalVar = _ir.GlobalVar
Op = _ir.Op

Type = _ir.Type
TensorType = _ir.TensorType
TupleType = _ir.TupleType
FuncType = _ir.FuncType

VirtualDevice = _ir.VirtualDevice
Target = _ir.Target
Span = _ir.Span
Attrs = _ir.Attrs
CompilationConfig = _ir.CompilationConfig
IRModule = _ir.IRModule

ExprVisitor = _ir.ExprVisitor
ExprMutator = _ir.ExprMutator

structural_equal = _ir.structural_equal
structural_hash = _ir.structural_hash
structural_diff = _ir.structural_diff

# Python values without a NumPy dtype of their own get these: the dtypes of
# the text's literals (`2.5` is float32, `3` int32), as Relay's const gives.
_DEFAULT_DTYPES = {bool: "bool", int: "int32", float: "float32"}


def _python_dtype(value):
    """The dtype for a Python scalar or (nested) list, and its ints' (min, max) or None."""
    kinds = set()
    low = high = None
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, bool):
            kinds.add(bool)
        elif isinstance(item, _numbers.Integral):
            kinds.add(int)
            low = int(item) if low is None else min(low, int(item))
            high = int(item) if high is None else max(high, int(item))
        elif isinstance(item, _numbers.Real):
            kinds.add(float)
        else:
            raise _error("UsageError", f"const() takes numbers or NumPy arrays, got {type(item).__name__}",
                         TypeError)
    for kind in (float, int, bool):
        if kind in kinds:
            return _DEFAULT_DTYPES[kind], (None if low is None else (low, high))
    return "float32", None


def _check_integer_range(value, dtype, bounds, chosen):
    """Refuses a Python int that ``dtype`` cannot hold (NumPy would wrap it silently)."""
    kind = _np.dtype(dtype)
    if bounds is None or kind.kind not in "iu":
        return
    info = _np.iinfo(kind)
    for bound in bounds:
        if not info.min <= bound <= info.max:
            hint = ' (a Python int is int32, as the text\'s literals are: pass dtype="int64")' if chosen else ""
            raise _error("UsageError", f"const(): {bound} is out of range for {kind.name}{hint}")


def _dtype_name(dtype):
    """``dtype`` (a name, NumPy dtype or scalar type) as the name of a dtype a Constant can have."""
    try:
        name = _np.dtype(dtype).name
    except TypeError:
        raise _error("UsageError", f"const(): {dtype!r} is no dtype", TypeError) from None
    if name not in _SUPPORTED_DTYPES:
        raise _error("UsageError", f"const(): dtype {name} is not supported ({', '.join(_SUPPORTED_DTYPES)})")
    return name


def const(value, dtype=None, *, virtual_device=None, span=None):
    """A Constant from a NumPy array (its dtype kept) or a Python number/list.

    Python floats become float32, ints int32 and bools bool (the dtypes of
    the text's ``2.5``, ``3`` and ``True``, as Relay's ``const``), unless
    ``dtype`` is given; an int the dtype cannot hold is a ``sy.UsageError``.
    Supported dtypes: float32, float64, float16, int8, int16, int32, int64,
    uint8, uint16, uint32, uint64, bool.
    """
    if dtype is not None:
        dtype = _dtype_name(dtype)
    if isinstance(value, (_np.ndarray, _np.generic)):
        array = _np.asarray(value) if dtype is None else _np.asarray(value, dtype=dtype)
    else:
        chosen, bounds = _python_dtype(value)
        _check_integer_range(value, dtype or chosen, bounds, dtype is None)
        try:
            array = _np.asarray(value, dtype=dtype or chosen)
        except ValueError as e:  # a ragged list
            raise _error("UsageError", f"const(): {type(value).__name__} is no tensor ({e})") from None
    return Constant(array, virtual_device=virtual_device, span=span)


__all__ = [
    "Expr", "Var", "Constant", "Call", "Function", "Let", "If", "Tuple", "TupleGetItem", "GlobalVar", "Op",
    "Type", "TensorType", "TupleType", "FuncType", "VirtualDevice", "Target", "Span", "Attrs",
    "CompilationConfig", "IRModule", "ExprVisitor", "ExprMutator", "structural_equal", "structural_hash",
    "structural_diff", "const",
]
