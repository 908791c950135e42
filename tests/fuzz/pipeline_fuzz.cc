// Fuzz target: everything a build does before the C++ compiler runs. A text
// module is parsed, placed on two CPU devices and optimised by the default
// pipeline with the invariant checker after every pass, then lowered to
// kernel calls, its kernels generated, its layouts, primitive algorithms and
// fusions chosen, its memory planned and its
// entry function written. Each step either succeeds or refuses with an Error
// naming the cause; none may crash, hang or allocate without bound.
#include "artifact/artifact_writer.h"
#include "layout/plan_layouts.h"
#include "lower/aot_codegen.h"
#include "lower/lower.h"
#include "lower/lower_check.h"
#include "lower/memory_plan.h"
#include "fuzz_target.h"
#include "pipeline/pass_table.h"
#include "text/parser.h"
#include "transform/instruments.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  return fuzz::run_one([&] {
    IRModule mod = parse_module(text, "fuzz.sy");
    CompilationConfig config = CompilationConfig::parse("cpu:0,cpu:1");
    auto checker = std::make_shared<InvariantChecker>();
    PassContext context;
    context.instruments.push_back(checker);
    IRModule planned;
    {
      PassContext::Scope scope(context);
      planned = default_pipeline({config, {}})(mod, context);
      planned = PlanLayouts(8, text.size() % 2 == 0)(planned, context);  // both layout families, by the input's parity
    }
    check_lowerable(planned, "main", checker.get());
    LoweredProgram program = lower_entry(planned, "main", config);
    generate_kernels(program, config);
    apply_layouts(program);
    choose_primitive_algorithms(program);
    fuse_depthwise_convolutions(program);
    std::vector<int> tensor_of_buffer;
    MemoryPlan memory = plan_memory(memory_problem(program, &tensor_of_buffer));
    Manifest manifest = make_manifest(program, memory, config);
    generate_entry_source(program, memory, tensor_of_buffer, manifest);
  });
}
