# Bad input from Python raises a Python exception and never crashes the
# interpreter: wrong argument types, None where a node is expected, bad
# visitor results, exceptions inside Python passes and instruments,
# out-of-range indices, misused contexts, uninitialized objects.
import threading

import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T

X = ir.Var("x", ir.TensorType((2,)))


def module_of(body, params=(X,)):
    return ir.IRModule.from_expr(ir.Function(list(params), body))


def test_error_hierarchy_and_fields():
    for name in ["ParseError", "TypeInferenceError", "PlacementError", "InvariantError", "PassError",
                 "BackendError", "RuntimeError", "UsageError"]:
        assert issubclass(getattr(sy, name), sy.Error)
    with pytest.raises(sy.TypeInferenceError) as info:
        T.InferType()(module_of(ir.Call(ir.Op("add"), [X], span=ir.Span("t.sy", 4, 2))))
    assert "2 arguments" in info.value.message
    assert str(info.value.span) == "t.sy:4:2" and info.value.kind == "type error"


@pytest.mark.parametrize("make", [
    lambda: ir.Call(None, [X]),
    lambda: ir.Call(ir.Op("nn.relu"), [None]),
    lambda: ir.Call(ir.Op("nn.relu"), X),
    lambda: ir.Call(ir.Op("nn.relu"), [X], attrs=5),
    lambda: ir.Function([1], X),
    lambda: ir.Function([X], None),
    lambda: ir.Function([X], X, ret_type="float32"),
    lambda: ir.Var(3),
    lambda: ir.Var("x", virtual_device=1),
    lambda: ir.Var("x", span="f.sy:1:1"),
    lambda: ir.Let(X, None, X),
    lambda: ir.Let(ir.const(1.0), X, X),
    lambda: ir.If(X, None, X),
    lambda: ir.Tuple(None),
    lambda: ir.Tuple([X, "y"]),
    lambda: ir.TupleGetItem(None, 0),
    lambda: ir.TupleGetItem(ir.Tuple([X]), "0"),
    lambda: ir.GlobalVar(None),
    lambda: ir.Op(None),
    lambda: ir.Constant([1, 2]),
    lambda: ir.Constant(np.ones(2, np.complex128)),
    lambda: ir.const("text"),
    lambda: ir.const(np.ones(2, np.complex64)),
    lambda: ir.TensorType((2, "3")),
    lambda: ir.TupleType([None]),
    lambda: ir.FuncType([], None),
    lambda: ir.VirtualDevice(kind="cpu", device_id="a"),
    lambda: ir.VirtualDevice(5),
    lambda: ir.Span.fused([1]),
    lambda: ir.IRModule({"main": 3}),
    lambda: ir.IRModule([1]),
    lambda: ir.structural_equal(None, X),
    lambda: ir.structural_equal(module_of(X), X),
    lambda: ir.structural_hash("x"),
    lambda: sy.op.nn.relu(None),
    lambda: sy.op.nn.relu(X, X),
    lambda: sy.op.add(X, "1.0"),
    lambda: sy.op.transpose(X, axes=[1, "a"]),
    lambda: sy.parse(123),
    lambda: sy.evaluate(None),
    lambda: sy.evaluate(module_of(X), x="not a number"),
    lambda: sy.evaluate(module_of(X), x=np.ones(2)),
    lambda: X.with_fields(bogus=1),
    lambda: X.with_fields(name_hint=None),
    lambda: sy.op.nn.relu(X).with_fields(args=[None]),
    lambda: sy.op.nn.relu(X).with_fields(args=None),
    lambda: ir.Op("add").with_fields(span=None),
    lambda: T.Sequential([T.InferType(), "SimplifyExpr"]),
    lambda: T.Sequential(T.InferType()),
    lambda: T.InferType()(X),
    lambda: T.InferType()(module_of(X), ctx=5),
    lambda: T.PassContext(instruments=[object()]),
    lambda: T.PassContext(disabled_passes="SimplifyExpr"),
    lambda: T.PassContext(config={"a": object()}),
    lambda: T.PlanDevices(devices=[1]),
])
def test_wrong_argument_types_raise_type_error(make):
    with pytest.raises((TypeError, ValueError)) as info:
        make()
    assert isinstance(info.value, sy.Error), "one hierarchy: every error the package raises is a sy.Error"


