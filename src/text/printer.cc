// The canonical text printer (see printer.h).
//
// A function is printed in three linear passes over its nodes, none of which
// recurses on data depth:
//   1. layout: in reverse post-order (users before operands) count each node's
//      uses, give it a home block (the innermost block enclosing all its uses)
//      and decide whether it is bound (`%N = ...;`) or written in place;
//   2. place: a depth-first walk in evaluation order appends each bound node
//      and each `let` to its home block's statement list after everything it
//      depends on;
//   3. write: blocks are written with an explicit task stack; numbers are
//      given in text order.
#include "text/printer.h"

#include <algorithm>
#include <deque>
#include <string_view>
#include <unordered_set>

#include "op/registry.h"
#include "support/identifier.h"
#include "text/elided_constants.h"
#include "text/literals.h"
#include "text/printer_layout.h"
#include "text/node_index.h"

namespace switchyard {

namespace {

using namespace printer_layout;

// Prints one function (or one free-standing expression).
class FunctionPrinter {
 public:
  FunctionPrinter(const PrintOptions& options, ElidedConstants& constants, std::string& out)
      : options_(options), constants_(constants), out_(out) {}

  void print_def(const std::string& name, const Function& fn) {
    for (const Var& p : fn->params) name_var(p.get());
    prepare(fn->body.get());
    out_ += function_header("def " + global_text(name) + "(", *fn, true);
    out_ += " {\n";
    write(1);
    out_ += "}\n";
  }

  void print_root(const Expr& e) {
    prepare(e.get());
    write(0);
    if (!out_.empty() && out_.back() == '\n') out_.pop_back();
  }

 private:
  void prepare(const ExprNode* root) {
    collect(root);
    blocks_.push_back({-1, 0, root, {}});
    NodeInfo& r = info(root);
    r.uses = 1;
    r.home = 0;
    r.position = Position::kTail;
    layout();
    place(root);
  }

  uint32_t index_of(const ExprNode* n) {
    auto [index, inserted] = index_.insert(n);
    if (inserted) nodes_.push_back({.node = n});
    return index;
  }
  NodeInfo& info(const ExprNode* n) { return nodes_[index_of(n)]; }

  // Post-order of every node reachable from `root`, into order_.
  void collect(const ExprNode* root) {
    struct Frame {
      const ExprNode* node;
      bool expanded;
    };
    std::vector<Frame> stack{{root, false}};
    std::vector<bool> emitted;
    while (!stack.empty()) {
      Frame& top = stack.back();
      uint32_t index = index_of(top.node);
      if (index >= emitted.size()) emitted.resize(index + 1, false);
      if (emitted[index]) {
        stack.pop_back();
        continue;
      }
      if (!top.expanded) {
        top.expanded = true;
        const ExprNode* node = top.node;
        size_t first = stack.size();
        for_each_child(Expr(node), [&](const Expr& c) {
          int64_t child = index_.find(c.get());
          if (child < 0 || size_t(child) >= emitted.size() || !emitted[size_t(child)])
            stack.push_back({c.get(), false});
        });
        std::reverse(stack.begin() + long(first), stack.end());
        continue;
      }
      emitted[index] = true;
      order_.push_back(index);
      stack.pop_back();
    }
  }

  int32_t new_block(int32_t parent, const ExprNode* tail) {
    blocks_.push_back({parent, blocks_[parent].depth + 1, tail, {}});
    return int32_t(blocks_.size() - 1);
  }

  int32_t common_block(int32_t a, int32_t b) const {
    while (blocks_[a].depth > blocks_[b].depth) a = blocks_[a].parent;
    while (blocks_[b].depth > blocks_[a].depth) b = blocks_[b].parent;
    while (a != b) a = blocks_[a].parent, b = blocks_[b].parent;
    return a;
  }

  void use(const Expr& child, int32_t block, Position position) {
    NodeInfo& c = info(child.get());
    // An atom is written where it is used, so it needs no home; finding one
    // walks up the blocks, and a variable used at every level of a 100,000-
    // deep if chain made that quadratic.
    if (is_atom(child.get())) {
      ++c.uses;
      c.position = position;
      return;
    }
    c.home = c.uses++ == 0 ? block : common_block(c.home, block);
    c.position = position;
  }

