"""Loading and running compiled artifacts.

    model = sy.runtime.load("out/")
    y = model.run(x=np.ones((1, 784), np.float32))
    for k in model.last_stats.kernels:
        print(k.name, k.device)

or many requests in flight, each with its own future (a model split across
devices pipelines them: one device works on request k+1 while the next
works on request k):

    futures = [model.run_async(x=x) for x in batch]
    ys = [f.result() for f in futures]

or executor-style, as in TVM's graph executor:

    model.set_input("x", x)
    model.run()
    model.get_output(0, out=preallocated)
    print(model.benchmark(repeat=20, number=5))
"""
import dataclasses as _dataclasses
import json as _json
import os as _os
import time as _time

import numpy as _np

from . import _inputs
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
    """Milliseconds per run over ``repeat`` measurements (after one warm-up
    run), each the mean of ``number`` runs."""
    median_ms: float
    min_ms: float
    p90_ms: float
    repeat: int
    times_ms: tuple
    number: int = 1

    def __str__(self):
        over = f"{self.repeat} runs" if self.number == 1 else f"{self.repeat} measurements of {self.number} runs"
        return f"median {self.median_ms:.3f} ms, min {self.min_ms:.3f} ms, p90 {self.p90_ms:.3f} ms over {over}"


_BENCHMARK_OPTIONS = ("repeat", "number", "min_repeat_ms")


