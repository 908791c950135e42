// Identity and buffer use of kernel IR kernels.
#include "kernel_ir/kernel.h"

#include <set>

#include "kernel_ir/hash.h"

namespace switchyard::kernel_ir {

namespace {

size_t buffer_hash(const Buffer& b) {
  size_t h = hash_mix(std::hash<std::string>()(b.name), size_t(b.dtype));
  h = hash_mix(h, size_t(b.role));
  h = hash_mix(h, size_t(b.slot));
  h = hash_mix(h, size_t(b.is_const));
  for (int64_t d : b.shape) h = hash_mix(h, std::hash<int64_t>()(d));
  return hash_mix(h, std::hash<std::string>()(b.layout));
}

bool buffer_equal(const Buffer& a, const Buffer& b) {
  return a.name == b.name && a.dtype == b.dtype && a.role == b.role && a.slot == b.slot && a.is_const == b.is_const &&
         a.shape == b.shape && a.layout == b.layout;
}

void collect_buffer_names(const std::vector<Stmt>& stmts, std::set<std::string>* names) {
  for (const Stmt& s : stmts) {
    if (s->kind == StmtKind::kStore || s->kind == StmtKind::kCopy || s->kind == StmtKind::kRunPrimitive)
      names->insert(s->name);
    if (s->kind == StmtKind::kCopy) names->insert(s->source);
    collect_buffer_names(s->body, names);
    collect_buffer_names(s->orelse, names);
  }
}

}  // namespace

bool equal(const Kernel& a, const Kernel& b) {
  if (a.buffers.size() != b.buffers.size() || a.outputs_may_alias_inputs != b.outputs_may_alias_inputs) return false;
  for (size_t i = 0; i < a.buffers.size(); ++i)
    if (!buffer_equal(a.buffers[i], b.buffers[i])) return false;
  return equal(a.body, b.body);
}

size_t hash(const Kernel& kernel) {
  size_t h = hash_mix(kernel.buffers.size(), size_t(kernel.outputs_may_alias_inputs));
  for (const Buffer& b : kernel.buffers) h = hash_mix(h, buffer_hash(b));
  return hash_mix(h, hash(kernel.body));
}

std::vector<const Buffer*> buffers_used(const Kernel& kernel, const std::vector<Stmt>& stmts) {
  std::set<std::string> names;
  collect_buffer_names(stmts, &names);
  visit_exprs(stmts, [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad) names.insert(e->name);
  });
  std::vector<const Buffer*> used;
  for (const Buffer& b : kernel.buffers)
    if (names.count(b.name)) used.push_back(&b);
  return used;
}

}  // namespace switchyard::kernel_ir
