// Reads a window call's attributes once (see window_attrs.h).
#include "op/window_attrs.h"

#include "op/attr_read.h"

namespace switchyard {

WindowAttrs window_attrs(const CallNode& call) { return window_attrs(*call.attrs); }

WindowAttrs window_attrs(const AttrsNode& attrs) {
  using attr_read::optional_integers_or_none;
  WindowAttrs w;
  if (auto strides = optional_integers_or_none(attrs, "strides")) std::tie(w.stride_h, w.stride_w) = expand_pair(*strides);
  if (auto dilation = optional_integers_or_none(attrs, "dilation")) std::tie(w.dilation_h, w.dilation_w) = expand_pair(*dilation);
  if (auto padding = optional_integers_or_none(attrs, "padding")) w.padding = expand_padding(*padding);
  if (auto pool = optional_integers_or_none(attrs, "pool_size")) std::tie(w.pool_h, w.pool_w) = expand_pair(*pool);
  w.groups = attr_read::integer_or(attrs, "groups", w.groups);
  w.ceil_mode = attr_read::boolean_or(attrs, "ceil_mode", w.ceil_mode);
  w.count_include_pad = attr_read::boolean_or(attrs, "count_include_pad", w.count_include_pad);
  w.data_layout = attr_read::string_or(attrs, "layout", w.data_layout);
  w.data_layout = attr_read::string_or(attrs, "data_layout", w.data_layout);
  w.kernel_layout = attr_read::string_or(attrs, "kernel_layout", w.kernel_layout);
  return w;
}

}  // namespace switchyard
