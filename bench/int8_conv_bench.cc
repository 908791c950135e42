// What Debian's oneDNN 2.6 computes for an int8 convolution as a QDQ model
// needs it (docs/operators.md, "int8"), and how fast against float32:
// uint8 source with a zero point, int8 weights (zero point 0) with one
// output scale per channel (x_scale * w_scale[c] / y_scale), bias, ReLU and
// a uint8 destination with a zero point. Before the benchmarks it prints,
// against an exact integer reference of ONNX's formula
// saturate(round_half_to_even((accumulator + bias) * scale) + y_zero_point):
// how many elements agree and the largest difference (in quanta), on
// random data and on values that land exactly on halves; and whether the
// padding counts as the source's zero point (a real 0), as ONNX's does.
//
//   build/bin/int8_conv_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dnnl.hpp>
#include <random>
#include <vector>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

// A square convolution with "same" padding.
struct Geometry {
  int64_t in, out, size, window, stride;
  int64_t padding() const { return window / 2; }
  int64_t out_size() const { return (size + 2 * padding() - window) / stride + 1; }
};

struct Int8Problem {
  Geometry g;
  std::vector<uint8_t> src;
  std::vector<int8_t> weights;
  std::vector<float> bias, scales;  // bias holds integers (an int32 QDQ bias)
  int32_t src_zero_point = 0, dst_zero_point = 0;
  bool relu = false;
};

// The convolution of Int8Problem as oneDNN makes it: plain NCHW/OIHW in
// and out, or oneDNN's choice (`any`) with reorders left to the caller.
struct Int8Convolution {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::convolution_forward::primitive_desc description;
  dnnl::convolution_forward primitive;

  Int8Convolution(const Int8Problem& p, Tag activations) {
    const Geometry& g = p.g;
    memory::desc src({1, g.in, g.size, g.size}, Type::u8, activations);
    memory::desc weights({g.out, g.in, g.window, g.window}, Type::s8, activations == Tag::any ? Tag::any : Tag::oihw);
    memory::desc bias({g.out}, Type::f32, Tag::x);
    memory::desc dst({1, g.out, g.out_size(), g.out_size()}, Type::u8, activations);
    dnnl::primitive_attr attr;
    attr.set_output_scales(p.scales.size() > 1 ? 1 << 1 : 0, p.scales);
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
    if (p.relu) {
      dnnl::post_ops posts;
      posts.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0, 0);
      attr.set_post_ops(posts);
    }
    int64_t pad = g.padding();
    dnnl::convolution_forward::desc operation(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                              src, weights, bias, dst, {g.stride, g.stride}, {0, 0}, {pad, pad},
                                              {pad, pad});
    description = dnnl::convolution_forward::primitive_desc(operation, attr, engine);
    primitive = dnnl::convolution_forward(description);
  }

  // Runs on plain NCHW/OIHW buffers (the primitive made with plain layouts).
  std::vector<uint8_t> run(const Int8Problem& p) {
    const Geometry& g = p.g;
    std::vector<uint8_t> out(size_t(g.out * g.out_size() * g.out_size()));
    int32_t src_zero_point = p.src_zero_point, dst_zero_point = p.dst_zero_point;
    memory::desc zero_point_desc({1}, Type::s32, Tag::x);
    memory src(description.src_desc(), engine, const_cast<uint8_t*>(p.src.data()));
    memory weights(description.weights_desc(), engine, const_cast<int8_t*>(p.weights.data()));
    memory bias(description.bias_desc(), engine, const_cast<float*>(p.bias.data()));
    memory dst(description.dst_desc(), engine, out.data());
    memory src_zero(zero_point_desc, engine, &src_zero_point), dst_zero(zero_point_desc, engine, &dst_zero_point);
    primitive.execute(stream, {{DNNL_ARG_SRC, src},
                               {DNNL_ARG_WEIGHTS, weights},
                               {DNNL_ARG_BIAS, bias},
                               {DNNL_ARG_DST, dst},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, src_zero},
                               {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, dst_zero}});
    stream.wait();
    return out;
  }
};

