// IRModule function table.
#include "ir/module.h"

#include "support/error.h"

namespace switchyard {

bool IRModule::contains(const std::string& name) const { return find(name) != nullptr; }

const Function* IRModule::find(const std::string& name) const {
  for (const auto& [n, f] : functions_)
    if (n == name) return &f;
  return nullptr;
}

const Function& IRModule::lookup(const std::string& name) const {
  const Function* f = find(name);
  if (!f) throw Error(ErrorKind::kUsage, "the module has no function @" + name);
  return *f;
}

void IRModule::add(const std::string& name, Function fn) {
  for (auto& [n, f] : functions_)
    if (n == name) {
      f = std::move(fn);
      return;
    }
  functions_.emplace_back(name, std::move(fn));
}

void IRModule::remove(const std::string& name) {
  for (size_t i = 0; i < functions_.size(); ++i)
    if (functions_[i].first == name) {
      functions_.erase(functions_.begin() + long(i));
      return;
    }
}

}  // namespace switchyard
