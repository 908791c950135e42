// Artifacts without the compiler: the hand-written model (hand_model.h) is
// compiled by the system compiler, loaded, run, checked against the plan,
// corrupted in every way the loader must catch, and run from many threads.
#include "runtime/artifact.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "hand_model.h"
#include "runtime/runtime_error.h"
#include "support/test_paths.h"
#include "switchyard/model_abi.h"
#include "targets/cpu/runtime/cpu_features.h"

namespace switchyard {
namespace artifact_test {

namespace fs = std::filesystem;
using testing::hand_model_input;
using testing::hand_model_manifest;
using testing::hand_model_reference;
using testing::hand_model_weights;

class ArtifactTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { build_dir_ = new std::string(testing::scratch_dir("artifact_models")); }
  static void TearDownTestSuite() {
    delete build_dir_;
    build_dir_ = nullptr;
  }

  // The hand model built for `manifest` with `flags`: one compilation per
  // distinct pair for the whole suite.
  static std::string model_path(const Manifest& manifest, const std::string& flags) {
    std::string source = testing::hand_model_source(manifest);
    std::string path = *build_dir_ + "/model_" + std::to_string(std::hash<std::string>()(source + flags)) + ".so";
    if (!fs::exists(path)) testing::compile_model(source, path, flags);
    return path;
  }

  // A fresh artifact directory; `change` edits the manifest before model.so is built for it.
  static std::string write(const std::string& name, const std::function<void(Manifest&)>& change = {},
                           const std::string& flags = "") {
    Manifest manifest = hand_model_manifest();
    if (change) change(manifest);
    // model.so describes weights.bin's checksum, which depends on the format version.
    std::vector<uint8_t> weights = hand_model_weights(hand_model_manifest());
    manifest.hashes.weights_bin = weights_checksum_hex(manifest.format_version, weights.data(), weights.size());
    std::string dir = testing::scratch_dir(name);
    testing::write_artifact(dir, model_path(manifest, flags), manifest, weights);
    return dir;
  }

  // A good artifact whose manifest.json `tamper` then edits, hashes kept.
  static std::string write_tampered(const std::string& name, const std::function<void(Manifest&)>& tamper) {
    std::string dir = write(name);
    Manifest manifest = read_manifest_file(dir + "/manifest.json");
    tamper(manifest);
    write_manifest_file(manifest, dir + "/manifest.json");
    return dir;
  }

  static std::string load_error(const std::string& dir) {
    try {
      Artifact::load(dir);
    } catch (const RuntimeError& e) {
      return e.what();
    }
    return "(no error)";
  }

  static std::string run_error(const Artifact& artifact, const std::vector<NDArray>& inputs) {
    try {
      artifact.run(inputs);
    } catch (const RuntimeError& e) {
      return e.what();
    }
    return "(no error)";
  }