def _positive_int(what, value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise _error("UsageError", f"{what} must be a positive int, got {value!r}", TypeError)
    if value < 1:
        raise _error("UsageError", f"{what} must be a positive int, got {value!r}")
    return value


def _measure(run, number, min_repeat_ms):
    """Milliseconds per run of one measurement, and the number of runs it
    took: as TVM's time_evaluator, a measurement shorter than
    ``min_repeat_ms`` is dropped and repeated with more runs."""
    while True:
        start = _time.perf_counter()
        for _ in range(number):
            run()
        elapsed = (_time.perf_counter() - start) * 1e3
        if elapsed >= min_repeat_ms:
            return elapsed / number, number
        per_run = max(elapsed / number, 1e-6)
        number = max(int(number * 1.618) + 1, int(min_repeat_ms / per_run) + 1)


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
    def specializations(self):
        """The programs of a specialised artifact by their dimensions' values
        (``["n=1", "n=8"]``); empty for any other artifact."""
        return list(self._artifact.specializations)

    @property
    def input_names(self):
        return list(self._artifact.input_names)

    @property
    def output_names(self):
        return list(self._artifact.output_names)

    def get_num_inputs(self):
        """The number of inputs (TVM's graph executor's name)."""
        return len(self.input_names)

    def get_num_outputs(self):
        """The number of outputs (TVM's graph executor's name)."""
        return len(self.output_names)

    def _input_spec(self, name):
        for spec in self._manifest.get("inputs", []):
            if spec["name"] == name:
                return spec
        takes = ", ".join(self.input_names) or "no inputs"
        raise _error("UsageError", f"unknown input '{name}': the model takes {takes}")

    def _arrays(self, args, inputs, caller="run"):
        names = self.input_names
        if len(args) > len(names):
            raise _error("UsageError", f"{caller}() takes at most {len(names)} positional inputs, got {len(args)}",
                         TypeError)
        given = dict(zip(names, args))
        for name, value in inputs.items():
            if name in given:
                raise _error("UsageError", f"input '{name}' given twice", TypeError)
            given[name] = value
        return {name: self._array(name, value) for name, value in given.items()}

    def _array(self, name, value):
        spec = self._input_spec(name)
        return _inputs.input_array(name, value, spec["shape"], spec["dtype"])

    def set_input(self, name, value, copy=True):
        """Sets input ``name`` for ``run()`` with no arguments; checked now (``sy.UsageError``).

        ``value`` is a NumPy array, a Python number or list, any DLPack
        tensor on the CPU (a PyTorch tensor, ...) or a DLPack capsule. By
        default it is copied, so changing it afterwards does not change the
        input; with ``copy=False`` the model reads the caller's memory at
        each run (zero-copy when it is C-contiguous and aligned), so later
        changes are seen.
        """
        if not isinstance(name, str):
            raise _error("UsageError", f"set_input() takes an input name (str), got {type(name).__name__}", TypeError)
        array = self._array(name, value)
        self._artifact.check_input(name, array)
        self._inputs[name] = _np.array(array, copy=True, order="C") if copy else _in_place(array)

    def get_input(self, index, out=None):
        """The array ``set_input`` set for input ``index`` (or name), as TVM's ``get_input``.

        A copy, or written into ``out`` (a writeable NumPy array of the
        input's shape and dtype), which is returned. Inputs given to
        ``run(**inputs)`` are not kept.
        """
        name = self.input_names[_index(index, self.input_names, "input")]
        if name not in self._inputs:
            raise _error("UsageError", f"input '{name}' has not been set (set_input('{name}', ...) first)")
        return _copy_out(self._inputs[name], out, f"input '{name}'")

    def run(self, *args, record_stats=True, **inputs):
        """Runs on inputs (positional in manifest order, or by name).

        Returns the output array, or a tuple when there are several; the run's
        statistics (kernels with their devices, copies) are in ``last_stats``.
        With no inputs given, runs on those of ``set_input`` (a missing one is
        a ``sy.UsageError``); the outputs are also kept for ``get_output``.
        """
        if not isinstance(record_stats, bool):
            raise _error("UsageError", f"record_stats must be a bool, got {type(record_stats).__name__}", TypeError)
        arrays = self._arrays(args, inputs) if args or inputs else self._inputs
        outputs, raw = self._run(arrays, record_stats)
        self._outputs = outputs
        self.last_stats = _stats(raw)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run_async(self, *args, record_stats=True, **inputs):
        """Starts a run on inputs (as ``run`` takes them; copied, so they may
        change at once) and returns a ``RunFuture`` without waiting for it.

        Where the model's devices run at once, consecutive requests
        pipeline: each device's queue runs its steps of request k, then of
        request k+1, so the first stage of k+1 runs while the second of k
        does; other models run the requests one after another on a worker
        thread. With ``max_in_flight`` requests in flight (``load``), it
        first waits for one to end. A wrong input raises ``sy.UsageError``
        here; a failed run raises its ``sy.RuntimeError`` from ``result()``,
        and touches no other request. Safe from several threads; it does not
        set ``last_stats`` (the future has ``stats``).
        """
        if not isinstance(record_stats, bool):
            raise _error("UsageError", f"record_stats must be a bool, got {type(record_stats).__name__}", TypeError)
        arrays = self._arrays(args, inputs, "run_async") if args or inputs else dict(self._inputs)
        return RunFuture(self._artifact.run_async(arrays, record_stats))

    @property
    def max_in_flight(self):
        """The most ``run_async`` requests in flight at once."""
        return self._artifact.max_in_flight

    def _run(self, arrays, record_stats):
        """Runs reading the inputs where they lie and writing fresh output
        arrays in place; only inputs of another layout are copied, and
        bfloat16 outputs (which NumPy lacks) take the widening path."""
        specs = self._manifest.get("outputs", [])
        if any(t["dtype"] == "bfloat16" for t in specs) or not all(
                isinstance(a, (_np.ndarray, _np.generic)) for a in arrays.values()):
            return self._artifact.run(arrays, record_stats)
        shapes = [t["shape"] for t in specs]
        if self._artifact.specializations:
            # A specialised artifact: the shapes of the program the inputs' shapes pick.
            if any(n not in arrays for n in self.input_names):
                return self._artifact.run(arrays, record_stats)  # names the missing input
            shapes = self._artifact.output_shapes_for([_np.shape(arrays[n]) for n in self.input_names])
        outputs = [_np.empty(shape, dtype=t["dtype"]) for shape, t in zip(shapes, specs)]
        raw = self._artifact.run_into({n: _in_place(a) for n, a in arrays.items()}, outputs, record_stats)
        return outputs, raw

    def get_output(self, index, out=None):
        """Output ``index`` (or name) of the last run.

        With ``out`` (a writeable NumPy array of the output's shape and
        dtype), the output is written into it and ``out`` is returned;
        otherwise a new array is.
        """
        i = _index(index, self.output_names, "output")
        if self._outputs is None:
            raise _error("UsageError", "get_output() before run(): there are no outputs yet")
        return _copy_out(self._outputs[i], out, f"output '{self.output_names[i]}'")

    def benchmark(self, repeat=10, number=1, min_repeat_ms=0, **inputs):
        """Times ``repeat`` measurements of ``number`` runs each, after one
        warm-up run; returns the median, min and p90 milliseconds per run.

        The options are TVM's ``time_evaluator``'s: a measurement shorter
        than ``min_repeat_ms`` is dropped and ``number`` raised until one
        lasts that long. Runs on ``inputs`` (keywords other than the
        options) when given, else on those of ``set_input``; a keyword that
        is neither an option nor an input is refused. Each time is wall
        time of run calls without statistics recording.
        """
        _positive_int("repeat", repeat)
        _positive_int("number", number)
        if isinstance(min_repeat_ms, bool) or not isinstance(min_repeat_ms, (int, float)) or not min_repeat_ms >= 0:
            builtin = ValueError if isinstance(min_repeat_ms, (int, float)) else TypeError
            raise _error("UsageError", f"min_repeat_ms must be a number >= 0, got {min_repeat_ms!r}", builtin)
        unknown = [k for k in inputs if k not in self.input_names]
        if unknown:
            raise _error("UsageError", f"benchmark() got an unknown keyword '{unknown[0]}': neither an option "
                                       f"({', '.join(_BENCHMARK_OPTIONS)}) nor an input "
                                       f"({', '.join(self.input_names) or 'the model has none'})", TypeError)
        arrays = self._arrays((), inputs, "benchmark") if inputs else self._inputs
        self._run(arrays, False)
        times = []
        for _ in range(repeat):
            per_run, number = _measure(lambda: self._run(arrays, False), number, min_repeat_ms)
            times.append(per_run)
        ordered = sorted(times)
        return BenchmarkResult(median_ms=float(_np.median(ordered)), min_ms=ordered[0],
                               p90_ms=float(_np.percentile(ordered, 90)), repeat=repeat, times_ms=tuple(times),
                               number=number)


class RunFuture:
    """A run started by ``Module.run_async``, as ``concurrent.futures.Future``
    reads: ``done()``, ``result(timeout=None)``, ``exception(timeout=None)``."""

    def __init__(self, pending):
        self._pending = pending
        self._outcome = None  # (outputs, stats) or (None, error), once taken

    def done(self):
        """True once the run ended, with outputs or an error."""
        return self._outcome is not None or self._pending.done()

    def _take(self, timeout):
        if self._outcome is None:
            if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
                raise _error("UsageError", f"timeout must be a number of seconds or None, got {timeout!r}",
                             TypeError)
            if not self._pending.wait(timeout):
                raise TimeoutError(f"the run did not end within {timeout} s")
            try:
                outputs, raw = self._pending.result()
                self._outcome = (outputs, _stats(raw))
            except Exception as error:  # the run's own error, kept for every later call
                self._outcome = (None, error)
        return self._outcome

    def result(self, timeout=None):
        """The run's output (a tuple when there are several), as ``run`` returns
        it; waits at most ``timeout`` seconds (``TimeoutError``). Raises the
        run's error (``sy.RuntimeError``)."""
        outputs, value = self._take(timeout)
        if outputs is None:
            raise value
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def exception(self, timeout=None):
        """The run's error, or None when it succeeded; waits as ``result``."""
        outputs, value = self._take(timeout)
        return value if outputs is None else None

    @property
    def stats(self):
        """The run's ``RunStats`` (waits for it; empty with ``record_stats=False``)."""
        outputs, value = self._take(None)
        if outputs is None:
            raise value
        return value


def _index(index, names, role):
    """The position of ``index`` (an int, negative from the end, or a name) among ``names``."""
    if isinstance(index, str):
        if index not in names:
            raise _error("UsageError", f"unknown {role} '{index}': the model has {', '.join(names) or 'none'}")
        return names.index(index)
    if not isinstance(index, (int, _np.integer)) or isinstance(index, bool):
        raise _error("UsageError", f"get_{role}() takes an {role} index or name, got {type(index).__name__}",
                     TypeError)
    if not -len(names) <= index < len(names):
        raise _error("UsageError", f"{role} index {index} out of range: the model has {len(names)} {role}s",
                     IndexError)
    return int(index) % len(names)


def _copy_out(array, out, what):
    """A copy of ``array``, or ``out`` after copying it there (checked first: nothing is written on a mismatch)."""
    if out is None:
        return array.copy()
    if not isinstance(out, _np.ndarray):
        raise _error("UsageError", f"out must be a NumPy array, got {type(out).__name__}", TypeError)
    if out.shape != array.shape or out.dtype != array.dtype:
        raise _error("UsageError", f"out for {what}: expected shape {array.shape} {array.dtype}, "
                                   f"got shape {out.shape} {out.dtype}")
    if not out.flags.writeable:
        raise _error("UsageError", f"out for {what} is read-only")
    _np.copyto(out, array)
    return out


def _in_place(array):
    """``array`` itself when a run can read it where it lies, else an aligned,
    C-contiguous, native-order copy (``ascontiguousarray`` would return a
    C-contiguous array that is misaligned as it is)."""
    array = _np.asarray(array)
    if array.flags.c_contiguous and array.flags.aligned and array.dtype.isnative:
        return array
    return _np.array(array, dtype=array.dtype.newbyteorder("="), order="C", copy=True)


def from_dlpack(value):
    """A NumPy array sharing the memory of a host DLPack tensor (a PyTorch CPU
    tensor, ...), for ``run`` and ``set_input``. Outputs are NumPy arrays, so
    ``torch.from_dlpack(output)`` shares their memory in turn."""
    return _inputs.dlpack_view("the tensor", value)


def load(path, threads=0, max_model_bytes=None, cores=None, max_in_flight=0):
    """Loads an artifact directory; raises ``sy.RuntimeError`` naming the file at fault.

    ``threads`` is the size of the thread pool the model's CPU devices share
    (0: one per hardware thread; a device the build gave threads of its own,
    ``devices[].threads`` in the manifest, keeps its own pool). A path that
    is missing or not a directory raises a ``sy.RuntimeError`` that is also
    ``FileNotFoundError`` / ``NotADirectoryError``. A model.so larger than
    ``max_model_bytes`` (default 1 GiB) is refused before it is hashed or
    opened. ``cores`` maps CPU device names to the cores their queues run on
    when the model's devices run at once, in place of the build's
    (``{"cpu:0": "0-1", "cpu:1": [2, 3]}``, as ``switchyard run --cores``);
    a malformed set, a core two devices share or one this process may not
    use raises ``sy.RuntimeError`` naming the device and core.
    ``max_in_flight`` bounds the ``run_async`` requests in flight, each with
    memory of its own (0: two per device queue, at least 2).
    """
    if not isinstance(path, (str, _os.PathLike)):
        raise _error("UsageError", f"load() takes the artifact directory's path, got {type(path).__name__}",
                     TypeError)
    most = _rt.MAX_POOL_THREADS
    if isinstance(threads, bool) or not isinstance(threads, int) or not 0 <= threads <= most:
        raise _error("UsageError", f"threads must be an int from 0 (default) to {most}, got {threads!r}",
                     ValueError if isinstance(threads, int) and not isinstance(threads, bool) else TypeError)
    if max_model_bytes is None:
        max_model_bytes = _rt.DEFAULT_MAX_MODEL_BYTES
    if isinstance(max_model_bytes, bool) or not isinstance(max_model_bytes, int) or max_model_bytes < 1:
        raise _error("UsageError", f"max_model_bytes must be a positive int, got {max_model_bytes!r}",
                     ValueError if isinstance(max_model_bytes, int) else TypeError)
    if isinstance(max_in_flight, bool) or not isinstance(max_in_flight, int) or max_in_flight < 0:
        builtin = ValueError if isinstance(max_in_flight, int) and not isinstance(max_in_flight, bool) else TypeError
        raise _error("UsageError", f"max_in_flight must be an int >= 0 (0: the default), got {max_in_flight!r}",
                     builtin)
    core_text = {}
    for device, value in (cores or {}).items():
        if isinstance(value, (list, tuple)) and all(isinstance(c, int) and not isinstance(c, bool) for c in value):
            value = ",".join(str(c) for c in value)
        if not isinstance(device, str) or not isinstance(value, str):
            raise _error("UsageError", f"cores maps a device name to a core set such as '0-3' or [0, 1], got "
                         f"{device!r}: {value!r}", TypeError)
        core_text[device] = value
    _check_file("RuntimeError", path, want_directory=True)
    return Module(_rt.Artifact.load(_os.fspath(path), threads, max_model_bytes, core_text, max_in_flight))


__all__ = ["load", "from_dlpack", "Module", "RunFuture", "RunStats", "KernelRecord", "CopyRecord", "BenchmarkResult"]
