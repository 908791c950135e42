// The C API: load, query, run into caller buffers, and errors as statuses
// with a thread-local message.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <thread>

#include "hand_model.h"
#include "switchyard/runtime.h"

namespace switchyard {
namespace c_api_test {

class CApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string build = testing::scratch_dir("c_api_model");
    testing::compile_model(testing::hand_model_source(testing::hand_model_manifest()), build + "/model.so");
    directory_ = new std::string(testing::scratch_dir("c_api_artifact"));
    testing::write_artifact(*directory_, build + "/model.so", testing::hand_model_manifest(),
                            testing::hand_model_weights(testing::hand_model_manifest()));
  }
  static void TearDownTestSuite() {
    delete directory_;
    directory_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(sy_artifact_load(directory_->c_str(), &artifact_), SY_OK) << sy_last_error(); }
  void TearDown() override { EXPECT_EQ(sy_artifact_free(artifact_), SY_OK); }

  static std::string* directory_;
  SyArtifact* artifact_ = nullptr;
};

std::string* CApiTest::directory_ = nullptr;

TEST_F(CApiTest, DescribesInputsAndOutputs) {
  int count = -1;
  ASSERT_EQ(sy_artifact_num_inputs(artifact_, &count), SY_OK);
  EXPECT_EQ(count, 1);
  ASSERT_EQ(sy_artifact_num_outputs(artifact_, &count), SY_OK);
  EXPECT_EQ(count, 1);
  const char* name = nullptr;
  ASSERT_EQ(sy_artifact_input_name(artifact_, 0, &name), SY_OK);
  EXPECT_STREQ(name, "x");
  ASSERT_EQ(sy_artifact_output_name(artifact_, 0, &name), SY_OK);
  EXPECT_STREQ(name, "y");
  int dtype = -1;
  ASSERT_EQ(sy_artifact_input_dtype(artifact_, 0, &dtype), SY_OK);
  EXPECT_EQ(dtype, SY_DTYPE_FLOAT32);
  EXPECT_STREQ(sy_dtype_name(dtype), "float32");
  EXPECT_EQ(sy_dtype_name(42), nullptr);
  EXPECT_STREQ(sy_dtype_name(SY_DTYPE_FLOAT64), "float64");
  EXPECT_STREQ(sy_dtype_name(SY_DTYPE_UINT64), "uint64");
  EXPECT_EQ(sy_dtype_name(SY_DTYPE_UINT64 + 1), nullptr);
  int ndim = 0;
  const int64_t* shape = nullptr;
  ASSERT_EQ(sy_artifact_output_shape(artifact_, 0, &ndim, &shape), SY_OK);
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(shape[0], testing::kHandModelRows);
  EXPECT_EQ(shape[1], testing::kHandModelCols);

  EXPECT_EQ(sy_artifact_input_name(artifact_, 1, &name), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(sy_last_error(), "input index 1 out of range (1 inputs)");
  EXPECT_EQ(sy_artifact_num_inputs(nullptr, &count), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(sy_last_error(), "artifact is null");
}

TEST_F(CApiTest, RunsIntoCallerBuffers) {
  NDArray x = testing::hand_model_input(5);
  NDArray expected = testing::hand_model_reference(x);
  std::vector<float> y(size_t(expected.numel()), -1.0f);
  const int64_t shape[] = {testing::kHandModelRows, testing::kHandModelCols};
  SyTensor input{x.data(), SY_DTYPE_FLOAT32, 2, shape};
  SyTensor output{y.data(), SY_DTYPE_FLOAT32, 2, shape};
  ASSERT_EQ(sy_artifact_run(artifact_, &input, 1, &output, 1), SY_OK) << sy_last_error();
  for (int64_t i = 0; i < expected.numel(); ++i) EXPECT_FLOAT_EQ(y[size_t(i)], expected.as<float>()[i]);
}

// Several requests in flight at once, each into its own buffers, waited
// for in the reverse order: each holds exactly its own input's result
// (named "Concurrent" for CI's ThreadSanitizer stage).
TEST_F(CApiTest, ConcurrentAsyncRequestsEachWriteTheirOwnOutputs) {
  constexpr int kRequests = 6;
  const int64_t shape[] = {testing::kHandModelRows, testing::kHandModelCols};
  std::vector<NDArray> xs, expected;
  std::vector<std::vector<float>> ys;
  std::vector<SyTensor> inputs, outputs;
  for (int r = 0; r < kRequests; ++r) {
    xs.push_back(testing::hand_model_input(10 + r));
    expected.push_back(testing::hand_model_reference(xs.back()));
    ys.emplace_back(size_t(expected.back().numel()), -1.0f);
  }
  std::vector<SyRequest*> requests(kRequests, nullptr);
  for (int r = 0; r < kRequests; ++r) {
    SyTensor input{xs[size_t(r)].data(), SY_DTYPE_FLOAT32, 2, shape};
    SyTensor output{ys[size_t(r)].data(), SY_DTYPE_FLOAT32, 2, shape};
    ASSERT_EQ(sy_artifact_run_async(artifact_, &input, 1, &output, 1, &requests[size_t(r)]), SY_OK) << sy_last_error();
    ASSERT_NE(requests[size_t(r)], nullptr);
  }
  for (int r = kRequests - 1; r >= 0; --r) {
    ASSERT_EQ(sy_request_wait(requests[size_t(r)]), SY_OK) << sy_last_error();
    for (int64_t i = 0; i < expected[size_t(r)].numel(); ++i)
      ASSERT_FLOAT_EQ(ys[size_t(r)][size_t(i)], expected[size_t(r)].as<float>()[i]) << "request " << r;
  }
}

TEST_F(CApiTest, BadAsyncRunsFailAtOnceWithNoRequest) {
  NDArray x = testing::hand_model_input(0);
  std::vector<float> y(size_t(x.numel()));
  const int64_t shape[] = {testing::kHandModelRows, testing::kHandModelCols};
  const int64_t transposed[] = {testing::kHandModelCols, testing::kHandModelRows};
  SyTensor output{y.data(), SY_DTYPE_FLOAT32, 2, shape};
  SyTensor wrong_shape{x.data(), SY_DTYPE_FLOAT32, 2, transposed};
  SyRequest* request = reinterpret_cast<SyRequest*>(1);
  EXPECT_EQ(sy_artifact_run_async(artifact_, &wrong_shape, 1, &output, 1, &request), SY_ERROR_RUNTIME);
  EXPECT_STREQ(sy_last_error(), "input 'x': expected float32 (8, 16), got float32 (16, 8)");
  EXPECT_EQ(request, nullptr);
  SyTensor input{x.data(), SY_DTYPE_FLOAT32, 2, shape};
  EXPECT_EQ(sy_artifact_run_async(artifact_, &input, 1, &output, 1, nullptr), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(sy_last_error(), "request output pointer is null");
  EXPECT_EQ(sy_request_wait(nullptr), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(sy_last_error(), "request is null");
}

// Freeing the artifact with requests in flight waits for them; each is
// then waited for as usual and holds its result.
TEST_F(CApiTest, FreeingTheArtifactEndsItsRequestsInFlight) {
  const int64_t shape[] = {testing::kHandModelRows, testing::kHandModelCols};
  NDArray x0 = testing::hand_model_input(1), x1 = testing::hand_model_input(2);
  std::vector<float> y0(size_t(x0.numel()), -1.0f), y1(size_t(x1.numel()), -1.0f);
  SyTensor in0{x0.data(), SY_DTYPE_FLOAT32, 2, shape}, in1{x1.data(), SY_DTYPE_FLOAT32, 2, shape};
  SyTensor out0{y0.data(), SY_DTYPE_FLOAT32, 2, shape}, out1{y1.data(), SY_DTYPE_FLOAT32, 2, shape};
  SyRequest *r0 = nullptr, *r1 = nullptr;
  ASSERT_EQ(sy_artifact_run_async(artifact_, &in0, 1, &out0, 1, &r0), SY_OK) << sy_last_error();
  ASSERT_EQ(sy_artifact_run_async(artifact_, &in1, 1, &out1, 1, &r1), SY_OK) << sy_last_error();
  ASSERT_EQ(sy_artifact_free(artifact_), SY_OK);
  artifact_ = nullptr;
  ASSERT_EQ(sy_request_wait(r1), SY_OK) << sy_last_error();
  ASSERT_EQ(sy_request_wait(r0), SY_OK) << sy_last_error();
  NDArray e0 = testing::hand_model_reference(x0), e1 = testing::hand_model_reference(x1);
  for (int64_t i = 0; i < e0.numel(); ++i) {
    ASSERT_FLOAT_EQ(y0[size_t(i)], e0.as<float>()[i]);
    ASSERT_FLOAT_EQ(y1[size_t(i)], e1.as<float>()[i]);
  }
}

TEST_F(CApiTest, BadRunsReturnStatusesAndMessages) {
  NDArray x = testing::hand_model_input(0);
  std::vector<float> y(size_t(x.numel()));
  const int64_t shape[] = {testing::kHandModelRows, testing::kHandModelCols};
  const int64_t transposed[] = {testing::kHandModelCols, testing::kHandModelRows};
  SyTensor output{y.data(), SY_DTYPE_FLOAT32, 2, shape};

  SyTensor wrong_shape{x.data(), SY_DTYPE_FLOAT32, 2, transposed};
  EXPECT_EQ(sy_artifact_run(artifact_, &wrong_shape, 1, &output, 1), SY_ERROR_RUNTIME);
  EXPECT_STREQ(sy_last_error(), "input 'x': expected float32 (8, 16), got float32 (16, 8)");

  SyTensor bad_dtype{x.data(), 99, 2, shape};
  EXPECT_EQ(sy_artifact_run(artifact_, &bad_dtype, 1, &output, 1), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(sy_last_error(), "input 0: unknown dtype code 99");

  SyTensor null_data{nullptr, SY_DTYPE_FLOAT32, 2, shape};
  EXPECT_EQ(sy_artifact_run(artifact_, &null_data, 1, &output, 1), SY_ERROR_RUNTIME);
  EXPECT_STREQ(sy_last_error(), "input 'x': data pointer is null");

  SyTensor input{x.data(), SY_DTYPE_FLOAT32, 2, shape};
  SyTensor int_output{y.data(), SY_DTYPE_INT32, 2, shape};
  EXPECT_EQ(sy_artifact_run(artifact_, &input, 1, &int_output, 1), SY_ERROR_RUNTIME);
  EXPECT_STREQ(sy_last_error(), "output 'y': expected float32 (8, 16), got int32 (8, 16)");
  EXPECT_EQ(sy_artifact_run(artifact_, &input, 1, nullptr, 0), SY_ERROR_RUNTIME);
  EXPECT_STREQ(sy_last_error(), "expected 1 outputs (y), got 0");
  EXPECT_EQ(sy_artifact_run(artifact_, nullptr, 1, &output, 1), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(sy_last_error(), "inputs is null");
}

TEST_F(CApiTest, LoadFailureLeavesNoHandleAndAThreadLocalMessage) {
  SyArtifact* missing = reinterpret_cast<SyArtifact*>(1);
  std::string dir = *directory_ + "/nowhere";
  EXPECT_EQ(sy_artifact_load(dir.c_str(), &missing), SY_ERROR_RUNTIME);
  EXPECT_EQ(missing, nullptr);
  EXPECT_EQ(std::string(sy_last_error()), "artifact directory " + dir + " not found");
  std::string other_thread_message = "unset";
  std::thread([&] { other_thread_message = sy_last_error(); }).join();
  EXPECT_EQ(other_thread_message, "");
  EXPECT_EQ(sy_artifact_load(nullptr, &missing), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sy_artifact_load(directory_->c_str(), nullptr), SY_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sy_artifact_free(nullptr), SY_OK);

  SyArtifact* threaded = nullptr;
  ASSERT_EQ(sy_artifact_load_with_threads(directory_->c_str(), 2, &threaded), SY_OK) << sy_last_error();
  EXPECT_EQ(sy_artifact_free(threaded), SY_OK);
}

// The C API opens an artifact's files as every other command does: a pipe
// for manifest.json is refused at once, not waited on.
TEST_F(CApiTest, AManifestThatIsNotARegularFileIsRefusedAtOnce) {
  std::string dir = testing::scratch_dir("c_api_pipe");
  std::filesystem::copy(*directory_, dir, std::filesystem::copy_options::recursive);
  std::filesystem::remove(dir + "/manifest.json");
  ASSERT_EQ(::mkfifo((dir + "/manifest.json").c_str(), 0600), 0);
  SyArtifact* refused = nullptr;
  EXPECT_EQ(sy_artifact_load(dir.c_str(), &refused), SY_ERROR_RUNTIME);
  EXPECT_EQ(refused, nullptr);
  EXPECT_EQ(std::string(sy_last_error()), dir + "/manifest.json: is a pipe, not a regular file");
}

}  // namespace c_api_test
}  // namespace switchyard
