// Iterative release: objects whose count drops to zero while another object is
// being destroyed are queued instead of destroyed recursively.
#include "support/ref.h"

#include <vector>

namespace switchyard {

namespace {
thread_local bool releasing = false;
thread_local std::vector<const Object*>* pending = nullptr;
}  // namespace

void Object::dec_ref() const {
  if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (releasing) {
    pending->push_back(this);
    return;
  }
  std::vector<const Object*> queue;
  releasing = true;
  pending = &queue;
  delete this;
  while (!queue.empty()) {
    const Object* next = queue.back();
    queue.pop_back();
    delete next;
  }
  pending = nullptr;
  releasing = false;
}

}  // namespace switchyard
