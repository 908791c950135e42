"""One function per registered operator, generated from the operator
registry: ``sy.op.add(a, b)``, ``sy.op.nn.relu(x)``,
``sy.op.nn.conv2d(x, w, strides=[2, 2])``.

Arguments are expressions (a Python list or tuple becomes a ``Tuple``, a
Python number or NumPy array a constant as ``ir.const`` makes it:
``sy.op.add(x, 3)`` adds an int32 3);
attributes are keywords, checked and completed with defaults by the
registry; ``virtual_device=`` and ``span=`` place the call.
"""
import numbers as _numbers
import sys as _sys
import types as _types

import numpy as _np

from ._errors import error as _error
from ._switchyard import ir as _ir
from .ir import const as _const


def get(name):
    """The operator node named ``name`` (``sy.ir.Op``)."""
    return _ir.Op.get(name)


def _argument(value):
    """An operand: an Expr; a list or tuple becomes a Tuple, a number or NumPy
    array a constant (``const``: a Python int is int32, a float float32)."""
    if isinstance(value, (list, tuple)):
        return _ir.Tuple([_argument(v) for v in value])
    if isinstance(value, (_numbers.Number, _np.ndarray, _np.generic)):
        return _const(value)
    return value


def _describe(definition):
    lines = [definition["doc"], ""]
    inputs = definition["num_inputs"]
    lines.append(f"Inputs: {'any number' if inputs < 0 else inputs}.")
    for attr in definition["attrs"]:
        state = "required" if attr["required"] else f"default {attr['default']!r}"
        lines.append(f"Attribute {attr['name']} ({state}).")
    return "\n".join(lines)


def _make_operator(definition):
    name = definition["name"]
    num_inputs = definition["num_inputs"]

    def operator(*args, virtual_device=None, span=None, **attrs):
        if num_inputs >= 0 and len(args) != num_inputs:
            raise _error("UsageError", f"{name}() takes {num_inputs} argument(s), got {len(args)}", TypeError)
        return _ir.make_op_call(name, [_argument(a) for a in args], attrs, virtual_device, span)

    operator.__name__ = name.rsplit(".", 1)[-1]
    operator.__qualname__ = name
    operator.__doc__ = _describe(definition)
    return operator


def _install():
    """Adds every operator to this module or to its namespace (``nn``)."""
    this = _sys.modules[__name__]
    for definition in _ir.op_definitions():
        *namespaces, short = definition["name"].split(".")
        target = this
        for part in namespaces:
            child = getattr(target, part, None)
            if child is None:
                qualified = f"{target.__name__}.{part}"
                child = _types.ModuleType(qualified, f"Operators {part}.*")
                _sys.modules[qualified] = child
                setattr(target, part, child)
            target = child
        setattr(target, short, _make_operator(definition))


_install()
