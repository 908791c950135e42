"""Random small graphs around the backend's anchors, for the fusion fuzzer.

Each graph is one anchor (a convolution of any groups, dilation, padding and
window; a dense, matmul or batch_matmul product; a pool; a reduction; a
softmax; a layer or batch norm) with a random prologue before it and a
random epilogue DAG after it (element-wise, broadcast, cast and layout
operators, scalar and per-channel constants, residual inputs), sometimes a
second anchor after that, on random shapes. `graph(seed)` builds one from a
seed, so every graph can be made again from its number.

Why the generator tracks three facts per value:

- exact: the value is bit for bit what the interpreter computes (inputs,
  constants, and IEEE-exact operators of exact values). A discontinuous
  operator (floor, round, a cast to an integer or to float16, a comparison
  choosing between unrelated branches, a logarithm's or square root's edge
  of domain) is applied only to exact values: after a product or a
  transcendental function the compiled value may differ in its last bit, and
  a step at that point would turn a rounding difference into a wrong-looking
  answer.
- special: it may hold NaN or an infinity. Special values enter through
  scalar and per-channel constants and residual inputs of epilogues, and go
  through element-wise operators, reductions and pools, whose rules are
  documented (docs/operators.md, "Edge cases"); they never reach a
  convolution or a product, whose blocked and Winograd kernels mix a tile's
  elements, so the positions of non-finite results there are not specified.
- scale: a bound on the magnitude, so that sums of huge values never land
  near float32's overflow, where the order of summation would decide between
  a finite result and an infinity.
- floor: a bound on the absolute error rounding may leave in the value: a
  result below 2^-126 keeps only the bits above 2^-149, so two correct
  computations of it may differ by a few 2^-149 steps; a product, a
  convolution or a sum rounds relative to the magnitude of its terms (its
  scale), not of its result, which cancellation can make far smaller; and a
  later step scales either up. The comparison allows each output its floor
  (fuzz.py).
"""
import dataclasses

import numpy as np

import switchyard as sy

F32 = "float32"
SPECIALS = [np.nan, np.inf, -np.inf]
# Scalar constants: ordinary, signed zeros, a denormal, huge and tiny magnitudes.
SCALARS = [0.5, 2.0, -1.0, 3.0, 0.25, -0.75, 6.0, 1e-3, 0.0, -0.0, 1e-40, 1e30, -1e25, 1e-30]
BIG = 1e20  # beyond this a value is kept away from sums (see `scale` above)
STEP = 2.0 ** -149  # the denormal step: the finest absolute rounding of a float32
EPSILON = 2.0 ** -23  # float32's relative rounding


@dataclasses.dataclass
class Value:
    expr: object
    shape: tuple
    dtype: str = F32
    exact: bool = True
    special: bool = False
    scale: float = 1.0
    floor: float = 0.0


