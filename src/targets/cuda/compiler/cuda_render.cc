// Renders kernel IR as CUDA C++. NVRTC has no standard headers, so a short
// prelude gives the fixed-width types, the few std:: functions and macros
// the shared expression printer and the sy_ helpers (kernel_code.cc) spell,
// and the fault bits of model_abi.h; the unit is compiled with
// -default-device, so those helpers are device functions as written.
#include "targets/cuda/compiler/cuda_render.h"

#include <algorithm>

#include "codegen/expression_printer.h"
#include "codegen/kernel_code.h"
#include "codegen/statement_printer.h"
#include "support/error.h"
#include "switchyard/model_abi.h"

namespace switchyard {

namespace kernel_ir {
namespace {

constexpr int kWarp = 32;
constexpr int kBlock = 256;

std::string cuda_prelude() {
  std::string out = R"(// What <cstdint>, <cmath> and <cstring> would give, for NVRTC.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT64_MAX 9223372036854775807ll
#define INT64_MIN (-INT64_MAX - 1)
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
// Faults are bits in one word many threads may raise at once.
#define __ATOMIC_RELAXED 0
#define __atomic_fetch_or(word, bits, order) atomicOr(word, bits)
// The math the shared helpers call by the names cpu_prelude() gives them.
inline int64_t sy_min(int64_t a, int64_t b) { return b < a ? b : a; }
inline float sy_ldexp(float x, int exponent) { return ldexpf(x, exponent); }
inline float sy_nearbyint(float x) { return rintf(x); }
inline float sy_fabs(float x) { return fabsf(x); }
inline float sy_copysign(float x, float sign) { return copysignf(x, sign); }
namespace std {
inline void* memcpy(void* to, const void* from, decltype(sizeof(0)) bytes) {  // a bit cast, as the helpers use it
  for (decltype(sizeof(0)) i = 0; i < bytes; ++i) static_cast<char*>(to)[i] = static_cast<const char*>(from)[i];
  return to;
}
}  // namespace std
)";
  out += "#define SY_FAULT_INTEGER_DIVISION_BY_ZERO " + std::to_string(SY_FAULT_INTEGER_DIVISION_BY_ZERO) + "\n";
  out += "#define SY_FAULT_NEGATIVE_INTEGER_EXPONENT " + std::to_string(SY_FAULT_NEGATIVE_INTEGER_EXPONENT) + "\n";
  out += "#define SY_FAULT_INDEX_OUT_OF_RANGE " + std::to_string(SY_FAULT_INDEX_OUT_OF_RANGE) + "\n";
  return out;
}

// The simd loop over the chunk [begin, end) when it is all `body` holds.
const StmtNode* chunk_loop(const std::vector<Stmt>& body) {
  if (body.size() != 1) return nullptr;
  const StmtNode& s = *body[0];
  auto is_var = [](const Expr& e, const char* name) { return e->kind == ExprKind::kVar && e->operands.empty() && e->name == name; };
  if (s.kind != StmtKind::kFor || s.loop != LoopKind::kSimd || s.reduction != Reduction::kNone) return nullptr;
  return is_var(s.index, "begin") && is_var(s.end, "end") ? &s : nullptr;
}

// Whether `stmts` declare a local array. Its elements are one thread's: a
// warp's lanes would each hold a part, which a later serial loop cannot read.
bool declares_array(const std::vector<Stmt>& stmts) {
  for (const Stmt& s : stmts)
    if ((s->kind == StmtKind::kDeclare && s->count > 0) || declares_array(s->body) || declares_array(s->orelse))
      return true;
  return false;
}

class Renderer final : public StatementPrinter {
 public:
  Renderer(const Kernel& kernel, const std::string& name) : kernel_(kernel), name_(name) {}

  // The dtypes whose CUDA spelling is checked (float64 would call the float
  // math functions; the narrow and unsigned integers are not tested on a GPU).
  static bool cuda_takes(DType dtype) {
    return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16 ||
           dtype == DType::kInt8 || dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kUInt8 ||
           dtype == DType::kBool;
  }

