"""Switchyard: a device-aware deep-learning compiler.

    import switchyard as sy
    mod = sy.parse("model.sy")
    with sy.transform.PassContext(check_invariants=True):
        mod = sy.transform.Sequential([sy.transform.InferType(),
                                       sy.transform.PlanDevices(devices=["cpu:0", "cpu:1"])])(mod)
    out = sy.evaluate(mod, x=np.ones((1, 784), np.float32), ...)

Submodules: ``frontend`` (``from_onnx``), ``ir`` (nodes, types, devices,
visitors), ``op`` (one function per operator), ``pattern`` (matching and
rewriting), ``transform`` (passes, contexts, instruments), ``runtime``
(compiled artifacts), ``testing`` (``assert_structural_equal``). Every
exception the package raises is a ``sy.Error`` (one subclass per kind, each
also the builtin a Python caller would catch: a value of the wrong type is
a ``sy.UsageError`` that is also a ``TypeError``, ...).
"""
# The extension first: loading it sets libgomp's short spin before libgomp
# reads its settings, where NumPy (its OpenBLAS) has not loaded libgomp yet
# (src/runtime/openmp_wait_policy.h; the runtime bounds the spin otherwise).
from . import _switchyard as _native  # isort: skip

import os as _os

from . import frontend, ir, op, pattern, runtime, testing, transform
from ._errors import check_file as _check_file
from ._inputs import input_array as _input_array
from ._errors import error as _error
from .ir import IRModule

Error = _native.Error
ParseError = _native.ParseError
TypeInferenceError = _native.TypeInferenceError
PlacementError = _native.PlacementError
InvariantError = _native.InvariantError
PassError = _native.PassError
BackendError = _native.BackendError
RuntimeError = _native.RuntimeError  # noqa: A001 -- sy.RuntimeError mirrors the C++ error kind
UsageError = _native.UsageError


def _looks_like_path(text):
    return "\n" not in text and "{" not in text and not text.lstrip().startswith("def ")


def parse(text_or_path, source_name=None):
    """Parses text IR, or reads a ``.sy`` file when given a path.

    Text is parsed with spans naming ``source_name`` (default ``"<string>"``);
    a path (``str`` or ``os.PathLike``) is read and its spans name the file.
    Raises ``sy.ParseError`` (with ``.span``) on malformed input; a path
    that is missing or a directory raises a ``sy.UsageError`` that is also
    ``FileNotFoundError`` / ``IsADirectoryError``.
    """
    if isinstance(text_or_path, _os.PathLike):
        return _parse_file(_os.fspath(text_or_path))
    if not isinstance(text_or_path, str):
        raise _error("UsageError", f"parse() takes text or a path, got {type(text_or_path).__name__}", TypeError)
    if source_name is not None and not isinstance(source_name, str):
        raise _error("UsageError", f"source_name must be a str, got {type(source_name).__name__}", TypeError)
    if _looks_like_path(text_or_path) and source_name is None:
        return _parse_file(text_or_path)
    return _native.parse_text(text_or_path, source_name or "<string>")


def _parse_file(path):
    # Checked here: the C++ reader takes a directory for an empty file.
    _check_file("UsageError", path)
    return _native.parse_file(path)


def _input_arrays(function, entry, inputs):
    """NumPy arrays for the inputs, each made and checked for its parameter's type (``_inputs``)."""
    types = {p.name_hint: p.type_annotation or p.checked_type for p in function.params}
    arrays = {}
    for name, value in inputs.items():
        if not isinstance(name, str):
            raise _error("UsageError", f"input names must be str, got {type(name).__name__}", TypeError)
        if name not in types:
            takes = ", ".join(types) or "no inputs"
            raise _error("UsageError", f"unknown input '{name}': @{entry} takes {takes}")
        annotation = types[name]
        if isinstance(annotation, ir.TensorType):
            arrays[name] = _input_array(name, value, annotation.shape, annotation.dtype)
        else:
            arrays[name] = _input_array(name, value)
    return arrays