@pytest.mark.parametrize("make, error", [
    (lambda: ir.TupleGetItem(ir.Tuple([X]), -1), IndexError),
    (lambda: ir.TensorType((2, -1)), ValueError),
    (lambda: ir.TensorType((2,), "float128"), ValueError),
    (lambda: ir.VirtualDevice("gpu:0"), sy.Error),
    (lambda: ir.VirtualDevice(kind="tpu"), ValueError),
    (lambda: ir.Target("tpu"), sy.UsageError),
    (lambda: ir.Op("nn.nope"), sy.ParseError),
    (lambda: ir.IRModule()["main"], KeyError),
    (lambda: ir.IRModule.from_expr(ir.Function([X], X)).astext("some"), ValueError),
    (lambda: sy.op.reshape(X), sy.TypeInferenceError),
    (lambda: sy.op.nn.relu(X, alpha=1), sy.TypeInferenceError),
    (lambda: T.pass_by_name("NoSuchPass"), sy.PassError),
    (lambda: T.PlanDevices(devices=["cpu:0", "cpu:0"]), sy.UsageError),
    (lambda: sy.parse("def @main( {"), sy.ParseError),
    (lambda: sy.evaluate(module_of(X)), sy.UsageError),
    (lambda: sy.evaluate(module_of(X), x=np.ones(3, np.float32)), sy.UsageError),
    (lambda: sy.evaluate(module_of(X), x=np.ones(2, np.float32), y=np.ones(2, np.float32)), sy.UsageError),
    (lambda: sy.evaluate(module_of(ir.TupleGetItem(ir.Tuple([X]), 5)), x=np.ones(2, np.float32)), sy.Error),
    (lambda: sy.evaluate(module_of(ir.Call(ir.GlobalVar("nope"), [X])), x=np.ones(2, np.float32)), sy.Error),
    (lambda: sy.evaluate(module_of(X, params=())), sy.Error),
    (lambda: sy.evaluate(module_of(ir.Function([X], X), params=())), sy.UsageError),
    (lambda: sy.evaluate(module_of(X), None, "other"), KeyError),
    (lambda: T.InferType()(module_of(ir.TupleGetItem(ir.Tuple([X]), 5))), sy.TypeInferenceError),
    (lambda: sy.runtime.load("/no/such/artifact"), sy.RuntimeError),
])
def test_bad_values_raise_python_exceptions(make, error):
    with pytest.raises(error) as info:
        make()
    assert isinstance(info.value, sy.Error), "one hierarchy: every error the package raises is a sy.Error"


@pytest.mark.parametrize("cls, probe", [
    (ir.Var, lambda o: o.name_hint),
    (ir.Call, lambda o: o.args),
    (ir.Call, repr),
    (ir.Span, lambda o: o.line),
    (ir.Span, str),
    (ir.IRModule, lambda o: o.keys()),
    (ir.VirtualDevice, lambda o: o.kind),
    (ir.TensorType, lambda o: o.shape),
    (ir.ExprMutator, lambda o: o.visit(X)),
    (ir.ExprVisitor, lambda o: o.visit(X)),
    (T.PassContext, lambda o: o.__enter__()),
    (T.Timing, lambda o: o.report()),
    (T.Pass, lambda o: o(module_of(X))),
])
def test_uninitialized_objects_raise_instead_of_crashing(cls, probe):
    with pytest.raises(TypeError):
        probe(cls.__new__(cls))


def test_subclass_must_call_base_init():
    class Lazy(ir.ExprMutator):
        def __init__(self):
            pass

    with pytest.raises(TypeError, match="__init__"):
        Lazy()


def test_mutator_returning_a_non_expression_names_the_method():
    class ReturnsInt(ir.ExprMutator):
        def visit_call(self, call):
            return 5

    class ReturnsNone(ir.ExprMutator):
        def visit_var(self, var):
            pass

    with pytest.raises(TypeError, match=r"ReturnsInt\.visit_call must return an Expr, got int"):
        ReturnsInt().visit(sy.op.nn.relu(X))
    with pytest.raises(TypeError, match=r"ReturnsNone\.visit_var must return an Expr, got NoneType"):
        ReturnsNone().visit(sy.op.nn.relu(X))


