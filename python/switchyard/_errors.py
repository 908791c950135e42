"""Raising switchyard errors from Python with the fields the C++ ones carry.

Every exception the package raises is a ``sy.Error``. Where Python has
another builtin for the mistake (``TypeError`` for a value of the wrong
type, ``KeyError``, ``IndexError``), ``error(kind, message, builtin)`` gives
the class that is both, the same one the C++ bindings raise.

A file that is missing, a directory where a file should be (or the reverse)
is an ``OSError`` to Python callers; these errors are both that and the
switchyard kind the C++ readers give it (``sy.UsageError`` for ``sy.parse``
and ``from_onnx``, ``sy.RuntimeError`` for ``sy.runtime.load``), so either
``except`` works.
"""
import errno as _errno
import os as _os

from . import _switchyard as _native

_KIND_NAMES = {
    "RuntimeError": "runtime error",
    "UsageError": "usage error",
}

_OS_ERRORS = {
    _errno.ENOENT: FileNotFoundError,
    _errno.EISDIR: IsADirectoryError,
    _errno.ENOTDIR: NotADirectoryError,
    _errno.EACCES: PermissionError,
}

_combined = {}


def _with_fields(error, kind, message):
    error.message = message
    error.span = None
    error.kind = _KIND_NAMES[kind]
    return error


def error(kind, message, builtin=None):
    """A ``sy.<kind>`` (``"UsageError"``, ...) with ``.message``, ``.span`` (None) and ``.kind``.

    With ``builtin`` (``TypeError``, ``KeyError``, ``IndexError``, ...), the
    error is also that builtin, for a mistake Python would raise it for.
    """
    return _with_fields(_native._error_class(kind, builtin)(message), kind, message)


def file_error(kind, path, code, what):
    """A ``sy.<kind>`` that is also the OSError subclass for ``code`` (an errno), naming ``path``."""
    os_class = _OS_ERRORS.get(code, OSError)
    key = (kind, os_class)
    if key not in _combined:
        # The OSError class first: its layout, __init__ and __str__ must win.
        _combined[key] = type(kind, (os_class, getattr(_native, kind)), {"__module__": "switchyard"})
    # str() is OSError's "[Errno 2] what: 'path'"; .message the plain "path: what".
    exc = _combined[key](code, what, _os.fspath(path))
    return _with_fields(exc, kind, f"{_os.fspath(path)}: {what}")


def check_file(kind, path, want_directory=False):
    """Raises ``file_error`` unless ``path`` is an existing file (or directory)."""
    if not _os.path.exists(path):
        raise file_error(kind, path, _errno.ENOENT, "no such file or directory")
    if want_directory and not _os.path.isdir(path):
        raise file_error(kind, path, _errno.ENOTDIR, "not a directory")
    if not want_directory and _os.path.isdir(path):
        raise file_error(kind, path, _errno.EISDIR, "is a directory, not a file")
    if not _os.access(path, _os.R_OK):
        raise file_error(kind, path, _errno.EACCES, "permission denied")
