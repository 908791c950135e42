"""Passes, pass contexts and instruments.

Built-in passes are factories (``InferType()``, ``PlanDevices(devices=[...])``);
a pass is called on a module. Passes written in Python are made with the
``function_pass`` and ``module_pass`` decorators and run inside C++ pipelines
(``Sequential``) and under the invariant checker like any other pass.
"""
import inspect as _inspect

from ._errors import error as _error
from ._switchyard import transform as _t

Pass = _t.Pass
PassInfo = _t.PassInfo
PassContext = _t.PassContext
PassInstrument = _t.PassInstrument
InvariantChecker = _t.InvariantChecker
Timing = _t.Timing
Sequential = _t.Sequential
PlanDevices = _t.PlanDevices
PlanLayouts = _t.PlanLayouts
default_pipeline = _t.default_pipeline
pass_by_name = _t.pass_by_name
pass_names = _t.pass_names


def specialize(mod, values):
    """``mod`` with symbolic dimensions given values, ``{"batch": 4}``, and
    every type re-derived: a symbolic ONNX import specialised to the shapes a
    static import (``shapes={...}``) would give. Raises ``sy.UsageError`` for
    a value above a dimension's bound, ``sy.TypeError`` when the values do
    not fit the program."""
    if not isinstance(values, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in values.items()):
        raise _error("UsageError", f"specialize takes a dict of dimension name -> int, got {values!r}", TypeError)
    return _t.specialize(mod, values)


def _builtin(name, doc):
    def factory():
        return _t.pass_by_name(name)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = doc
    return factory


InferType = _builtin("InferType", "Infers and records every node's checked_type.")
SimplifyExpr = _builtin("SimplifyExpr", "Algebraic identities that keep the result's type and device.")
FuseQDQ = _builtin("FuseQDQ", "A QDQ model's convolutions as int8 qnn.conv2d calls, on CPU devices.")
SimplifyQuantizeChains = _builtin(
    "SimplifyQuantizeChains", "Exact identities of quantize steps: 8-bit round trips and a ReLU before a quantize.")
FoldConstant = _builtin("FoldConstant", "Evaluates constant sub-expressions, keeping devices and spans.")
EliminateCommonSubexpr = _builtin("EliminateCommonSubexpr", "Merges identical expressions on the same device.")
DeadCodeElimination = _builtin("DeadCodeElimination", "Removes unused bindings.")
FuseOps = _builtin("FuseOps", "Groups operators into primitive functions, never across devices.")
ToANormalForm = _builtin("ToANormalForm", "Binds every intermediate value with let.")
ToGraphNormalForm = _builtin("ToGraphNormalForm", "Turns let bindings back into a dataflow graph.")
Inline = _builtin("Inline", "Inlines calls of module functions marked for inlining.")


def _wrap_class(cls, make, method, pass_name, opt_level, required):
    """A Pass subclass whose constructor makes a ``cls`` and runs its ``method``."""
    if not callable(getattr(cls, method, None)):
        raise _error("UsageError", f"{cls.__name__} needs a {method} method to be a pass", TypeError)

    def __init__(self, *args, **kwargs):
        instance = cls(*args, **kwargs)
        Pass.__init__(self, make(pass_name, opt_level, list(required), getattr(instance, method)))
        self.instance = instance

    return type(cls.__name__, (Pass,), {"__init__": __init__, "__doc__": cls.__doc__,
                                        "__module__": cls.__module__, "__qualname__": cls.__qualname__})


def _decorator(target, make, method, opt_level, name, required):
    def create(obj):
        if not callable(obj):
            raise _error("UsageError", f"a pass decorator needs a function or class, got {type(obj).__name__}",
                         TypeError)
        pass_name = name or getattr(obj, "__name__", None) or type(obj).__name__
        if _inspect.isclass(obj):
            # Known to PassContext's name check before the first instance exists.
            _t.register_pass_name(pass_name)
            return _wrap_class(obj, make, method, pass_name, opt_level, required)
        return make(pass_name, opt_level, list(required), obj)

    if target is None:
        return create
    return create(target)


def function_pass(pass_function=None, *, opt_level=0, name=None, required=()):
    """Makes a pass from ``fn(func, mod, ctx) -> Function`` applied to each function.

    Used as ``@function_pass(opt_level=0, name="MyPass")`` on a function, or on a
    class with ``transform_function(self, func, mod, ctx)`` (the class then
    constructs passes). The function's device, span and parameter devices are
    restored wherever the returned function leaves them unconstrained.
    """
    return _decorator(pass_function, _t.make_function_pass, "transform_function", opt_level, name, required)


def module_pass(pass_function=None, *, opt_level=0, name=None, required=()):
    """Makes a pass from ``fn(mod, ctx) -> IRModule`` (or a class with ``transform_module``)."""
    return _decorator(pass_function, _t.make_module_pass, "transform_module", opt_level, name, required)


__all__ = [
    "Pass", "PassInfo", "PassContext", "PassInstrument", "InvariantChecker", "Timing", "Sequential",
    "PlanDevices", "PlanLayouts", "InferType", "SimplifyExpr", "FuseQDQ", "SimplifyQuantizeChains",
    "FoldConstant", "EliminateCommonSubexpr",
    "DeadCodeElimination", "FuseOps", "ToANormalForm", "ToGraphNormalForm", "Inline",
    "function_pass", "module_pass", "default_pipeline", "pass_by_name", "pass_names", "specialize",
]
