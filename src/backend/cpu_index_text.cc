// The index maps of cpu_index.cc as C++ text, for the generator that still
// writes text (the plain-loop anchors of cpu_direct.cc and their epilogues):
// text indices become opaque kernel IR variables, the map runs on the IR,
// and the result is rendered back, so the maps exist once.
#include <algorithm>
#include <cctype>

#include "backend/cpu_index.h"
#include "backend/cpu_render.h"

namespace switchyard {

namespace ki = kernel_ir;

ElementIndex ElementIndex::at_offset(std::string offset) {
  ElementIndex i;
  i.offset = std::move(offset);
  return i;
}

ElementIndex ElementIndex::at_coords(std::vector<std::string> coords) {
  ElementIndex i;
  i.coords = std::move(coords);
  i.has_coords = true;
  return i;
}

ElementIndex ElementIndex::at(std::string offset, std::vector<std::string> coords) {
  ElementIndex i = at_coords(std::move(coords));
  i.offset = std::move(offset);
  return i;
}

std::string ElementIndex::key() const {
  if (!offset.empty()) return "[" + offset + "]";
  std::string k = "(";
  for (const std::string& c : coords) k += c + ",";
  return k + ")";
}

std::string parenthesize(const std::string& e) {
  bool number = !e.empty() && std::isdigit(static_cast<unsigned char>(e[0]));
  for (size_t i = 0; i < e.size(); ++i) {
    char c = e[i];
    bool exponent_sign = number && (c == '+' || c == '-') && i > 0 && e[i - 1] == 'e';
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && !(number && c == '.') && !exponent_sign)
      return "(" + e + ")";
  }
  return e;
}

std::string plus(const std::string& e, int64_t k) {
  if (k == 0) return e;
  if (e == "0") return std::to_string(k);
  return k > 0 ? e + " + " + std::to_string(k) : e + " - " + std::to_string(-k);
}

std::string times(const std::string& e, int64_t k) {
  if (k == 0 || e == "0") return "0";
  if (k == 1) return e;
  return parenthesize(e) + " * " + std::to_string(k);
}

namespace {

// A number stays an immediate (the maps fold 0 and test for it); any other
// text is an opaque variable, parenthesized where precedence needs it.
ki::Expr from_text(const std::string& text) {
  bool number = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c); });
  return number ? ki::index(std::stoll(text)) : ki::var(text);
}

IndexAt from_text(const ElementIndex& index) {
  IndexAt at;
  if (!index.offset.empty()) at.offset = from_text(index.offset);
  for (const std::string& c : index.coords) at.coords.push_back(from_text(c));
  at.has_coords = index.has_coords;
  return at;
}

std::vector<std::string> to_text(const std::vector<ki::Expr>& exprs) {
  std::vector<std::string> out;
  for (const ki::Expr& e : exprs) out.push_back(render_cpu_index(e));
  return out;
}

ElementIndex to_text(const IndexAt& at) {
  ElementIndex index;
  if (at.offset) index.offset = render_cpu_index(at.offset);
  index.coords = to_text(at.coords);
  index.has_coords = at.has_coords;
  return index;
}

}  // namespace

std::string offset_of(const ElementIndex& index, const std::vector<int64_t>& shape) {
  return render_cpu_index(offset_of(from_text(index), shape));
}

std::vector<std::string> coordinates_of(const ElementIndex& index, const std::vector<int64_t>& shape,
                                        IndexCost* cost) {
  return to_text(coordinates_of(from_text(index), shape, cost ? &cost->divided : nullptr));
}

ElementIndex broadcast_index(const ElementIndex& index, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>& operand_shape, IndexCost* cost) {
  return to_text(broadcast_index(from_text(index), shape, operand_shape, cost ? &cost->divided : nullptr));
}

ElementIndex argument_index(const CallNode& call, size_t arg, const ElementIndex& index, IndexCost* cost) {
  return to_text(argument_index(call, arg, from_text(index), cost ? &cost->divided : nullptr));
}

}  // namespace switchyard
