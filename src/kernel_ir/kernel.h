// A kernel in the kernel IR: its buffers and the statements of its entry,
// whose parallel loops each become a function the runtime's thread pool
// runs. Renderers (targets/cpu/compiler/cpu_render.h) print it; its structural hash, with
// the target, is the kernel's identity (lower/generate_kernels.cc).
#pragma once

#include <string>
#include <vector>

#include "ir/span.h"
#include "kernel_ir/stmt.h"

namespace switchyard::kernel_ir {

// kScratch: a temporary the kernel allocates for each run (an anchor's
// float result before an epilogue that changes its dtype).
enum class BufferRole : uint8_t { kInput, kOutput, kScratch };

struct Buffer {
  std::string name;  // as loads and stores name it: "in0_x", "out0"
  DType dtype;       // of its elements
  BufferRole role;
  int slot = 0;  // its position in the kernel's inputs or outputs
  bool is_const = false;  // the kernel only reads it
  std::vector<int64_t> shape;
  std::string layout;   // "" for dense row-major, else the planned layout's name
  std::string comment;  // "%x: Tensor[(2, 3), float32]"
};

struct Kernel {
  std::vector<Buffer> buffers;
  std::vector<Stmt> body;  // nothing when the result is empty
  // Whether an output may share storage with an input, so loops must not
  // promise the compiler that buffers never alias.
  bool outputs_may_alias_inputs = false;
  std::string comment;  // what it computes ("add -> nn.relu"), for readers
  Span span;            // the fused span of what it computes
};

// Structural: comments and spans do not count.
bool equal(const Kernel& a, const Kernel& b);
size_t hash(const Kernel& kernel);

// The buffers named by loads and stores in `stmts`, in the kernel's order.
std::vector<const Buffer*> buffers_used(const Kernel& kernel, const std::vector<Stmt>& stmts);

}  // namespace switchyard::kernel_ir
