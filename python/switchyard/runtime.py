"""Loading and running compiled artifacts.

    model = sy.runtime.load("out/")
    y = model.run(x=np.ones((1, 784), np.float32))
    for k in model.last_stats.kernels:
        print(k.name, k.device)

or executor-style, as in TVM's graph executor:

    model.set_input("x", x)
    model.run()
    model.get_output(0, out=preallocated)
    print(model.benchmark(repeat=20))
"""
import dataclasses as _dataclasses
import json as _json
import os as _os
import time as _time

import numpy as _np

from ._errors import check_file as _check_file
from ._errors import error as _error
from ._switchyard import runtime as _rt


@_dataclasses.dataclass(frozen=True)
class KernelRecord:
    """One kernel run: its name, the device it ran on and its time."""
    index: int
    name: str
    device: str
    device_index: int
    elapsed_ns: int


@_dataclasses.dataclass(frozen=True)
class CopyRecord:
    """One device copy: from and to which device, how many bytes, its time."""
    index: int
    src: str
    dst: str
    bytes: int
    elapsed_ns: int


@_dataclasses.dataclass(frozen=True)
class RunStats:
    """What one run did, in execution order."""
    kernels: list
    copies: list
    total_ns: int

    @property
    def devices(self):
        """The set of device names kernels ran on."""
        return {k.device for k in self.kernels}


def _stats(raw):
    return RunStats(kernels=[KernelRecord(**k) for k in raw["kernels"]],
                    copies=[CopyRecord(**c) for c in raw["copies"]],
                    total_ns=raw["total_ns"])


@_dataclasses.dataclass(frozen=True)
class BenchmarkResult:
    """Milliseconds per run over ``repeat`` timed runs (after one warm-up run)."""
    median_ms: float
    min_ms: float
    p90_ms: float
    repeat: int
    times_ms: tuple

    def __str__(self):
        return (f"median {self.median_ms:.3f} ms, min {self.min_ms:.3f} ms, p90 {self.p90_ms:.3f} ms "
                f"over {self.repeat} runs")


class Module:
    """A loaded artifact. ``run(**inputs)`` is safe to call from several
    threads; the executor-style ``set_input``/``run()``/``get_output`` keep
    state on the module, so give each thread its own module for those."""

    def __init__(self, artifact):
        self._artifact = artifact
        self._manifest = _json.loads(artifact.manifest_json)
        self._inputs = {}    # set_input's arrays, by name
        self._outputs = None  # the last run's outputs, in manifest order
        self.last_stats = None

    @property
    def directory(self):
        return self._artifact.directory

    @property
    def manifest(self):
        """The manifest (inputs, outputs, devices, kernels, copies) as a dict."""
        return self._manifest

    @property
    def input_names(self):
        return list(self._artifact.input_names)

    @property
    def output_names(self):
        return list(self._artifact.output_names)

    def _arrays(self, args, inputs):
        names = self.input_names
        if len(args) > len(names):
            raise TypeError(f"run() takes at most {len(names)} positional inputs, got {len(args)}")
        given = dict(zip(names, args))
        for name, value in inputs.items():
            if name in given:
                raise TypeError(f"input '{name}' given twice")
            given[name] = value
        return {name: self._array(name, value) for name, value in given.items()}

    def _array(self, name, value):
        if isinstance(value, (_np.ndarray, _np.generic)):
            return value
        if hasattr(value, "__dlpack__"):
            return _from_dlpack(f"input '{name}'", value)
        dtypes = {t["name"]: t["dtype"] for t in self._manifest.get("inputs", [])}
        return _np.asarray(value, dtype=dtypes.get(name))

    def set_input(self, name, value, copy=True):
        """Sets input ``name`` for ``run()`` with no arguments; checked now (``sy.UsageError``).

        ``value`` is a NumPy array, a Python number, or any DLPack tensor on
        the CPU (a PyTorch tensor, ...). By default it is copied, so changing
        it afterwards does not change the input; with ``copy=False`` the
        model reads the caller's memory at each run (zero-copy when it is
        C-contiguous and aligned), so later changes are seen.
        """
        if not isinstance(name, str):
            raise TypeError(f"set_input() takes an input name (str), got {type(name).__name__}")
        array = self._array(name, value)
        self._artifact.check_input(name, array)
        self._inputs[name] = _np.array(array, copy=True, order="C") if copy else _in_place(array)

    def run(self, *args, record_stats=True, **inputs):
        """Runs on inputs (positional in manifest order, or by name).

        Returns the output array, or a tuple when there are several; the run's
        statistics (kernels with their devices, copies) are in ``last_stats``.
        With no inputs given, runs on those of ``set_input`` (a missing one is
        a ``sy.UsageError``); the outputs are also kept for ``get_output``.
        """
        arrays = self._arrays(args, inputs) if args or inputs else self._inputs
        outputs, raw = self._run(arrays, record_stats)
        self._outputs = outputs
        self.last_stats = _stats(raw)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _run(self, arrays, record_stats):
        """Runs reading the inputs where they lie and writing fresh output
        arrays in place; only inputs of another layout are copied, and
        bfloat16 outputs (which NumPy lacks) take the widening path."""
        specs = self._manifest.get("outputs", [])
        if any(t["dtype"] == "bfloat16" for t in specs) or not all(
                isinstance(a, (_np.ndarray, _np.generic)) for a in arrays.values()):
            return self._artifact.run(arrays, record_stats)
        outputs = [_np.empty(t["shape"], dtype=t["dtype"]) for t in specs]
        raw = self._artifact.run_into({n: _in_place(a) for n, a in arrays.items()}, outputs, record_stats)
        return outputs, raw

    def _output_index(self, index):
        names = self.output_names
        if isinstance(index, str):
            if index not in names:
                raise _error("UsageError", f"unknown output '{index}': the model has {', '.join(names)}")
            return names.index(index)
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"get_output() takes an output index or name, got {type(index).__name__}")
        if not -len(names) <= index < len(names):
            raise IndexError(f"output index {index} out of range: the model has {len(names)} outputs")
        return index % len(names)

    def get_output(self, index, out=None):
        """Output ``index`` (or name) of the last run.

        With ``out`` (a writeable NumPy array of the output's shape and
        dtype), the output is written into it and ``out`` is returned;
        otherwise a new array is.
        """
        i = self._output_index(index)
        if self._outputs is None:
            raise _error("UsageError", "get_output() before run(): there are no outputs yet")
        result = self._outputs[i]
        if out is None:
            return result.copy()
        if not isinstance(out, _np.ndarray):
            raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
        name = self.output_names[i]
        if out.shape != result.shape or out.dtype != result.dtype:
            raise _error("UsageError", f"out for output '{name}': expected shape {result.shape} {result.dtype}, "
                                       f"got shape {out.shape} {out.dtype}")
        if not out.flags.writeable:
            raise _error("UsageError", f"out for output '{name}' is read-only")
        _np.copyto(out, result)
        return out

    def benchmark(self, repeat=10, **inputs):
        """Times ``repeat`` runs after one warm-up run; returns median, min and p90 milliseconds.

        Runs on ``inputs`` when given, else on those of ``set_input``. Each
        time is the wall time of one run call without statistics recording.
        """
        if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
            raise ValueError(f"repeat must be a positive int, got {repeat!r}")
        arrays = self._arrays((), inputs) if inputs else self._inputs
        self._run(arrays, False)
        times = []
        for _ in range(repeat):
            start = _time.perf_counter()
            self._run(arrays, False)
            times.append((_time.perf_counter() - start) * 1e3)
        ordered = sorted(times)
        return BenchmarkResult(median_ms=float(_np.median(ordered)), min_ms=ordered[0],
                               p90_ms=float(_np.percentile(ordered, 90)), repeat=repeat, times_ms=tuple(times))


