# Symbolic dimensions from Python: a TensorType dimension may be a variable
# named by a string with an optional bound; shapes show them as strings.
import pytest

import switchyard as sy
from switchyard import ir


def test_a_string_dimension_is_a_variable():
    t = ir.TensorType(("n<=64", 3, 224, 224), "float32")
    assert t.shape == ("n<=64", 3, 224, 224)
    assert not t.is_static
    assert t.ndim == 4
    assert str(t) == "Tensor[(n<=64, 3, 224, 224), float32]"
    assert t == ir.TensorType(("n<=64", 3, 224, 224))
    assert hash(t) == hash(ir.TensorType(("n<=64", 3, 224, 224)))
    assert t != ir.TensorType(("m<=64", 3, 224, 224))
    assert t != ir.TensorType(("n", 3, 224, 224))
    assert ir.TensorType((2, 3)).is_static


def test_the_size_of_a_symbolic_type_is_an_error():
    with pytest.raises(sy.Error, match="depends on its symbolic dimensions"):
        ir.TensorType(("n", 3)).numel


@pytest.mark.parametrize("dim, message", [("3", "must be an identifier"), ("n<=x", "bound must be"),
                                          ("n<=-1", "bound must be")])
def test_bad_dimension_strings_are_refused(dim, message):
    with pytest.raises((sy.Error, ValueError), match=message):
        ir.TensorType((dim, 2))
