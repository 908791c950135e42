// Constructors, structural equality and traversal of kernel IR statements.
#include "kernel_ir/stmt.h"

#include <algorithm>
#include <map>

#include "kernel_ir/hash.h"

namespace switchyard::kernel_ir {

namespace {

Stmt make(StmtNode node) {
  size_t h = hash_mix(size_t(node.kind), std::hash<std::string>()(node.name));
  h = hash_mix(h, size_t(node.dtype));
  h = hash_mix(h, size_t(node.precision));
  for (const Expr* e : {&node.value, &node.index, &node.end}) h = hash_mix(h, *e ? (*e)->hash : 0);
  h = hash_mix(h, size_t(node.loop));
  h = hash_mix(h, size_t(node.vector_width));
  h = hash_mix(h, size_t(node.reduction));
  h = hash_mix(h, std::hash<std::string>()(node.reduced));
  h = hash_mix(h, std::hash<std::string>()(node.source));
  h = hash_mix(h, std::hash<int64_t>()(node.count));
  h = hash_mix(h, std::hash<int64_t>()(node.grain));
  h = hash_mix(h, hash(node.body));
  h = hash_mix(h, hash(node.orelse));
  for (const auto& [name, value] : node.arguments.values)
    h = hash_mix(hash_mix(h, std::hash<std::string>()(name)), value->hash);
  for (const auto& [name, buffer] : node.arguments.buffers)
    h = hash_mix(hash_mix(h, std::hash<std::string>()(name)), std::hash<std::string>()(buffer));
  node.hash = h;
  return std::make_shared<const StmtNode>(std::move(node));
}

bool equal_or_null(const Expr& a, const Expr& b) { return a && b ? equal(a, b) : a == b; }

bool equal(const ParallelArguments& a, const ParallelArguments& b) {
  if (a.buffers != b.buffers || a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i)
    if (a.values[i].first != b.values[i].first || !equal(a.values[i].second, b.values[i].second)) return false;
  return true;
}

}  // namespace

Stmt let(std::string name, DType dtype, Expr value, std::string comment) {
  return make({.kind = StmtKind::kLet, .name = std::move(name), .dtype = dtype, .value = std::move(value),
               .comment = std::move(comment)});
}

Stmt declare(std::string name, DType dtype, std::string comment) {
  return make({.kind = StmtKind::kDeclare, .name = std::move(name), .dtype = dtype, .comment = std::move(comment)});
}

Stmt declare(std::string name, Expr initial) {
  DType dtype = initial->dtype;
  Precision precision = initial->precision;
  return make({.kind = StmtKind::kDeclare, .name = std::move(name), .dtype = dtype, .precision = precision,
               .value = std::move(initial)});
}

Stmt declare_array(std::string name, DType dtype, Precision precision, int64_t elements) {
  return make({.kind = StmtKind::kDeclare, .name = std::move(name), .dtype = dtype, .precision = precision,
               .count = elements});
}

Stmt assign(std::string name, Expr value) {
  return make({.kind = StmtKind::kAssign, .name = std::move(name), .value = std::move(value)});
}

Stmt assign_element(std::string array, Expr at, Expr value) {
  return make({.kind = StmtKind::kAssign, .name = std::move(array), .value = std::move(value), .index = std::move(at)});
}

Stmt store(std::string buffer, Expr at, Expr value) {
  return make({.kind = StmtKind::kStore, .name = std::move(buffer), .value = std::move(value), .index = std::move(at)});
}

Stmt for_loop(std::string var, Expr begin, Expr end, LoopKind loop, std::vector<Stmt> body, int vector_width) {
  return make({.kind = StmtKind::kFor, .name = std::move(var), .index = std::move(begin), .end = std::move(end),
               .loop = loop, .vector_width = vector_width, .body = std::move(body)});
}

Stmt simd_reduction(std::string var, Expr begin, Expr end, Reduction reduction, std::string reduced,
                    std::vector<Stmt> body) {
  return make({.kind = StmtKind::kFor, .name = std::move(var), .index = std::move(begin), .end = std::move(end),
               .loop = LoopKind::kSimd, .reduction = reduction, .reduced = std::move(reduced),
               .body = std::move(body)});
}

Stmt if_then_else(Expr condition, std::vector<Stmt> then_body, std::vector<Stmt> else_body) {
  return make({.kind = StmtKind::kIf, .value = std::move(condition), .body = std::move(then_body),
               .orelse = std::move(else_body)});
}

Stmt parallel(std::string function, int64_t count, int64_t grain, std::vector<Stmt> body, std::string comment,
              ParallelArguments arguments) {
  return make({.kind = StmtKind::kParallel, .name = std::move(function), .count = count, .grain = grain,
               .body = std::move(body), .arguments = std::move(arguments), .comment = std::move(comment)});
}

namespace {

Stmt substitute_in(const Stmt& s, const std::function<Expr(const Expr&)>& replace) {
  StmtNode node = *s;
  for (Expr* e : {&node.value, &node.index, &node.end})
    if (*e) *e = substitute(*e, replace);
  for (std::vector<Stmt>* block : {&node.body, &node.orelse})
    for (Stmt& nested : *block) nested = substitute_in(nested, replace);
  return make(std::move(node));
}

}  // namespace

Stmt bind_arguments(const Stmt& loop) {
  if (loop->kind != StmtKind::kParallel || loop->arguments.empty()) return loop;
  const ParallelArguments& arguments = loop->arguments;
  std::function<Expr(const Expr&)> replace = [&](const Expr& e) -> Expr {
    for (const auto& [name, value] : arguments.values)
      if (e->kind == ExprKind::kVar && e->operands.empty() && e->name == name) return value;
    for (const auto& [name, buffer] : arguments.buffers)
      if (e->kind == ExprKind::kLoad && e->name == name) return load(buffer, e->dtype, substitute(e->operands[0], replace));
    return nullptr;
  };
  StmtNode node = *substitute_in(loop, replace);
  node.arguments = {};
  return make(std::move(node));
}

namespace {

// The buffers `stmts` load or store, in the order they are first named.
void buffers_in_order(const std::vector<Stmt>& stmts, std::vector<std::string>& names) {
  auto note = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e->kind == ExprKind::kLoad) note(e->name);
    for (const Expr& operand : e->operands) walk(operand);
  };
  for (const Stmt& s : stmts) {
    for (const Expr* e : {&s->value, &s->index, &s->end})
      if (*e) walk(*e);
    if (s->kind == StmtKind::kStore) note(s->name);
    buffers_in_order(s->body, names);
    buffers_in_order(s->orelse, names);
  }
}