class Graph:
    """One random graph: its inputs (with their data) and its outputs."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.RandomState(seed)
        self.params = []
        self.inputs = {}
        self.outputs = []
        self.anchor = ""
        self.name = f"g{seed}_"

    # ------------------------------------------------------------ leaves

    def chance(self, p):
        return self.rng.rand() < p

    def pick(self, options):
        return options[self.rng.randint(len(options))]

    def data(self, shape, scale, special):
        x = np.asarray(self.rng.randn(*shape) * scale, dtype=np.float32)
        if special and x.size:
            for _ in range(self.rng.randint(1, 4)):
                x.flat[self.rng.randint(x.size)] = self.pick(SPECIALS)
        return x

    def input(self, shape, scale=1.0, special=False):
        name = f"{self.name}in{len(self.params)}"
        var = sy.ir.Var(name, sy.ir.TensorType(list(shape), F32))
        self.params.append(var)
        self.inputs[name] = self.data(shape, scale, special)
        return Value(var, tuple(shape), special=special, scale=max(scale, 1.0) * 4)

    def constant(self, shape, scale=1.0, special=False):
        array = self.data(shape, scale, special)
        return Value(sy.ir.const(array), tuple(shape), special=special, scale=max(scale, 1.0) * 4)

    def literal(self, value):
        return Value(sy.ir.const(np.float32(value)), (), scale=max(abs(value), 1.0))

    def scalar(self, allow_special=True):
        if allow_special and self.chance(0.08):
            s = self.pick(SPECIALS)
        else:
            s = self.pick(SCALARS)
        special = not np.isfinite(s)
        return Value(sy.ir.const(np.float32(s)), (), special=special, scale=max(abs(s), 1.0) if not special else 1.0)

    # ------------------------------------------------------- combinators

    def call(self, op, args, shape=None, exact=None, scale=None, amplify=1.0, sums=False, **attrs):
        """A call of `op` on Values; its facts follow from its arguments.
        `amplify` bounds how much the call scales an error in its arguments;
        `sums`: it adds many terms, rounding relative to `scale`."""
        expr = op(*[a.expr for a in args], **attrs)
        exact = all(a.exact for a in args) if exact is None else exact
        scale = max(a.scale for a in args) if scale is None else scale
        return Value(expr, shape if shape is not None else args[0].shape, attrs.get("dtype", F32), exact=exact,
                     special=any(a.special for a in args), scale=scale,
                     floor=following(args, amplify, exact) + (EPSILON * scale if sums else 0.0))

    def per_channel(self, v, axis):
        """A constant broadcasting along `axis` of v, as (C, 1, ...) or (C,)."""
        channels = v.shape[axis]
        trailing = len(v.shape) - 1 - axis
        shape = (channels,) + (1,) * trailing if trailing and self.chance(0.7) else (channels,)
        if len(shape) == 1 and trailing:
            return None
        return self.constant(shape, self.pick([1.0, 1.0, 1e-3, 10.0]), special=self.chance(0.15))

    # ------------------------------------------------------------ epilogue

    def unary(self, v):
        op = self.pick(["relu", "negative", "abs", "tanh", "sigmoid", "erf", "clip", "exp", "log", "sqrt",
                        "rsqrt", "floor", "round", "cast_f16", "cast_i32"])
        o = sy.op
        if op == "relu":
            return self.call(o.nn.relu, [v])
        if op == "negative":
            return self.call(o.negative, [v])
        if op == "abs":
            return self.call(o.abs, [v])
        if op in ("tanh", "sigmoid", "erf"):
            return self.call(getattr(o, op), [v], exact=False, scale=1.0)
        if op == "clip":
            lo = float(self.pick([0.0, -1.0, -6.0, 0.5]))
            hi = lo + float(self.pick([1.0, 6.0, 0.0, 2.5]))
            return self.call(o.clip, [v], a_min=lo, a_max=hi, scale=max(abs(lo), abs(hi), 1.0))
        if op == "exp":
            bounded = self.call(o.clip, [v], a_min=-30.0, a_max=30.0)
            return self.call(o.exp, [bounded], exact=False, scale=1e14, amplify=1e14)
        if op in ("log", "sqrt", "rsqrt"):
            # Away from the edge of the domain unless the value is exact.
            positive = self.call(o.abs, [v])
            if not v.exact or self.chance(0.5):
                positive = self.call(o.add, [positive, self.literal(1.0)], exact=False)
            if op == "log" and not v.exact:
                return self.call(o.log, [positive], exact=False, scale=100.0)
            return self.call(getattr(o, op) if op != "log" else o.log, [positive], exact=False,
                             scale=max(v.scale, 1.0) ** 0.5 + 100)
        if not v.exact:  # the discontinuous ones below need an exact value
            return self.call(o.nn.relu, [v])
        if op in ("floor", "round"):
            return self.call(getattr(o, op), [v])
        if op == "cast_f16":
            if v.scale > 6e4 or v.special:
                return self.call(o.abs, [v])
            narrow = self.call(o.cast, [v], dtype="float16")
            return self.call(o.cast, [narrow], dtype=F32)
        # cast_i32: saturation of huge and special values is documented too.
        narrow = self.call(o.cast, [v], dtype="int32")
        return self.call(o.cast, [narrow], dtype=F32)

    def binary_side(self, v, channel_axis):
        """A second operand for v: a scalar, a per-channel constant, a
        residual input of v's shape, or an input broadcasting along one axis."""
        kind = self.pick(["scalar", "scalar", "channel", "residual", "broadcast"])
        if kind == "channel" and channel_axis is not None:
            side = self.per_channel(v, channel_axis)
            if side is not None:
                return side
        if kind == "residual" and v.shape:
            return self.input(v.shape, self.pick([1.0, 1.0, 1e3]), special=self.chance(0.25))
        if kind == "broadcast" and len(v.shape) >= 2:
            shape = list(v.shape)
            for d in range(len(shape)):
                if d != channel_axis and self.chance(0.6):
                    shape[d] = 1
            return self.input(tuple(shape), 1.0, special=self.chance(0.2))
        return self.scalar()

    def binary(self, v, channel_axis):
        side = self.binary_side(v, channel_axis)
        op = self.pick(["add", "add", "multiply", "multiply", "subtract", "divide", "maximum", "minimum",
                        "bias_add"])
        o = sy.op
        if op == "bias_add" and channel_axis is not None and len(side.shape) == 1 and side.shape[0] == \
                v.shape[channel_axis]:
            return self.call(o.nn.bias_add, [v, side], axis=channel_axis)
        if op == "bias_add":
            op = "add"
        if side.special and op in ("multiply", "divide") and not v.exact:
            side = self.scalar(allow_special=False)  # inf * x takes x's sign, which rounding may flip near 0
        first, second = (v, side) if self.chance(0.6) else (side, v)
        if op == "divide" and not (first.exact and second.exact):
            # A divisor away from zero unless both are exact (x / 0 is a signed
            # infinity, and a rounding difference must not decide its sign).
            second = self.call(o.add, [self.call(o.abs, [second]), self.literal(1.0)], exact=False)
        shape = tuple(np.broadcast_shapes(first.shape, second.shape))
        product = op in ("multiply", "divide")
        result = self.call(getattr(o, op), [first, second], shape=shape,
                           scale=first.scale * second.scale if product else first.scale + second.scale,
                           amplify=max(first.scale, second.scale) if product else 1.0)
        # The compiler may fold two steps by constants into one, or a division
        # by a constant into a product: exact no longer.
        if op == "divide" or (op != "maximum" and op != "minimum" and (is_constant(first) or is_constant(second))):
            result.exact = False
        return result

    def pattern(self, v):
        """The multi-use epilogues networks have: swish, hard swish, leaky
        relu as a select, exact GELU."""
        o = sy.op
        kind = self.pick(["swish", "hardswish", "leaky", "gelu"])
        if kind == "swish":
            return self.call(o.multiply, [v, self.call(o.sigmoid, [v])], exact=False, amplify=max(v.scale, 1.0))
        if kind == "hardswish":
            gate = Value(o.add(o.divide(v.expr, sy.ir.const(np.float32(6))), sy.ir.const(np.float32(0.5))), v.shape,
                         exact=False, special=v.special, scale=v.scale, floor=following([v], 1.0))
            gate = self.call(o.clip, [gate], a_min=0.0, a_max=1.0, scale=1.0)
            return self.call(o.multiply, [v, gate], exact=False, amplify=max(v.scale, 1.0))
        if kind == "leaky":
            negative_side = Value(o.multiply(v.expr, sy.ir.const(np.float32(0.1))), v.shape, exact=False,
                                  special=v.special, scale=v.scale)
            condition = Value(o.greater(v.expr, sy.ir.const(np.float32(0))), v.shape, "bool", v.exact, v.special)
            return Value(o.where(condition.expr, v.expr, negative_side.expr), v.shape, exact=False,
                         special=v.special, scale=v.scale, floor=following([v], 1.0))
        scaled = o.erf(o.divide(v.expr, sy.ir.const(np.float32(1.4142135))))
        gelu = o.multiply(o.multiply(v.expr, o.add(scaled, sy.ir.const(np.float32(1)))),
                          sy.ir.const(np.float32(0.5)))
        return Value(gelu, v.shape, exact=False, special=v.special, scale=v.scale,
                     floor=following([v], max(v.scale, 2.0)))

    def layout(self, v, channel_axis):
        """An injective step: a transpose, a reshape, a slice, a
        concatenation with a function of itself; returns (value, channel axis)."""
        o = sy.op
        rank = len(v.shape)
        kind = self.pick(["transpose", "reshape", "slice", "concat", "expand_squeeze"])
        if kind == "transpose" and rank >= 2:
            axes = list(self.rng.permutation(rank))
            shape = tuple(v.shape[a] for a in axes)
            moved = axes.index(channel_axis) if channel_axis is not None else None
            return self.call(o.transpose, [v], shape=shape, axes=[int(a) for a in axes]), moved
        if kind == "reshape" and rank >= 3:
            shape = v.shape[:2] + (int(np.prod(v.shape[2:])),)
            keeps = channel_axis if channel_axis is not None and channel_axis < 2 else None
            return self.call(o.reshape, [v], shape=shape, newshape=list(shape)), keeps
        if kind == "slice" and rank >= 1 and channel_axis is not None and v.shape[channel_axis] > 1:
            extent = v.shape[channel_axis]
            begin = int(self.rng.randint(0, extent - 1))
            end = int(self.rng.randint(begin + 1, extent + 1))
            shape = list(v.shape)
            shape[channel_axis] = end - begin
            return self.call(o.strided_slice, [v], shape=tuple(shape), begin=[begin], end=[end],
                             axes=[channel_axis]), channel_axis
        if kind == "concat" and rank >= 1:
            axis = channel_axis if channel_axis is not None else 0
            other = self.unary(v)
            shape = list(v.shape)
            shape[axis] *= 2
            expr = o.concatenate(sy.ir.Tuple([v.expr, other.expr]), axis=axis)
            return Value(expr, tuple(shape), exact=v.exact and other.exact, special=v.special or other.special,
                         scale=max(v.scale, other.scale), floor=max(v.floor, other.floor)), channel_axis
        if kind == "expand_squeeze":
            expanded = self.call(o.expand_dims, [v], shape=(1,) + v.shape, axis=0)
            return self.call(o.squeeze, [expanded], shape=v.shape, axis=[0]), channel_axis
        return v, channel_axis

    def epilogue(self, v, channel_axis, steps):
        for _ in range(steps):
            kind = self.pick(["unary", "unary", "binary", "binary", "binary", "pattern", "layout"])
            if kind == "unary":
                v = self.unary(v)
            elif kind == "binary":
                v = self.binary(v, channel_axis)
            elif kind == "pattern":
                v = self.pattern(v)
            else:
                v, channel_axis = self.layout(v, channel_axis)
            if self.chance(0.1):
                self.outputs.append(v)  # an intermediate value read outside the kernel too
        return v, channel_axis

    def prologue(self, v, steps):
        """Exact, finite steps before an anchor (they fuse into its input)."""
        o = sy.op
        for _ in range(steps):
            kind = self.pick(["relu", "abs", "clip", "scale", "floor", "tanh"])
            if kind == "relu":
                v = self.call(o.nn.relu, [v])
            elif kind == "abs":
                v = self.call(o.abs, [v])
            elif kind == "clip":
                v = self.call(o.clip, [v], a_min=-2.0, a_max=2.0, scale=2.0)
            elif kind == "scale":
                v = self.call(o.multiply, [v, self.constant((), 1.0)], exact=False)
            elif kind == "floor" and v.exact:
                v = self.call(o.floor, [v])
            else:
                v = self.call(o.tanh, [v], exact=False, scale=1.0)
        return v

    # ------------------------------------------------------------ anchors

    def activation_scale(self):
        return self.pick([1.0, 1.0, 1.0, 1.0, 1e-39, 1e-20, 1e12])

    def image(self):
        n = self.pick([1, 1, 1, 2, 3])
        c = self.pick([1, 3, 4, 5, 8, 12, 16, 17, 20, 24, 32, 48])
        h = self.pick([1, 2, 5, 7, 8, 13, 14, 16])
        w = h if self.chance(0.7) else self.pick([1, 3, 6, 9, 14])
        return n, c, h, w

    def conv(self, x):
        o = sy.op
        n, c, h, w = x.shape
        groups = 1
        if self.chance(0.35):
            divisors = [g for g in range(2, c + 1) if c % g == 0]
            if divisors:
                groups = c if self.chance(0.5) else self.pick(divisors)
        per_group_out = self.pick([1, 2, 3, 4, 8]) if groups > 1 else 1
        out = groups * per_group_out if groups > 1 else self.pick([1, 4, 6, 8, 13, 16, 32, 40])
        kh, kw = self.pick([(1, 1), (3, 3), (3, 3), (1, 3), (3, 1), (5, 5), (2, 2), (1, 7)])
        stride = self.pick([1, 1, 1, 2])
        dilation = self.pick([1, 1, 1, 2])
        pads = [int(self.rng.randint(0, max(k, 1))) for k in (kh, kw, kh, kw)]
        if self.chance(0.5):
            pads = [(kh - 1) // 2 * dilation, (kw - 1) // 2 * dilation] * 2
        window_h, window_w = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
        if h + pads[0] + pads[2] < window_h or w + pads[1] + pads[3] < window_w:
            pads = [window_h, window_w, window_h, window_w]
        oh = (h + pads[0] + pads[2] - window_h) // stride + 1
        ow = (w + pads[1] + pads[3] - window_w) // stride + 1
        weights = self.constant((out, c // groups, kh, kw), self.pick([0.3, 0.3, 1e-3, 30.0]))
        if self.chance(0.1):
            weights = self.input(weights.shape, 0.3)
        self.anchor = f"conv{kh}x{kw}/g{groups}/s{stride}/d{dilation}"
        terms = c // groups * kh * kw
        y = self.call(o.nn.conv2d, [x, weights], shape=(n, out, oh, ow), exact=False,
                      scale=x.scale * weights.scale * c * kh * kw, amplify=weights.scale * terms, sums=True,
                      strides=[stride, stride],
                      dilation=[dilation, dilation], padding=pads, groups=groups)
        return y, 1

    def same_size_conv(self, x, out, k):
        """A k x k convolution to `out` channels keeping x's image size."""
        n, c, h, w = x.shape
        weights = self.constant((out, c, k, k), 0.3)
        y = self.call(sy.op.nn.conv2d, [x, weights], shape=(n, out, h, w), exact=False,
                      scale=x.scale * weights.scale * c * k * k, amplify=weights.scale * c * k * k, sums=True,
                      padding=[k // 2] * 4)
        return self.call(sy.op.nn.relu, [y]) if self.chance(0.7) else y

    def branches(self, x):
        """Two to four convolutions of x joined along the channels, sometimes
        with DenseNet's per-channel scale and ReLU after: the parts' layout
        decides the joined value's."""
        parts = [x] if self.chance(0.3) else []
        for _ in range(self.rng.randint(2, 5) - len(parts)):
            parts.append(self.same_size_conv(x, self.pick([8, 13, 16, 32]), self.pick([1, 3])))
        shape = (x.shape[0], sum(p.shape[1] for p in parts)) + x.shape[2:]
        expr = sy.op.concatenate(sy.ir.Tuple([p.expr for p in parts]), axis=1)
        y = Value(expr, shape, exact=all(p.exact for p in parts), special=any(p.special for p in parts),
                  scale=max(p.scale for p in parts), floor=max(p.floor for p in parts))
        if self.chance(0.5):
            scale = self.constant((shape[1], 1, 1), 1.0)
            y = self.call(sy.op.nn.relu, [self.call(sy.op.multiply, [y, scale], amplify=1.0)])
        return y

    def product(self, x_shape_hint):
        o = sy.op
        kind = self.pick(["dense", "matmul", "matmul3", "batch_matmul"])
        k = self.pick([1, 3, 8, 16, 17, 64])
        n = self.pick([1, 5, 8, 16, 33])
        m = self.pick([1, 2, 4, 7])
        scale = self.activation_scale()
        if kind == "dense":
            x = self.prologue(self.input(self.pick([(m, k), (2, m, k)]), scale), self.rng.randint(0, 3))
            w = self.constant((n, k), 0.3)
            self.anchor = "dense"
            return self.call(o.nn.dense, [x, w], shape=x.shape[:-1] + (n,), exact=False, scale=x.scale * k,
                             amplify=w.scale * k, sums=True), None
        if kind in ("matmul", "matmul3"):
            a_shape = (m, k) if kind == "matmul" else (self.pick([2, 3]), m, k)
            a = self.prologue(self.input(a_shape, scale), self.rng.randint(0, 3))
            b = self.constant((k, n), 0.3) if self.chance(0.7) else self.input((k, n), 0.3)
            self.anchor = kind
            return self.call(o.matmul, [a, b], shape=a_shape[:-1] + (n,), exact=False, scale=a.scale * k,
                             amplify=b.scale * k, sums=True), None
        batch = self.pick([1, 2, 4])
        transpose_b = self.chance(0.6)
        a = self.prologue(self.input((batch, m, k), scale), self.rng.randint(0, 3))
        b_shape = (batch, n, k) if transpose_b else (batch, k, n)
        b = self.input(b_shape, 0.3) if self.chance(0.6) else self.constant(b_shape, 0.3)
        self.anchor = "batch_matmul"
        return self.call(o.nn.batch_matmul, [a, b], shape=(batch, m, n), exact=False, scale=a.scale * k,
                         amplify=b.scale * k, sums=True,
                         transpose_b=transpose_b), None

    def pool(self, x):
        o = sy.op
        n, c, h, w = x.shape
        kind = self.pick(["max", "avg", "global"])
        if kind == "global":
            self.anchor = "global_avg_pool"
            return self.call(o.nn.global_avg_pool2d, [x], shape=(n, c, 1, 1), exact=False), 1
        size = self.pick([1, 2, 3])
        size = min(size, h, w)
        stride = self.pick([1, 2])
        pad = int(self.rng.randint(0, size // 2 + 1)) if size > 1 else 0
        ceil_mode = self.chance(0.4)
        extent = []
        for d in (h, w):
            span = d + 2 * pad - size
            extent.append((-(-span // stride) if ceil_mode else span // stride) + 1)
        attrs = dict(pool_size=[size, size], strides=[stride, stride], padding=[pad, pad, pad, pad],
                     ceil_mode=ceil_mode)
        if kind == "max":
            self.anchor = f"max_pool{size}/s{stride}/p{pad}/ceil{int(ceil_mode)}"
            return self.call(o.nn.max_pool2d, [x], shape=(n, c, *extent), exact=x.exact, **attrs), 1
        include = self.chance(0.5)
        self.anchor = f"avg_pool{size}/s{stride}/p{pad}/ceil{int(ceil_mode)}/incl{int(include)}"
        return self.call(o.nn.avg_pool2d, [x], shape=(n, c, *extent), exact=False, count_include_pad=include,
                         **attrs), 1

    def normalisation(self, x):
        o = sy.op
        kind = self.pick(["softmax", "layer_norm", "batch_norm", "sum", "mean", "max"])
        rank = len(x.shape)
        if kind == "softmax":
            axis = int(self.rng.randint(-rank, rank))
            self.anchor = f"softmax/axis{axis}"
            return self.call(o.nn.softmax, [x], exact=False, scale=1.0, axis=axis), 1
        if kind == "layer_norm":
            c = x.shape[-1]
            gamma, beta = self.constant((c,), 1.0), self.constant((c,), 1.0)
            self.anchor = "layer_norm"
            # 1 / sqrt(variance + 1e-5) scales an error by at most 316.
            return self.call(o.nn.layer_norm, [x, gamma, beta], exact=False, scale=10.0 * gamma.scale,
                             amplify=316 * gamma.scale), 1
        if kind == "batch_norm":
            c = x.shape[1]
            gamma, beta, mean = (self.constant((c,), 1.0) for _ in range(3))
            variance = Value(sy.ir.const(self.rng.rand(c).astype(np.float32) + 0.5), (c,))
            expr = o.nn.batch_norm(x.expr, gamma.expr, beta.expr, mean.expr, variance.expr)
            self.anchor = "batch_norm"
            return Value(sy.ir.TupleGetItem(expr, 0), x.shape, exact=False, special=x.special,
                         floor=following([x], 10 * gamma.scale),
                         scale=x.scale * 10), 1
        axes = sorted(set(int(a) for a in self.rng.choice(rank, self.rng.randint(1, rank + 1), replace=False)))
        keepdims = self.chance(0.5)
        shape = tuple(1 if d in axes else s for d, s in enumerate(x.shape)) if keepdims else \
            tuple(s for d, s in enumerate(x.shape) if d not in axes)
        channel = 1 if (keepdims or 0 not in axes) and 1 not in axes else None
        if channel is not None and not keepdims:
            channel = 1 - sum(1 for a in axes if a < 1)
        self.anchor = f"{kind}/axes{axes}/keep{int(keepdims)}"
        count = int(np.prod([x.shape[a] for a in axes]))
        return self.call(getattr(o, kind), [x], shape=shape, exact=False,
                         scale=x.scale * (count if kind == "sum" else 1), amplify=count if kind == "sum" else 1.0,
                         sums=kind != "max",
                         axis=axes, keepdims=keepdims), channel

    # -------------------------------------------------------------- a graph

    def build(self):
        family = self.pick(["conv", "conv", "conv", "product", "product", "pool", "normalisation"])
        if family == "product":
            y, channel_axis = self.product(None)
        else:
            special = family != "conv" and self.chance(0.3)
            x = self.input(self.image(), self.activation_scale() if family == "conv" else 1.0, special=special)
            x = self.prologue(x, self.rng.randint(0, 3))
            y, channel_axis = getattr(self, {"conv": "conv", "pool": "pool", "normalisation": "normalisation"}[family])(x)
        y, channel_axis = self.epilogue(y, channel_axis, self.rng.randint(1, 6))
        # A second convolution reading the first one's epilogue, sometimes with
        # a residual: the ResNet block's pair of primitives; or two branches
        # joined along the channels before it (Inception's, DenseNet's).
        if family == "conv" and len(y.shape) == 4 and not y.special and y.scale < BIG and self.chance(0.3):
            if channel_axis == 1 and self.chance(0.5):
                y = self.branches(y)
            y, channel_axis = self.conv(y)
            y, channel_axis = self.epilogue(y, channel_axis, self.rng.randint(1, 4))
        self.outputs.append(y)
        return self


def following(args, amplify, exact=False):
    """The floor of a value computed from `args` (see the module's doc)."""
    return sum(a.floor for a in args) * amplify + (0.0 if exact else 8 * STEP)


def is_constant(v):
    return isinstance(v.expr, sy.ir.Constant)


def graph(seed):
    """The graph numbered `seed`."""
    return Graph(seed).build()


def module_of(graphs):
    """One module computing every graph: their inputs side by side, their
    outputs as one tuple."""
    params = [p for g in graphs for p in g.params]
    outputs = [v.expr for g in graphs for v in g.outputs]
    body = outputs[0] if len(outputs) == 1 else sy.ir.Tuple(outputs)
    return sy.IRModule({"main": sy.ir.Function(params, body)})
