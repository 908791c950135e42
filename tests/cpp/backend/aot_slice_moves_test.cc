// Strided slices that take one contiguous range of their source (whole
// trailing rows, through reshapes) lower to a memcpy at an offset in the
// entry, not a kernel; every other slice stays a kernel. Both kinds must
// give the interpreter's answer.
#include <gtest/gtest.h>

#include "aot_test_util.h"
#include "runtime/artifact.h"
#include "text/parser.h"

namespace switchyard::testing {
namespace aot_slice_moves_test {

// Builds `text` for `devices`, checks every output against the interpreter
// and returns the number of kernel calls in the manifest.
size_t kernels_matching_interpreter(const std::string& text, const std::string& devices, const std::string& name) {
  IRModule mod = parse_module(text, name);
  std::string dir = aot_scratch_dir(name) + "/artifact";
  build_artifact(mod, aot_options(devices), dir);
  auto artifact = Artifact::load(dir);
  std::map<std::string, NDArray> inputs = random_inputs(mod, 7);
  std::vector<NDArray> expected = interpret(mod, inputs);
  std::vector<NDArray> actual = artifact->run(inputs).outputs;
  EXPECT_EQ(actual.size(), expected.size()) << name;
  for (size_t i = 0; i < actual.size() && i < expected.size(); ++i)
    EXPECT_EQ(compare_arrays(actual[i], expected[i], 0, 0), "") << name << " output " << i;
  return artifact->manifest().kernels.size();
}

TEST(AotSliceMoves, ContiguousSlicesBecomeMovesAtTheirOffset) {
  const std::string text =
      "def @main(%x: Tensor[(4, 3, 5), float32]) {\n"
      "  %0 = reshape(strided_slice(%x, begin=[0], end=[1]), newshape=[3, 5]);\n"         // first row
      "  %1 = squeeze(strided_slice(%x, begin=[2], end=[3]), axis=[0]);\n"                 // middle row
      "  %2 = strided_slice(%x, begin=[3], end=[4]);\n"                                    // last row
      "  %3 = strided_slice(%x, begin=[1], end=[3]);\n"                                    // two whole rows
      "  %4 = strided_slice(%x, begin=[1, 1], end=[2, 3]);\n"                              // rows inside one block
      "  %5 = strided_slice(reshape(%x, newshape=[12, 5]), begin=[7], end=[9]);\n"         // after a reshape
      "  %6 = expand_dims(strided_slice(%x, begin=[3, 2, 0], end=[4, 3, 5]), axis=0);\n"  // the very last row
      "  %7 = strided_slice(%x, begin=[-2], end=[-3], strides=[-1]);\n"                    // one row, backwards
      "  (%0, %1, %2, %3, %4, %5, %6, %7)\n"
      "}\n";
  EXPECT_EQ(kernels_matching_interpreter(text, "cpu:0", "contiguous"), 0u);
}

TEST(AotSliceMoves, SlicesWithGapsStayKernels) {
  const std::string text =
      "def @main(%m: Tensor[(4, 6), float32], %v: Tensor[(8), float32]) {\n"
      "  %0 = strided_slice(%m, begin=[1], end=[3], axes=[1]);\n"                 // middle columns
      "  %1 = strided_slice(%v, begin=[0], end=[8], strides=[2]);\n"              // every other element
      "  %2 = strided_slice(%m, begin=[3], end=[0], strides=[-1]);\n"             // rows reversed
      "  %3 = strided_slice(%m, begin=[1, 0], end=[3, 5]);\n"                     // rows without their last column
      "  %4 = reshape(strided_slice(%m, begin=[0, 2], end=[4, 4]), newshape=[8]);\n"
      "  (%0, %1, %2, %3, %4)\n"
      "}\n";
  EXPECT_EQ(kernels_matching_interpreter(text, "cpu:0", "gaps"), 5u);
}

TEST(AotSliceMoves, SlicesOnTwoDevicesBecomeMoves) {
  const std::string text =
      "def @main(%x: Tensor[(6, 4), float32] @cpu:0) {\n"
      "  %0 = strided_slice(%x, begin=[2], end=[4]) @cpu:0;\n"
      "  %1 = device_copy(%x, src=\"cpu:0\", dst=\"cpu:1\") @cpu:1;\n"
      "  %2 = reshape(strided_slice(%1, begin=[5], end=[6]) @cpu:1, newshape=[4]) @cpu:1;\n"
      "  %3 = strided_slice(%1, begin=[0], end=[2], axes=[1]) @cpu:1;\n"  // columns: a kernel on cpu:1
      "  (%0, %2, %3)\n"
      "}\n";
  EXPECT_EQ(kernels_matching_interpreter(text, "cpu:0,cpu:1", "two_devices"), 1u);
}

}  // namespace aot_slice_moves_test
}  // namespace switchyard::testing
