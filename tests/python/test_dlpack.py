# Zero-copy inputs and outputs of a loaded artifact: DLPack tensors (PyTorch
# CPU tensors) are read where they lie, outputs are NumPy arrays written in
# place that PyTorch can take without a copy, and set_input(copy=False)
# reads the caller's memory at each run.
import numpy as np
import pytest
import torch

import switchyard as sy
from conftest import mlp_reference


@pytest.fixture
def model(mlp_artifact):
    return sy.runtime.load(mlp_artifact[1])


def test_torch_inputs_run_through_dlpack(model, mlp_inputs):
    tensors = {name: torch.from_numpy(value.copy()) for name, value in mlp_inputs.items()}
    np.testing.assert_allclose(model.run(**tensors), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    for name, tensor in tensors.items():
        model.set_input(name, tensor)
    np.testing.assert_allclose(model.run(), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)


def test_from_dlpack_shares_the_tensor_memory():
    tensor = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    view = sy.runtime.from_dlpack(tensor)
    assert view.ctypes.data == tensor.data_ptr()
    tensor[0, 0] = 42.0
    assert view[0, 0] == 42.0


def test_outputs_go_to_torch_without_a_copy(model, mlp_inputs):
    out = model.run(**mlp_inputs)
    tensor = torch.from_dlpack(out)
    assert tensor.data_ptr() == out.ctypes.data
    np.testing.assert_array_equal(tensor.numpy(), out)


def test_set_input_without_copy_reads_the_callers_memory(model, mlp_inputs):
    for name, value in mlp_inputs.items():
        model.set_input(name, value.copy(), copy=False)
    x = mlp_inputs["x"].copy()
    model.set_input("x", x, copy=False)
    np.testing.assert_allclose(model.run(), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    x *= -1  # the model holds the caller's array, not a copy
    flipped = dict(mlp_inputs, x=-mlp_inputs["x"])
    np.testing.assert_allclose(model.run(), mlp_reference(flipped), rtol=1e-4, atol=1e-5)


def test_strided_and_foreign_order_inputs_are_copied_not_misread(model, mlp_inputs):
    wide = np.zeros((1, 784 * 2), np.float32)
    wide[:, ::2] = mlp_inputs["x"]
    strided = dict(mlp_inputs, x=wide[:, ::2])
    assert not strided["x"].flags.c_contiguous
    np.testing.assert_allclose(model.run(**strided), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    swapped = dict(mlp_inputs, w1=mlp_inputs["w1"].astype(">f4"))
    np.testing.assert_allclose(model.run(**swapped), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)


def test_each_run_returns_fresh_outputs(model, mlp_inputs):
    first = model.run(**mlp_inputs)
    kept = first.copy()
    second = model.run(**dict(mlp_inputs, x=-mlp_inputs["x"]))
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, kept)


def test_wrong_inputs_are_usage_errors_with_the_same_words(model, mlp_inputs):
    with pytest.raises(sy.UsageError, match=r"input 'x': expected Tensor\[\(1, 784\), float32\], got"):
        model.run(**dict(mlp_inputs, x=torch.zeros(2, 784)))
    with pytest.raises(sy.UsageError, match="unknown input 'y'"):
        model.run(**mlp_inputs, y=np.zeros(3, np.float32))
    missing = dict(mlp_inputs)
    del missing["b2"]
    with pytest.raises(sy.UsageError, match="missing input 'b2'"):
        model.run(**missing)


def test_a_tensor_off_the_host_is_refused_by_name(model):
    class DeviceTensor:  # what a CUDA tensor reports through DLPack
        def __dlpack__(self, stream=None):
            raise AssertionError("must not be read")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(sy.UsageError, match="input 'x' lives on DLPack device type 2"):
        model.set_input("x", DeviceTensor())


def test_a_dlpack_capsule_is_an_input_too(model, mlp_inputs):
    # torch.utils.dlpack.to_dlpack(t) gives a bare capsule, which has no
    # __dlpack__ of its own: it was refused as "not a NumPy array".
    from torch.utils.dlpack import to_dlpack
    capsules = {name: to_dlpack(torch.from_numpy(value.copy())) for name, value in mlp_inputs.items()}
    np.testing.assert_allclose(model.run(**capsules), mlp_reference(mlp_inputs), rtol=1e-4, atol=1e-5)
    model.set_input("x", to_dlpack(torch.from_numpy(mlp_inputs["x"].copy())))
    np.testing.assert_array_equal(model.get_input("x"), mlp_inputs["x"])
    # A capsule is consumed by the first reader: a second use is named.
    with pytest.raises(sy.UsageError, match="input 'x': the DLPack capsule was already consumed"):
        model.run(**capsules)
