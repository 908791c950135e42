// Which activation layout oneDNN computes a convolution fastest in, for the
// choice layout planning makes (src/layout/plan_layouts.cc): 16-channel
// blocks (nChw16c) or channels last (nhwc), on ResNet's 3x3 layers that run
// direct (stride 2, or 7x7 outputs), its strided 1x1 downsamples and
// MobileNetV2's depthwise layers. One thread, bias and ReLU fused; the
// label is oneDNN's implementation.
//
//   build/bin/conv_layout_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include <dnnl.hpp>
#include <unordered_map>

namespace {

using Tag = dnnl::memory::format_tag;

// Input channels, output channels, input size, window, stride, groups.
struct Shape {
  int64_t in, out, size, window, stride, groups;
};

constexpr Shape kShapes[] = {
    {128, 128, 56, 3, 2, 1},    // ResNet-50 layer2.0 conv2
    {256, 256, 28, 3, 2, 1},    // layer3.0 conv2
    {512, 512, 14, 3, 2, 1},    // layer4.0 conv2
    {512, 512, 7, 3, 1, 1},     // layer4.1 conv2
    {256, 512, 56, 1, 2, 1},    // layer2.0 downsample
    {512, 1024, 28, 1, 2, 1},   // layer3.0 downsample
    {1024, 2048, 14, 1, 2, 1},  // layer4.0 downsample
    {96, 96, 112, 3, 2, 96},    // MobileNetV2 features.2 depthwise
    {144, 144, 56, 3, 1, 144},  // features.3 depthwise
};

void BM_Conv(benchmark::State& state, Tag layout) {
  const Shape& s = kShapes[state.range(0)];
  omp_set_num_threads(1);
  const auto f32 = dnnl::memory::data_type::f32;
  const int64_t pad = s.window / 2, out_size = (s.size + 2 * pad - s.window) / s.stride + 1;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc src({1, s.in, s.size, s.size}, f32, layout), dst({1, s.out, out_size, out_size}, f32, layout);
  const int64_t k = s.window;
  dnnl::memory::dims weights = s.groups == 1 ? dnnl::memory::dims{s.out, s.in, k, k}
                                             : dnnl::memory::dims{s.groups, s.out / s.groups, s.in / s.groups, k, k};
  dnnl::convolution_forward::desc operation(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            src, {weights, f32, Tag::any}, {{s.out}, f32, Tag::x}, dst,
                                            {s.stride, s.stride}, {0, 0}, {pad, pad}, {pad, pad});
  dnnl::post_ops relu;
  relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(relu);
  dnnl::convolution_forward::primitive_desc description(operation, attr, engine);
  dnnl::memory x(description.src_desc(), engine), w(description.weights_desc(), engine),
      b(description.bias_desc(), engine), y(description.dst_desc(), engine);
  for (dnnl::memory* m : {&x, &w, &b}) {
    float* data = static_cast<float*>(m->get_data_handle());
    for (size_t i = 0; i < m->get_desc().get_size() / sizeof(float); ++i) data[i] = float(i % 7) * 0.125f - 0.375f;
  }
  dnnl::convolution_forward primitive(description);
  std::unordered_map<int, dnnl::memory> arguments{
      {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, y}};
  for (auto _ : state) {
    primitive.execute(stream, arguments);
    stream.wait();
  }
  state.SetLabel(description.impl_info_str());
  const double flops = 2.0 * double(s.out) * double(s.in / s.groups) * double(k * k * out_size * out_size);
  state.counters["GFLOPs"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < int(std::size(kShapes)); ++i) b->Arg(i);
}

BENCHMARK_CAPTURE(BM_Conv, blocks16, Tag::nChw16c)->Apply(shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv, channels_last, Tag::nhwc)->Apply(shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
