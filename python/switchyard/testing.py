"""Assertions for tests of passes written with Switchyard.

    sy.testing.assert_structural_equal(after, expected)

fails with ``AssertionError`` whose message is the first-difference report
of ``ir.structural_diff`` (where the two differ, and both sides there).
"""
from . import ir as _ir


class _FreeVars(_ir.ExprVisitor):
    """Variables used in an expression but bound by none of its functions or lets, in first-use order."""

    def __init__(self):
        super().__init__()
        self.used = []
        self.bound = set()

    def visit_var(self, var):
        self.used.append(var)

    def visit_function(self, function):
        self.bound.update(function.params)

    def visit_let(self, let):
        self.bound.add(let.var)

    def free(self, expr):
        self.visit(expr)
        return [v for v in self.used if v not in self.bound]


def _free_variable_report(lhs, rhs):
    # structural_diff matches free variables up as it meets them (as TVM's
    # map_free_vars=True does); without that option they must be the same
    # objects. Once the structures are equal, both walks meet their free
    # variables in the same order, so they pair up by position.
    lhs_free, rhs_free = _FreeVars().free(lhs), _FreeVars().free(rhs)
    for a, b in zip(lhs_free, rhs_free):
        if a != b:
            return (f"free variable %{a.name_hint} of lhs and %{b.name_hint} of rhs are different variables "
                    f"(pass map_free_vars=True to match free variables up)")
    return None


def assert_structural_equal(lhs, rhs, map_free_vars=False, *, compare_devices=True, compare_spans=False):
    """Raises ``AssertionError`` with the first difference unless ``lhs`` and ``rhs`` are structurally equal.

    Takes two expressions or two modules. Bound variables are matched up by
    position; free variables must be the same objects unless
    ``map_free_vars`` is true, when they are matched up in order of use.
    Devices are compared unless turned off; spans only with ``compare_spans=True``.
    """
    report = _ir.structural_diff(lhs, rhs, compare_devices=compare_devices, compare_spans=compare_spans)
    if report is None and not map_free_vars and isinstance(lhs, _ir.Expr):
        report = _free_variable_report(lhs, rhs)
    if report is not None:
        raise AssertionError("structurally different:\n" + report)


__all__ = ["assert_structural_equal"]