// `s` with its variables and buffers renamed (expr.h's `renamed`), the
// names it defines, assigns, reduces or stores to included; and without its
// comments if `drop_comments`.
Stmt with_names(const Stmt& s, const std::map<std::string, std::string>& variables,
                const std::map<std::string, std::string>& buffers, bool drop_comments) {
  StmtNode node = *s;
  for (Expr* e : {&node.value, &node.index, &node.end})
    if (*e) *e = renamed(*e, variables, buffers);
  const std::map<std::string, std::string>& names = node.kind == StmtKind::kStore ? buffers : variables;
  if (auto it = names.find(node.name); it != names.end()) node.name = it->second;
  if (auto it = variables.find(node.reduced); it != variables.end()) node.reduced = it->second;
  if (drop_comments) node.comment.clear();
  for (std::vector<Stmt>* block : {&node.body, &node.orelse})
    for (Stmt& nested : *block) nested = with_names(nested, variables, buffers, drop_comments);
  return make(std::move(node));
}

// The variables `stmts` define (lets and declarations), in order.
void locals_in_order(const std::vector<Stmt>& stmts, std::vector<std::string>& names) {
  for (const Stmt& s : stmts) {
    if (s->kind == StmtKind::kLet || s->kind == StmtKind::kDeclare) names.push_back(s->name);
    locals_in_order(s->body, names);
    locals_in_order(s->orelse, names);
  }
}

}  // namespace

Stmt with_buffers_as_arguments(const Stmt& loop) {
  if (loop->kind != StmtKind::kParallel) return loop;
  std::vector<std::string> named;
  buffers_in_order(loop->body, named);
  StmtNode node = *loop;
  std::map<std::string, std::string> operands;
  for (const std::string& name : named) {
    bool is_argument = false;
    for (const auto& argument : node.arguments.buffers) is_argument = is_argument || argument.first == name;
    if (is_argument) continue;
    std::string operand = "operand_" + std::to_string(operands.size());
    operands[name] = operand;
    node.arguments.buffers.emplace_back(operand, name);
  }
  if (operands.empty()) return loop;
  for (Stmt& s : node.body) s = with_names(s, {}, operands, false);
  return make(std::move(node));
}

Stmt shareable_form(const Stmt& loop) {
  Stmt portable = with_buffers_as_arguments(loop);
  std::vector<std::string> locals;
  locals_in_order(portable->body, locals);
  std::map<std::string, std::string> variables;
  for (const std::string& name : locals) variables.emplace(name, "v" + std::to_string(variables.size()));
  StmtNode node = *portable;
  for (Stmt& s : node.body) s = with_names(s, variables, {}, true);
  return make(std::move(node));
}

Stmt copy(std::string buffer, std::string source, int64_t elements, std::string comment) {
  return make({.kind = StmtKind::kCopy, .name = std::move(buffer), .source = std::move(source), .count = elements,
               .comment = std::move(comment)});
}

Stmt run_primitive(std::string spec, std::string destination, std::string comment) {
  return make({.kind = StmtKind::kRunPrimitive, .name = std::move(destination), .source = std::move(spec),
               .comment = std::move(comment)});
}

bool equal(const Stmt& a, const Stmt& b) {
  if (a == b) return true;
  return a->hash == b->hash && a->kind == b->kind && a->name == b->name && a->dtype == b->dtype &&
         a->precision == b->precision && equal_or_null(a->value, b->value) && equal_or_null(a->index, b->index) &&
         equal_or_null(a->end, b->end) && a->loop == b->loop && a->vector_width == b->vector_width &&
         a->reduction == b->reduction && a->reduced == b->reduced && a->source == b->source && a->count == b->count &&
         a->grain == b->grain &&
         equal(a->body, b->body) && equal(a->orelse, b->orelse) && equal(a->arguments, b->arguments);
}

bool equal(const std::vector<Stmt>& a, const std::vector<Stmt>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i])) return false;
  return true;
}

size_t hash(const std::vector<Stmt>& stmts) {
  size_t h = stmts.size();
  for (const Stmt& s : stmts) h = hash_mix(h, s->hash);
  return h;
}

void visit_exprs(const std::vector<Stmt>& stmts, const std::function<void(const Expr&)>& visit) {
  std::vector<Expr> pending;
  auto walk = [&](const Expr& root) {
    pending.push_back(root);
    while (!pending.empty()) {
      Expr e = std::move(pending.back());
      pending.pop_back();
      visit(e);
      for (auto it = e->operands.rbegin(); it != e->operands.rend(); ++it) pending.push_back(*it);
    }
  };
  for (const Stmt& s : stmts) {
    for (const Expr* e : {&s->value, &s->index, &s->end})
      if (*e) walk(*e);
    visit_exprs(s->body, visit);
    visit_exprs(s->orelse, visit);
  }
}

}  // namespace switchyard::kernel_ir
