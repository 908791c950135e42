"""Dataflow patterns: matching and rewriting, as TVM's ``tvm.relay.dataflow_pattern``.

    from switchyard.pattern import DFPatternCallback, is_op, wildcard, rewrite

    class ReluToMaximum(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.x = wildcard()
            self.pattern = is_op("nn.relu")(self.x)

        def callback(self, pre, post, node_map):
            return sy.op.maximum(node_map[self.x][0], sy.ir.const(0.0))

    mod = rewrite(ReluToMaximum(), mod)

A replacement needs no device or span code: it, and every node built inside
it that states none, takes the replaced node's (the rewrite is a C++
ExprMutator). ``node_map[p]`` is a one-element list (as in TVM) holding what
the pattern ``p`` matched within ``post``.
"""
from ._errors import error as _error
from ._switchyard import pattern as _p

Pattern = _p.Pattern
DFPattern = _p.Pattern  # TVM's name
wildcard = _p.wildcard
is_op = _p.is_op
is_constant = _p.is_constant
is_var = _p.is_var
is_tuple = _p.is_tuple
is_tuple_get_item = _p.is_tuple_get_item
match = _p.match


def rewrite(callbacks, expr, mod=None):
    """Rewrites ``expr`` (an Expr, or every function of an IRModule) until nothing changes.

    ``callbacks`` is one callback or a list, each with ``pattern`` and
    ``callback(pre, post, node_map)`` returning the replacement (``post`` to
    keep the match; None is refused). ``mod`` resolves global functions
    when a callback has ``require_type``. After 100 rounds that still
    change the expression, or as many replacements as 100 rounds over its
    nodes would make (a replacement its own pattern matches again), it is a
    ``sy.UsageError`` naming the callbacks and the limit.
    """
    return _p.rewrite(callbacks, expr, mod)


class DFPatternCallback:
    """A rewrite rule: set ``self.pattern`` and override ``callback``.

    ``require_type=True`` infers types before each sweep (so ``has_dtype``
    and ``has_shape`` see new nodes); ``rewrite_once=True`` sweeps once
    instead of until nothing changes.
    """

    def __init__(self, require_type=False, rewrite_once=False):
        self.pattern = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def callback(self, pre, post, node_map):
        raise _error("UsageError", f"{type(self).__name__} must override callback(pre, post, node_map)",
                     NotImplementedError)

    def rewrite(self, expr, mod=None):
        """``rewrite(self, expr, mod)``."""
        return rewrite(self, expr, mod)


__all__ = [
    "Pattern", "DFPattern", "DFPatternCallback", "wildcard", "is_op", "is_constant", "is_var", "is_tuple",
    "is_tuple_get_item", "match", "rewrite",
]
