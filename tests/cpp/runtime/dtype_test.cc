// Element types: names, sizes, C types and parsing of every dtype, and the
// wide and unsigned ones (float64, int16, uint16/32/64) held exactly.
#include "runtime/dtype.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "runtime/ndarray.h"

namespace switchyard {
namespace dtype_test {

TEST(DType, EveryDTypeHasAUniqueNameThatParsesBack) {
  std::set<std::string> names;
  for (DType t : kAllDTypes) {
    std::string name = dtype_name(t);
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(parse_dtype(name), t) << name;
  }
  EXPECT_EQ(names.size(), 13u);
  EXPECT_EQ(parse_dtype("float128"), std::nullopt);
  EXPECT_EQ(parse_dtype("double"), std::nullopt);  // the IR's names, not C's
}

TEST(DType, TheWideAndUnsignedTypesHaveTheirSizesAndCTypes) {
  struct Expected {
    const char* name;
    int bytes;
    const char* c_type;
    bool is_float, is_int, is_unsigned;
  };
  for (const Expected& e : {Expected{"float64", 8, "double", true, false, false},
                            Expected{"int16", 2, "int16_t", false, true, false},
                            Expected{"uint16", 2, "uint16_t", false, true, true},
                            Expected{"uint32", 4, "uint32_t", false, true, true},
                            Expected{"uint64", 8, "uint64_t", false, true, true},
                            Expected{"uint8", 1, "uint8_t", false, true, true},
                            Expected{"int64", 8, "int64_t", false, true, false},
                            Expected{"bool", 1, "bool", false, false, false}}) {
    DType t = *parse_dtype(e.name);
    EXPECT_EQ(dtype_bytes(t), e.bytes) << e.name;
    EXPECT_STREQ(dtype_c_type(t), e.c_type) << e.name;
    EXPECT_EQ(dtype_is_float(t), e.is_float) << e.name;
    EXPECT_EQ(dtype_is_int(t), e.is_int) << e.name;
    EXPECT_EQ(dtype_is_unsigned(t), e.is_unsigned) << e.name;
  }
}

TEST(DType, NumbersOfTheOldTypesStayAndTheNewOnesFollow) {
  // The C API's SY_DTYPE_* codes are these numbers.
  EXPECT_EQ(int(DType::kFloat32), 0);
  EXPECT_EQ(int(DType::kBool), 7);
  EXPECT_EQ(int(DType::kFloat64), 8);
  EXPECT_EQ(int(DType::kUInt64), 12);
}

TEST(DType, NDArraysHoldFloat64AndUnsignedValuesExactly) {
  NDArray d(DType::kFloat64, {2});
  d.set_from_double(0, 1.0 + 1e-12);
  d.set_from_double(1, 0.1);
  EXPECT_EQ(d.get_as_double(0), 1.0 + 1e-12);  // float32 would hold 1
  EXPECT_EQ(d.as<double>()[1], 0.1);
  NDArray u(DType::kUInt64, {1});
  u.set_from_double(0, 18446744073709549568.0);  // 2^64 - 2^11, beyond int64
  EXPECT_EQ(u.as<uint64_t>()[0], 18446744073709549568ull);
  EXPECT_EQ(u.get_as_double(0), 18446744073709549568.0);
  NDArray w(DType::kUInt16, {1});
  w.set_from_double(0, -1);  // wraps, as NumPy's astype does
  EXPECT_EQ(w.as<uint16_t>()[0], 65535);
  NDArray s(DType::kInt16, {1});
  s.set_from_double(0, -32768);
  EXPECT_EQ(s.get_as_double(0), -32768);
}

}  // namespace dtype_test
}  // namespace switchyard