  void layout() {
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      NodeInfo& u = nodes_[*it];
      if (u.uses == 0) continue;  // a binding occurrence only
      const ExprNode* n = u.node;
      int32_t home = u.home;
      u.bound = !is_atom(n) && !(u.uses == 1 && (u.position == Position::kTail || u.position == Position::kLetValue));
      switch (n->kind()) {
        case ExprKind::kCall: {
          auto* call = static_cast<const CallNode*>(n);
          use(call->op, home, Position::kOperand);
          for (const Expr& a : call->args) use(a, home, Position::kOperand);
          break;
        }
        case ExprKind::kTuple:
          for (const Expr& f : static_cast<const TupleNode*>(n)->fields) use(f, home, Position::kOperand);
          break;
        case ExprKind::kTupleGetItem:
          use(static_cast<const TupleGetItemNode*>(n)->tuple, home, Position::kOperand);
          break;
        case ExprKind::kIf: {
          auto* branch = static_cast<const IfNode*>(n);
          use(branch->cond, home, Position::kOperand);
          int32_t then_block = new_block(home, branch->then_branch.get());
          int32_t else_block = new_block(home, branch->else_branch.get());
          nodes_[*it].block = then_block;
          nodes_[*it].else_block = else_block;
          use(branch->then_branch, then_block, Position::kTail);
          use(branch->else_branch, else_block, Position::kTail);
          break;
        }
        case ExprKind::kFunction: {
          auto* fn = static_cast<const FunctionNode*>(n);
          int32_t body_block = new_block(home, fn->body.get());
          nodes_[*it].block = body_block;
          use(fn->body, body_block, Position::kTail);
          break;
        }
        case ExprKind::kLet: {
          auto* let = static_cast<const LetNode*>(n);
          bool chain = u.uses == 1 && u.position == Position::kTail;
          int32_t target = chain ? home : new_block(home, let->body.get());
          NodeInfo& l = nodes_[*it];
          l.chain_let = chain;
          if (!chain) l.block = target;
          use(let->value, target, Position::kLetValue);
          use(let->body, target, Position::kTail);
          break;
        }
        case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kGlobalVar: case ExprKind::kOp: break;
      }
    }
  }

  // Visits an operand: names free variables; returns whether to descend.
  bool needs_visit(const ExprNode* n) {
    if (n->kind() == ExprKind::kVar) {
      name_var(static_cast<const VarNode*>(n));
      return false;
    }
    return !is_atom(n) && !info(n).visited;
  }