def test_mutator_replacing_a_parameter_with_a_non_variable():
    class ParamToConst(ir.ExprMutator):
        def visit_var(self, var):
            return ir.const(1.0)

    with pytest.raises(Exception, match="non-variable"):
        ParamToConst().visit(ir.Function([X], X))


def test_base_visit_rejects_the_wrong_kind():
    class Confused(ir.ExprMutator):
        def visit_call(self, call):
            return super().visit_call(call.args[0])

    with pytest.raises(TypeError, match="visit_call"):
        Confused().visit(sy.op.nn.relu(X))
    with pytest.raises(TypeError):
        ir.ExprMutator().visit(None)
    with pytest.raises(TypeError):
        ir.ExprVisitor().visit(3)


def test_exceptions_inside_visitors_propagate_and_the_visitor_stays_usable():
    class Fails(ir.ExprMutator):
        armed = True

        def visit_call(self, call):
            if self.armed:
                raise KeyError("boom")
            return super().visit_call(call)

    mutator = Fails()
    expr = sy.op.nn.relu(sy.op.nn.relu(X))
    with pytest.raises(KeyError, match="boom"):
        mutator.visit(expr)
    mutator.armed = False
    assert mutator.visit(expr).same_as(expr)


def test_exception_inside_a_python_pass_keeps_its_type_and_names_the_pass():
    @T.function_pass(name="Exploding")
    def exploding(func, mod, ctx):
        raise ValueError("bad value in pass")

    with T.PassContext(check_invariants=True):
        with pytest.raises(ValueError, match="bad value in pass") as info:
            T.Sequential([T.InferType(), exploding])(module_of(X))
    assert "in Python pass 'Exploding'" in info.value.__notes__

    @T.module_pass(name="InnerError")
    def inner(mod, ctx):
        return T.InferType()(module_of(ir.Call(ir.Op("add"), [X])))

    with pytest.raises(sy.TypeInferenceError) as info:
        inner(module_of(X))
    assert "in Python pass 'InnerError'" in info.value.__notes__


def test_python_pass_returning_the_wrong_thing_names_the_pass():
    @T.function_pass(name="ReturnsNothing")
    def nothing(func, mod, ctx):
        return None

    @T.module_pass(name="ReturnsFunction")
    def wrong(mod, ctx):
        return mod["main"]

    with pytest.raises(TypeError, match="function pass 'ReturnsNothing' must return a Function, got NoneType"):
        nothing(module_of(X))
    with pytest.raises(TypeError, match="module pass 'ReturnsFunction' must return an IRModule, got Function"):
        wrong(module_of(X))
    with pytest.raises(TypeError):
        T.function_pass(5)
    with pytest.raises(TypeError, match="transform_function"):
        @T.function_pass
        class NoMethod:
            pass


def test_python_pass_breaking_scoping_is_caught_by_the_checker():
    @T.function_pass(name="Unbind")
    def unbind(func, mod, ctx):
        return func.with_fields(body=ir.Var("stray", ir.TensorType((2,))))

    with T.PassContext(check_invariants=True):
        with pytest.raises(sy.InvariantError, match="Unbind"):
            unbind(module_of(X))


def test_a_parameter_listed_twice_fails_at_infer_type_not_at_build(tmp_path):
    """Issue 39: it typed, printed text that does not parse back, and failed only at build."""
    x = ir.Var("x", ir.TensorType((2,)), span=ir.Span("t.sy", 1, 11))
    mod = module_of(x, params=(x, x))
    with pytest.raises(sy.TypeInferenceError, match=r"^t.sy:1:11: type error: variable %x is bound more than once \(in @main\)") \
            as info:
        T.InferType()(mod)
    assert str(info.value.span) == "t.sy:1:11"
    with pytest.raises(sy.TypeInferenceError, match="bound more than once"):
        sy.build(mod, ["cpu:0"], tmp_path / "art")


