"""Python ExprMutator/ExprVisitor throughput over a 10^5-node chain.

    PYTHONPATH=build/python python3 bench/python_mutator_bench.py [--length N] [--repeat R]

Prints nodes per second for: an identity mutator with no overrides (every
visit dispatched in C++), one overriding visit_call that calls super(), one
rebuilding every call in Python, and a visitor overriding visit_call. The
chain is far deeper than Python's recursion limit.
"""
import argparse
import sys
import time

import switchyard as sy
from switchyard import ir


def relu_chain(length):
    x = ir.Var("x", ir.TensorType((4,)))
    body = x
    for i in range(length):
        body = sy.op.nn.relu(body, virtual_device="cpu:0", span=ir.Span("chain.sy", i + 1, 3))
    return ir.Function([x], body, virtual_device="cpu:0")


class Identity(ir.ExprMutator):
    pass


class SuperVisitCall(ir.ExprMutator):
    def visit_call(self, call):
        return super().visit_call(call)


class RebuildCall(ir.ExprMutator):
    def visit_call(self, call):
        return ir.Call(call.op, [self.visit(a) for a in call.args], call.attrs)


class CountCalls(ir.ExprVisitor):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def visit_call(self, call):
        self.calls += 1


def best_seconds(make_and_run, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        make_and_run()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100_000, help="calls in the chain (default 100000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per case; the best is reported")
    args = parser.parse_args()

    fn = relu_chain(args.length)
    nodes = args.length + 3  # the calls, %x, the nn.relu operator, the function
    print(f"chain of {args.length} calls ({nodes} nodes), recursion limit {sys.getrecursionlimit()}")
    cases = [
        ("identity mutator, no overrides (C++ visits)", lambda: Identity().visit(fn)),
        ("mutator overriding visit_call -> super()", lambda: SuperVisitCall().visit(fn)),
        ("mutator rebuilding each call in Python", lambda: RebuildCall().visit(fn)),
        ("visitor overriding visit_call", lambda: CountCalls().visit(fn)),
    ]
    for label, run in cases:
        seconds = best_seconds(run, args.repeat)
        print(f"{label:46s} {seconds * 1e3:9.1f} ms  {nodes / seconds:14,.0f} nodes/s")


if __name__ == "__main__":
    main()
