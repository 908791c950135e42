// Interning, parsing, joining and printing of targets and virtual devices.
#include "ir/virtual_device.h"

#include <map>
#include <mutex>
#include <tuple>

#include "ir/layout.h"
#include "runtime/clipped_text.h"
#include "support/error.h"

namespace switchyard {

namespace {

std::mutex& intern_mutex() {
  static std::mutex m;
  return m;
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

DeviceKind parse_kind(std::string_view s) {
  const DeviceKindInfo* info = find_device_kind(s);
  return info ? info->kind : DeviceKind::kUnconstrained;
}

}  // namespace

const Target* Target::get(std::string_view text) {
  std::string canonical;
  std::vector<std::string> words;
  std::string t = trim(text);
  size_t pos = 0;
  while (pos < t.size()) {
    size_t end = t.find(' ', pos);
    if (end == std::string::npos) end = t.size();
    if (end > pos) words.push_back(t.substr(pos, end - pos));
    pos = end + 1;
  }
  if (words.empty()) throw Error(ErrorKind::kUsage, "empty target");
  DeviceKind kind = parse_kind(words[0]);
  if (kind == DeviceKind::kUnconstrained)
    throw Error(ErrorKind::kUsage, "unknown target kind '" + clipped_text(words[0]) + "' in target \"" +
                                       clipped_text(t) + "\" (expected " + device_kind_names(" or ") + ")");
  for (const std::string& w : words) canonical += (canonical.empty() ? "" : " ") + w;
  static auto* table = new std::map<std::string, Target*>();
  std::lock_guard<std::mutex> lock(intern_mutex());
  auto it = table->find(canonical);
  if (it != table->end()) return it->second;
  auto* target = new Target();
  target->kind_ = kind;
  target->options_.assign(words.begin() + 1, words.end());
  target->text_ = canonical;
  (*table)[canonical] = target;
  return target;
}

const Target* Target::default_for(DeviceKind kind) {
  const DeviceKindInfo* info = device_kind_info(kind);
  return get(info ? info->name : device_kinds().front().name);
}

std::string Target::option(std::string_view flag) const {
  std::string prefix = std::string(flag) + "=";
  for (const std::string& o : options_)
    if (o.rfind(prefix, 0) == 0) return o.substr(prefix.size());
  return "";
}

const VirtualDevice* VirtualDevice::get(DeviceKind kind, int device_id, const Target* target,
                                        std::string_view memory_scope, std::string_view layout) {
  using Key = std::tuple<int, int, const Target*, std::string, std::string>;
  static auto* table = new std::map<Key, VirtualDevice*>();
  Key key{int(kind), device_id, target, std::string(memory_scope), std::string(layout)};
  std::lock_guard<std::mutex> lock(intern_mutex());
  auto it = table->find(key);
  if (it != table->end()) return it->second;
  auto* vd = new VirtualDevice();
  vd->kind_ = kind;
  vd->device_id_ = device_id;
  vd->target_ = target;
  vd->scope_ = std::string(memory_scope);
  vd->layout_ = std::string(layout);
  (*table)[key] = vd;
  return vd;
}

const VirtualDevice* VirtualDevice::unconstrained() {
  static const VirtualDevice* vd = get(DeviceKind::kUnconstrained, kNoId, nullptr, "");
  return vd;
}

const VirtualDevice* VirtualDevice::for_device(DeviceKind kind, int device_id) {
  return get(kind, device_id, Target::default_for(kind), "global");
}

const VirtualDevice* VirtualDevice::parse(std::string_view text) {
  std::string t = trim(text);
  if (t.size() >= 2 && t.front() == '{' && t.back() == '}') t = trim(std::string_view(t).substr(1, t.size() - 2));
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::kParse, "malformed device \"" + clipped_text(t) + "\": " + why);
  };
  auto parse_name = [&](const std::string& name, DeviceKind* kind, int* id) {
    size_t colon = name.find(':');
    std::string kind_text = name.substr(0, colon);
    *kind = parse_kind(kind_text);
    if (*kind == DeviceKind::kUnconstrained)
      throw bad("unknown device kind '" + clipped_text(kind_text) + "' (expected " + device_kind_names(" or ") + ")");
    *id = kNoId;
    if (colon == std::string::npos) return;
    std::string id_text = name.substr(colon + 1);
    if (id_text.empty() || id_text.size() > 6 || id_text.find_first_not_of("0123456789") != std::string::npos)
      throw bad("device id '" + clipped_text(id_text) + "' is not a non-negative integer");
    *id = std::stoi(id_text);
  };
  if (t.find('=') == std::string::npos) {
    DeviceKind kind;
    int id;
    parse_name(t, &kind, &id);
    if (id == kNoId) return get(kind, kNoId, nullptr, "");
    return for_device(kind, id);
  }
  // Full form: key="value" pairs separated by commas.
  DeviceKind kind = DeviceKind::kUnconstrained;
  int id = kNoId;
  const Target* target = nullptr;
  std::string scope;
  std::string layout;
  size_t pos = 0;
  bool seen[4] = {false, false, false, false};
  while (pos < t.size()) {
    size_t eq = t.find('=', pos);
    if (eq == std::string::npos) throw bad("expected key=\"value\"");
    std::string key = trim(t.substr(pos, eq - pos));
    size_t q1 = t.find_first_not_of(" \t", eq + 1);
    if (q1 == std::string::npos || t[q1] != '"') throw bad("value of '" + clipped_text(key) + "' must be quoted");
    size_t q2 = t.find('"', q1 + 1);
    if (q2 == std::string::npos) throw bad("unterminated string");
    std::string value = t.substr(q1 + 1, q2 - q1 - 1);
    int slot = key == "device" ? 0 : key == "target" ? 1 : key == "scope" ? 2 : key == "layout" ? 3 : -1;
    if (slot < 0) throw bad("unknown key '" + clipped_text(key) + "' (expected device, target, scope or layout)");
    if (seen[slot]) throw bad("key '" + key + "' given twice");
    seen[slot] = true;
    if (slot == 0) {
      parse_name(value, &kind, &id);
    } else if (slot == 1) {
      try {
        target = Target::get(value);
      } catch (const Error& e) {
        throw bad(e.message());
      }
    } else if (slot == 2) {
      if (value.empty()) throw bad("empty scope");
      scope = value;
    } else {
      if (value.empty() || !Layout::parse(value))
        throw bad("layout '" + clipped_text(value) + "' is not a layout (" + kLayoutSpellings + ")");
      layout = value;
    }
    pos = t.find_first_not_of(" \t", q2 + 1);
    if (pos == std::string::npos) break;
    if (t[pos] != ',') throw bad("expected ',' between parts");
    ++pos;
  }
  if (target && kind != DeviceKind::kUnconstrained && target->kind() != kind)
    throw bad(std::string("target kind '") + device_kind_name(target->kind()) +
              "' does not match device kind '" + device_kind_name(kind) + "'");
  if (target && kind == DeviceKind::kUnconstrained) kind = target->kind();
  return get(kind, id, target, scope, layout);
}