  void place(const ExprNode* root) {
    struct Frame {
      uint32_t index;
      uint32_t stage;
    };
    std::vector<Frame> stack;
    if (needs_visit(root)) stack.push_back({index_of(root), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      NodeInfo* u = &nodes_[top.index];
      const ExprNode* n = u->node;
      if (top.stage == 0) {
        if (u->visited) {
          stack.pop_back();
          continue;
        }
        u->visited = true;
        if (n->kind() == ExprKind::kFunction)
          for (const Var& p : static_cast<const FunctionNode*>(n)->params) name_var(p.get());
      }
      const ExprNode* next = nullptr;
      bool done = false;
      if (n->kind() == ExprKind::kLet) {
        auto* let = static_cast<const LetNode*>(n);
        if (top.stage == 0) {
          next = let->value.get();
        } else if (top.stage == 1) {
          blocks_[u->chain_let ? u->home : u->block].statements.push_back({n, true});
          name_var(let->var.get());
          next = let->body.get();
        } else {
          done = true;
        }
      } else {
        next = evaluation_operand(n, top.stage);
        done = next == nullptr;
      }
      ++top.stage;
      if (done) {
        const NodeInfo& finished = nodes_[top.index];
        if (finished.bound) blocks_[finished.home].statements.push_back({n, false});
        stack.pop_back();
        continue;
      }
      if (needs_visit(next)) stack.push_back({index_of(next), 0});
    }
  }

  void name_var(const VarNode* v) {
    NodeInfo& i = info(v);
    if (i.name >= 0) return;
    std::string candidate = v->name_hint.empty() ? "v" : identifier_chars(v->name_hint);
    if (used_names_.count(candidate)) {
      std::string base = candidate;
      for (int k = 1; used_names_.count(candidate); ++k) candidate = base + "_" + std::to_string(k);
    }
    i.name = int32_t(names_.size());
    used_names_.insert(names_.emplace_back(std::move(candidate)));
  }

  const std::string& number(NodeInfo& i) {
    std::string candidate = std::to_string(next_number_++);
    while (used_names_.count(candidate)) candidate = std::to_string(next_number_++);
    i.name = int32_t(names_.size());
    return names_.emplace_back(std::move(candidate));
  }

  // A reference to a bound node or an atom.
  void write_reference(const ExprNode* n) {
    switch (n->kind()) {
      case ExprKind::kVar: name_var(static_cast<const VarNode*>(n)); break;
      case ExprKind::kGlobalVar: out_ += global_text(static_cast<const GlobalVarNode*>(n)->name); return;
      case ExprKind::kOp: out_ += static_cast<const OpNode*>(n)->name; return;
      case ExprKind::kConstant:
        if (is_atom(n)) {
          out_ += constants_.text(static_cast<const ConstantNode*>(n));
          return;
        }
        break;
      case ExprKind::kCall: case ExprKind::kFunction: case ExprKind::kLet: case ExprKind::kIf: case ExprKind::kTuple:
      case ExprKind::kTupleGetItem: break;
    }
    NodeInfo& i = info(n);
    out_ += '%';
    if (i.name < 0) {  // a node bound nowhere: only in an ill-formed function
      out_ += "?";
      return;
    }
    out_ += names_[i.name];
  }

  void write_attrs(const Attrs& attrs, const OpDef* def, bool first) {
    if (!attrs) return;
    auto emit = [&](const std::string& name, const AttrValue& value) {
      out_ += first ? "" : ", ";
      first = false;
      out_ += name;
      out_ += '=';
      out_ += attr_value_text(value);
    };
    if (def) {
      for (const AttrSpec& spec : def->attrs) {
        const AttrValue* value = attrs->find(spec.name);
        if (value && !attr_value_equal(*value, spec.default_value)) emit(spec.name, *value);
      }
    }
    for (const auto& [name, value] : attrs->entries()) {
      bool declared = false;
      if (def)
        for (const AttrSpec& spec : def->attrs) declared = declared || spec.name == name;
      if (!declared) emit(name, value);
    }
  }

  // A node without nested blocks, written in place.
  void write_simple(const ExprNode* n) {
    switch (n->kind()) {
      case ExprKind::kCall: {
        auto* call = static_cast<const CallNode*>(n);
        write_reference(call->op.get());
        out_ += '(';
        for (size_t i = 0; i < call->args.size(); ++i) {
          if (i) out_ += ", ";
          write_reference(call->args[i].get());
        }
        auto* op = as<OpNode>(call->op);
        write_attrs(call->attrs, op ? op->def : nullptr, call->args.empty());
        out_ += ')';
        return;
      }
      case ExprKind::kTuple: {
        auto* tuple = static_cast<const TupleNode*>(n);
        out_ += '(';
        for (size_t i = 0; i < tuple->fields.size(); ++i) {
          if (i) out_ += ", ";
          write_reference(tuple->fields[i].get());
        }
        out_ += tuple->fields.size() == 1 ? ",)" : ")";
        return;
      }
      case ExprKind::kTupleGetItem: {
        auto* item = static_cast<const TupleGetItemNode*>(n);
        // A literal before the dot would read as a float: "0.1" is not (0).1.
        bool literal = item->tuple->kind() == ExprKind::kConstant;
        if (literal) out_ += '(';
        write_reference(item->tuple.get());
        if (literal) out_ += ')';
        out_ += '.';
        out_ += std::to_string(item->index);
        return;
      }
      case ExprKind::kConstant: out_ += constants_.text(static_cast<const ConstantNode*>(n)); return;
      case ExprKind::kVar: case ExprKind::kFunction: case ExprKind::kLet: case ExprKind::kIf: case ExprKind::kGlobalVar:
      case ExprKind::kOp: write_reference(n); return;
    }
  }

  std::string device_suffix(const VirtualDevice* d) const {
    return d->is_fully_unconstrained() ? std::string() : " @" + d->str();
  }

  // Whether to show a binding's device; updates `previous` for kChanged.
  bool show_device(const VirtualDevice* d, const VirtualDevice*& previous, bool always) const {
    switch (options_.devices) {
      case PrintOptions::Devices::kNone: return false;
      case PrintOptions::Devices::kAll: return true;
      case PrintOptions::Devices::kChanged: {
        bool show = always || d != previous;
        previous = d;
        return show;
      }
    }
    return true;
  }

  // An explicit device where the parser would otherwise assume `implied`;
  // "@{}" states "unconstrained".
  std::string override_device(const VirtualDevice* d, const VirtualDevice* implied) const {
    if (options_.devices == PrintOptions::Devices::kNone || d == implied) return "";
    return d->is_fully_unconstrained() ? " @{}" : " @" + d->str();
  }

  std::string param_text(const Var& p) {
    NodeInfo& i = info(p.get());
    std::string text = "%" + names_[i.name];
    if (p->type_annotation) text += ": " + type_to_string(p->type_annotation);
    if (options_.devices != PrintOptions::Devices::kNone) text += device_suffix(p->virtual_device());
    return text;
  }

  // "def @f(%x: T, Primitive=1) -> U @dev" (or "fn (...)"); a long def
  // header puts one parameter per line.
  std::string function_header(const std::string& opening, const FunctionNode& fn, bool may_wrap) {
    std::vector<std::string> items;
    for (const Var& p : fn.params) items.push_back(param_text(p));
    if (fn.attrs)
      for (const auto& [name, value] : fn.attrs->entries()) items.push_back(name + "=" + attr_value_text(value));
    std::string tail = ")";
    if (fn.ret_type) tail += " -> " + type_to_string(fn.ret_type);
    if (options_.devices != PrintOptions::Devices::kNone) tail += device_suffix(fn.virtual_device());
    size_t length = opening.size() + tail.size();
    for (const std::string& item : items) length += item.size() + 2;
    std::string separator = ", ";
    if (may_wrap && length > 100 && items.size() > 1) separator = ",\n" + std::string(opening.size(), ' ');
    std::string text = opening;
    for (size_t i = 0; i < items.size(); ++i) text += (i ? separator : "") + items[i];
    return text + tail;
  }

  void push_text(std::string text) {
    Task t{Task::kText};
    t.text = std::move(text);
    tasks_.push_back(std::move(t));
  }
  // The indentation of a block nested in one at `indent`. Capped: text nested
  // 50,000 blocks deep (an if chain) would otherwise be mostly spaces,
  // quadratic in the depth (10 GB); past the cap, braces still show nesting.
  static int nested(int indent) {
    constexpr int kMostIndentLevels = 32;
    return std::min(indent + 1, kMostIndentLevels);
  }
  void push_block(int32_t block, int indent) {
    Task t{Task::kBlock};
    t.block = block;
    t.indent = indent;
    tasks_.push_back(std::move(t));
  }

  // Writes the definition of `n` followed by `device` and `after`; nested
  // blocks are pushed as tasks (so they come out after this returns).
  void write_definition(const ExprNode* n, int indent, const std::string& device, const char* after) {
    if (!opens_blocks(n)) {
      write_simple(n);
      out_ += device;
      out_ += after;
      return;
    }
    const NodeInfo& i = info(n);
    std::string closing(size_t(2 * indent), ' ');
    switch (n->kind()) {
      case ExprKind::kIf: {
        auto* branch = static_cast<const IfNode*>(n);
        out_ += "if (";
        write_reference(branch->cond.get());
        out_ += ") {\n";
        push_text(closing + "}" + device + after);
        push_block(i.else_block, nested(indent));
        push_text(closing + "} else {\n");
        push_block(i.block, nested(indent));
        return;
      }
      case ExprKind::kFunction:
        out_ += function_header("fn (", *static_cast<const FunctionNode*>(n), false);
        out_ += " {\n";
        break;
      case ExprKind::kLet:  // not a statement of this block: a block expression
      case ExprKind::kVar: case ExprKind::kConstant: case ExprKind::kCall: case ExprKind::kTuple:
      case ExprKind::kTupleGetItem: case ExprKind::kGlobalVar: case ExprKind::kOp:
        out_ += "{\n";
        break;
    }
    push_text(closing + "}" + after);
    push_block(i.block, nested(indent));
  }

  // The device written after a definition (functions carry theirs in the header).
  std::string definition_device(const ExprNode* n, const VirtualDevice*& previous, bool always) const {
    if (n->kind() == ExprKind::kFunction || !show_device(n->virtual_device(), previous, always)) return "";
    return device_suffix(n->virtual_device());
  }

  // Writes statements of a block from `task.next`; returns early (after
  // pushing its continuation) when a statement opens nested blocks.
  void write_block(Task task) {
    const Block& block = blocks_[task.block];
    std::string indent(size_t(2 * task.indent), ' ');
    for (uint32_t s = task.next; s < block.statements.size(); ++s) {
      const ExprNode* n = block.statements[s].node;
      out_ += indent;
      if (block.statements[s].is_let) {
        auto* let = static_cast<const LetNode*>(n);
        n = let->value.get();
        out_ += "let ";
        std::string own = override_device(let->virtual_device(), let->body->virtual_device());
        if (!own.empty()) out_ += own.substr(1) + " ";
        out_ += '%';
        out_ += names_[info(let->var.get()).name];
        if (let->var->type_annotation) out_ += ": " + type_to_string(let->var->type_annotation);
        out_ += override_device(let->var->virtual_device(), n->virtual_device());
        out_ += " = ";
        if (is_atom(n) || info(n).bound) {
          write_reference(n);
          out_ += ";\n";
          continue;
        }
      } else {
        out_ += '%';
        out_ += number(info(n));
        out_ += " = ";
      }
      std::string device = definition_device(n, task.previous, false);
      if (opens_blocks(n)) {
        Task rest = task;
        rest.next = s + 1;
        tasks_.push_back(std::move(rest));
        write_definition(n, task.indent, device, ";\n");
        return;
      }
      write_definition(n, task.indent, device, (";" + model_node_comment(n) + "\n").c_str());
    }
    const ExprNode* final = block.tail;
    while (final->kind() == ExprKind::kLet && info(final).chain_let) final = static_cast<const LetNode*>(final)->body.get();
    out_ += indent;
    if (is_atom(final) || info(final).bound) {
      write_reference(final);
      out_ += "\n";
      return;
    }
    write_definition(final, task.indent, definition_device(final, task.previous, true),
                     (model_node_comment(final) + "\n").c_str());
  }

  // "  # /layer1/conv/Conv" for a node imported from a model (its span is
  // the model node's name, not a file position), so the printed IR still
  // names the model's nodes. A comment: parsing the text gives file spans.
  static std::string model_node_comment(const ExprNode* n) {
    const Span& span = n->span();
    if (!span.defined() || span.line() != 0) return "";
    std::string name = span.to_string();
    for (char& c : name)
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    return "  # " + name;
  }

  void write(int indent) {
    push_block(0, indent);
    while (!tasks_.empty()) {
      Task task = std::move(tasks_.back());
      tasks_.pop_back();
      if (task.kind == Task::kText) out_ += task.text;
      else write_block(std::move(task));
    }
  }

  const PrintOptions& options_;
  ElidedConstants& constants_;
  std::string& out_;
  NodeIndex index_;
  std::vector<NodeInfo> nodes_;
  std::vector<uint32_t> order_;
  std::vector<Block> blocks_;
  std::vector<Task> tasks_;
  std::deque<std::string> names_;                 // stable addresses for used_names_
  std::unordered_set<std::string_view> used_names_;  // variable names, for uniqueness
  uint64_t next_number_ = 0;
};

}  // namespace

std::string print_module(const IRModule& module, const PrintOptions& options) {
  std::string out;
  ElidedConstants constants(options.show_weights);
  for (size_t i = 0; i < module.functions().size(); ++i) {
    if (i) out += "\n";
    const auto& [name, fn] = module.functions()[i];
    FunctionPrinter(options, constants, out).print_def(name, fn);
  }
  return constants.header() + out;
}

std::string print_expr(const Expr& expr, const PrintOptions& options) {
  std::string out;
  ElidedConstants constants(options.show_weights);
  FunctionPrinter(options, constants, out).print_root(expr);
  return constants.header() + out;
}

}  // namespace switchyard
