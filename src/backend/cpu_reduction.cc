// Reduction kernels (sum, mean, max) with their element-wise prologue
// inlined into the innermost loop and their epilogue applied on store.
// Float sums accumulate in double, integer sums wrap in uint64; max keeps
// NumPy's NaN rule (a NaN wins and stays).
//
// When the innermost input axis is reduced, each output element runs its
// own reduction whose inner loop is contiguous. When trailing axes are kept,
// a tile of contiguous output elements accumulates side by side, so the
// input is still read along memory.
#include <algorithm>

#include "backend/cpu_kernel.h"
#include "op/registry.h"
#include "op/shape_rules.h"
#include "support/error.h"

namespace switchyard {

namespace {

constexpr int64_t kTile = 256;  // contiguous outputs reduced together

struct ReductionPlan {
  std::string op;
  Expr input;
  std::vector<int64_t> shape;  // the input's
  std::vector<bool> reduced;
  int64_t count = 1;           // input elements per output element
  size_t inner_begin = 0;      // the first of the kept axes after the last reduced one
  int64_t inner = 1;           // elements of those axes (contiguous in input and output)
  DType dtype = DType::kFloat32;
};

ReductionPlan plan(const CallNode& call) {
  ReductionPlan p;
  p.op = as<OpNode>(call.op)->name;
  p.input = call.args[0];
  p.shape = shape_of(p.input);
  p.dtype = dtype_of(p.input);
  p.reduced.assign(p.shape.size(), false);
  std::vector<int64_t> axes = reduce_axes(int64_t(p.shape.size()), *call.attrs, p.op);
  for (int64_t a : axes) {
    p.reduced[size_t(a)] = true;
    p.count *= p.shape[size_t(a)];
  }
  p.inner_begin = axes.empty() ? 0 : size_t(axes.back()) + 1;
  for (size_t d = p.inner_begin; d < p.shape.size(); ++d) p.inner *= p.shape[d];
  return p;
}

bool is_sum(const ReductionPlan& p) { return p.op != "max"; }

std::string accumulator_type(const ReductionPlan& p) {
  if (!is_sum(p)) return compute_type(p.dtype);
  return dtype_is_float(p.dtype) ? "double" : "uint64_t";
}

std::string initial_value(const ReductionPlan& p) {
  if (!is_sum(p)) return lowest_literal(p.dtype);
  return dtype_is_float(p.dtype) ? "0.0" : "0";
}

std::string accumulate(const ReductionPlan& p, const std::string& acc, const std::string& value) {
  if (is_sum(p)) return acc + (dtype_is_float(p.dtype) ? " += " + value + ";" : " += uint64_t(" + value + ");");
  if (dtype_is_float(p.dtype))
    return acc + " = (" + acc + " != " + acc + " || " + value + " <= " + acc + ") ? " + acc + " : " + value + ";";
  return acc + " = " + value + " > " + acc + " ? " + value + " : " + acc + ";";
}

// The reduced value in the input's compute type.
std::string finish(const ReductionPlan& p, const std::string& acc, std::set<CpuHelper>* helpers) {
  if (!is_sum(p)) return acc;
  std::string type = compute_type(p.dtype);
  if (dtype_is_float(p.dtype)) {
    std::string value = p.op == "mean" ? acc + " / " + std::to_string(p.count) + ".0" : acc;
    return round_to_dtype(p.dtype, "float(" + value + ")", helpers);
  }
  if (p.op == "mean")
    return p.count == 0 ? type + "(0)" : type + "(int64_t(" + acc + ") / " + std::to_string(p.count) + ")";
  return type + "(int64_t(" + acc + "))";
}

// Opens one loop per reduced axis of extent > 1, filling their coordinates.
// Returns how many loops it opened.
int open_reduced_loops(CodeWriter& body, const ReductionPlan& p, std::vector<std::string>* coords,
                       const std::string& innermost_pragma) {
  std::vector<size_t> loops;
  for (size_t d = 0; d < p.shape.size(); ++d)
    if (p.reduced[d] && p.shape[d] != 1) loops.push_back(d);
  for (size_t i = 0; i < loops.size(); ++i) {
    std::string r = "r" + std::to_string(loops[i]);
    (*coords)[loops[i]] = r;
    if (i + 1 == loops.size() && !innermost_pragma.empty()) body.line(innermost_pragma);
    body.open("for (int64_t " + r + " = 0; " + r + " < " + std::to_string(p.shape[loops[i]]) + "; ++" + r + ")");
  }
  return int(loops.size());
}

// Names the coordinates of the kept axes in `axes` (input dimensions) from
// the flat position `position` over them.
void name_kept_coordinates(CodeWriter& body, const ReductionPlan& p, const std::vector<size_t>& axes,
                           const std::string& position, std::vector<std::string>* coords) {
  std::vector<int64_t> extents;
  for (size_t d : axes) extents.push_back(p.shape[d]);
  std::vector<std::string> values = coordinates_of(ElementIndex::at_offset(position), extents, nullptr);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (values[i] == "0") continue;
    std::string name = "k" + std::to_string(axes[i]);
    body.line("const int64_t " + name + " = " + values[i] + ";");
    (*coords)[axes[i]] = name;
  }
}

std::string simd_reduction_pragma(const ReductionPlan& p) {
  if (is_sum(p)) return "#pragma omp simd reduction(+ : acc)";
  return dtype_is_float(p.dtype) ? "" : "#pragma omp simd reduction(max : acc)";
}

// The innermost axis is reduced: one accumulator per output element.
void per_output_reduction(CpuKernel& k, const ReductionPlan& p) {
  std::vector<size_t> kept;
  for (size_t d = 0; d < p.shape.size(); ++d)
    if (!p.reduced[d]) kept.push_back(d);
  int64_t outputs = 1;
  for (size_t d : kept) outputs *= p.shape[d];
  int64_t grain = std::max<int64_t>(1, kElementGrain / std::max<int64_t>(p.count, 1));
  k.parallel_loop("reduce", p.op + " over the reduced axes, one output element at a time", outputs, grain,
                  [&](CodeWriter& body) {
                    std::vector<std::string> coords(p.shape.size(), "0");
                    CodeWriter kept_coordinates, rest;
                    name_kept_coordinates(kept_coordinates, p, kept, "o", &coords);
                    rest.line(accumulator_type(p) + " acc = " + initial_value(p) + ";");
                    int loops = open_reduced_loops(rest, p, &coords, simd_reduction_pragma(p));
                    ElementEmitter prologue = k.emitter(rest);
                    std::string value = prologue.emit(p.input, ElementIndex::at_coords(coords));
                    rest.line(accumulate(p, "acc", value));
                    for (int i = 0; i < loops; ++i) rest.close();
                    std::string result = prologue.fresh(p.op);
                    rest.line("const " + compute_type(p.dtype) + " " + result + " = " + finish(p, "acc", &k.helpers) +
                              ";");
                    k.store_result(rest, result, ElementIndex::at_offset("o"));
                    body.open("for (int64_t o = begin; o < end; ++o)");
                    body.append(kept_coordinates);
                    body.append(rest);
                    body.close();
                  });
}

// Trailing kept axes: a tile of contiguous outputs accumulates together.
void tiled_reduction(CpuKernel& k, const ReductionPlan& p) {
  std::vector<size_t> outer_kept;
  for (size_t d = 0; d < p.inner_begin; ++d)
    if (!p.reduced[d]) outer_kept.push_back(d);
  int64_t outer = 1;
  for (size_t d : outer_kept) outer *= p.shape[d];
  int64_t tile = std::min(p.inner, kTile);
  int64_t tiles = (p.inner + tile - 1) / tile;
  bool ragged = p.inner % tile != 0;
  std::string width = ragged ? "width" : std::to_string(tile);
  int64_t grain = std::max<int64_t>(1, kElementGrain / std::max<int64_t>(p.count * tile, 1));
  std::vector<int64_t> inner_shape(p.shape.begin() + int64_t(p.inner_begin), p.shape.end());
  k.parallel_loop("reduce", p.op + " over the reduced axes, " + std::to_string(tile) + " contiguous outputs at a time",
                  outer * tiles, grain, [&](CodeWriter& body) {
                    body.open("for (int64_t item = begin; item < end; ++item)");
                    std::string outer_position = tiles == 1 ? "item" : "item / " + std::to_string(tiles);
                    body.line("const int64_t outer = " + outer_position + ";");
                    body.line("const int64_t first = " +
                              (tiles == 1 ? std::string("0") : "item % " + std::to_string(tiles) + " * " +
                                                                   std::to_string(tile)) + ";");
                    if (ragged)
                      body.line("const int64_t width = std::min<int64_t>(" + std::to_string(tile) + ", " +
                                std::to_string(p.inner) + " - first);");
                    std::vector<std::string> coords(p.shape.size(), "0");
                    name_kept_coordinates(body, p, outer_kept, "outer", &coords);
                    body.line(accumulator_type(p) + " acc[" + std::to_string(tile) + "];");
                    body.line("for (int64_t j = 0; j < " + width + "; ++j) acc[j] = " + initial_value(p) + ";");
                    int loops = open_reduced_loops(body, p, &coords, "");
                    body.line("#pragma omp simd");
                    body.open("for (int64_t j = 0; j < " + width + "; ++j)");
                    // The inner axes are contiguous in the input: its offset is
                    // the outer part's plus first + j.
                    std::vector<std::string> head = coords;
                    size_t split = p.inner_begin;
                    std::string position = "first + j";
                    std::vector<std::string> inner_coords =
                        coordinates_of(ElementIndex::at_offset(position), inner_shape, nullptr);
                    for (size_t d = split; d < p.shape.size(); ++d) {
                      head[d] = "0";
                      coords[d] = inner_coords[d - split];
                    }
                    std::string base = offset_of(ElementIndex::at_coords(head), p.shape);
                    std::string offset = base == "0" ? position : base + " + " + position;
                    ElementEmitter prologue = k.emitter(body);
                    std::string value = prologue.emit(p.input, ElementIndex::at(offset, coords));
                    body.line(accumulate(p, "acc[j]", value));
                    body.close();
                    for (int i = 0; i < loops; ++i) body.close();
                    body.open("for (int64_t j = 0; j < " + width + "; ++j)");
                    std::string result = prologue.fresh(p.op);
                    body.line("const " + compute_type(p.dtype) + " " + result + " = " +
                              finish(p, "acc[j]", &k.helpers) + ";");
                    k.store_result(body, result,
                                   ElementIndex::at_offset("outer * " + std::to_string(p.inner) + " + first + j"));
                    body.close();
                    body.close();
                  });
}

}  // namespace

void generate_reduction_kernel(CpuKernel& k) {
  ReductionPlan p = plan(*k.master);
  if (p.inner == 1) per_output_reduction(k, p);
  else tiled_reduction(k, p);
}

}  // namespace switchyard