// ONNX's result, exactly: the accumulator of (x - x_zero_point) padded with
// real zeros, plus bias, times the scale in float64, rounded half to even,
// plus the zero point, saturated.
std::vector<uint8_t> reference(const Int8Problem& p) {
  const Geometry& g = p.g;
  int64_t o_size = g.out_size(), pad = g.padding();
  std::vector<uint8_t> out(size_t(g.out * o_size * o_size));
  for (int64_t oc = 0; oc < g.out; ++oc)
    for (int64_t oy = 0; oy < o_size; ++oy)
      for (int64_t ox = 0; ox < o_size; ++ox) {
        int64_t acc = 0;
        for (int64_t ic = 0; ic < g.in; ++ic)
          for (int64_t ky = 0; ky < g.window; ++ky)
            for (int64_t kx = 0; kx < g.window; ++kx) {
              int64_t y = oy * g.stride + ky - pad, x = ox * g.stride + kx - pad;
              if (y < 0 || x < 0 || y >= g.size || x >= g.size) continue;
              int64_t s = int64_t(p.src[size_t((ic * g.size + y) * g.size + x)]) - p.src_zero_point;
              acc += s * p.weights[size_t(((oc * g.in + ic) * g.window + ky) * g.window + kx)];
            }
        double scale = p.scales[p.scales.size() > 1 ? size_t(oc) : 0];
        double v = (double(acc) + p.bias[size_t(oc)]) * scale;
        if (p.relu) v = std::max(v, 0.0);
        double q = std::nearbyint(v) + p.dst_zero_point;  // the default rounding: half to even
        out[size_t((oc * o_size + oy) * o_size + ox)] = uint8_t(std::clamp(q, 0.0, 255.0));
      }
  return out;
}

Int8Problem random_problem(Geometry g, bool relu, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127), bias(-20000, 20000);
  std::uniform_real_distribution<float> scale(0.5e-4f, 2e-4f);
  Int8Problem p{g, {}, {}, {}, {}, 117, 9, relu};
  p.src.resize(size_t(g.in * g.size * g.size));
  for (auto& v : p.src) v = uint8_t(byte(rng));
  p.weights.resize(size_t(g.out * g.in * g.window * g.window));
  for (auto& v : p.weights) v = int8_t(weight(rng));
  for (int64_t c = 0; c < g.out; ++c) {
    p.bias.push_back(float(bias(rng)));
    p.scales.push_back(scale(rng));
  }
  return p;
}

// Ties: one input channel, a 1x1 window, weight 1 and scale 0.5, so that
// every odd accumulator lands on a half; an odd destination zero point
// tells rounding before adding it (ONNX) from rounding after.
Int8Problem halves_problem(int32_t dst_zero_point) {
  Geometry g{1, 1, 16, 1, 1};
  Int8Problem p{g, {}, {1}, {0}, {0.5f}, 0, dst_zero_point, false};
  for (int v = 0; v < 256; ++v) p.src.push_back(uint8_t(v));
  return p;
}

void report(const char* what, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  size_t equal = 0;
  int largest = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    int d = std::abs(int(got[i]) - int(want[i]));
    equal += d == 0;
    largest = std::max(largest, d);
  }
  std::printf("%-58s %zu of %zu equal, largest difference %d quantum\n", what, equal, got.size(), largest);
}

