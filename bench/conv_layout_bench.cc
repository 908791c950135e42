// Which activation layout oneDNN computes a convolution fastest in, for the
// choice layout planning makes (src/backend/layout_plan.cc): 16-channel
// blocks (nChw16c) or channels last (nhwc), on ResNet's 3x3 layers that run
// direct (stride 2, or 7x7 outputs) and MobileNetV2's depthwise ones. One
// thread, bias and ReLU fused; the label is oneDNN's implementation.
//
//   build/bin/conv_layout_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include <dnnl.hpp>
#include <unordered_map>

namespace {

using Tag = dnnl::memory::format_tag;

// Input channels, output channels, input size, stride, groups.
struct Shape {
  int64_t in, out, size, stride, groups;
};

constexpr Shape kShapes[] = {
    {128, 128, 56, 2, 1},  // ResNet-50 layer2.0 conv2
    {256, 256, 28, 2, 1},  // layer3.0 conv2
    {512, 512, 14, 2, 1},  // layer4.0 conv2
    {512, 512, 7, 1, 1},   // layer4.1 conv2
    {96, 96, 112, 2, 96},  // MobileNetV2 features.2 depthwise
    {144, 144, 56, 1, 144},  // features.3 depthwise
};

void BM_Conv3x3(benchmark::State& state, Tag layout) {
  const Shape& s = kShapes[state.range(0)];
  omp_set_num_threads(1);
  const auto f32 = dnnl::memory::data_type::f32;
  const int64_t out_size = (s.size + 2 - 3) / s.stride + 1;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc src({1, s.in, s.size, s.size}, f32, layout), dst({1, s.out, out_size, out_size}, f32, layout);
  dnnl::memory::dims weights = s.groups == 1 ? dnnl::memory::dims{s.out, s.in, 3, 3}
                                             : dnnl::memory::dims{s.groups, s.out / s.groups, s.in / s.groups, 3, 3};
  dnnl::convolution_forward::desc operation(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            src, {weights, f32, Tag::any}, {{s.out}, f32, Tag::x}, dst,
                                            {s.stride, s.stride}, {0, 0}, {1, 1}, {1, 1});
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
  const double flops = 2.0 * double(s.out) * double(s.in / s.groups) * 9 * double(out_size * out_size);
  state.counters["GFLOPs"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < int(std::size(kShapes)); ++i) b->Arg(i);
}

BENCHMARK_CAPTURE(BM_Conv3x3, blocks16, Tag::nChw16c)->Apply(shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv3x3, channels_last, Tag::nhwc)->Apply(shapes)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
