// docs/operators.md and the registry agree: every documented operator is
// registered with the documented pattern, attribute names, required
// attributes and defaults, and every registered operator is documented.
#include <cstdlib>
#include <map>
#include <set>

#include "cpp/op/op_test_util.h"
#include "support/test_paths.h"

namespace switchyard {
namespace registry_docs_test {

struct DocAttr {
  std::string name;
  std::string default_text;  // "required", "None", or the default's text
};

struct DocRow {
  std::vector<std::string> ops;
  std::vector<DocAttr> attrs;
  std::string pattern;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits at commas outside (), [] and quotes.
std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  bool quoted = false;
  for (char c : s) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (c == '(' || c == '[')) ++depth;
    if (!quoted && (c == ')' || c == ']')) --depth;
    if (c == ',' && depth == 0 && !quoted) {
      out.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!trim(current).empty()) out.push_back(trim(current));
  return out;
}

// "strides ([1, 1])" -> {strides, "[1, 1]"}; "pool_size (required, 1 or 2 ints)" -> required.
DocAttr parse_attr(const std::string& item) {
  DocAttr attr;
  size_t paren = item.find(" (");
  attr.name = trim(item.substr(0, paren));
  if (paren == std::string::npos) return attr;
  std::string inner = item.substr(paren + 2, item.rfind(')') - paren - 2);
  if (inner.rfind("required", 0) == 0) {
    attr.default_text = "required";
    return attr;
  }
  int depth = 0;
  size_t end = 0;
  for (; end < inner.size(); ++end) {
    char c = inner[end];
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth == 0 && (c == ':' || c == ';' || c == ',' || inner.compare(end, 2, " =") == 0 ||
                       inner.compare(end, 3, " or") == 0))
      break;
  }
  attr.default_text = trim(inner.substr(0, end));
  return attr;
}

std::vector<DocRow> parse_operator_table() {
  std::string text = testing::read_file(testing::source_dir() + "/docs/operators.md");
  std::vector<DocRow> rows;
  std::map<std::string, std::vector<DocAttr>> attrs_by_op;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
    pos = eol == std::string::npos ? text.size() : eol + 1;
    if (line.rfind("| ", 0) != 0 || line.rfind("| operator", 0) == 0) continue;
    std::vector<std::string> cells;
    size_t start = 1;
    for (size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1)
      cells.push_back(trim(line.substr(start, bar - start)));
    if (cells.size() != 5) continue;
    DocRow row;
    row.ops = split_top_level(cells[0]);
    row.pattern = cells[4];
    if (cells[2] != "—") {
      for (const std::string& item : split_top_level(cells[2])) {
        if (item.rfind("as ", 0) == 0) {  // "as max_pool2d, plus ..."
          std::string other = "nn." + trim(item.substr(3));
          row.attrs = attrs_by_op.at(other);
        } else if (item.rfind("plus ", 0) == 0) {
          row.attrs.push_back(parse_attr(item.substr(5)));
        } else {
          row.attrs.push_back(parse_attr(item));
        }
      }
    }
    // "src, dst (required device strings)": a bare name shares the next one's description.
    for (size_t i = row.attrs.size(); i-- > 1;)
      if (row.attrs[i - 1].default_text.empty()) row.attrs[i - 1].default_text = row.attrs[i].default_text;
    for (const std::string& op : row.ops) attrs_by_op[op] = row.attrs;
    rows.push_back(row);
  }
  return rows;
}

OpPattern pattern_of_letter(const std::string& letter) {
  static const std::map<std::string, OpPattern> letters = {
      {"E", OpPattern::kElementwise}, {"B", OpPattern::kBroadcast}, {"I", OpPattern::kInjective},
      {"R", OpPattern::kReduction},   {"A", OpPattern::kAnchor},    {"O", OpPattern::kOpaque}};
  auto it = letters.find(letter);
  if (it == letters.end()) throw std::logic_error("unknown pattern letter " + letter);
  return it->second;
}

TEST(OperatorDocs, TableParses) {
  std::vector<DocRow> rows = parse_operator_table();
  ASSERT_GE(rows.size(), 25u);
  EXPECT_EQ(rows[0].ops.size(), 7u);  // add ... minimum
}

TEST(OperatorDocs, EveryDocumentedOperatorIsRegisteredAsDocumented) {
  for (const DocRow& row : parse_operator_table()) {
    for (const std::string& name : row.ops) {
      SCOPED_TRACE(name);
      const OpDef* def = find_op_def(name);
      ASSERT_NE(def, nullptr) << "documented but not registered";
      EXPECT_EQ(op_pattern_name(def->pattern), std::string(op_pattern_name(pattern_of_letter(row.pattern))));
      ASSERT_EQ(def->attrs.size(), row.attrs.size());
      for (size_t i = 0; i < row.attrs.size(); ++i) {
        const DocAttr& doc = row.attrs[i];
        const AttrSpec& spec = def->attrs[i];
        EXPECT_EQ(spec.name, doc.name);
        bool has_default = !std::holds_alternative<std::monostate>(spec.default_value);
        if (doc.default_text == "required") {
          EXPECT_FALSE(has_default || spec.optional) << spec.name << " should be required";
        } else if (doc.default_text == "None") {
          EXPECT_TRUE(spec.optional && !has_default) << spec.name << " should default to None";
        } else if (auto* d = std::get_if<double>(&spec.default_value)) {
          EXPECT_EQ(*d, std::strtod(doc.default_text.c_str(), nullptr)) << spec.name;
        } else {
          EXPECT_EQ(attr_value_to_string(spec.default_value), doc.default_text) << spec.name;
        }
      }
    }
  }
}

TEST(OperatorDocs, EveryRegisteredOperatorIsDocumented) {
  std::set<std::string> documented;
  for (const DocRow& row : parse_operator_table()) documented.insert(row.ops.begin(), row.ops.end());
  for (const OpDef* def : all_op_defs()) {
    EXPECT_TRUE(documented.count(def->name)) << def->name << " is registered but not in docs/operators.md";
    EXPECT_TRUE(def->type_relation) << def->name;
    EXPECT_FALSE(def->doc.empty()) << def->name;
  }
}

}  // namespace registry_docs_test
}  // namespace switchyard
