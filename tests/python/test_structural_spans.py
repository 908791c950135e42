# Spans do not count in structural equality and hashing unless asked for, as
# in TVM: a module and its own printed-and-parsed text were "structurally
# different" because every node's span moved from the model's node names to
# text positions.
import pytest

import switchyard as sy
from switchyard import ir


def test_a_printed_and_parsed_model_is_structurally_equal_by_default(conv_dense_onnx):
    mod = sy.frontend.from_onnx(conv_dense_onnx)
    again = sy.parse(mod.astext(show_weights=True), source_name="printed.sy")
    assert ir.structural_equal(again, mod)
    assert ir.structural_diff(again, mod) is None
    assert ir.structural_hash(again) == ir.structural_hash(mod)
    assert ir.structural_hash(again["main"]) == ir.structural_hash(mod["main"])
    sy.testing.assert_structural_equal(again, mod)
    # Asked for, spans still count.
    assert not ir.structural_equal(again, mod, compare_spans=True)
    assert "spans differ" in ir.structural_diff(again, mod, compare_spans=True)
    assert ir.structural_hash(again, compare_spans=True) != ir.structural_hash(mod, compare_spans=True)
    with pytest.raises(AssertionError, match="spans differ"):
        sy.testing.assert_structural_equal(again, mod, compare_spans=True)
