// Reads a window call's attributes once (see window_attrs.h).
#include "op/window_attrs.h"

namespace switchyard {

namespace {

const std::vector<int64_t>* ints(const AttrsNode& attrs, const char* name) {
  const AttrValue* value = attrs.find(name);
  return value && std::holds_alternative<std::vector<int64_t>>(*value) ? &std::get<std::vector<int64_t>>(*value)
                                                                       : nullptr;
}

}  // namespace

WindowAttrs window_attrs(const CallNode& call) { return window_attrs(*call.attrs); }

WindowAttrs window_attrs(const AttrsNode& attrs) {
  WindowAttrs w;
  if (const std::vector<int64_t>* strides = ints(attrs, "strides")) std::tie(w.stride_h, w.stride_w) = expand_pair(*strides);
  if (const std::vector<int64_t>* dilation = ints(attrs, "dilation"))
    std::tie(w.dilation_h, w.dilation_w) = expand_pair(*dilation);
  if (const std::vector<int64_t>* padding = ints(attrs, "padding")) w.padding = expand_padding(*padding);
  if (const std::vector<int64_t>* pool = ints(attrs, "pool_size")) std::tie(w.pool_h, w.pool_w) = expand_pair(*pool);
  if (attrs.find("groups")) w.groups = attrs.get_int("groups");
  if (attrs.find("ceil_mode")) w.ceil_mode = attrs.get_bool("ceil_mode");
  if (attrs.find("count_include_pad")) w.count_include_pad = attrs.get_bool("count_include_pad");
  if (attrs.find("layout")) w.data_layout = attrs.get_string("layout");
  if (attrs.find("data_layout")) w.data_layout = attrs.get_string("data_layout");
  if (attrs.find("kernel_layout")) w.kernel_layout = attrs.get_string("kernel_layout");
  return w;
}

}  // namespace switchyard