def _in_place(array):
    """``array`` itself when a run can read it where it lies, else an aligned,
    C-contiguous, native-order copy (``ascontiguousarray`` would return a
    C-contiguous array that is misaligned as it is)."""
    array = _np.asarray(array)
    if array.flags.c_contiguous and array.flags.aligned and array.dtype.isnative:
        return array
    return _np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True)


def _from_dlpack(what, value):
    """A NumPy view of a DLPack tensor (no copy); only host memory can be read."""
    try:
        device_type, device_id = value.__dlpack_device__()
    except (AttributeError, TypeError):
        device_type, device_id = 1, 0
    if device_type not in (1, 3):  # kDLCPU, kDLCUDAHost: host memory
        raise _error("UsageError", f"{what} lives on DLPack device type {device_type} (id {device_id}); "
                                   "the model reads host (CPU) memory: move it to the CPU first")
    try:
        return _np.from_dlpack(value)
    except (BufferError, RuntimeError, TypeError) as e:
        raise _error("UsageError", f"{what}: cannot be read through DLPack ({e})") from None


def from_dlpack(value):
    """A NumPy array sharing the memory of a host DLPack tensor (a PyTorch CPU
    tensor, ...), for ``run`` and ``set_input``. Outputs are NumPy arrays, so
    ``torch.from_dlpack(output)`` shares their memory in turn."""
    return _from_dlpack("the tensor", value)


def load(path, threads=0, max_model_bytes=None):
    """Loads an artifact directory; raises ``sy.RuntimeError`` naming the file at fault.

    A path that is missing or not a directory raises a ``sy.RuntimeError``
    that is also ``FileNotFoundError`` / ``NotADirectoryError``. A model.so
    larger than ``max_model_bytes`` (default 1 GiB) is refused before it is
    hashed or opened.
    """
    _check_file("RuntimeError", path, want_directory=True)
    if max_model_bytes is None:
        max_model_bytes = _rt.DEFAULT_MAX_MODEL_BYTES
    return Module(_rt.Artifact.load(_os.fspath(path), threads, max_model_bytes))


__all__ = ["load", "from_dlpack", "Module", "RunStats", "KernelRecord", "CopyRecord", "BenchmarkResult"]
