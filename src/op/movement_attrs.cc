// The data-movement operators' attributes (see movement_attrs.h). The
// checks see values of the registry's kinds (normalize_attrs coerces them
// first) and need no type.
#include "op/movement_attrs.h"

#include <algorithm>
#include <limits>

#include "op/attr_read.h"
#include "op/relation_helpers.h"
#include "op/shape_rules.h"

namespace switchyard {

namespace {

// No entry of `values` twice (by number: -1 and n-1 need the rank).
void check_distinct(const std::string& op, const char* attr, const std::vector<int64_t>& values) {
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end())
    type_fail(op, std::string(attr) + " " + ints_str(values) + " names " + std::to_string(*twice) + " twice");
}

// The attribute's dimensions when it names them as strings (AttrKind::kDims); nullopt for numbers.
std::optional<std::vector<DimExpr>> named_dimensions(const AttrsNode& attrs, const char* name) {
  const AttrValue* given = attrs.find(name);
  auto* texts = given ? std::get_if<std::vector<std::string>>(given) : nullptr;
  if (!texts) return std::nullopt;
  std::vector<DimExpr> dims;
  for (const std::string& text : *texts) dims.push_back(parse_dim(text));
  return dims;
}

}  // namespace

std::vector<DimExpr> ReshapeAttrs::target() const { return symbolic.empty() ? constant_dims(newshape) : symbolic; }

ReshapeAttrs reshape_attrs(const AttrsNode& attrs) {
  if (std::optional<std::vector<DimExpr>> named = named_dimensions(attrs, "newshape")) return {{}, std::move(*named)};
  return {attr_read::integers(attrs, "newshape"), {}};
}

void check_reshape_attrs(const ReshapeAttrs& attrs) {
  const std::vector<DimExpr> target = attrs.target();
  const std::string written = newshape_text(target);
  if (std::count(target.begin(), target.end(), DimExpr(int64_t(-1))) > 1)
    type_fail("reshape", "newshape " + written + " has more than one -1 (at most one dimension is inferred)");
  for (const DimExpr& d : target)
    if (d.constant().value_or(0) < -1)
      type_fail("reshape", "newshape " + written + " has " + dim_to_string(d) +
                               "; entries are sizes, 0 (copy the input dimension) or -1 (infer)");
}

std::vector<std::pair<std::string, AttrValue>> attr_entries(const ReshapeAttrs& attrs) {
  if (attrs.symbolic.empty()) return {{"newshape", attrs.newshape}};
  std::vector<std::string> texts;
  for (const DimExpr& d : attrs.symbolic) texts.push_back(dim_to_string(d));
  return {{"newshape", texts}};
}

TransposeAttrs transpose_attrs(const AttrsNode& attrs) { return {attr_read::optional_integers(attrs, "axes")}; }

// n is the list's own length, so this needs no type.
void check_transpose_attrs(const TransposeAttrs& attrs) {
  if (!attrs.axes) return;
  const std::vector<int64_t>& axes = *attrs.axes;
  int64_t n = int64_t(axes.size());
  std::vector<bool> seen(axes.size(), false);
  for (int64_t a : axes) {
    int64_t normalized = a < 0 ? a + n : a;
    if (normalized < 0 || normalized >= n || seen[size_t(normalized)])
      type_fail("transpose", "axes " + ints_str(axes) + " is not a permutation of 0.." + std::to_string(n - 1));
    seen[size_t(normalized)] = true;
  }
}

std::vector<std::pair<std::string, AttrValue>> attr_entries(const TransposeAttrs& attrs) {
  return {{"axes", attrs.axes ? AttrValue(*attrs.axes) : AttrValue()}};
}

ExpandDimsAttrs expand_dims_attrs(const AttrsNode& attrs) {
  return {.axis = attr_read::integer(attrs, "axis"), .num_newaxis = attr_read::integer(attrs, "num_newaxis")};
}

void check_expand_dims_attrs(const ExpandDimsAttrs& attrs) {
  if (attrs.num_newaxis < 0)
    type_fail("expand_dims", "num_newaxis must not be negative, got " + std::to_string(attrs.num_newaxis));
}

SqueezeAttrs squeeze_attrs(const AttrsNode& attrs) { return {attr_read::optional_integers(attrs, "axis")}; }

void check_squeeze_attrs(const SqueezeAttrs& attrs) {
  if (attrs.axes) check_distinct("squeeze", "axis", *attrs.axes);
}

ConcatenateAttrs concatenate_attrs(const AttrsNode& attrs) { return {attr_read::integer(attrs, "axis")}; }

