# One exception hierarchy: every sy error class is also the builtin a Python
# caller would catch, the same mistake raises the same class (and words) from
# the interpreter and from a compiled artifact, and file problems are OSErrors.
import builtins

import numpy as np
import pytest

import switchyard as sy

BUILTIN_BASES = {
    "ParseError": ValueError,
    "TypeInferenceError": TypeError,
    "PlacementError": ValueError,
    "InvariantError": builtins.RuntimeError,
    "PassError": ValueError,
    "BackendError": builtins.RuntimeError,
    "RuntimeError": builtins.RuntimeError,
    "UsageError": ValueError,
}


@pytest.mark.parametrize("name, builtin", BUILTIN_BASES.items())
def test_each_class_derives_from_sy_error_and_its_builtin(name, builtin):
    cls = getattr(sy, name)
    assert issubclass(cls, sy.Error) and issubclass(cls, builtin)
    assert cls.__module__ == "switchyard"


def test_sy_runtime_error_is_a_builtin_runtime_error():
    assert issubclass(sy.RuntimeError, builtins.RuntimeError)
    assert sy.RuntimeError is not builtins.RuntimeError


def test_builtin_except_clauses_catch_switchyard_errors():
    with pytest.raises(ValueError) as info:
        sy.parse("def @main( {", source_name="broken.sy")
    assert isinstance(info.value, sy.ParseError)
    assert info.value.message and "\n" not in info.value.message, ".message is the plain message"
    assert "broken.sy:1:" in str(info.value), "str() is the rendered diagnostic"
    with pytest.raises(TypeError) as info:
        sy.op.nn.relu(sy.ir.Var("x", sy.ir.TensorType((2,))), alpha=1)
    assert isinstance(info.value, sy.TypeInferenceError)


@pytest.fixture
def mlp_model(mlp_artifact):
    mod, directory = mlp_artifact
    return mod, sy.runtime.load(directory)


def wrong_shape(inputs):
    return dict(inputs, x=np.ones((2, 784), np.float32))


def wrong_dtype(inputs):
    return dict(inputs, b2=np.ones(10, np.int32))


def missing(inputs):
    return {k: v for k, v in inputs.items() if k != "w1"}


def unknown(inputs):
    return dict(inputs, bias=np.ones(10, np.float32))


@pytest.mark.parametrize("mistake, words", [
    (wrong_shape, "input 'x': expected Tensor[(1, 784), float32], got Tensor[(2, 784), float32]"),
    (wrong_dtype, "input 'b2': expected Tensor[(10), float32], got Tensor[(10), int32]"),
    (missing, "missing input 'w1' (expected Tensor[(512, 784), float32])"),
    (unknown, "unknown input 'bias'"),
])
def test_same_input_mistake_same_class_on_both_paths(mlp_model, mlp_inputs, mistake, words):
    mod, model = mlp_model
    raised = []
    for run in (lambda i: sy.evaluate(mod, i), lambda i: model.run(**i)):
        with pytest.raises(sy.UsageError) as info:
            run(mistake(mlp_inputs))
        assert words in info.value.message
        raised.append(type(info.value))
    assert raised[0] is raised[1] is sy.UsageError
    with pytest.raises(ValueError):
        model.run(**mistake(mlp_inputs))


def test_parse_of_a_directory_or_missing_file_is_a_clear_error(tmp_path):
    from pathlib import Path
    with pytest.raises(IsADirectoryError) as info:
        sy.parse(Path(tmp_path))
    assert isinstance(info.value, sy.UsageError)
    assert info.value.filename == str(tmp_path)
    assert info.value.message == f"{tmp_path}: is a directory, not a file"
    with pytest.raises(IsADirectoryError):
        sy.parse(str(tmp_path))
    missing_file = tmp_path / "absent.sy"
    with pytest.raises(FileNotFoundError) as info:
        sy.parse(missing_file)
    assert isinstance(info.value, sy.UsageError) and isinstance(info.value, sy.Error)
    assert info.value.kind == "usage error" and info.value.span is None
    assert "absent.sy" in str(info.value)
    with pytest.raises(FileNotFoundError):
        sy.frontend.from_onnx(tmp_path / "absent.onnx")


def test_loading_a_missing_or_non_directory_artifact_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        sy.runtime.load(tmp_path / "nothing")
    assert isinstance(info.value, sy.RuntimeError) and isinstance(info.value, builtins.RuntimeError)
    a_file = tmp_path / "model.sy"
    a_file.write_text("not an artifact")
    with pytest.raises(NotADirectoryError) as info:
        sy.runtime.load(a_file)
    assert isinstance(info.value, sy.RuntimeError)
    with pytest.raises(sy.RuntimeError, match="manifest.json"):
        sy.runtime.load(tmp_path)