bool VirtualDevice::is_fully_unconstrained() const { return this == unconstrained(); }

bool VirtualDevice::is_fully_constrained() const {
  return kind_ != DeviceKind::kUnconstrained && device_id_ != kNoId && target_ && !scope_.empty();
}

const VirtualDevice* VirtualDevice::join(const VirtualDevice* a, const VirtualDevice* b) {
  if (a == b) return a;
  if (a->kind_ != DeviceKind::kUnconstrained && b->kind_ != DeviceKind::kUnconstrained &&
      a->kind_ != b->kind_)
    return nullptr;
  if (a->device_id_ != kNoId && b->device_id_ != kNoId && a->device_id_ != b->device_id_)
    return nullptr;
  if (a->target_ && b->target_ && a->target_ != b->target_) return nullptr;
  if (!a->scope_.empty() && !b->scope_.empty() && a->scope_ != b->scope_) return nullptr;
  if (!a->layout_.empty() && !b->layout_.empty() && a->layout_ != b->layout_) return nullptr;
  return get(a->kind_ != DeviceKind::kUnconstrained ? a->kind_ : b->kind_,
             a->device_id_ != kNoId ? a->device_id_ : b->device_id_,
             a->target_ ? a->target_ : b->target_, a->scope_.empty() ? b->scope_ : a->scope_,
             a->layout_.empty() ? b->layout_ : a->layout_);
}

const VirtualDevice* VirtualDevice::with_defaults(const VirtualDevice* d) const {
  return get(kind_ != DeviceKind::kUnconstrained ? kind_ : d->kind_,
             device_id_ != kNoId ? device_id_ : d->device_id_, target_ ? target_ : d->target_,
             scope_.empty() ? d->scope_ : scope_, layout_.empty() ? d->layout_ : layout_);
}

const VirtualDevice* VirtualDevice::with_layout(std::string_view layout) const {
  return get(kind_, device_id_, target_, scope_, layout);
}

bool VirtualDevice::same_device(const VirtualDevice* o) const {
  return kind_ == o->kind_ && device_id_ == o->device_id_;
}

bool VirtualDevice::is_short_form() const {
  return kind_ != DeviceKind::kUnconstrained && device_id_ != kNoId &&
         target_ == Target::default_for(kind_) && scope_ == "global" && layout_.empty();
}

std::string VirtualDevice::device_name() const {
  if (kind_ == DeviceKind::kUnconstrained) return "?";
  return std::string(device_kind_name(kind_)) + ":" +
         (device_id_ == kNoId ? std::string("?") : std::to_string(device_id_));
}

std::string VirtualDevice::str() const {
  if (is_short_form()) return device_name();
  std::string out = "{";
  auto add = [&](const std::string& k, const std::string& v) {
    if (out.size() > 1) out += ", ";
    out += k + "=\"" + v + "\"";
  };
  if (kind_ != DeviceKind::kUnconstrained) {
    if (device_id_ != kNoId) add("device", device_name());
    else if (!target_) add("device", device_kind_name(kind_));
  }
  if (target_) add("target", target_->str());
  if (!scope_.empty()) add("scope", scope_);
  if (!layout_.empty()) add("layout", layout_);
  return out + "}";
}

}  // namespace switchyard
