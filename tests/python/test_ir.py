# The IR from Python: constructors with devices and spans, fields,
# with_fields, constants and NumPy, operator calls, types, devices, spans,
# modules, printing, parsing and structural equality.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir


def tensor(*shape, dtype="float32"):
    return ir.TensorType(shape, dtype)


def test_every_node_class_exists():
    for name in ["Var", "Constant", "Call", "Function", "Let", "If", "Tuple", "TupleGetItem", "GlobalVar", "Op",
                 "TensorType", "TupleType", "FuncType", "VirtualDevice", "Target", "Span", "IRModule",
                 "ExprVisitor", "ExprMutator", "structural_equal", "structural_hash", "const"]:
        assert hasattr(ir, name), name


def test_constructors_take_device_and_span():
    span = ir.Span("model.sy", 3, 7)
    x = ir.Var("x", tensor(2, 3), virtual_device="cpu:1", span=span)
    assert x.name_hint == "x"
    assert x.type_annotation == tensor(2, 3)
    assert str(x.virtual_device) == "cpu:1"
    assert x.span == span and str(x.span) == "model.sy:3:7"
    call = ir.Call(ir.Op("nn.relu"), [x], virtual_device=ir.VirtualDevice("cpu:0"), span=ir.Span("model.sy", 4, 1))
    assert call.op.name == "nn.relu" and call.args == [x]
    assert call.virtual_device == ir.VirtualDevice("cpu:0")
    fn = ir.Function([x], call, tensor(2, 3), virtual_device="cpu:0", span=ir.Span("model.sy", 1, 1),
                     attrs={"Inline": 1})
    assert fn.params == [x] and fn.body.same_as(call) and fn.ret_type == tensor(2, 3)
    assert fn.attrs["Inline"] == 1 and not fn.is_primitive
    let = ir.Let(ir.Var("y"), call, ir.Var("z"), virtual_device="cpu:0")
    assert let.var.name_hint == "y" and let.value.same_as(call)
    cond = ir.If(ir.const(True), x, x, span=span)
    assert cond.span == span and cond.cond.data.dtype == np.bool_
    tup = ir.Tuple([x, call], virtual_device="cpu:0")
    assert len(tup) == 2 and tup.fields[1].same_as(call)
    item = ir.TupleGetItem(tup, 1, span=span)
    assert item.index == 1 and item.tuple.same_as(tup)
    gv = ir.GlobalVar("main", span=span)
    assert gv.name == "main" and gv.span == span


def test_unconstrained_defaults():
    x = ir.Var("x")
    assert x.virtual_device.is_fully_unconstrained
    assert x.span is None and x.checked_type is None and x.type_annotation is None


def test_with_fields_carries_every_field_not_named():
    span = ir.Span("m.sy", 2, 5)
    a, b = ir.Var("a", tensor(4)), ir.Var("b", tensor(4))
    call = sy.op.add(a, b, virtual_device="cpu:1", span=span)
    swapped = call.with_fields(args=[b, a])
    assert not swapped.same_as(call)
    assert swapped.args == [b, a]
    assert swapped.virtual_device == call.virtual_device and swapped.span == span
    assert swapped.op.same_as(call.op)
    assert call.with_fields(args=[a, b]).same_as(call), "unchanged fields return the same node"
    moved = call.with_fields(virtual_device="cpu:0")
    assert str(moved.virtual_device) == "cpu:0" and moved.span == span
    cleared = call.with_fields(span=None, virtual_device=None)
    assert cleared.span is None and cleared.virtual_device.is_fully_unconstrained


def test_with_fields_on_every_kind():
    x = ir.Var("x", tensor(2))
    assert x.with_fields(name_hint="y").name_hint == "y"
    c = ir.const(np.arange(3, dtype=np.int32))
    c2 = c.with_fields(data=np.zeros((2, 2), np.float32))
    assert c2.data.shape == (2, 2) and c2.checked_type == tensor(2, 2)
    fn = ir.Function([x], x)
    assert fn.with_fields(ret_type=tensor(2)).ret_type == tensor(2)
    let = ir.Let(x, ir.const(1.0), x)
    assert let.with_fields(body=ir.const(2.0)).body.data == np.float32(2.0)
    cond = ir.If(ir.const(True), x, x)
    assert cond.with_fields(else_branch=ir.const(0.0)).else_branch.kind == "Constant"
    tup = ir.Tuple([x])
    assert tup.with_fields(fields=[x, x]).fields == [x, x]
    item = ir.TupleGetItem(tup, 0)
    assert item.with_fields(index=0).same_as(item)
    gv = ir.GlobalVar("f")
    assert gv.with_fields(name="g").name == "g"
    assert ir.Op("add").with_fields().same_as(ir.Op("add"))