  CudaKernel render() {
    for (const Buffer& b : kernel_.buffers) {
      if (!b.layout.empty())
        throw Error(ErrorKind::kBackend, "the CUDA renderer prints dense row-major buffers only; " + b.name + " is " + b.layout, kernel_.span);
      if (b.role == BufferRole::kScratch)
        throw Error(ErrorKind::kBackend, "the CUDA renderer has no scratch buffers (" + b.name + ")", kernel_.span);
      if (!cuda_takes(b.dtype))
        throw Error(ErrorKind::kBackend,
                    std::string("the CUDA renderer does not print ") + dtype_name(b.dtype) + " buffers yet (" + b.name +
                        "): its math spells float functions; place this kernel on a CPU",
                    kernel_.span);
    }
    CodeWriter functions;
    if (kernel_.body.empty()) functions.line("// The result is empty: nothing to compute.");
    for (const Stmt& s : kernel_.body) {
      // A library primitive first is the entry's to run (a cuBLASLt or cuDNN
      // call on the device's stream) before it launches the loops after it.
      if (s->kind == StmtKind::kRunPrimitive) {
        if (&s != &kernel_.body.front()) run_primitive(functions, *s);
        functions.line("// " + (s->comment.empty() ? std::string("A library primitive") : s->comment) +
                       " runs first, queued by the entry: " + s->source);
        continue;
      }
      if (s->kind != StmtKind::kParallel)
        throw Error(ErrorKind::kBackend, "the CUDA renderer prints parallel loops only, not a statement outside one" +
                                             (s->comment.empty() ? "" : " (" + s->comment + ")"), kernel_.span);
      parallel(functions, *bind_arguments(s));  // each loop its own __global__ function
    }
    CudaKernel out;
    out.may_fault = helpers_may_fault(helpers_);
    CodeWriter unit;
    unit.line("// " + (kernel_.comment.empty() ? name_ : kernel_.comment) + span_comment(kernel_.span));
    unit.line("// CUDA C++ printed by Switchyard from kernel IR (targets/cuda/compiler/cuda_render.cc).");
    unit.append(cuda_prelude());
    unit.append(cpu_helper_definitions(helpers_));
    unit.line();
    unit.open("struct Buffers");
    for (const Buffer& b : kernel_.buffers)
      unit.line((b.is_const ? "const " : "") + storage_type(b.dtype) + "* " + b.name + ";" +
                (b.comment.empty() ? "" : "  // " + b.comment));
    if (out.may_fault) unit.line("int* faults;  // SY_FAULT_* bits any element raised");
    unit.close(";");
    unit.line();
    unit.append(functions);
    out.code = unit.str();
    out.launches = std::move(launches_);
    return out;
  }

 private:
  std::string expr(const Expr& e) override { return render_kernel_expr(e, kCudaScalarSpelling, helpers_); }

  // A parallel loop as one __global__ function and its launch.
  void parallel(CodeWriter& out, const StmtNode& s) {
    if (s.count <= 0) return out.line("// " + s.comment + ": no elements");
    const StmtNode* chunk = chunk_loop(s.body);
    CudaLaunch launch;
    launch.function = name_ + "_" + s.name;
    bool warp = !chunk && !declares_array(s.body);
    launch.threads_per_item = warp ? kWarp : 1;
    // A thread takes `vector_width` consecutive elements of a chunk loop.
    int64_t per_thread = chunk ? std::max(chunk->vector_width, 1) : 1;
    launch.items = (s.count + per_thread - 1) / per_thread;
    launch.block = kBlock;
    int64_t threads = launch.items * launch.threads_per_item;
    launch.grid = std::min<int64_t>((threads + kBlock - 1) / kBlock, kCudaMaxGrid);

    out.line("// " + s.comment);
    out.line("// launch: " + std::to_string(launch.items) +
             (chunk ? " threads of " + std::to_string(per_thread) + " element(s)"
                    : warp ? " warps of one iteration" : " threads of one iteration (it keeps local arrays)") +
             ", grid " + std::to_string(launch.grid) + " x " + std::to_string(launch.block));
    out.open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kBlock) + ") " + launch.function +
             "(const Buffers buffers)");
    std::string restrict = kernel_.outputs_may_alias_inputs ? "" : " __restrict__";
    for (const Buffer* b : buffers_used(kernel_, s.body))
      out.line((b->is_const ? "const " : "") + storage_type(b->dtype) + "*" + restrict + " " + b->name + " = buffers." +
               b->name + ";");
    std::string count = std::to_string(s.count);
    if (!warp) {
      out.line("const int64_t work_stride = int64_t(gridDim.x) * blockDim.x;");
      out.open("for (int64_t work_item = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; work_item < " +
               std::to_string(launch.items) + "; work_item += work_stride)");
      if (!chunk) {
        out.line("const int64_t begin = work_item;");
        out.line("const int64_t end = work_item + 1;");
        block(out, s.body);
      } else if (per_thread == 1) {
        out.line("const int64_t " + chunk->name + " = work_item;");
        block(out, chunk->body);
      } else {
        out.line("const int64_t begin = work_item * " + std::to_string(per_thread) + ";");
        out.line("const int64_t end = std::min<int64_t>(begin + " + std::to_string(per_thread) + ", " + count + ");");
        out.line("#pragma unroll");
        out.open("for (int64_t " + chunk->name + " = begin; " + chunk->name + " < end; ++" + chunk->name + ")");
        block(out, chunk->body);
        out.close();
      }
      out.close();
    } else {
      warp_ = true;
      out.line("const int warp_lane = threadIdx.x % " + std::to_string(kWarp) + ";");
      out.line("const int64_t work_stride = int64_t(gridDim.x) * blockDim.x / " + std::to_string(kWarp) + ";");
      out.open("for (int64_t work_item = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / " + std::to_string(kWarp) +
               "; work_item < " + count + "; work_item += work_stride)");
      out.line("const int64_t begin = work_item;");
      out.line("const int64_t end = work_item + 1;");
      block(out, s.body);
      out.close();
      warp_ = false;
    }
    out.close();
    out.line();
    launches_.push_back(launch);
  }

