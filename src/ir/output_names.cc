// Output names from a function's attribute, checked, or numbered.
#include "ir/output_names.h"

#include <set>

#include "support/error.h"

namespace switchyard {

namespace {

std::string numbered(size_t i) { return "output_" + std::to_string(i); }

}  // namespace

std::vector<std::string> output_names(const Function& fn, size_t count) {
  const AttrValue* declared = fn->attrs ? fn->attrs->find(kOutputNamesAttr) : nullptr;
  if (!declared) {
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) names.push_back(numbered(i));
    return names;
  }
  const auto* names = std::get_if<std::vector<std::string>>(declared);
  auto fail = [&](const std::string& why) {
    throw Error(ErrorKind::kType,
                std::string("function attribute ") + kOutputNamesAttr + "=" + attr_value_to_string(*declared) + ": " + why,
                fn->span());
  };
  if (!names) fail("expected a list of strings, one per output");
  if (names->size() != count)
    fail("names " + std::to_string(names->size()) + " outputs, but the function has " + std::to_string(count));
  std::set<std::string> seen;
  for (const std::string& name : *names) {
    if (name.empty()) fail("an output name is empty");
    if (!seen.insert(name).second) fail("output name \"" + name + "\" is given twice");
  }
  return *names;
}

std::vector<std::string> distinct_output_names(const std::vector<std::string>& wanted) {
  std::set<std::string> taken(wanted.begin(), wanted.end());
  std::set<std::string> used;
  std::vector<std::string> names;
  for (size_t i = 0; i < wanted.size(); ++i) {
    std::string name = wanted[i].empty() ? numbered(i) : wanted[i];
    if (used.count(name)) {
      std::string base = name;
      for (int n = 1; used.count(name) || taken.count(name); ++n) name = base + "_" + std::to_string(n);
    }
    used.insert(name);
    names.push_back(name);
  }
  return names;
}

}  // namespace switchyard