def test_with_fields_swapping_operator_completes_attributes():
    x = ir.Var("x", tensor(1, 4))
    b = ir.Var("b", tensor(4))
    add = sy.op.add(x, b)
    bias_add = add.with_fields(op=ir.Op("nn.bias_add"))
    assert bias_add.op.name == "nn.bias_add"
    assert bias_add.attrs["axis"] == 1


def test_const_supports_every_numpy_dtype():
    for dtype in [np.float32, np.float16, np.int8, np.int32, np.int64, np.uint8, np.bool_]:
        data = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
        c = ir.const(data)
        assert c.dtype == np.dtype(dtype).name
        assert c.checked_type == tensor(2, 3, dtype=np.dtype(dtype).name)
        out = c.data
        assert out.dtype == dtype and np.array_equal(out, data)
        out[0, 0] = 1
        assert np.array_equal(c.data, data), "Constant.data is a copy"


def test_const_from_python_values():
    assert ir.const(1.5).dtype == "float32"
    assert ir.const(3).dtype == "int32"
    assert ir.const([True, False]).dtype == "bool"
    assert ir.const([1, 2.5]).data.tolist() == [1.0, 2.5]
    assert ir.const(2, dtype="int32").dtype == "int32"
    assert ir.const(np.float16(0.5)).data == np.float16(0.5)
    big_endian = np.arange(4, dtype=">i4")
    assert ir.const(big_endian).data.tolist() == [0, 1, 2, 3]
    non_contiguous = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    assert np.array_equal(ir.const(non_contiguous).data, non_contiguous)


def test_operator_functions_cover_the_registry():
    from switchyard._switchyard import ir as native
    for definition in native.op_definitions():
        target = sy.op
        for part in definition["name"].split("."):
            target = getattr(target, part)
        assert callable(target), definition["name"]
    x = ir.Var("x", tensor(1, 3, 8, 8))
    conv = sy.op.nn.conv2d(x, ir.Var("w", tensor(4, 3, 3, 3)), padding=[1, 1, 1, 1])
    assert conv.op.name == "nn.conv2d"
    assert conv.attrs["padding"] == [1, 1, 1, 1]
    assert "strides" in conv.attrs and conv.attrs["strides"] == [1, 1]
    assert dict(conv.attrs.items())["padding"] == [1, 1, 1, 1]
    relu = sy.op.nn.relu(x, virtual_device="cpu:0", span=ir.Span("f.sy", 1, 2))
    assert str(relu.virtual_device) == "cpu:0" and str(relu.span) == "f.sy:1:2"
    cat = sy.op.concatenate([x, x], axis=1)
    assert cat.args[0].kind == "Tuple" and cat.attrs["axis"] == 1
    assert sy.op.get("maximum").same_as(sy.op.maximum(x, x).op)
    assert "x if x > 0" in sy.op.nn.relu.__doc__


def test_attrs_mapping():
    call = sy.op.transpose(ir.Var("x", tensor(2, 3)), axes=[1, 0])
    attrs = call.attrs
    assert attrs["axes"] == [1, 0] and "axes" in attrs and "nope" not in attrs
    assert list(attrs) == attrs.keys() and len(attrs) == len(attrs.keys())
    assert attrs.get("nope", 5) == 5
    assert attrs == {"axes": [1, 0]}
    with pytest.raises(KeyError):
        attrs["nope"]


def test_types():
    t = tensor(2, 3, dtype="float16")
    assert t.shape == (2, 3) and t.dtype == "float16" and t.ndim == 2 and t.numel == 6
    assert str(t) == "Tensor[(2, 3), float16]"
    assert t == tensor(2, 3, dtype="float16") and hash(t) == hash(tensor(2, 3, dtype="float16"))
    tt = ir.TupleType([t, tensor(4)])
    assert tt.fields[1] == tensor(4)
    ft = ir.FuncType([t], tt)
    assert ft.params == [t] and ft.ret == tt
    assert "fn" in str(ft)


def test_devices_and_targets():
    d = ir.VirtualDevice("cpu:1")
    assert d.kind == "cpu" and d.device_id == 1 and d.memory_scope == "global" and str(d.target) == "cpu"
    assert d.is_fully_constrained and d == ir.VirtualDevice(kind="cpu", device_id=1, target="cpu",
                                                           memory_scope="global")
    partial = ir.VirtualDevice("cpu")
    assert partial.device_id is None and not partial.is_fully_constrained
    assert ir.VirtualDevice.join(partial, d) == d
    assert ir.VirtualDevice.join(ir.VirtualDevice("cpu:0"), d) is None
    assert partial.with_defaults(d) == d
    assert ir.Target("cpu -mcpu=native").option("-mcpu") == "native"
    assert {d: 1}[ir.VirtualDevice("cpu:1")] == 1


