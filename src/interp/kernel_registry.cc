// Storage of the reference kernel table; the built-in groups are registered
// once, on first lookup (explicitly, as the operator registry does, because
// a static-library link may drop static initialisers), and element-wise
// operators' kernels are derived from their scalar meaning when first asked for.
#include "interp/kernel_registry.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "interp/kernel_groups.h"

namespace switchyard {

namespace {

struct KernelTable {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<InterpKernelDef>> kernels;
};

KernelTable& table() {
  static auto* t = new KernelTable();
  return *t;
}

void ensure_builtin_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_linear_kernels();
    register_conv_pool_kernels();
    register_quantized_kernels();
    register_norm_kernels();
    register_reduce_kernels();
    register_shape_kernels();
    register_scan_kernels();
  });
}

}  // namespace

void register_interp_kernel(const std::string& op_name, InterpKernelDef def) {
  KernelTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.kernels.count(op_name)) throw std::logic_error("reference kernel registered twice: " + op_name);
  t.kernels.emplace(op_name, std::make_unique<InterpKernelDef>(std::move(def)));
}

void register_interp_kernel(const OpNode* op, InterpKernelDef def) { register_interp_kernel(op->name, std::move(def)); }

const InterpKernelDef* find_interp_kernel(const std::string& op_name) {
  ensure_builtin_kernels();
  KernelTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.kernels.find(op_name);
  if (it != t.kernels.end()) return it->second.get();
  // An element-wise operator without a hand-written kernel: derived from its
  // meaning on first use.
  const OpDef* def = find_op_def(op_name);
  if (!def || !def->scalar) return nullptr;
  return t.kernels.emplace(op_name, std::make_unique<InterpKernelDef>(scalar_kernel(*def))).first->second.get();
}

std::vector<std::string> interp_kernel_names() {
  ensure_builtin_kernels();
  KernelTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<std::string> names;
  for (const auto& entry : t.kernels) names.push_back(entry.first);
  for (const OpDef* def : all_op_defs())
    if (def->scalar && !t.kernels.count(def->name)) names.push_back(def->name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace switchyard
