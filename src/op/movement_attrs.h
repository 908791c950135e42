// The attributes of the injective data-movement operators (reshape,
// transpose, expand_dims, squeeze, concatenate, split, strided_slice, take,
// broadcast_to), a typed struct each, read in one place and checked once
// when the call is built (the registry's check_attrs: what needs no type;
// the type relation checks the rest against the input's shape).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/attrs.h"
#include "ir/dim.h"

namespace switchyard {

struct ReshapeAttrs {
  std::vector<int64_t> newshape;  // sizes, 0 (copy the input's dimension) or one -1 (inferred)
  // A target naming symbolic dimensions ("seq", "batch*seq"; constants as
  // in newshape), which 0s and -1s cannot say when several symbolic
  // dimensions move: (batch*seq, 16) to (seq, batch, 16). Empty for a
  // static target; newshape is empty when this is set.
  std::vector<DimExpr> symbolic;
  // Either form as expressions.
  std::vector<DimExpr> target() const;
};
ReshapeAttrs reshape_attrs(const AttrsNode& attrs);
void check_reshape_attrs(const ReshapeAttrs& attrs);
// The attributes of a call with these values (for make_op_call).
std::vector<std::pair<std::string, AttrValue>> attr_entries(const ReshapeAttrs& attrs);

struct TransposeAttrs {
  std::optional<std::vector<int64_t>> axes;  // None reverses the dimensions
};
TransposeAttrs transpose_attrs(const AttrsNode& attrs);
// axes must be a permutation of 0..n-1 (negative entries count from the end).
void check_transpose_attrs(const TransposeAttrs& attrs);
std::vector<std::pair<std::string, AttrValue>> attr_entries(const TransposeAttrs& attrs);

struct ExpandDimsAttrs {
  int64_t axis = 0;  // in [-rank - 1, rank]
  int64_t num_newaxis = 1;
};
ExpandDimsAttrs expand_dims_attrs(const AttrsNode& attrs);
void check_expand_dims_attrs(const ExpandDimsAttrs& attrs);

struct SqueezeAttrs {
  std::optional<std::vector<int64_t>> axes;  // None: every dimension of size 1
};
SqueezeAttrs squeeze_attrs(const AttrsNode& attrs);
// No dimension named twice by the same number.
void check_squeeze_attrs(const SqueezeAttrs& attrs);

struct ConcatenateAttrs {
  int64_t axis = 0;
};
ConcatenateAttrs concatenate_attrs(const AttrsNode& attrs);

struct SplitAttrs {
  std::variant<int64_t, std::vector<int64_t>> indices_or_sections;  // N equal pieces, or ascending split points
  int64_t axis = 0;
};
SplitAttrs split_attrs(const AttrsNode& attrs);
void check_split_attrs(const SplitAttrs& attrs);
// The attribute value split_sizes (shape_rules.h) takes.
AttrValue sections_value(const SplitAttrs& attrs);

enum class SliceMode : uint8_t { kEnd, kSize };  // end holds end indices, or sizes
struct StridedSliceAttrs {
  std::vector<int64_t> begin, end;
  // `end` as the attribute gives it when an entry names a symbolic
  // dimension (position_ids[:, :seq]: end=["1", "seq"]); empty otherwise.
  // `end` then holds INT64_MAX at those entries, so the rules that check
  // and clamp numbers run; only the type relation reads this (a symbolic
  // end must slice a static axis from 0 with step 1), and the interpreter
  // refuses it (specialisation states it first).
  std::vector<DimExpr> symbolic_end;
  std::optional<std::vector<int64_t>> strides;  // None: 1 on every axis
  std::optional<std::vector<int64_t>> axes;     // None: the first begin.size() dimensions
  SliceMode slice_mode = SliceMode::kEnd;
};
StridedSliceAttrs strided_slice_attrs(const AttrsNode& attrs);
void check_strided_slice_attrs(const StridedSliceAttrs& attrs);

enum class TakeMode : uint8_t { kClip, kWrap, kFast };  // out-of-range indices: clamped, wrapped, or an error
struct TakeAttrs {
  std::optional<int64_t> axis;  // None: of the flattened data
  TakeMode mode = TakeMode::kClip;
};
TakeAttrs take_attrs(const AttrsNode& attrs);
const char* take_mode_name(TakeMode mode);  // "clip", "wrap", "fast"

struct BroadcastToAttrs {
  std::vector<int64_t> shape;
  // A target naming symbolic dimensions (an attention mask expanded to
  // (batch, heads, 1, seq)); shape is empty when this is set.
  std::vector<DimExpr> symbolic;
  std::vector<DimExpr> target() const { return symbolic.empty() ? constant_dims(shape) : symbolic; }
};
BroadcastToAttrs broadcast_to_attrs(const AttrsNode& attrs);
void check_broadcast_to_attrs(const BroadcastToAttrs& attrs);

}  // namespace switchyard