  // Outside a simd loop every lane of a warp holds the same value: one writes it.
  void store(CodeWriter& out, const StmtNode& s, const std::string& comment) override {
    std::string guard = warp_ && !spread_ ? "if (warp_lane == 0) " : "";
    out.line(guard + s.name + "[" + expr(s.index) + "] = " + store_value(buffer(s.name).dtype, expr(s.value), &helpers_) +
             ";" + comment);
  }

  void copy(CodeWriter&, const StmtNode&) override {
    throw Error(ErrorKind::kBackend, "the CUDA renderer has no buffer copies yet", kernel_.span);
  }

  void run_primitive(CodeWriter&, const StmtNode& s) override {
    throw Error(ErrorKind::kBackend,
                "the CUDA renderer runs a library primitive only as a kernel's first statement (" + s.source + ")",
                kernel_.span);
  }

  void loop(CodeWriter& out, const StmtNode& s) override {
    std::string var = s.name;
    bool spread = warp_ && !spread_ && s.loop == LoopKind::kSimd;
    if (!spread) {
      out.open("for (int64_t " + var + " = " + expr(s.index) + "; " + var + " < " + expr(s.end) + "; ++" + var + ")");
      block(out, s.body);
      return out.close();
    }
    // The lanes take every 32nd iteration; each keeps a partial of the
    // reduced variable, which the shuffles then combine so every lane holds
    // the whole. Lane 0's partial starts from the value before the loop.
    if (s.reduction == Reduction::kSum) out.line("if (warp_lane != 0) " + s.reduced + " = 0;");
    out.open("for (int64_t " + var + " = " + expr(s.index) + " + warp_lane; " + var + " < " + expr(s.end) + "; " + var +
             " += " + std::to_string(kWarp) + ")");
    spread_ = true;
    block(out, s.body);
    spread_ = false;
    out.close();
    if (s.reduction != Reduction::kNone) {
      std::string other = "__shfl_xor_sync(0xffffffffu, " + s.reduced + ", offset)";
      out.open("for (int offset = " + std::to_string(kWarp / 2) + "; offset > 0; offset /= 2)");
      if (s.reduction == Reduction::kSum) {
        out.line(s.reduced + " += " + other + ";");
      } else {
        out.line("const auto other = " + other + ";");
        out.line(s.reduced + " = other > " + s.reduced + " ? other : " + s.reduced + ";");
      }
      out.close();
    }
    // What a lane wrote, the next loop's other lanes may read.
    out.line("__syncwarp();");
  }

  const Buffer& buffer(const std::string& name) const {
    for (const Buffer& b : kernel_.buffers)
      if (b.name == name) return b;
    throw Error(ErrorKind::kBackend, "kernel IR writes to unknown buffer " + name, kernel_.span);
  }

  const Kernel& kernel_;
  std::string name_;
  std::set<CpuHelper> helpers_;
  std::vector<CudaLaunch> launches_;
  bool warp_ = false;    // in a parallel loop run a warp per iteration
  bool spread_ = false;  // in a simd loop spread over the warp's lanes
};

}  // namespace
}  // namespace kernel_ir

CudaKernel render_cuda_kernel(const kernel_ir::Kernel& kernel, const std::string& name) {
  return kernel_ir::Renderer(kernel, name).render();
}

}  // namespace switchyard
