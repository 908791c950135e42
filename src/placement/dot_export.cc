// Dot output of a placed module.
#include "placement/dot_export.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <unistd.h>

#include "ir/functor.h"
#include "op/placement_ops.h"
#include "op/registry.h"
#include "support/error.h"

namespace switchyard {

namespace {

const char* kPalette[] = {"#8ecae6", "#ffb703", "#90be6d", "#f28482", "#cdb4db", "#bde0fe"};

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string placed_graph_to_dot(const IRModule& mod) {
  std::map<const VirtualDevice*, std::string> colour;
  auto colour_of = [&](const VirtualDevice* vd) {
    auto it = colour.find(vd);
    if (it != colour.end()) return it->second;
    std::string c = kPalette[colour.size() % (sizeof kPalette / sizeof kPalette[0])];
    colour[vd] = c;
    return c;
  };
  std::string nodes, edges;
  std::map<const ExprNode*, std::string> id;
  std::map<const ExprNode*, std::string> copy_label;  // device_copy -> its source node id
  int next = 0;
  for (const auto& [fname, fn] : mod.functions()) {
    post_order_visit(fn, [&](const Expr& e) {
      std::string label;
      if (const CallNode* c = as<CallNode>(e)) {
        const OpNode* op = as<OpNode>(c->op);
        if (op == device_copy_op()) return;  // drawn as edges
        label = op ? op->name : "call";
      } else if (const VarNode* v = as<VarNode>(e)) {
        label = "%" + v->name_hint;
      } else if (is<ConstantNode>(e)) {
        label = "constant";
      } else if (is<TupleNode>(e)) {
        label = "tuple";
      } else if (const TupleGetItemNode* t = as<TupleGetItemNode>(e)) {
        label = "." + std::to_string(t->index);
      } else if (is<IfNode>(e)) {
        label = "if";
      } else {
        return;
      }
      std::string n = "n" + std::to_string(next++);
      id[e.get()] = n;
      const VirtualDevice* vd = e->virtual_device();
      std::string text = label + "\\n" + escape(vd->device_name());
      if (e->span().defined()) text += "\\n" + escape(e->span().to_string());
      nodes += "  " + n + " [label=\"" + text + "\", style=filled, fillcolor=\"" + colour_of(vd) + "\"];\n";
    });
    // Edges: producer -> consumer; through a device_copy the edge is a copy.
    post_order_visit(fn, [&](const Expr& e) {
      if (!id.count(e.get())) return;
      std::vector<Expr> inputs;
      if (const CallNode* c = as<CallNode>(e)) inputs = c->args;
      else if (const TupleNode* t = as<TupleNode>(e)) inputs = t->fields;
      else if (const TupleGetItemNode* t = as<TupleGetItemNode>(e)) inputs = {t->tuple};
      else if (const IfNode* i = as<IfNode>(e)) inputs = {i->cond, i->then_branch, i->else_branch};
      for (const Expr& in : inputs) {
        const CallNode* copy = as_device_copy(in);
        const Expr& source = copy ? copy->args[0] : in;
        if (!id.count(source.get())) continue;
        edges += "  " + id[source.get()] + " -> " + id[e.get()];
        if (copy)
          edges += " [style=dashed, color=red, penwidth=2, label=\"copy " +
                   escape(source->virtual_device()->device_name() + " -> " + copy->virtual_device()->device_name()) +
                   "\"]";
        edges += ";\n";
      }
    });
  }
  std::string legend;
  for (const auto& [vd, c] : colour)
    legend += "    \"" + escape(vd->device_name()) + "\" [style=filled, fillcolor=\"" + c + "\"];\n";
  return "digraph placed {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n" + nodes + edges +
         "  subgraph cluster_legend {\n    label=\"devices\";\n" + legend + "  }\n}\n";
}

void render_svg(const std::string& dot_text, const std::string& svg_path) {
  if (system("command -v dot >/dev/null 2>&1") != 0)
    throw Error(ErrorKind::kUsage, "Graphviz 'dot' is not installed (apt-get install graphviz); use --emit-dot instead");
  std::string tmp = svg_path + ".dot.tmp";
  {
    std::ofstream out(tmp);
    out << dot_text;
  }
  std::string cmd = "dot -Tsvg '" + tmp + "' -o '" + svg_path + ".tmp' 2>&1";
  int rc = system(cmd.c_str());
  unlink(tmp.c_str());
  if (rc != 0) {
    unlink((svg_path + ".tmp").c_str());
    throw Error(ErrorKind::kUsage, "Graphviz 'dot' failed to render " + svg_path);
  }
  if (rename((svg_path + ".tmp").c_str(), svg_path.c_str()) != 0)
    throw Error(ErrorKind::kUsage, "cannot write " + svg_path);
}

}  // namespace switchyard
