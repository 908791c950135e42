// Converters of ONNX's GridSample and RoiAlign: sampling an image at
// coordinates known only at run time. Both become element-wise arithmetic
// on the coordinates (in float32, or float64 for float64 images), a `take`
// of each tap from the flattened image at a computed index, and a weighted
// sum of the taps; a tap outside the image is masked to 0 before it is
// weighted, so every backend that runs those IR operators runs these.
// GridSample follows PyTorch's grid_sample, which ONNX took it from;
// RoiAlign follows ONNX Runtime's kernel (its max mode included).
#include <cmath>

#include "frontend/onnx/converters.h"

namespace switchyard {

namespace {

// Element-wise arithmetic on imported values, their constants of one dtype.
class Arith {
 public:
  Arith(NodeContext& c, DType dtype) : c_(c), dtype_(dtype) {}
  Expr k(double v) const { return c_.scalar(v, dtype_); }
  Expr add(const Expr& a, const Expr& b) const { return c_.call("add", {a, b}); }
  Expr sub(const Expr& a, const Expr& b) const { return c_.call("subtract", {a, b}); }
  Expr mul(const Expr& a, const Expr& b) const { return c_.call("multiply", {a, b}); }
  Expr div(const Expr& a, const Expr& b) const { return c_.call("divide", {a, b}); }
  Expr floor(const Expr& a) const { return c_.call("floor", {a}); }
  Expr round(const Expr& a) const { return c_.call("round", {a}); }
  Expr abs(const Expr& a) const { return c_.call("abs", {a}); }
  Expr fmod(const Expr& a, const Expr& b) const { return c_.call("fmod", {a, b}); }
  Expr equal(const Expr& a, const Expr& b) const { return c_.call("equal", {a, b}); }
  Expr less(const Expr& a, const Expr& b) const { return c_.call("less", {a, b}); }
  Expr greater(const Expr& a, const Expr& b) const { return c_.call("greater", {a, b}); }
  Expr both(const Expr& a, const Expr& b) const { return c_.call("where", {a, b, a}); }
  Expr either(const Expr& a, const Expr& b) const { return c_.call("where", {a, a, b}); }
  Expr select(const Expr& cond, const Expr& a, const Expr& b) const { return c_.call("where", {cond, a, b}); }
  Expr clip(const Expr& a, double low, double high) const {
    return c_.call("clip", {a}, {{"a_min", low}, {"a_max", high}});
  }