  static std::string* build_dir_;
};

std::string* ArtifactTest::build_dir_ = nullptr;

void expect_equal(const NDArray& actual, const NDArray& expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  ASSERT_EQ(actual.dtype(), expected.dtype());
  for (int64_t i = 0; i < expected.numel(); ++i)
    ASSERT_FLOAT_EQ(actual.as<float>()[i], expected.as<float>()[i]) << "element " << i;
}

TEST_F(ArtifactTest, RunsAndRecordsWhereKernelsAndCopiesRan) {
  auto artifact = Artifact::load(write("good"));
  ASSERT_EQ(artifact->num_devices(), 2);
  NDArray x = hand_model_input(1);
  RunResult result = artifact->run({x});
  ASSERT_EQ(result.outputs.size(), 1u);
  expect_equal(result.outputs[0], hand_model_reference(x));

  ASSERT_EQ(result.stats.kernels.size(), 2u);
  EXPECT_EQ(result.stats.kernels[0].index, 0);
  EXPECT_EQ(result.stats.kernels[0].name, "fused_relu_add");
  EXPECT_EQ(result.stats.kernels[0].device, 0);
  EXPECT_EQ(result.stats.kernels[1].name, "multiply");
  EXPECT_EQ(result.stats.kernels[1].device, 1);
  ASSERT_EQ(result.stats.copies.size(), 1u);
  EXPECT_EQ(result.stats.copies[0].index, 0);
  EXPECT_EQ(result.stats.copies[0].src_device, 0);
  EXPECT_EQ(result.stats.copies[0].dst_device, 1);
  EXPECT_EQ(result.stats.copies[0].bytes, testing::kHandModelTensorBytes);
  EXPECT_GT(result.stats.total_ns, 0);
  EXPECT_EQ(artifact->device(1).memory_stats().copies_in, 1u);
  EXPECT_EQ(artifact->device(0).memory_stats().copies_in, 0u);

  RunOptions quiet;
  quiet.record_stats = false;
  RunResult unrecorded = artifact->run({x}, quiet);
  EXPECT_TRUE(unrecorded.stats.kernels.empty());
  EXPECT_TRUE(unrecorded.stats.copies.empty());
  EXPECT_TRUE(unrecorded.outputs[0].bitwise_equal(result.outputs[0]));
}

TEST_F(ArtifactTest, ArenasAreAllocatedOncePerDeviceAndWeightsReadWhereTheFileIsMapped) {
  auto artifact = Artifact::load(write("memory"));
  // cpu:0 holds arena 0 (512 bytes), cpu:1 arena 1 (512); their weights
  // (w, 512 bytes, and s, 64) stay in weights.bin, mapped, not allocated.
  EXPECT_EQ(artifact->device(0).memory_stats().bytes_in_use, 512u);
  EXPECT_EQ(artifact->device(1).memory_stats().bytes_in_use, 512u);
  for (int i = 0; i < 5; ++i) artifact->run({hand_model_input(i)});
  EXPECT_EQ(artifact->device(0).memory_stats().bytes_in_use, 512u);  // the workspace is reused
  EXPECT_EQ(artifact->device(1).memory_stats().bytes_in_use, 512u);
}

TEST_F(ArtifactTest, ThreadsComeFromOptionsOrTheManifest) {
  auto artifact = Artifact::load(write("threads", [](Manifest& m) { m.devices[1].threads = 1; }), LoadOptions{3});
  EXPECT_EQ(artifact->device(0).num_threads(), 3);
  EXPECT_EQ(artifact->device(1).num_threads(), 1);
  NDArray x = hand_model_input(4);
  expect_equal(artifact->run({x}).outputs[0], hand_model_reference(x));
}

TEST_F(ArtifactTest, RunsByName) {
  auto artifact = Artifact::load(write("by_name"));
  NDArray x = hand_model_input(2);
  expect_equal(artifact->run(std::map<std::string, NDArray>{{"x", x}}).outputs[0], hand_model_reference(x));
  try {
    artifact->run(std::map<std::string, NDArray>{{"x", x}, {"z", x}});
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown input 'z' (inputs: x)");
  }
  try {
    artifact->run(std::map<std::string, NDArray>{});
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "missing input 'x'");
  }
}

TEST_F(ArtifactTest, WrongInputsNameExpectedAndActual) {
  auto artifact = Artifact::load(write("inputs"));
  EXPECT_EQ(run_error(*artifact, {}), "expected 1 inputs (x), got 0");
  EXPECT_EQ(run_error(*artifact, {hand_model_input(0), hand_model_input(0)}), "expected 1 inputs (x), got 2");
  EXPECT_EQ(run_error(*artifact, {NDArray(DType::kFloat32, {16, 8})}),
            "input 'x': expected float32 (8, 16), got float32 (16, 8)");
  EXPECT_EQ(run_error(*artifact, {NDArray(DType::kInt32, {8, 16})}),
            "input 'x': expected float32 (8, 16), got int32 (8, 16)");
  EXPECT_EQ(run_error(*artifact, {NDArray()}), "input 'x': expected float32 (8, 16), got an empty array");
}

TEST_F(ArtifactTest, TruncatedWeightsAreRejected) {
  std::string dir = write("truncated");
  fs::resize_file(dir + "/weights.bin", 540);
  EXPECT_EQ(load_error(dir),
            dir + "/weights.bin is truncated: it has 540 bytes, but weight 's' needs bytes [512, 576)");
}

// weights.bin's size is checked against the manifest before the file is
// mapped or hashed: a sparse tail used to be hashed whole (8 GiB: 17 s and
// 8.4 GB resident) before the checksum refused it.
TEST_F(ArtifactTest, WeightsLongerThanTheManifestSaysAreRefusedBeforeHashing) {
  std::string dir = write("weights_tail");
  fs::resize_file(dir + "/weights.bin", 576 + (uint64_t(64) << 20));  // sparse: no disk used
  EXPECT_EQ(load_error(dir), dir + "/weights.bin has " + std::to_string(576 + (uint64_t(64) << 20)) +
                                 " bytes, but the manifest's weights end at byte 576: it is not the weights.bin "
                                 "this artifact was built with");
}

