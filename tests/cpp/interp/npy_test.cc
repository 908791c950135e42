// .npy reading and writing: round trips of every dtype, the exact header
// NumPy writes, hand-made files of both header versions, malformed files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/npy.h"
#include "support/error.h"

namespace switchyard {
namespace npy_test {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("sy_npy_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out << bytes;
  }
  std::string read_bytes(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  // The message read_npy throws for a file holding `bytes`.
  std::string read_error(const std::string& bytes) {
    write_bytes("bad.npy", bytes);
    try {
      read_npy(path("bad.npy"));
      ADD_FAILURE() << "read_npy accepted the file";
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

// A .npy file: magic, version, little-endian header length, header, data.
std::string npy_file(int major, const std::string& header, const std::string& data) {
  std::string out("\x93NUMPY", 6);
  out.push_back(char(major));
  out.push_back(0);
  int width = major == 1 ? 2 : 4;
  for (int i = 0; i < width; ++i) out.push_back(char((header.size() >> (8 * i)) & 0xff));
  return out + header + data;
}

std::string float_bytes(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

TEST_F(NpyTest, EveryDTypeRoundTrips) {
  for (DType dtype : kAllDTypes) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{2, 3}, std::vector<int64_t>{}, std::vector<int64_t>{0, 3},
                                       std::vector<int64_t>{5}}) {
      NDArray a(dtype, shape);
      for (int64_t i = 0; i < a.numel(); ++i) a.set_from_double(i, dtype == DType::kBool ? i % 2 : double(i) - 2.5);
      write_npy(path("a.npy"), a);
      NDArray b = read_npy(path("a.npy"));
      if (dtype == DType::kBFloat16) {  // written as its bits, '<u2', which NumPy and we read as uint16
        ASSERT_EQ(b.dtype(), DType::kUInt16);
        EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << a.shape_string();
      } else {
        EXPECT_TRUE(a.bitwise_equal(b)) << dtype_name(dtype) << " " << a.shape_string();
      }
    }
  }
}

TEST_F(NpyTest, WritesNumPysHeader) {
  write_npy(path("a.npy"), NDArray(DType::kFloat32, {2, 3}));
  std::string bytes = read_bytes("a.npy");
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_length = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);  // data aligned as NumPy aligns it
  std::string header = bytes.substr(10, header_length);
  EXPECT_EQ(header.substr(0, header.find_last_not_of(" \n") + 1),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_length + 24);

  write_npy(path("b.npy"), NDArray(DType::kBFloat16, {4}));
  EXPECT_NE(read_bytes("b.npy").find("{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }"), std::string::npos);
  write_npy(path("c.npy"), NDArray(DType::kFloat64, {1}));
  EXPECT_NE(read_bytes("c.npy").find("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"), std::string::npos);
  write_npy(path("d.npy"), NDArray(DType::kUInt32, {1}));
  EXPECT_NE(read_bytes("d.npy").find("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }"), std::string::npos);
  write_npy(path("c.npy"), NDArray(DType::kBool, {}));
  EXPECT_NE(read_bytes("c.npy").find("{'descr': '|b1', 'fortran_order': False, 'shape': (), }"), std::string::npos);
}

TEST_F(NpyTest, ReadsBothHeaderVersions) {
  std::string data = float_bytes({1, 2, 3, 4});
  write_bytes("v1.npy", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", data));
  NDArray v1 = read_npy(path("v1.npy"));
  EXPECT_EQ(v1.shape_string(), "(2, 2)");
  EXPECT_EQ(v1.as<float>()[3], 4.0f);
  write_bytes("v2.npy", npy_file(2, "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"<f4\"}\n", data));
  NDArray v2 = read_npy(path("v2.npy"));
  EXPECT_EQ(v2.shape_string(), "(4)");
  EXPECT_EQ(v2.as<float>()[1], 2.0f);
  // Fortran order of a 1-D array is C order; bools are normalized to 0/1.
  write_bytes("f.npy", npy_file(1, "{'descr': '|b1', 'fortran_order': True, 'shape': (2,), }", std::string("\x00\x07", 2)));
  NDArray f = read_npy(path("f.npy"));
  EXPECT_EQ(f.dtype(), DType::kBool);
  EXPECT_EQ(f.as<uint8_t>()[1], 1);
}

TEST_F(NpyTest, RejectsMalformedFiles) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  EXPECT_NE(read_error("GIF89a and more").find("not a .npy file (bad magic)"), std::string::npos);
  EXPECT_NE(read_error(npy_file(1, header, "").substr(0, 20)).find("truncated header"), std::string::npos);
  EXPECT_NE(read_error(npy_file(1, header, float_bytes({1}))).find("truncated data"), std::string::npos);
  EXPECT_NE(read_error(npy_file(1, header, float_bytes({1, 2, 3}))).find("data size mismatch"), std::string::npos);
  EXPECT_NE(read_error(npy_file(9, header, float_bytes({1, 2}))).find("unsupported .npy format version 9.0"),
            std::string::npos);
  EXPECT_NE(read_error(npy_file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", float_bytes({1, 2})))
                .find("unsupported dtype '<c8'"),
            std::string::npos);
  EXPECT_NE(read_error(npy_file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", float_bytes({1})))
                .find("big-endian"),
            std::string::npos);
  EXPECT_NE(read_error(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 1), }", float_bytes({1})))
                .find("Fortran-order arrays are not supported"),
            std::string::npos);
  EXPECT_NE(read_error(npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", ""))
                .find("structured dtypes are not supported"),
            std::string::npos);
  EXPECT_NE(read_error(npy_file(1, "{'descr': '<f4', 'shape': (1,), }", float_bytes({1}))).find("malformed header"),
            std::string::npos);
}

TEST_F(NpyTest, ErrorsNameThePath) {
  std::string missing = path("missing.npy");
  try {
    read_npy(missing);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": file not found");
  }
}

TEST_F(NpyTest, ReadsOnlyRegularFiles) {
  // The message read_npy throws for `file`.
  auto error_of = [](const std::string& file) -> std::string {
    try {
      read_npy(file);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "read_npy accepted " + file;
  };
  // /dev/zero never ends: refused at once, by name, before reading a byte.
  EXPECT_EQ(error_of("/dev/zero"),
            "/dev/zero: is a character device, not a regular file; inputs are read only from .npy files");
  // A pipe with no writer: refused without waiting for one.
  ASSERT_EQ(::mkfifo(path("pipe.npy").c_str(), 0600), 0);
  const std::string refused = ", not a regular file; inputs are read only from .npy files";
  EXPECT_EQ(error_of(path("pipe.npy")), path("pipe.npy") + ": is a pipe" + refused);
  EXPECT_EQ(error_of(dir_.string()), dir_.string() + ": is a directory" + refused);
}

TEST_F(NpyTest, AHugeHeaderIsQuotedAsOneLine) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': '" + std::string(1 << 20, 'x') + "'}";
  std::string message = read_error(npy_file(2, header, float_bytes({1})));
  EXPECT_NE(message.find("malformed header (unexpected entry 'extra')"), std::string::npos) << message.substr(0, 300);
  EXPECT_LT(message.size(), 1000u);
}

TEST_F(NpyTest, FailedWriteLeavesNoFile) {
  std::string target = path("no_such_dir/out.npy");
  EXPECT_THROW(write_npy(target, NDArray(DType::kFloat32, {2})), std::runtime_error);
  EXPECT_FALSE(fs::exists(path("no_such_dir")));
  // Overwriting replaces the file whole and leaves no temporary beside it.
  write_npy(path("out.npy"), NDArray(DType::kFloat32, {100}));
  write_npy(path("out.npy"), NDArray(DType::kInt8, {1}));
  EXPECT_EQ(read_npy(path("out.npy")).dtype(), DType::kInt8);
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
}

}  // namespace npy_test
}  // namespace switchyard
