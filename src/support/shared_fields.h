// The fields of a tuple-shaped value (an interpreter value, a placement
// domain, a checked placement), shared: copying a tuple — into a let, out
// of a projection, into a lookup table per expression — is O(1), so values
// nested n deep take memory and time linear in n, not quadratic. Releasing
// and walking a deeply nested one is iterative, so depth costs no stack.
//
// T is the node type; it holds its own fields as a member `fields` of type
// SharedFields<T>.
#pragma once

#include <memory>
#include <utility>
#include <vector>

namespace switchyard {

template <typename T>
class SharedFields {
 public:
  SharedFields() = default;
  explicit SharedFields(std::vector<T> fields) : values_(std::make_shared<std::vector<T>>(std::move(fields))) {}
  SharedFields(const SharedFields&) = default;
  SharedFields(SharedFields&&) = default;
  // By value, so the old fields are released by the iterative destructor.
  SharedFields& operator=(SharedFields other) {
    values_.swap(other.values_);
    return *this;
  }
  ~SharedFields() {
    // Unlink uniquely owned nested fields into a worklist before freeing
    // each, so no destructor runs another one nested inside it.
    std::vector<std::shared_ptr<std::vector<T>>> pending;
    if (values_.use_count() == 1) pending.push_back(std::move(values_));
    while (!pending.empty()) {
      std::shared_ptr<std::vector<T>> values = std::move(pending.back());
      pending.pop_back();
      for (T& v : *values)
        if (v.fields.values_.use_count() == 1) pending.push_back(std::move(v.fields.values_));
    }
  }

  size_t size() const { return values_ ? values_->size() : 0; }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return (*values_)[i]; }
  const T* begin() const { return values_ ? values_->data() : nullptr; }
  const T* end() const { return values_ ? values_->data() + values_->size() : nullptr; }
  // Identifies these fields: copies of one tuple share it (for memo tables).
  const void* identity() const { return values_.get(); }

 private:
  std::shared_ptr<std::vector<T>> values_;
};

// Calls visit(node) on `root` and every node nested in its fields, depth
// first and in field order, without recursion.
template <typename T, typename Visit>
void visit_depth_first(const T& root, Visit&& visit) {
  std::vector<const T*> stack{&root};
  while (!stack.empty()) {
    const T* node = stack.back();
    stack.pop_back();
    visit(*node);
    for (const T* f = node->fields.end(); f != node->fields.begin();) stack.push_back(--f);
  }
}

}  // namespace switchyard