TEST_F(ArtifactTest, ModelSoOverTheLimitIsRefusedBeforeHashing) {
  std::string dir = write("model_limit");
  const uint64_t size = fs::file_size(dir + "/model.so");
  try {
    Artifact::load(dir, LoadOptions{0, size - 1});
    FAIL() << "a model.so over the limit loaded";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), dir + "/model.so: " + std::to_string(size) +
                                         " bytes, more than the limit on model.so (LoadOptions::max_model_bytes, "
                                         "switchyard run --max-model-bytes) (" + std::to_string(size - 1) +
                                         " bytes)");
  }
  NDArray x = hand_model_input(2);
  expect_equal(Artifact::load(dir, LoadOptions{0, size})->run({x}).outputs[0], hand_model_reference(x));
  // The default limit refuses a sparse gigabyte without reading it.
  fs::resize_file(dir + "/model.so", kDefaultMaxModelBytes + 1);
  EXPECT_EQ(load_error(dir).rfind(dir + "/model.so: " + std::to_string(kDefaultMaxModelBytes + 1) + " bytes", 0), 0u);
}

// Every file of an artifact is opened as a regular file or not at all: a
// device never ends and opening a pipe waits for a writer.
TEST_F(ArtifactTest, FilesThatAreNotRegularAreRefusedNamingWhatTheyAre) {
  for (const char* name : {"manifest.json", "model.so", "weights.bin"}) {
    std::string dir = write(std::string("pipe_") + name);
    std::string path = dir + "/" + name;
    fs::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    EXPECT_EQ(load_error(dir), path + ": is a pipe, not a regular file");
    dir = write(std::string("zero_") + name);
    path = dir + "/" + name;
    fs::remove(path);
    fs::create_symlink("/dev/zero", path);
    EXPECT_EQ(load_error(dir), path + ": is a character device, not a regular file");
  }
}