def test_a_free_variable_fails_at_infer_type():
    y = ir.Var("y", ir.TensorType((2,)), span=ir.Span("t.sy", 2, 9))
    with pytest.raises(sy.TypeInferenceError, match="variable %y is free: no parameter or let of @main binds it") \
            as info:
        T.InferType()(module_of(sy.op.add(X, y)))
    assert str(info.value.span) == "t.sy:2:9"


def test_instrument_errors_propagate_and_leave_the_context_stack_sane():
    class FailsOnEnter(T.PassInstrument):
        def enter_context(self):
            raise RuntimeError("enter failed")

    class FailsOnExit(T.PassInstrument):
        def exit_context(self):
            raise LookupError("exit failed")

    class FailsAfterPass(T.PassInstrument):
        def run_after_pass(self, mod, info):
            raise ArithmeticError("after " + info.name)

    with pytest.raises(RuntimeError, match="enter failed"):
        with T.PassContext(opt_level=1, instruments=[FailsOnEnter()]):
            pass
    assert T.PassContext.current().opt_level == 2
    with pytest.raises(LookupError, match="exit failed"):
        with T.PassContext(opt_level=1, instruments=[FailsOnExit()]):
            assert T.PassContext.current().opt_level == 1
    assert T.PassContext.current().opt_level == 2
    with T.PassContext(instruments=[FailsAfterPass()]):
        with pytest.raises(ArithmeticError, match="after InferType"):
            T.InferType()(module_of(X))

    class WeirdName(T.PassInstrument):
        name = 42

    with T.PassContext(instruments=[WeirdName()]):
        T.InferType()(module_of(X))


def test_context_misuse():
    ctx = T.PassContext()
    with pytest.raises(ValueError, match="without a matching"):
        ctx.__exit__(None, None, None)
    ctx.__enter__()
    errors = []

    def leave_elsewhere():
        try:
            ctx.__exit__(None, None, None)
        except ValueError as e:
            errors.append(str(e))

    thread = threading.Thread(target=leave_elsewhere)
    thread.start()
    thread.join()
    assert errors and "another thread" in errors[0]
    ctx.__exit__(None, None, None)
    with ctx:
        with ctx:
            assert T.PassContext.current().check_invariants


def test_dropping_an_entered_context_is_safe():
    import gc
    import weakref
    ctx = T.PassContext(opt_level=0)
    ctx.__enter__()
    alive = weakref.ref(ctx)
    del ctx
    gc.collect()
    assert alive() is not None, "an entered context is kept alive"
    assert T.PassContext.current().opt_level == 0
    T.InferType()(module_of(X))
    alive().__exit__(None, None, None)
    assert T.PassContext.current().opt_level == 2


def test_deep_structures_never_overflow_the_native_stack():
    depth = 100_000
    projections = ir.Tuple([X])
    for _ in range(depth):
        projections = ir.TupleGetItem(projections, 0)
    assert repr(projections).startswith("TupleGetItem((...).0.0.0.0")
    assert str(projections).count(".0") >= depth
    assert ir.structural_equal(projections, projections)
    assert ir.structural_hash(projections) == ir.structural_hash(projections)
    assert ir.ExprMutator().visit(projections).same_as(projections)
    with pytest.raises(sy.TypeInferenceError):
        T.InferType()(module_of(projections))

    body = X
    for i in range(depth):
        v = ir.Var(f"v{i}", ir.TensorType((2,)))
        body = ir.Let(v, X, body if i else v)
    lets = module_of(body)
    out = sy.evaluate(T.InferType()(lets), x=np.array([1, 2], np.float32))
    assert out.tolist() == [1.0, 2.0]


def test_a_device_list_given_as_one_string_is_read_as_names():
    # The string was wrapped in a temporary list held by a bare handle, freed
    # before use: both calls segfaulted.
    mod = T.InferType()(module_of(sy.op.nn.relu(X)))
    planned = T.PlanDevices(devices="cpu:0,cpu:1")(mod)
    assert planned["main"].body.virtual_device == ir.VirtualDevice("cpu:0")
    assert T.default_pipeline(devices="cpu:0")(mod)["main"].body is not None