SplitAttrs split_attrs(const AttrsNode& attrs) {
  SplitAttrs split{.axis = attr_read::integer(attrs, "axis")};
  const AttrValue& sections = attr_read::value(attrs, "indices_or_sections");
  if (const int64_t* count = std::get_if<int64_t>(&sections))
    split.indices_or_sections = *count;
  else
    split.indices_or_sections = attr_read::integers(attrs, "indices_or_sections");
  return split;
}

void check_split_attrs(const SplitAttrs& attrs) {
  if (const int64_t* sections = std::get_if<int64_t>(&attrs.indices_or_sections)) {
    if (*sections <= 0)
      type_fail("split", "indices_or_sections must be a positive number of sections, got " + std::to_string(*sections));
    return;
  }
  const auto& indices = std::get<std::vector<int64_t>>(attrs.indices_or_sections);
  int64_t previous = 0;
  for (int64_t index : indices) {
    if (index <= previous)
      type_fail("split", "indices_or_sections " + ints_str(indices) + " must be positive and strictly ascending");
    previous = index;
  }
}

AttrValue sections_value(const SplitAttrs& attrs) {
  return std::visit([](const auto& v) { return AttrValue(v); }, attrs.indices_or_sections);
}

StridedSliceAttrs strided_slice_attrs(const AttrsNode& attrs) {
  std::string mode = attr_read::string(attrs, "slice_mode");
  check_one_of("strided_slice", "slice_mode", mode, {"end", "size"});
  std::vector<int64_t> end;
  std::vector<DimExpr> symbolic_end;
  if (std::optional<std::vector<DimExpr>> named = named_dimensions(attrs, "end")) {
    symbolic_end = std::move(*named);
    for (const DimExpr& d : symbolic_end) end.push_back(d.constant().value_or(std::numeric_limits<int64_t>::max()));
  } else {
    end = attr_read::integers(attrs, "end");
  }
  return {.begin = attr_read::integers(attrs, "begin"),
          .end = std::move(end),
          .symbolic_end = std::move(symbolic_end),
          .strides = attr_read::optional_integers(attrs, "strides"),
          .axes = attr_read::optional_integers(attrs, "axes"),
          .slice_mode = mode == "size" ? SliceMode::kSize : SliceMode::kEnd};
}

void check_strided_slice_attrs(const StridedSliceAttrs& attrs) {
  const std::string op = "strided_slice";
  const std::vector<int64_t>& begin = attrs.begin;
  const std::vector<int64_t>& end = attrs.end;
  if (begin.size() != end.size())
    type_fail(op, "begin " + ints_str(begin) + " and end " + ints_str(end) + " must have the same length");
  if (attrs.axes && attrs.axes->size() != begin.size())
    type_fail(op, "axes " + ints_str(*attrs.axes) + " must name one dimension per begin entry " + ints_str(begin));
  if (!attrs.strides) return;
  const std::vector<int64_t>& strides = *attrs.strides;
  if (strides.size() > begin.size())
    type_fail(op, "strides " + ints_str(strides) + " has more entries than begin " + ints_str(begin));
  for (int64_t s : strides) {
    if (s == 0) type_fail(op, "strides " + ints_str(strides) + " has a zero stride");
    if (s != 1 && attrs.slice_mode == SliceMode::kSize)
      type_fail(op, "strides " + ints_str(strides) + " must be 1 when slice_mode is \"size\"");
  }
}

TakeAttrs take_attrs(const AttrsNode& attrs) {
  std::string mode = attr_read::string(attrs, "mode");
  check_one_of("take", "mode", mode, {"clip", "wrap", "fast"});
  return {.axis = attr_read::optional_integer(attrs, "axis"),
          .mode = mode == "wrap" ? TakeMode::kWrap : mode == "fast" ? TakeMode::kFast : TakeMode::kClip};
}

const char* take_mode_name(TakeMode mode) {
  switch (mode) {
    case TakeMode::kClip: return "clip";
    case TakeMode::kWrap: return "wrap";
    case TakeMode::kFast: return "fast";
  }
  return "?";
}

BroadcastToAttrs broadcast_to_attrs(const AttrsNode& attrs) {
  if (std::optional<std::vector<DimExpr>> named = named_dimensions(attrs, "shape")) return {{}, std::move(*named)};
  return {attr_read::integers(attrs, "shape"), {}};
}

void check_broadcast_to_attrs(const BroadcastToAttrs& attrs) {
  check_non_negative("broadcast_to", "shape", attrs.shape);
  for (const DimExpr& d : attrs.symbolic)
    if (d.coefficient() < 0)
      type_fail("broadcast_to", "shape " + newshape_text(attrs.symbolic) + " has the negative size " + dim_to_string(d));
}

}  // namespace switchyard