def evaluate(mod, inputs=None, entry="main", /, **named_inputs):
    """Runs ``mod[entry]`` with the reference interpreter.

    Inputs are given by parameter name, as a dict and/or keywords:
    ``sy.evaluate(mod, x=np.ones((2, 2), np.float32))``. Returns a NumPy
    array, or a tuple of them for a tuple result. A Function is accepted
    too (run as ``main``).
    """
    if isinstance(mod, ir.Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise _error("UsageError", f"evaluate() takes an IRModule or Function, got {type(mod).__name__}", TypeError)
    if inputs is not None and not isinstance(inputs, dict):
        raise _error("UsageError", f"inputs must be a dict of name -> array, got {type(inputs).__name__}", TypeError)
    if not isinstance(entry, str):
        raise _error("UsageError", f"entry must be a str, got {type(entry).__name__}", TypeError)
    if entry not in mod:
        raise _error("UsageError", f"the module has no function @{entry}", KeyError)
    given = dict(inputs or {})
    given.update(named_inputs)
    return _native.evaluate(mod, _input_arrays(mod[entry], entry, given), entry)


def _context_options(opt_level, check_invariants):
    """The build's opt level and checking: given ones, else the enclosing PassContext's.

    The build also takes the context's pass selection and configuration; it
    runs its own instruments (timing, the checker), so others would be
    silently ignored: they are refused.
    """
    ctx = transform.PassContext.current()
    others = [type(i).__name__ for i in ctx.instruments if not isinstance(i, transform.InvariantChecker)]
    if others:
        raise _error("UsageError", "build() does not read the enclosing PassContext's instruments ("
                     + ", ".join(others) + "); it runs its own, so call it outside this context")
    return (ctx.opt_level if opt_level is None else opt_level,
            ctx.check_invariants if check_invariants is None else check_invariants)


def build(mod, devices, output, place=(), opt_level=None, *, default=None, host=None, check_invariants=None,
          emit_source=False, cxx="", cache_dir="", layouts=(), costs=None, specialize=None):
    """Compiles ``mod["main"]`` into the artifact directory ``output``.

    ``devices`` lists the build's devices (``["cpu:0", "cpu:1"]``); ``place``
    holds placement rules (``"op:nn.softmax=cpu:1"``, ``"node:GLOB=cpu:0"``);
    ``layouts`` layout pins (``"node:GLOB=nChw16c"``) for values kept
    between oneDNN primitives. ``costs`` names a cost file written by
    ``switchyard profile``: device planning then minimises the predicted
    run time instead of the bytes copied (docs/design.md, "Placement by time").
    ``opt_level`` and ``check_invariants`` default to the enclosing
    PassContext's (2 and False outside any); its ``disabled_passes``,
    ``enabled_passes`` and ``config`` apply to the build's pipeline.
    ``specialize`` (``{"n": [1, 8]}``) compiles one program per value of
    each symbolic dimension of ``@main`` (per combination, the first name
    outermost) into one artifact, as ``switchyard compile --specialize``;
    each run picks the program its inputs' shapes fit.
    Returns the BuildReport (a SpecializedBuildReport, one BuildReport per
    program, with ``specialize``); load the artifact with ``sy.runtime.load(output)``.
    """
    if not isinstance(mod, IRModule):
        raise _error("UsageError", f"build() takes an IRModule, got {type(mod).__name__}", TypeError)
    opt_level, check_invariants = _context_options(opt_level, check_invariants)
    if isinstance(place, str):
        place = [place]
    if isinstance(layouts, str):
        layouts = [layouts]
    return _native.build(mod, devices, _path_text(output, "output"), place, opt_level, default or "", host or "",
                         check_invariants, emit_source, cxx, _path_text(cache_dir, "cache_dir"), layouts,
                         "" if costs is None else _path_text(costs, "costs"), specialize)


def _path_text(path, what):
    """A path argument as text: a str, or an os.PathLike's path."""
    if isinstance(path, _os.PathLike):
        path = _os.fspath(path)
    if not isinstance(path, str):
        raise _error("UsageError", f"{what} must be a path (str or os.PathLike), got {type(path).__name__}",
                     TypeError)
    return path


__all__ = [
    "frontend", "ir", "op", "pattern", "testing", "transform", "runtime", "IRModule", "parse", "evaluate", "build",
    "Error", "ParseError", "TypeInferenceError", "PlacementError", "InvariantError",
    "PassError", "BackendError", "UsageError",
]