TEST_F(ArtifactTest, HashMismatchNamesTheFile) {
  std::string dir = write("bad_weights_hash");
  {
    std::fstream file(dir + "/weights.bin", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(5);
    file.put('\x7f');
  }
  std::string message = load_error(dir);
  EXPECT_EQ(message.rfind(dir + "/weights.bin: xxh128 ", 0), 0u) << message;
  EXPECT_NE(message.find("does not match the manifest"), std::string::npos) << message;

  dir = write("bad_model_hash");
  std::ofstream(dir + "/model.so", std::ios::app | std::ios::binary) << "tail";
  message = load_error(dir);
  EXPECT_EQ(message.rfind(dir + "/model.so: sha256 ", 0), 0u) << message;
}

// model.so describes the manifest it was built for; an edited manifest is
// refused naming the field, before the model runs on what it says.
TEST_F(ArtifactTest, ManifestDifferingFromWhatModelSoWasBuiltForIsRefused) {
  struct Tamper {
    const char* name;
    std::function<void(Manifest&)> edit;
    std::string message;  // after "DIR/manifest.json: "; "MODEL" stands for DIR/model.so
  };
  const std::vector<Tamper> tampers = {
      {"arena_shrunk", [](Manifest& m) { m.arenas[0].bytes = m.arenas[0].lower_bound_bytes = 256; },
       "arenas[0].bytes is 256 but MODEL was built for 512"},
      {"output_reshaped", [](Manifest& m) { m.outputs[0].shape = {128}; },
       "outputs[0].shape is [128] but MODEL was built for [8,16]"},
      {"output_retyped", [](Manifest& m) { m.outputs[0].dtype = DType::kInt32; },
       "outputs[0].dtype is \"int32\" but MODEL was built for \"float32\""},
      {"output_moved", [](Manifest& m) { m.outputs[0].device = 0; },
       "outputs[0].device is 0 but MODEL was built for 1"},
      {"weights_swapped", [](Manifest& m) { std::swap(m.weights[0].name, m.weights[1].name); },
       "weights[0].name is \"s\" but MODEL was built for \"w\""},
      {"arenas_reordered", [](Manifest& m) { std::swap(m.arenas[0], m.arenas[1]); },
       "arenas[0].device is 1 but MODEL was built for 0"},
      {"device_threads", [](Manifest& m) { m.devices[1].threads = 3; },
       "devices[1].threads is 3 but MODEL was built without it"},
      {"device_features", [](Manifest& m) { m.devices[0].cpu_features = {"sse4.2"}; },
       "devices[0].cpu_features is [\"sse4.2\"] but MODEL was built without it"},
      {"kernel_moved", [](Manifest& m) { m.kernels[1].device = 0; },
       "kernels[1].device is 0 but MODEL was built for 1"},
      {"copy_dropped", [](Manifest& m) { m.copies.clear(); }, "copies has 0 entries but MODEL was built for 1 entry"},
      {"input_renamed", [](Manifest& m) { m.inputs[0].name = "image"; },
       "inputs[0].name is \"image\" but MODEL was built for \"x\""},
      {"version_string", [](Manifest& m) { m.switchyard_version = "9.9"; },
       "switchyard_version is \"9.9\" but MODEL was built for \"test\""},
      // With weights.bin replaced by another model's, its checksum would match.
      {"weights_checksum", [](Manifest& m) { m.hashes.weights_bin = std::string(32, '0'); },
       "hashes.weights.bin is \"" + std::string(32, '0') + "\" but MODEL was built for \"" +
           hand_model_manifest().hashes.weights_bin + "\""},
  };
  for (const Tamper& t : tampers) {
    std::string dir = write_tampered(t.name, t.edit);
    std::string expected = t.message;
    expected.replace(expected.find("MODEL"), 5, dir + "/model.so");
    EXPECT_EQ(load_error(dir), dir + "/manifest.json: " + expected) << t.name;
  }
  // The same artifact untouched loads and runs.
  auto artifact = Artifact::load(write("untampered"));
  NDArray x = hand_model_input(3);
  expect_equal(artifact->run({x}).outputs[0], hand_model_reference(x));
}

TEST_F(ArtifactTest, ModelSoWithoutDescriptionIsRefused) {
  std::string dir = write("no_description", {}, "-DHAND_MODEL_WITHOUT_DESCRIPTION");
  EXPECT_EQ(load_error(dir), dir + "/model.so: missing symbol sy_model_description");
}

TEST_F(ArtifactTest, NewerFormatVersionIsRejected) {
  std::string dir = write("newer");
  std::string text = testing::read_file(dir + "/manifest.json");
  const std::string current = "\"format_version\": " + std::to_string(kArtifactFormatVersion);
  const int newer = kArtifactFormatVersion + 1;
  text.replace(text.find(current), current.size(), "\"format_version\": " + std::to_string(newer));
  std::ofstream(dir + "/manifest.json") << text;
  EXPECT_EQ(load_error(dir), dir + "/manifest.json: artifact format version " + std::to_string(newer) +
                                 " is newer than this runtime supports (" + std::to_string(kArtifactFormatVersion) + ")");
}

// Format 1 summed weights.bin with SHA-256; such artifacts still load and
// are still checked, with the checksum they were written with.
TEST_F(ArtifactTest, FormatOneArtifactLoadsWithItsSha256) {
  std::string dir = write("format_one", [](Manifest& m) { m.format_version = 1; });
  EXPECT_EQ(read_manifest_file(dir + "/manifest.json").hashes.weights_bin.size(), 64u);
  NDArray x = hand_model_input(4);
  expect_equal(Artifact::load(dir)->run({x}).outputs[0], hand_model_reference(x));

  {
    std::fstream file(dir + "/weights.bin", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(5);
    file.put('\x7f');
  }
  std::string message = load_error(dir);
  EXPECT_EQ(message.rfind(dir + "/weights.bin: sha256 ", 0), 0u) << message;
}

TEST_F(ArtifactTest, MissingFilesAreNamed) {
  std::string dir = write("missing_model");
  fs::remove(dir + "/model.so");
  EXPECT_EQ(load_error(dir), dir + "/model.so: file not found");
  dir = write("missing_manifest");
  fs::remove(dir + "/manifest.json");
  EXPECT_EQ(load_error(dir), dir + "/manifest.json: file not found");
  EXPECT_EQ(load_error(dir + "/nowhere"), "artifact directory " + dir + "/nowhere not found");
}

TEST_F(ArtifactTest, UnloadableLibraryShowsTheLoaderError) {
  // A model.so that is not a shared library, with a matching hash.
  std::string dir = testing::scratch_dir("not_a_library");
  std::string fake = dir + "/fake.so";
  std::ofstream(fake) << "not an ELF file";
  std::string artifact_dir = testing::scratch_dir("not_a_library_artifact");
  testing::write_artifact(artifact_dir, fake, hand_model_manifest(), hand_model_weights(hand_model_manifest()));
  std::string message = load_error(artifact_dir);
  EXPECT_EQ(message.rfind(artifact_dir + "/model.so: cannot load: ", 0), 0u) << message;
  EXPECT_NE(message.find("model.so"), message.rfind("model.so")) << "dlerror names the file: " << message;
}

TEST_F(ArtifactTest, AbiVersionsMustMatch) {
  std::string dir = write("abi_in_library", {}, "-DHAND_MODEL_ABI_VERSION=99");
  const std::string supported = std::to_string(SY_MODEL_ABI_VERSION);
  EXPECT_EQ(load_error(dir),
            dir + "/model.so: built against model ABI version 99, this runtime supports version " + supported);
  dir = write("abi_in_manifest", [](Manifest& m) { m.abi_version = SY_MODEL_ABI_VERSION + 1; });
  EXPECT_EQ(load_error(dir), dir + "/manifest.json: abi_version " + std::to_string(SY_MODEL_ABI_VERSION + 1) +
                                 " does not match this runtime's model ABI version " + supported);
}

TEST_F(ArtifactTest, UnsupportedDeviceKindIsRejected) {
  std::string dir = write("tpu", [](Manifest& m) {
    m.devices[1].kind = "tpu";
    m.devices[1].name = "tpu:1";
  });
  EXPECT_EQ(load_error(dir), dir + "/manifest.json: devices[1]: device kind 'tpu' is not supported by this runtime");
}

// A cuda device that cannot be used is refused naming the manifest, the
// device and what is missing: the driver (here, and on CI), or GPU 7 (on a
// machine with a driver and fewer GPUs).
TEST_F(ArtifactTest, AMissingCudaDeviceIsRejectedNamingWhatIsMissing) {
  std::string dir = write("cuda", [](Manifest& m) {
    m.devices[1].kind = "cuda";
    m.devices[1].id = 7;
    m.devices[1].name = "cuda:7";
    m.devices[1].compute_capability = 90;
    m.devices[1].cpu_features.clear();
  });
  std::string error = load_error(dir);
  std::string prefix = dir + "/manifest.json: devices[1] (cuda:7): cuda:7: ";
  if (error.find("no GPU can be used") != std::string::npos)
    EXPECT_EQ(error.rfind(prefix + "no GPU can be used: the CUDA driver", 0), 0u) << error;
  else
    EXPECT_EQ(error.rfind(prefix + "no such GPU (the driver sees ", 0), 0u) << error;
}

// An artifact compiled for instructions this CPU lacks is refused before
// its model.so is loaded, naming them, instead of dying of SIGILL.
TEST_F(ArtifactTest, CpuFeaturesTheMachineLacksAreNamed) {
  std::vector<std::string> lacking = missing_cpu_features(known_cpu_features());
  std::string dir = write("features_present", [](Manifest& m) { m.devices[0].cpu_features = {"sse4.2"}; });
  if (missing_cpu_features({"sse4.2"}).empty()) {
    EXPECT_NO_THROW(Artifact::load(dir));
  }
  if (lacking.empty()) GTEST_SKIP() << "this CPU has every feature the runtime knows; nothing to refuse";
  dir = write("features_lacking", [&](Manifest& m) { m.devices[1].cpu_features = {"avx", lacking[0]}; });
  std::string error = load_error(dir);
  EXPECT_NE(error.find("devices[1] (cpu:1): model.so was compiled for CPU features this machine lacks: " + lacking[0]),
            std::string::npos)
      << error;
}

// The manifest's vocabulary (runtime/) and the CPU device's probes
// (targets/cpu/) are two lists: a name without a probe would count as lacking.
TEST(CpuFeatures, EveryNameAManifestMayHoldIsProbed) {
  EXPECT_EQ(probed_cpu_features(), known_cpu_features());
}

TEST_F(ArtifactTest, KernelRunningOffItsPlannedDeviceFailsTheRun) {
  std::string dir = write("misplaced", {}, "-DHAND_MODEL_MULTIPLY_DEVICE=0");
  auto artifact = Artifact::load(dir);
  EXPECT_EQ(run_error(*artifact, {hand_model_input(0)}),
            dir + "/model.so: kernel 1 'multiply' is planned on cpu:1 but ran parallel work on cpu:0");
}

TEST_F(ArtifactTest, CopyDifferingFromThePlanFailsTheRun) {
  std::string dir = write("copy_plan", [](Manifest& m) {
    m.devices.push_back({"cpu:2", "cpu", 2, "cpu", 0});
    m.copies[0].dst_device = 2;
  });
  auto artifact = Artifact::load(dir);
  EXPECT_EQ(run_error(*artifact, {hand_model_input(0)}),
            dir +
                "/model.so: copy 0 moved 512 bytes from cpu:0 to cpu:1, but the manifest plans 512 bytes from "
                "cpu:0 to cpu:2");
}

TEST_F(ArtifactTest, ModelFailureStatusFailsTheRun) {
  std::string dir = write("status", {}, "-DHAND_MODEL_RUN_STATUS=3");
  auto artifact = Artifact::load(dir);
  EXPECT_EQ(run_error(*artifact, {hand_model_input(0)}), dir + "/model.so: sy_model_run failed with status 3");
}

// The hand model's queues run at once on their workers, from many threads:
// every output equals the in-order run's, kernels and copies recorded.
TEST_F(ArtifactTest, ConcurrentRunsOfQueuesThatRunAtOnceMatchTheInOrderRun) {
  auto artifact = Artifact::load(write("queues", {}, "-DHAND_MODEL_QUEUES"), LoadOptions{1});
  ASSERT_EQ(artifact->num_queues(), 2);
  RunOptions in_order;
  in_order.in_order = true;
  constexpr int kThreads = 4, kRuns = 25;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      NDArray x = hand_model_input(t);
      NDArray expected = artifact->run({x}, in_order).outputs[0];
      for (int run = 0; run < kRuns; ++run) {
        RunResult result = artifact->run({x});
        if (!result.outputs[0].bitwise_equal(expected) || result.stats.kernels.size() != 2 ||
            result.stats.copies.size() != 1)
          mismatches[size_t(t)]++;
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
  expect_equal(artifact->run({hand_model_input(0)}).outputs[0], hand_model_reference(hand_model_input(0)));
}

// A queue that signals an event the run does not have fails the run, and the
// queue waiting for event 0 stops instead of waiting forever.
TEST_F(ArtifactTest, ConcurrentQueuesStopWhenOneFails) {
  auto artifact =
      Artifact::load(write("queues_bad_event", {}, "-DHAND_MODEL_QUEUES -DHAND_MODEL_SIGNALLED_EVENT=5"), LoadOptions{1});
  try {
    artifact->run({hand_model_input(0)});
    FAIL() << "the run succeeded";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("event 5 signalled, but the run has 1 events"), std::string::npos) << e.what();
  }
}

TEST_F(ArtifactTest, ManyThreadsRunOneArtifactWithIdenticalResults) {
  auto artifact = Artifact::load(write("concurrent"), LoadOptions{2});
  constexpr int kThreads = 8, kRuns = 25;
  std::vector<NDArray> expected;
  for (int t = 0; t < kThreads; ++t) expected.push_back(artifact->run({hand_model_input(t)}).outputs[0]);
  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      NDArray x = hand_model_input(t);
      for (int run = 0; run < kRuns; ++run) {
        try {
          RunResult result = artifact->run({x});
          if (!result.outputs[0].bitwise_equal(expected[size_t(t)]) || result.stats.kernels.size() != 2 ||
              result.stats.copies.size() != 1)
            mismatches[size_t(t)]++;
        } catch (const std::exception&) {
          failures[size_t(t)]++;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
    EXPECT_EQ(failures[size_t(t)], 0) << "thread " << t;
    expect_equal(expected[size_t(t)], hand_model_reference(hand_model_input(t)));
  }
  // Every run's one copy arrived at cpu:1.
  EXPECT_EQ(artifact->device(1).memory_stats().copies_in, uint64_t(kThreads + kThreads * kRuns));
}

}  // namespace artifact_test
}  // namespace switchyard