 private:
  NodeContext& c_;
  DType dtype_;
};

// The float type sampling computes in: float64 for float64 images, else float32.
DType compute_dtype(DType image) { return image == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

// One (y, x) column of a (..., 2) coordinate array, as (N, 1, P).
Expr coordinate_column(NodeContext& c, const Expr& pairs, int64_t column, int64_t n, int64_t points) {
  int64_t last = tensor_type_of(pairs).ndim() - 1;
  Expr picked = c.call("take", {pairs, c.constant(int64_vector({column}))}, {{"axis", last}});
  return reshape_to(c, picked, {n, 1, points});
}

// Reads image taps: `flat_image` is the (N*C*H*W) image, `row_base` (B, C, 1)
// int64 the offset of each (sample's image, channel) plane.
struct TapReader {
  NodeContext& c;
  const Arith& a;
  Expr flat_image;
  Expr row_base;
  int64_t height = 0, width = 0;
  DType dtype;

  // The image at integer-valued float coordinates (B, 1, P) as (B, C, P),
  // 0 where they are outside the image (or NaN).
  Expr at(const Expr& y, const Expr& x) const {
    Expr inside = a.both(a.both(a.greater(x, a.k(-1)), a.less(x, a.k(double(width)))),
                         a.both(a.greater(y, a.k(-1)), a.less(y, a.k(double(height)))));
    Expr offset = a.select(inside, a.add(a.mul(y, a.k(double(width))), x), a.k(0));
    Expr index = c.call("add", {row_base, cast_to(c, offset, DType::kInt64)});
    Expr value = cast_to(c, c.call("take", {flat_image, index}, {{"axis", int64_t(0)}, {"mode", std::string("clip")}}), dtype);
    return a.select(inside, value, a.k(0));
  }
};

// ---- GridSample --------------------------------------------------------------

enum class Padding { kZeros, kBorder, kReflection };

// PyTorch's reflect_coordinates: `x` mirrored into [low2 / 2, high2 / 2].
Expr reflect(const Arith& a, const Expr& x, double low2, double high2) {
  if (low2 == high2) return a.mul(x, a.k(0));
  double low = low2 / 2, span = (high2 - low2) / 2;
  Expr distance = a.abs(a.sub(x, a.k(low)));
  Expr extra = a.fmod(distance, a.k(span));
  Expr flips = a.floor(a.div(distance, a.k(span)));
  Expr even = a.equal(a.fmod(flips, a.k(2)), a.k(0));
  return a.select(even, a.add(extra, a.k(low)), a.add(a.sub(a.k(span), extra), a.k(low)));
}

struct GridSampleAttrs {
  std::string mode;  // "linear", "nearest" or "cubic"
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

// A coordinate in pixels from one in [-1, 1] across `size` pixels.
Expr unnormalize(const Arith& a, const Expr& g, int64_t size, bool align_corners) {
  double n = double(size);
  if (align_corners) return a.mul(a.div(a.add(g, a.k(1)), a.k(2)), a.k(n - 1));
  return a.div(a.sub(a.mul(a.add(g, a.k(1)), a.k(n)), a.k(1)), a.k(2));
}

// PyTorch's compute_coordinates: the padding mode applied to a coordinate.
Expr pad_coordinate(const Arith& a, const Expr& x, int64_t size, const GridSampleAttrs& g) {
  double n = double(size);
  if (g.padding == Padding::kZeros) return x;
  if (g.padding == Padding::kBorder) return a.clip(x, 0, n - 1);
  Expr reflected = g.align_corners ? reflect(a, x, 0, 2 * (n - 1)) : reflect(a, x, -1, 2 * n - 1);
  return a.clip(reflected, 0, n - 1);
}

// The cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 from
// floor(x), for t = x - floor(x).
std::vector<Expr> cubic_weights(const Arith& a, const Expr& t) {
  const double A = -0.75;
  auto near = [&](const Expr& x) {  // ((A + 2) x - (A + 3)) x x + 1, for |x| <= 1
    return a.add(a.mul(a.mul(a.sub(a.mul(a.k(A + 2), x), a.k(A + 3)), x), x), a.k(1));
  };
  auto far = [&](const Expr& x) {  // ((A x - 5A) x + 8A) x - 4A, for 1 < |x| < 2
    return a.sub(a.mul(a.add(a.mul(a.sub(a.mul(a.k(A), x), a.k(5 * A)), x), a.k(8 * A)), x), a.k(4 * A));
  };
  Expr one = a.k(1);
  return {far(a.add(t, one)), near(t), near(a.sub(one, t)), far(a.sub(a.k(2), t))};
}

// The sampled image (N, C, P) at pixel coordinates (N, 1, P).
Expr grid_sample_taps(const Arith& a, const TapReader& read, Expr y, Expr x, const GridSampleAttrs& g) {
  if (g.mode == "cubic") {
    Expr y0 = a.floor(y), x0 = a.floor(x);
    std::vector<Expr> wy = cubic_weights(a, a.sub(y, y0)), wx = cubic_weights(a, a.sub(x, x0));
    Expr sum;
    for (int i = 0; i < 4; ++i) {
      Expr yi = pad_coordinate(a, a.add(y0, a.k(i - 1)), read.height, g);
      Expr row;
      for (int j = 0; j < 4; ++j) {
        Expr xj = pad_coordinate(a, a.add(x0, a.k(j - 1)), read.width, g);
        Expr term = a.mul(read.at(yi, xj), wx[size_t(j)]);
        row = row ? a.add(row, term) : term;
      }
      Expr term = a.mul(row, wy[size_t(i)]);
      sum = sum ? a.add(sum, term) : term;
    }
    return sum;
  }
  y = pad_coordinate(a, y, read.height, g);
  x = pad_coordinate(a, x, read.width, g);
  if (g.mode == "nearest") return read.at(a.round(y), a.round(x));  // halves to even, as nearbyint
  Expr y0 = a.floor(y), x0 = a.floor(x), y1 = a.add(y0, a.k(1)), x1 = a.add(x0, a.k(1));
  Expr wy1 = a.sub(y, y0), wy0 = a.sub(y1, y), wx1 = a.sub(x, x0), wx0 = a.sub(x1, x);
  Expr top = a.add(a.mul(read.at(y0, x0), a.mul(wy0, wx0)), a.mul(read.at(y0, x1), a.mul(wy0, wx1)));
  Expr bottom = a.add(a.mul(read.at(y1, x0), a.mul(wy1, wx0)), a.mul(read.at(y1, x1), a.mul(wy1, wx1)));
  return a.add(top, bottom);
}

// GridSample attributes: version 16 names the modes bilinear and bicubic,
// 20 linear and cubic (and allows N-D images: only 2-D ones are converted).
GridSampleAttrs grid_sample_attrs(NodeContext& c, int version) {
  GridSampleAttrs g;
  std::string mode = c.attr_string("mode", version < 20 ? "bilinear" : "linear");
  std::string linear = version < 20 ? "bilinear" : "linear", cubic = version < 20 ? "bicubic" : "cubic";
  if (mode == linear) g.mode = "linear";
  else if (mode == cubic) g.mode = "cubic";
  else if (mode == "nearest") g.mode = "nearest";
  else c.fail("mode '" + mode + "' is not one of " + linear + ", nearest, " + cubic);
  std::string padding = c.attr_string("padding_mode", "zeros");
  if (padding == "zeros") g.padding = Padding::kZeros;
  else if (padding == "border") g.padding = Padding::kBorder;
  else if (padding == "reflection") g.padding = Padding::kReflection;
  else c.fail("padding_mode '" + padding + "' is not one of zeros, border, reflection");
  g.align_corners = c.attr_int("align_corners", 0) != 0;
  return g;
}

// GridSample of an (N, C, H, W) image at a grid (N, Ho, Wo, 2) of (x, y)
// coordinates in [-1, 1]: (N, C, Ho, Wo).
void convert_grid_sample(NodeContext& c, int version) {
  const std::vector<int64_t>& image = c.input_shape(0);
  const std::vector<int64_t>& grid = c.input_shape(1);
  if (image.size() != 4)
    c.fail("only 2-D images (N, C, H, W) are supported, got rank " + std::to_string(image.size()));
  if (grid.size() != 4 || grid[3] != 2 || grid[0] != image[0])
    c.fail("the grid must be (N, H_out, W_out, 2) with the image's N, got " + shape_to_string(grid));
  require_float(c, 0);
  require_float(c, 1);
  GridSampleAttrs g = grid_sample_attrs(c, version);
  int64_t n = image[0], channels = image[1], height = image[2], width = image[3], points = grid[1] * grid[2];
  if (height == 0 || width == 0) c.fail("the image is empty (" + shape_to_string(image) + ")");
  DType dtype = compute_dtype(c.input_dtype(0));
  Arith a(c, dtype);
  Expr coordinates = cast_to(c, c.input(1), dtype);
  Expr x = unnormalize(a, coordinate_column(c, coordinates, 0, n, points), width, g.align_corners);
  Expr y = unnormalize(a, coordinate_column(c, coordinates, 1, n, points), height, g.align_corners);
  TapReader read{c, a, reshape_to(c, c.input(0), {n * channels * height * width}),
                 c.constant(multiples_of(height * width, {n, channels, 1})), height, width, dtype};
  Expr sampled = grid_sample_taps(a, read, y, x, g);
  set_single_output(c, reshape_to(c, cast_to(c, sampled, c.input_dtype(0)), {n, channels, grid[1], grid[2]}));
}

// ---- RoiAlign ----------------------------------------------------------------

struct RoiAlignAttrs {
  bool average = true;  // mode avg, else max
  int64_t out_height = 1, out_width = 1, samples = 0;
  double scale = 1;
  bool half_pixel = false;  // shift the rois by -0.5 pixel; else (output_half_pixel) each is at least a pixel
};

// RoiAlign's attributes: coordinate_transformation_mode came with 16 (its
// default half_pixel); 10 behaves as output_half_pixel.
RoiAlignAttrs roi_align_attrs(NodeContext& c, int version) {
  RoiAlignAttrs r;
  std::string mode = c.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") c.fail("mode '" + mode + "' is not one of avg, max");
  r.average = mode == "avg";
  r.out_height = c.attr_int("output_height", 1);
  r.out_width = c.attr_int("output_width", 1);
  r.samples = c.attr_int("sampling_ratio", 0);
  r.scale = c.attr_float("spatial_scale", 1.0f);
  if (version >= 16) {
    std::string transform = c.attr_string("coordinate_transformation_mode", "half_pixel");
    if (transform != "half_pixel" && transform != "output_half_pixel")
      c.fail("coordinate_transformation_mode '" + transform + "' is not one of half_pixel, output_half_pixel");
    r.half_pixel = transform == "half_pixel";
  }
  if (r.out_height < 1 || r.out_width < 1) c.fail("output_height and output_width must be at least 1");
  if (r.samples < 0) c.fail("sampling_ratio must not be negative");
  if (r.samples == 0)
    c.fail("sampling_ratio 0 (a sample count per roi from its size, known only at run time) is not supported; "
           "give a positive sampling_ratio");
  return r;
}

// The (1, 1, P) bin index and offset within the bin, in bins, of each sample
// point along one axis, for points ordered (bin_y, sample_y, bin_x, sample_x).
std::pair<NDArray, NDArray> sample_offsets(const RoiAlignAttrs& r, bool along_y, DType dtype) {
  int64_t n = r.samples, points = r.out_height * n * r.out_width * n;
  NDArray bins(DType::kFloat64, {1, 1, points}), within(DType::kFloat64, {1, 1, points});
  for (int64_t p = 0; p < points; ++p) {
    int64_t sample_x = p % n, bin_x = p / n % r.out_width, sample_y = p / (n * r.out_width) % n,
            bin_y = p / (n * r.out_width * n);
    bins.as<double>()[p] = double(along_y ? bin_y : bin_x);
    within.as<double>()[p] = double(along_y ? sample_y : sample_x) + 0.5;
  }
  NDArray typed_bins(dtype, {1, 1, points}), typed_within(dtype, {1, 1, points});
  for (int64_t p = 0; p < points; ++p) {
    typed_bins.set_from_double(p, bins.get_as_double(p));
    typed_within.set_from_double(p, within.get_as_double(p));
  }
  return {typed_bins, typed_within};
}

// The sample coordinates (R, 1, P) along one axis of rois (R, 4) (x1, y1, x2, y2).
Expr sample_coordinates(NodeContext& c, const Arith& a, const Expr& rois, const RoiAlignAttrs& r, bool along_y,
                        DType dtype) {
  int64_t count = static_shape_of(rois)[0];
  Expr offset = a.k(r.half_pixel ? 0.5 : 0.0);
  Expr start = a.sub(a.mul(coordinate_column(c, rois, along_y ? 1 : 0, count, 1), a.k(r.scale)), offset);
  Expr end = a.sub(a.mul(coordinate_column(c, rois, along_y ? 3 : 2, count, 1), a.k(r.scale)), offset);
  Expr size = a.sub(end, start);
  if (!r.half_pixel) size = c.call("maximum", {size, a.k(1)});
  Expr bin = a.div(size, a.k(double(along_y ? r.out_height : r.out_width)));
  auto [bins, within] = sample_offsets(r, along_y, dtype);
  return a.add(a.add(start, a.mul(c.constant(bins), bin)), a.div(a.mul(c.constant(within), bin), a.k(double(r.samples))));
}

// ONNX Runtime's bilinear sample at (R, 1, P) coordinates, as (R, C, P): 0
// more than a pixel beyond the image, the edge pixels' values up to there;
// in max mode the largest of the four weighted taps.
Expr roi_sample(NodeContext& c, const Arith& a, const TapReader& read, const Expr& y, const Expr& x, bool average) {
  double height = double(read.height), width = double(read.width);
  Expr empty = a.either(a.either(a.less(y, a.k(-1)), a.greater(y, a.k(height))),
                        a.either(a.less(x, a.k(-1)), a.greater(x, a.k(width))));
  Expr yc = a.clip(y, 0, height - 1), xc = a.clip(x, 0, width - 1);
  Expr y0 = a.floor(yc), x0 = a.floor(xc);
  Expr y1 = c.call("minimum", {a.add(y0, a.k(1)), a.k(height - 1)});
  Expr x1 = c.call("minimum", {a.add(x0, a.k(1)), a.k(width - 1)});
  Expr ly = a.sub(yc, y0), lx = a.sub(xc, x0), hy = a.sub(a.k(1), ly), hx = a.sub(a.k(1), lx);
  Expr taps[4] = {a.mul(read.at(y0, x0), a.mul(hy, hx)), a.mul(read.at(y0, x1), a.mul(hy, lx)),
                  a.mul(read.at(y1, x0), a.mul(ly, hx)), a.mul(read.at(y1, x1), a.mul(ly, lx))};
  Expr value = taps[0];
  for (int i = 1; i < 4; ++i) value = average ? a.add(value, taps[i]) : c.call("maximum", {value, taps[i]});
  return a.select(empty, a.k(0), value);
}

// RoiAlign of an (N, C, H, W) image at rois (R, 4) of images batch_indices
// (R): (R, C, output_height, output_width), each bin the mean (or max) of
// sampling_ratio x sampling_ratio bilinear samples.
void convert_roi_align(NodeContext& c, int version) {
  const std::vector<int64_t>& image = c.input_shape(0);
  const std::vector<int64_t>& rois = c.input_shape(1);
  const std::vector<int64_t>& batch = c.input_shape(2);
  if (image.size() != 4) c.fail("X must be (N, C, H, W), got " + shape_to_string(image));
  if (rois.size() != 2 || rois[1] != 4) c.fail("rois must be (num_rois, 4), got " + shape_to_string(rois));
  if (batch.size() != 1 || batch[0] != rois[0])
    c.fail("batch_indices must be (num_rois), got " + shape_to_string(batch) + " for rois " + shape_to_string(rois));
  require_float(c, 0);
  require_float(c, 1);
  if (!dtype_is_int(c.input_dtype(2))) c.fail("batch_indices must be integers");
  RoiAlignAttrs r = roi_align_attrs(c, version);
  int64_t n = image[0], channels = image[1], height = image[2], width = image[3], count = rois[0];
  if (height == 0 || width == 0 || count == 0)
    c.fail("empty images or no rois are not supported (X " + shape_to_string(image) + ", rois " +
           shape_to_string(rois) + ")");
  DType dtype = compute_dtype(c.input_dtype(0));
  Arith a(c, dtype);
  Expr boxes = cast_to(c, c.input(1), dtype);
  Expr y = sample_coordinates(c, a, boxes, r, true, dtype), x = sample_coordinates(c, a, boxes, r, false, dtype);
  // Each roi's image offset; "fast" fails the run on a batch index outside [0, N).
  Expr image_offsets = c.constant(multiples_of(channels * height * width, {n}));
  Expr roi_offset = c.call("take", {image_offsets, cast_to(c, c.input(2), DType::kInt64)},
                           {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
  Expr row_base = c.call("add", {reshape_to(c, roi_offset, {count, 1, 1}),
                                 c.constant(multiples_of(height * width, {1, channels, 1}))});
  TapReader read{c, a, reshape_to(c, c.input(0), {n * channels * height * width}), row_base, height, width, dtype};
  Expr samples = reshape_to(c, roi_sample(c, a, read, y, x, r.average),
                            {count, channels, r.out_height, r.samples, r.out_width, r.samples});
  std::vector<std::pair<std::string, AttrValue>> over_samples = {{"axis", std::vector<int64_t>{3, 5}}};
  Expr pooled = r.average ? a.div(c.call("sum", {samples}, over_samples), a.k(double(r.samples * r.samples)))
                          : c.call("max", {samples}, over_samples);
  set_single_output(c, cast_to(c, pooled, c.input_dtype(0)));
}

}  // namespace

void register_sampling_converters() {
  add_onnx_converter("GridSample", {16, 20}, {{16, [](NodeContext& c) { convert_grid_sample(c, 16); }},
                                              {20, [](NodeContext& c) { convert_grid_sample(c, 20); }}});
  add_onnx_converter("RoiAlign", {10, 16}, {{10, [](NodeContext& c) { convert_roi_align(c, 10); }},
                                            {16, [](NodeContext& c) { convert_roi_align(c, 16); }}});
}

}  // namespace switchyard