void check_numerics() {
  omp_set_num_threads(1);
  for (bool relu : {false, true}) {
    for (Geometry g : {Geometry{64, 64, 14, 3, 1}, Geometry{32, 48, 15, 3, 2}}) {
      Int8Problem p = random_problem(g, relu, 7);
      char what[128];
      std::snprintf(what, sizeof what, "random %ldx%ld %ldx%ld stride %ld%s:", long(g.in), long(g.out), long(g.size),
                    long(g.size), long(g.stride), relu ? " relu" : "");
      Int8Convolution conv(p, Tag::nchw);
      report(what, conv.run(p), reference(p));
    }
  }
  Int8Problem p = random_problem({16, 16, 9, 3, 1}, false, 3);
  for (auto& v : p.src) v = uint8_t(p.src_zero_point);  // a real zero everywhere, but one corner
  p.src[0] = 255;
  report("zero point padding (a real 0 but one corner):", Int8Convolution(p, Tag::nchw).run(p), reference(p));
  for (int32_t zero_point : {10, 11}) {
    Int8Problem halves = halves_problem(zero_point);
    char what[128];
    std::snprintf(what, sizeof what, "exact halves, destination zero point %d:", zero_point);
    report(what, Int8Convolution(halves, Tag::nchw).run(halves), reference(halves));
  }
  std::printf("implementation: %s\n", Int8Convolution(random_problem({64, 64, 14, 3, 1}, true, 7), Tag::any)
                                          .description.impl_info_str());
}

// ResNet-50's 3x3 and 1x1 layers at 1 thread, each in the layouts oneDNN
// chooses: int8 against float32 (no reorders timed).
constexpr Geometry kShapes[] = {{64, 64, 56, 3, 1}, {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {256, 64, 56, 1, 1}};

void int8_convolution(benchmark::State& state) {
  omp_set_num_threads(1);
  const Geometry& g = kShapes[state.range(0)];
  Int8Problem p = random_problem(g, true, 1);
  Int8Convolution conv(p, Tag::any);
  dnnl::memory src(conv.description.src_desc(), conv.engine), weights(conv.description.weights_desc(), conv.engine);
  dnnl::memory bias(conv.description.bias_desc(), conv.engine), dst(conv.description.dst_desc(), conv.engine);
  std::memset(src.get_data_handle(), 1, conv.description.src_desc().get_size());
  std::memset(weights.get_data_handle(), 1, conv.description.weights_desc().get_size());
  std::memset(bias.get_data_handle(), 0, conv.description.bias_desc().get_size());
  int32_t zero_point = 3;
  dnnl::memory zero(dnnl::memory::desc({1}, Type::s32, Tag::x), conv.engine, &zero_point);
  dnnl::memory scratch(conv.description.scratchpad_desc(), conv.engine);
  for (auto _ : state)
    conv.primitive.execute(conv.stream, {{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_WEIGHTS, weights},
                                         {DNNL_ARG_BIAS, bias},
                                         {DNNL_ARG_DST, dst},
                                         {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero},
                                         {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zero}});
  state.SetLabel(conv.description.impl_info_str());
}

void float_convolution(benchmark::State& state) {
  omp_set_num_threads(1);
  const Geometry& g = kShapes[state.range(0)];
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::desc src({1, g.in, g.size, g.size}, Type::f32, Tag::any);
  memory::desc weights({g.out, g.in, g.window, g.window}, Type::f32, Tag::any);
  memory::desc bias({g.out}, Type::f32, Tag::x);
  memory::desc dst({1, g.out, g.out_size(), g.out_size()}, Type::f32, Tag::any);
  dnnl::post_ops posts;
  posts.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0, 0);
  dnnl::primitive_attr attr;
  attr.set_post_ops(posts);
  int64_t pad = g.padding();
  dnnl::convolution_forward::primitive_desc description(
      {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights, bias, dst,
       {g.stride, g.stride}, {0, 0}, {pad, pad}, {pad, pad}},
      attr, engine);
  dnnl::convolution_forward primitive(description);
  dnnl::memory s(description.src_desc(), engine), w(description.weights_desc(), engine);
  dnnl::memory b(description.bias_desc(), engine), d(description.dst_desc(), engine);
  for (dnnl::memory* m : {&s, &w, &b}) std::memset(m->get_data_handle(), 0, m->get_desc().get_size());
  for (auto _ : state)
    primitive.execute(stream, {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, d}});
  state.SetLabel(description.impl_info_str());
}

BENCHMARK(int8_convolution)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);
BENCHMARK(float_convolution)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  check_numerics();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
