# PassContext refuses what it would otherwise ignore: a misspelled pass name
# in disabled_passes/enabled_passes (named, with close matches), a config key
# under a built-in pass that no pass reads (or of the wrong type), and pass
# selection or instruments around sy.build; and what it accepts is honoured:
# disabled passes, an instrument's should_run, the opt level in sy.build.
import numpy as np
import pytest

import switchyard as sy
from switchyard import ir
from switchyard import transform as T

MLP_DEVICES = ["cpu:0", "cpu:1"]


def primitive_functions(mod):
    class Count(ir.ExprVisitor):
        count = 0

        def visit_function(self, function):
            if function.attrs and function.attrs.get("Primitive"):
                self.count += 1

    counter = Count()
    counter.visit(mod)
    return counter.count


@pytest.mark.parametrize("option", ["disabled_passes", "enabled_passes"])
def test_misspelled_pass_name_is_named_with_close_matches(option):
    with pytest.raises(sy.PassError) as info:
        T.PassContext(**{option: ["InferType", "SimplifyExp"]})
    message = info.value.message
    assert "unknown pass 'SimplifyExp' in " + option in message
    assert "did you mean 'SimplifyExpr'?" in message
    assert "known:" in message and "FoldConstant" in message
    assert isinstance(info.value, ValueError), "a PassError is a ValueError"


def test_name_without_close_match_lists_the_known_passes():
    with pytest.raises(sy.PassError, match=r"unknown pass 'Zzzz' in disabled_passes \(known: .*InferType"):
        T.PassContext(disabled_passes=["Zzzz"])


def test_pass_names_of_python_passes_and_sequentials_are_known():
    @T.function_pass(name="ContextCheckFunctionPass")
    def identity(func, mod, ctx):
        return func

    @T.module_pass(name="ContextCheckClassPass")
    class NotYetMade:
        def transform_module(self, mod, ctx):
            return mod

    T.Sequential([T.InferType()], name="ContextCheckSequential")
    T.default_pipeline(MLP_DEVICES)
    ctx = T.PassContext(disabled_passes=["ContextCheckFunctionPass", "ContextCheckClassPass",
                                         "ContextCheckSequential", "DefaultPipeline"])
    assert "ContextCheckClassPass" in ctx.disabled_passes


def test_disabled_pass_is_skipped(mlp_path):
    mod = T.InferType()(sy.parse(mlp_path))
    with T.PassContext(opt_level=3, disabled_passes=["FuseOps"]):
        assert primitive_functions(T.default_pipeline(MLP_DEVICES)(mod)) == 0
    with T.PassContext(opt_level=3):
        assert primitive_functions(T.default_pipeline(MLP_DEVICES)(mod)) == 2


def test_builtin_config_key_is_honoured(mlp_path):
    mod = sy.parse(mlp_path)
    with T.PassContext(config={"FuseOps.max_group_size": 1}):
        one_per_group = T.default_pipeline(MLP_DEVICES)(mod)
    assert primitive_functions(one_per_group) == 5, "each of the five operators alone"


@pytest.mark.parametrize("config, words", [
    ({"FuseOps.max_grup_size": 1}, "unknown configuration 'FuseOps.max_grup_size'"),
    ({"inline.max_call": 3}, "known: FoldConstant.max_bytes, FuseOps.max_group_size, inline.max_calls"),
    ({"FuseOps.max_group_size": "4"}, "'FuseOps.max_group_size' must be an integer"),
    ({"inline.max_calls": 2.5}, "'inline.max_calls' must be an integer"),
])
def test_config_a_builtin_pass_would_ignore_is_refused(config, words):
    with pytest.raises(sy.UsageError, match=words.replace("(", r"\(").replace(")", r"\)")):
        T.PassContext(config=config)


def test_config_of_ones_own_is_kept_for_python_passes():
    seen = {}

    @T.module_pass(name="ReadsConfig")
    def reads_config(mod, ctx):
        seen.update(ctx.config)
        return mod

    with T.PassContext(config={"mine.threshold": 3, "label": "x"}):
        reads_config(ir.IRModule.from_expr(ir.Function([], ir.const(1.0))))
    assert seen == {"mine.threshold": 3, "label": "x"}


class Recorder(T.PassInstrument):
    def __init__(self):
        super().__init__()
        self.ran = []

    def run_before_pass(self, mod, info):
        self.ran.append(info.name)


def test_should_run_false_skips_the_pass(mlp_path):
    class Veto(T.PassInstrument):
        def should_run(self, mod, info):
            return info.name != "FoldConstant"

    recorder = Recorder()
    with T.PassContext(opt_level=3, instruments=[Veto(), recorder]):
        T.default_pipeline(MLP_DEVICES)(sy.parse(mlp_path))
    assert "FoldConstant" not in recorder.ran, "no instrument sees a vetoed pass"
    assert "SimplifyExpr" in recorder.ran and "FuseOps" in recorder.ran


def test_should_run_must_answer_a_bool(mlp_path):
    class Forgets(T.PassInstrument):
        def should_run(self, mod, info):
            pass

    with T.PassContext(instruments=[Forgets()]):
        with pytest.raises(TypeError, match="Forgets.should_run must return a bool, got NoneType"):
            T.InferType()(sy.parse(mlp_path))


def test_build_takes_the_enclosing_opt_level(mlp_path, tmp_path):
    mod = sy.parse(mlp_path)
    with T.PassContext(opt_level=0):
        low = [name for name, _ in sy.build(mod, devices=MLP_DEVICES, output=tmp_path / "low").passes]
    assert "FoldConstant" not in low and "SimplifyExpr" not in low and "FuseOps" in low
    default = [name for name, _ in sy.build(mod, devices=MLP_DEVICES, output=tmp_path / "default").passes]
    assert "FoldConstant" in default
    with T.PassContext(opt_level=0):
        given = [name for name, _ in sy.build(mod, devices=MLP_DEVICES, output=tmp_path / "given", opt_level=2).passes]
    assert "FoldConstant" in given, "an explicit opt_level wins"


def test_build_refuses_instruments_it_would_not_run(mlp_path, tmp_path):
    with T.PassContext(instruments=[Recorder()]):
        with pytest.raises(sy.UsageError, match=r"does not read the enclosing PassContext's instruments \(Recorder\)"):
            sy.build(sy.parse(mlp_path), devices=MLP_DEVICES, output=tmp_path / "out")


def test_build_honours_the_enclosing_pass_selection(mlp_path, tmp_path):
    mod = sy.parse(mlp_path)
    default = sy.build(mod, devices=MLP_DEVICES, output=tmp_path / "default")
    with T.PassContext(disabled_passes=["FuseOps"]):
        unfused = sy.build(mod, devices=MLP_DEVICES, output=tmp_path / "unfused")
    assert "FuseOps" not in [name for name, _ in unfused.passes]
    assert unfused.kernel_calls > default.kernel_calls, "without fusion every operator is its own kernel"
    rng = np.random.default_rng(0)
    inputs = {p.name_hint: rng.standard_normal(p.checked_type.shape).astype(np.float32) for p in T.InferType()(mod)["main"].params}
    np.testing.assert_allclose(sy.runtime.load(tmp_path / "unfused").run(**inputs),
                               sy.runtime.load(tmp_path / "default").run(**inputs), rtol=1e-5, atol=1e-5)
