// The generated plan and call of a oneDNN anchor kernel. The plan holds the
// memory descriptors (fixed at build time) and one primitive per thread
// count: oneDNN fixes how a primitive splits its work among threads when it
// is made, and Debian's oneDNN runs on OpenMP threads of its own, so each
// call sets OpenMP's thread count to its device's share first. Weights may
// be in a layout oneDNN chose (format any, much faster than plain OIHW): a
// constant weight is reordered once per address and the copy kept; a
// computed one is reordered every call. Each run makes its own stream and
// scratchpad, so concurrent runs share only what the plan's mutexes guard.
#include "backend/cpu_dnnl.h"
#include "op/registry.h"

namespace switchyard {

namespace {

std::string descriptor(const Dims& shape, const Dims& strides) {
  return "dnnl::memory::desc(" + dnnl_dims(shape) + ", f32, " + dnnl_dims(strides) + ")";
}

// The post-ops' operand descriptors, "binary_<i>", by post-op index.
std::vector<std::pair<size_t, const DnnlPostOp*>> binary_operands(const DnnlEpilogue& epilogue) {
  std::vector<std::pair<size_t, const DnnlPostOp*>> out;
  if (epilogue.post_ops)
    for (size_t i = 0; i < epilogue.post_ops->size(); ++i)
      if ((*epilogue.post_ops)[i].input >= 0 && !(*epilogue.post_ops)[i].sum)
        out.emplace_back(i, &(*epilogue.post_ops)[i]);
  return out;
}

void write_variant_and_plan(CpuKernel& k, const DnnlOperation& o, const DnnlEpilogue& epilogue) {
  CodeWriter& d = k.definitions;
  const std::string& op = as<OpNode>(k.master->op)->name;
  bool fusable = epilogue.post_ops && !epilogue.post_ops->empty();
  bool bias = epilogue.bias_input >= 0;
  d.line("// The primitive of " + op + " for one thread count.");
  d.open("struct Variant");
  d.line(o.primitive + " primitive;");
  d.line("dnnl::memory::desc weights, scratchpad;  // weights: the layout the primitive reads");
  if (o.activations_any) {
    d.line("dnnl::memory::desc src, dst;  // the layouts the primitive reads and writes");
    d.line("dnnl::reorder to_src, to_dst, from_dst;  // from and to the plain layouts, where they differ");
  }
  d.line("bool epilogue_fused = false;");
  if (o.weights_any) {
    d.line("std::mutex mutex;  // guards `reordered`");
    d.line("std::unordered_map<const void*, dnnl::memory> reordered;  // constant weights in `weights`, by address");
  }
  d.close(";");
  d.line();
  d.line("// The oneDNN plan of " + op + at_span(k.master->span()) + ".");
  d.open("struct Plan");
  d.line("dnnl::engine engine{dnnl::engine::kind::cpu, 0};");
  std::vector<std::string> names;
  for (const DnnlDescriptor& desc : o.descriptors) names.push_back(desc.name);
  if (bias) names.push_back("bias");
  for (auto [i, post] : binary_operands(epilogue)) names.push_back("binary_" + std::to_string(i));
  d.line("dnnl::memory::desc " + join(names) + ";");
  d.line("std::mutex mutex;  // guards `variants`");
  d.line("std::map<int, std::unique_ptr<Variant>> variants;");
  d.line();
  d.open("Plan()");
  d.line("using dims = dnnl::memory::dims;");
  d.line("const auto f32 = dnnl::memory::data_type::f32;");
  for (const DnnlDescriptor& desc : o.descriptors) d.line(desc.name + " = " + descriptor(desc.shape, desc.strides) + ";");
  if (bias) d.line("bias = " + descriptor(epilogue.bias_dims, dense_strides(epilogue.bias_dims)) + ";");
  for (auto [i, post] : binary_operands(epilogue))
    d.line("binary_" + std::to_string(i) + " = " + descriptor(post->operand, dense_strides(post->operand)) + ";");
  d.close();
  d.line();
  d.line("// The primitive for `threads` threads, made on first use; OpenMP's thread count is already set.");
  d.open("Variant& variant(int threads)");
  d.line("std::lock_guard<std::mutex> lock(mutex);");
  d.line("std::unique_ptr<Variant>& v = variants[threads];");
  d.line("if (v) return *v;");
  d.line("v = std::make_unique<Variant>();");
  d.line("Plan& p = *this;");
  d.line("using dims = dnnl::memory::dims;");
  std::string weights = "weights";
  if (o.weights_any) {
    d.line("const dnnl::memory::desc weights_any(weights.dims(), dnnl::memory::data_type::f32, "
           "dnnl::memory::format_tag::any);");
    weights = "weights_any";
  }
  if (o.activations_any)
    for (const char* name : {"src", "dst"})
      d.line(std::string("const dnnl::memory::desc ") + name + "_any(" + name +
             ".dims(), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);");
  d.line("const " + o.primitive + "::desc operation(" + o.description(weights, bias) + ");");
  d.open("auto attributes = [&](bool with_epilogue)");
  d.line("dnnl::primitive_attr attr;");
  d.line("attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per run: runs may overlap");
  if (fusable) {
    d.open("if (with_epilogue)");
    d.line("dnnl::post_ops epilogue;");
    for (const DnnlPostOp& post : *epilogue.post_ops) d.line(post.append);
    d.line("attr.set_post_ops(epilogue);");
    d.close();
  } else {
    d.line("(void)with_epilogue;");
  }
  d.line("return attr;");
  d.close(";");
  d.line("(void)p;");
  d.line("(void)dims{};");
  d.line(o.primitive + "::primitive_desc description;");
  if (fusable) {
    d.open("try");
    d.line("description = " + o.primitive + "::primitive_desc(operation, attributes(true), engine);");
    d.line("v->epilogue_fused = true;");
    d.next("catch (const dnnl::error&)");
    d.line("// This oneDNN cannot fuse the epilogue: it runs as a loop after the primitive.");
    d.line("description = " + o.primitive + "::primitive_desc(operation, attributes(false), engine);");
    d.close();
  } else {
    d.line("description = " + o.primitive + "::primitive_desc(operation, attributes(false), engine);");
  }
  if (o.weights_input >= 0) d.line("v->weights = description.weights_desc();");
  d.line("v->scratchpad = description.scratchpad_desc();");
  if (o.activations_any) {
    d.line("v->src = description.src_desc();");
    d.line("v->dst = description.dst_desc();");
    d.open("if (v->src != src)");
    d.line("v->to_src = dnnl::reorder(dnnl::reorder::primitive_desc(engine, src, engine, v->src));");
    d.close();
    d.open("if (v->dst != dst)");
    d.line("v->to_dst = dnnl::reorder(dnnl::reorder::primitive_desc(engine, dst, engine, v->dst));");
    d.line("v->from_dst = dnnl::reorder(dnnl::reorder::primitive_desc(engine, v->dst, engine, dst));");
    d.close();
  }
  d.line("v->primitive = " + o.primitive + "(description);");
  d.line("return *v;");
  d.close();
  d.close(";");
  d.line();
  d.open("Plan& plan()");
  d.line("static Plan instance;");
  d.line("return instance;");
  d.close();
  d.line();
  if (!o.weights_any) return;
  d.line("// The weights in the primitive's layout: reordered once per address when constant (a weight of");
  d.line("// weights.bin), on every call when computed.");
  d.open("dnnl::memory weights_for(Plan& p, Variant& v, dnnl::stream& stream, const float* source, bool constant)");
  d.line("dnnl::memory given(p.weights, p.engine, const_cast<float*>(source));");
  d.line("if (v.weights == p.weights) return given;");
  d.open("auto reorder = [&]");
  d.line("dnnl::memory reordered(v.weights, p.engine);");
  d.line("dnnl::reorder(given, reordered).execute(stream, given, reordered);");
  d.line("stream.wait();");
  d.line("return reordered;");
  d.close(";");
  d.line("if (!constant) return reorder();");
  d.line("std::lock_guard<std::mutex> lock(v.mutex);");
  d.line("auto it = v.reordered.find(source);");
  d.line("if (it == v.reordered.end()) it = v.reordered.emplace(source, reorder()).first;");
  d.line("return it->second;");
  d.close();
  d.line();
}

// The device's thread share, which the services do not state: the number of
// chunks parallel_for splits a long loop with grain 1 into.
void write_thread_count(CpuKernel& k) {
  CodeWriter& d = k.definitions;
  d.open("void count_chunk(void* closure, int64_t, int64_t)");
  d.line("static_cast<std::atomic<int>*>(closure)->fetch_add(1, std::memory_order_relaxed);");
  d.close();
  d.line();
  d.open("int device_threads(const SyRuntimeServices* services, int device_index)");
  d.line("std::atomic<int> chunks{0};");
  d.line("services->parallel_for(services->ctx, device_index, 1 << 16, 1, count_chunk, &chunks);");
  d.line("return std::max(1, chunks.load());");
  d.close();
  d.line();
}

}  // namespace

void write_dnnl_plan_and_call(CpuKernel& k, const DnnlOperation& o, const DnnlEpilogue& epilogue,
                              const std::string& destination) {
  for (const char* header : {"<atomic>", "<map>", "<memory>", "<mutex>", "<omp.h>", "<unordered_map>"})
    k.includes.insert(header);
  write_thread_count(k);
  write_variant_and_plan(k, o, epilogue);

  CodeWriter& e = k.entry;
  e.line("const int threads = device_threads(services, device_index);");
  e.line("omp_set_num_threads(threads);  // oneDNN's OpenMP reads the calling thread's setting");
  e.line("Plan& p = plan();");
  e.line("Variant& v = p.variant(threads);");
  e.line("dnnl::stream stream(p.engine);");
  std::vector<std::pair<std::string, std::string>> arguments;  // role, memory expression
  for (const DnnlArgument& a : o.arguments) {
    std::string memory = "dnnl::memory(p." + a.desc + ", p.engine, const_cast<float*>(" + a.pointer + "))";
    if (o.activations_any && a.role == "DNNL_ARG_SRC") {
      e.line("dnnl::memory src = " + memory + ";");
      e.open("if (v.src != p.src)");
      e.line("dnnl::memory blocked(v.src, p.engine);");
      e.line("v.to_src.execute(stream, src, blocked);");
      e.line("src = blocked;");
      e.close();
      memory = "src";
    }
    arguments.emplace_back(a.role, memory);
  }
  if (o.weights_input >= 0) {
    std::string source = "buffers." + k.input(size_t(o.weights_input));
    if (o.weights_any) {
      e.line("dnnl::memory weights = weights_for(p, v, stream, " + source + ", " +
             (k.constant_inputs.at(size_t(o.weights_input)) ? "true" : "false") + ");");
      arguments.emplace_back("DNNL_ARG_WEIGHTS", "weights");
    } else {
      arguments.emplace_back("DNNL_ARG_WEIGHTS", "dnnl::memory(p.weights, p.engine, const_cast<float*>(" + source + "))");
    }
  }
  if (epilogue.bias_input >= 0)
    arguments.emplace_back("DNNL_ARG_BIAS", "dnnl::memory(p.bias, p.engine, const_cast<float*>(buffers." +
                                                k.input(size_t(epilogue.bias_input)) + "))");
  if (o.activations_any) {
    e.line("dnnl::memory output(p.dst, p.engine, buffers." + destination + ");");
    e.line("dnnl::memory dst = v.dst == p.dst ? output : dnnl::memory(v.dst, p.engine);");
    arguments.emplace_back("DNNL_ARG_DST", "dst");
  } else {
    arguments.emplace_back("DNNL_ARG_DST", "dnnl::memory(p.dst, p.engine, buffers." + destination + ")");
  }
  e.open("std::unordered_map<int, dnnl::memory> arguments");
  for (size_t i = 0; i < arguments.size(); ++i)
    e.line("{" + arguments[i].first + ", " + arguments[i].second + "}" + (i + 1 < arguments.size() ? "," : ""));
  e.close(";");
  e.line("if (v.scratchpad.get_size() > 0) arguments.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(v.scratchpad, p.engine));");
  if (epilogue.post_ops && !epilogue.post_ops->empty()) {
    e.open("if (v.epilogue_fused)");
    for (size_t i = 0; i < epilogue.post_ops->size(); ++i) {
      const DnnlPostOp& post = (*epilogue.post_ops)[i];
      if (post.input < 0) continue;
      std::string input = "buffers." + k.input(size_t(post.input));
      if (post.sum) {
        int64_t bytes = as_tensor(k.master->checked_type())->numel() * 4;
        e.line("// The sum post-op adds what the destination holds: the residual.");
        std::string copy = "if (static_cast<const void*>(buffers." + destination + ") != " + input +
                           ") std::memcpy(buffers." + destination + ", " + input + ", " + std::to_string(bytes) + ");";
        if (o.activations_any) {
          e.open("if (v.dst != p.dst)");
          e.line("dnnl::memory residual(p.dst, p.engine, const_cast<float*>(" + input + "));");
          e.line("v.to_dst.execute(stream, residual, dst);");
          e.next("else");
          e.line(copy);
          e.close();
        } else {
          e.line(copy);
        }
        continue;
      }
      e.line("arguments.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(" + std::to_string(i) +
             ") | DNNL_ARG_SRC_1, dnnl::memory(p.binary_" + std::to_string(i) + ", p.engine, const_cast<float*>(" +
             input + ")));");
    }
    e.close();
  }
  e.line("v.primitive.execute(stream, arguments);");
  if (o.activations_any) e.line("if (v.dst != p.dst) v.from_dst.execute(stream, dst, output);");
  e.line("stream.wait();");
}

}  // namespace switchyard