def test_a_layout_is_one_of_the_irs_own():
    assert ir.VirtualDevice(kind="cpu", device_id=0, layout="nChw16c").layout == "nChw16c"
    assert ir.VirtualDevice('device="cpu:0", layout="nhwc"').layout == "nhwc"
    with pytest.raises(ValueError, match=r"layout 'NCHW' is not a layout \(nhwc \(channels last\), or nChw<N>c"):
        ir.VirtualDevice(kind="cpu", device_id=0, layout="NCHW")
    with pytest.raises(sy.Error, match="layout 'nChw0c' is not a layout"):
        ir.VirtualDevice('device="cpu:0", layout="nChw0c"')


def test_device_kinds_by_part_parse_as_the_text_does():
    for kind in ["cpu", "cuda"]:
        assert ir.VirtualDevice(kind=kind) == ir.VirtualDevice(kind)
        assert ir.VirtualDevice(kind=kind).kind == ir.VirtualDevice(f"{kind}:0").kind == kind
    with pytest.raises(ValueError, match=r"unknown device kind 'tpu' \(cpu, cuda\)"):
        ir.VirtualDevice(kind="tpu")


def test_spans():
    a, b = ir.Span("a.sy", 1, 2), ir.Span("b.sy", 3, 4)
    fused = ir.Span.fused([a, b])
    assert fused.is_fused and fused.parts == [a, b]
    assert a.source == "a.sy" and a.line == 1 and a.column == 2
    assert not ir.Span() and a


def test_module_access_print_and_parse_roundtrip(mlp_path):
    mod = sy.parse(mlp_path)
    assert isinstance(mod, ir.IRModule) and "main" in mod and list(mod) == ["main"]
    main = mod["main"]
    assert [p.name_hint for p in main.params] == ["x", "w1", "b1", "w2", "b2"]
    assert str(main.params[0].virtual_device) == "cpu:0"
    assert str(main.body.span).endswith("mlp_two_devices.sy:13:3")
    text = mod.astext()
    assert "nn.dense" in text and text == str(mod)
    again = sy.parse(text, source_name=str(mlp_path))
    assert ir.structural_equal(mod, again, compare_spans=False)
    assert ir.structural_hash(mod, compare_spans=False) == ir.structural_hash(again, compare_spans=False)
    assert "nn.relu" in str(main.body.args[0].args[0])
    with pytest.raises(KeyError):
        mod["missing"]


def test_module_building():
    x = ir.Var("x", tensor(2))
    fn = ir.Function([x], sy.op.negative(x))
    mod = ir.IRModule({"main": fn})
    mod["helper"] = fn
    assert mod.keys() == ["main", "helper"] and len(mod) == 2
    del mod["helper"]
    assert list(mod) == ["main"]
    assert ir.IRModule.from_expr(fn)["main"].same_as(fn)
    mod.devices = ["cpu:0", "cpu:1"]
    assert [str(d) for d in mod.devices] == ["cpu:0", "cpu:1"]


def test_structural_equal_compares_devices_by_default_and_spans_when_asked():
    x = ir.Var("x", tensor(3))
    a = ir.Function([x], sy.op.nn.relu(x, virtual_device="cpu:0", span=ir.Span("f.sy", 1, 1)))
    y = ir.Var("y", tensor(3))
    b = ir.Function([y], sy.op.nn.relu(y, virtual_device="cpu:0", span=ir.Span("f.sy", 1, 1)))
    assert ir.structural_equal(a, b), "bound variables compare up to renaming"
    other_device = b.with_fields(body=b.body.with_fields(virtual_device="cpu:1"))
    other_span = b.with_fields(body=b.body.with_fields(span=ir.Span("f.sy", 9, 9)))
    assert not ir.structural_equal(a, other_device)
    assert ir.structural_equal(a, other_device, compare_devices=False)
    assert ir.structural_equal(a, other_span)
    assert not ir.structural_equal(a, other_span, compare_spans=True)
    assert "device" in ir.structural_diff(a, other_device)
    assert ir.structural_diff(a, b) is None
    assert ir.structural_hash(a) == ir.structural_hash(b)


def test_parse_text_and_errors():
    mod = sy.parse("def @main(%x: Tensor[(2), float32]) {\n  nn.relu(%x)\n}\n")
    assert str(mod["main"].body.span) == "<string>:2:3"
    with pytest.raises(sy.ParseError) as info:
        sy.parse("def @main(%x: Tensor[(2), float32]) {\n  nn.nope(%x)\n}\n", source_name="bad.sy")
    assert isinstance(info.value, sy.Error)
    assert "nope" in info.value.message
    assert str(info.value.span).startswith("bad.sy:2:")
    assert "nn.nope(%x)" in str(info.value), "str() quotes the source line"
    with pytest.raises(sy.UsageError):
        sy.parse("/no/such/file.sy")
