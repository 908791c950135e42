// A dense numbering of IR nodes: node pointer -> 0, 1, 2, ... in first-seen
// order. Open addressing with linear probing; the printer numbers millions of
// nodes, where std::unordered_map's per-entry allocation dominates.
#pragma once

#include <cstdint>
#include <vector>

namespace switchyard {

class NodeIndex {
 public:
  // The node's number, and whether it was new.
  std::pair<uint32_t, bool> insert(const void* node) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(node);; i = (i + 1) & mask) {
      if (slots_[i].key == node) return {slots_[i].value, false};
      if (!slots_[i].key) {
        slots_[i] = {node, uint32_t(size_)};
        return {uint32_t(size_++), true};
      }
    }
  }

  // The node's number, or -1 when it has none.
  int64_t find(const void* node) const {
    if (slots_.empty()) return -1;
    size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(node);; i = (i + 1) & mask) {
      if (slots_[i].key == node) return slots_[i].value;
      if (!slots_[i].key) return -1;
    }
  }

 private:
  struct Slot {
    const void* key = nullptr;
    uint32_t value = 0;
  };

  // Fibonacci hashing: the top bits of the product index the table.
  size_t slot_of(const void* node) const {
    return size_t(uint64_t(reinterpret_cast<uintptr_t>(node)) * 0x9e3779b97f4a7c15ull >> shift_);
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot());
    shift_ = 64;
    for (size_t n = slots_.size(); n > 1; n >>= 1) --shift_;
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (!s.key) continue;
      size_t i = slot_of(s.key);
      while (slots_[i].key) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace switchyard
