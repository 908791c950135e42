// Manifest: JSON round trip, the weights layout, and every validation error
// naming its JSON path.
#include "runtime/manifest.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "hand_model.h"
#include "manifest_error.h"
#include "runtime/model_description.h"
#include "runtime/runtime_error.h"

namespace switchyard {
namespace manifest_test {

using nlohmann::json;

Manifest complete_manifest() {
  Manifest m = testing::hand_model_manifest();
  m.devices[1].threads = 2;
  m.devices[1].cpu_features = {"avx2", "fma"};
  m.hashes.model_so = std::string(64, 'a');
  m.hashes.weights_bin = std::string(31, '0') + "f";
  m.kernels[0].operators = "nn.relu -> add";
  return m;
}

using testing::manifest_parse_error;

// The manifest's JSON with one change applied.
json mutated(const std::function<void(json&)>& change) {
  json document = json::parse(format_manifest(complete_manifest()));
  change(document);
  return document;
}

TEST(Manifest, RoundTripsThroughJson) {
  Manifest m = complete_manifest();
  std::string text = format_manifest(m);
  Manifest back = parse_manifest(text);
  EXPECT_EQ(format_manifest(back), text);
  EXPECT_EQ(back.devices[1].threads, 2);
  EXPECT_EQ(back.devices[0].threads, 0);
  EXPECT_EQ(back.devices[1].cpu_features, (std::vector<std::string>{"avx2", "fma"}));
  EXPECT_EQ(back.inputs[0].shape, (std::vector<int64_t>{testing::kHandModelRows, testing::kHandModelCols}));
  EXPECT_EQ(back.weights[1].offset, m.weights[1].offset);
  EXPECT_EQ(back.copies[0].dst_device, 1);
  EXPECT_EQ(back.kernels[1].span, "hand.sy:4:3");
  EXPECT_EQ(back.kernels[0].operators, "nn.relu -> add");
  EXPECT_EQ(back.kernels[1].operators, "");
  EXPECT_EQ(back.hashes.weights_bin, m.hashes.weights_bin);
  // A device without its own threads omits the field.
  json document = json::parse(text);
  EXPECT_FALSE(document["devices"][0].contains("threads"));
  EXPECT_FALSE(document["kernels"][1].contains("operators"));  // none recorded: omitted, as before format 6
  EXPECT_EQ(document["hashes"]["model.so"], m.hashes.model_so);
}

TEST(Manifest, FileRoundTrip) {
  std::string path = testing::scratch_dir("manifest_file") + "/manifest.json";
  write_manifest_file(complete_manifest(), path);
  EXPECT_EQ(format_manifest(read_manifest_file(path)), format_manifest(complete_manifest()));
  EXPECT_THROW(read_manifest_file(path + ".missing"), RuntimeError);
}

TEST(Manifest, NewerFormatVersionIsRejected) {
  // Even with fields this runtime does not know: the version decides first.
  json document = mutated([](json& j) {
    j["format_version"] = 10;
    j["new_field"] = true;
  });
  EXPECT_EQ(manifest_parse_error(document),
            "manifest.json: artifact format version 10 is newer than this runtime supports (9)");
}

// What --objective latency predicted (format 9): kept through JSON, and only
// with the artifact's own devices, once each, and times a run can take.
TEST(Manifest, APredictionRoundTripsAndIsChecked) {
  Manifest m = complete_manifest();
  m.prediction = ManifestPrediction{0.25, {{"cpu:0", 0.125, 0}, {"cpu:1", 0.1, 0.0125}},
                                    {"nn.dense (m.sy:2:3)", "add (m.sy:5:3)"}, "one device with every core: ..."};
  Manifest back = parse_manifest(format_manifest(m));
  ASSERT_TRUE(back.prediction.has_value());
  EXPECT_EQ(back.prediction->run_ms, 0.25);
  EXPECT_EQ(back.prediction->devices[1].device, "cpu:1");
  EXPECT_EQ(back.prediction->devices[1].copies_ms, 0.0125);
  EXPECT_EQ(back.prediction->critical_path, m.prediction->critical_path);
  EXPECT_EQ(back.prediction->choice, m.prediction->choice);
  EXPECT_EQ(format_manifest(back), format_manifest(m));
  EXPECT_FALSE(json::parse(format_manifest(complete_manifest())).contains("prediction"));  // none planned: omitted

  auto with = [&](const std::function<void(json&)>& change) {
    json document = json::parse(format_manifest(m));
    change(document);
    return manifest_parse_error(document);
  };
  EXPECT_EQ(with([](json& j) { j["prediction"]["devices"][1]["device"] = "cpu:7"; }),
            "manifest.json: prediction.devices[1].device: device 'cpu:7' is not one of the artifact's devices");
  EXPECT_EQ(with([](json& j) { j["prediction"]["devices"][1]["device"] = "cpu:0"; }),
            "manifest.json: prediction.devices[1].device: device 'cpu:0' is named twice");
  EXPECT_EQ(with([](json& j) { j["prediction"]["run_ms"] = -1; }),
            "manifest.json: prediction.run_ms: expected a finite number >= 0, got number -1");
  EXPECT_EQ(with([](json& j) { j["prediction"]["devices"][0]["compute_ms"] = "fast"; }),
            "manifest.json: prediction.devices[0].compute_ms: expected a finite number >= 0, got string \"fast\"");
  EXPECT_EQ(with([](json& j) { j["prediction"]["critical_path"][0] = 3; }),
            "manifest.json: prediction.critical_path[0]: expected a string, got number 3");
  EXPECT_EQ(with([](json& j) { j["prediction"]["extra"] = 1; }), "manifest.json: prediction.extra: unknown field");
  EXPECT_EQ(with([](json& j) { j["format_version"] = 8; }),
            "manifest.json: prediction: appears only from format 9 on");
}

struct BadField {
  const char* what;
  std::function<void(json&)> change;
  const char* message;  // the whole message after "manifest.json: "
};

// Kernel fields of a device image (a cubin).
void with_image(json& kernel) {
  kernel["image"] = "cuda/k.cubin";
  kernel["image_sha256"] = std::string(64, 'c');
  kernel["functions"] = {"k_compute"};
  kernel["may_fault"] = false;
}

// Device 0 as cuda:0 for sm_90, its kernel 0 a cubin.
void on_cuda0(json& j) {
  j["devices"][0]["kind"] = "cuda";
  j["devices"][0]["name"] = "cuda:0";
  j["devices"][0]["compute_capability"] = 90;
  j["devices"][0].erase("cpu_features");
  with_image(j["kernels"][0]);
}

TEST(Manifest, ACudaDeviceAndItsCubinsRoundTrip) {
  json document = mutated(on_cuda0);
  Manifest m = parse_manifest(document.dump());
  EXPECT_EQ(m.devices[0].kind, "cuda");
  EXPECT_EQ(m.devices[0].compute_capability, 90);
  EXPECT_EQ(m.devices[1].compute_capability, 0);
  EXPECT_EQ(m.kernels[0].image, "cuda/k.cubin");
  EXPECT_EQ(m.kernels[0].functions, (std::vector<std::string>{"k_compute"}));
  EXPECT_FALSE(m.kernels[0].may_fault);
  EXPECT_TRUE(m.kernels[1].image.empty());
  json back = json::parse(format_manifest(m));
  EXPECT_EQ(back, document);
  // A CPU device and a kernel built into model.so write none of those fields.
  EXPECT_FALSE(back["devices"][1].contains("compute_capability"));
  EXPECT_FALSE(back["kernels"][1].contains("image"));
}

TEST(Manifest, EveryValidationErrorNamesItsPath) {
  const BadField cases[] = {
      {"missing entry", [](json& j) { j.erase("entry"); }, "entry: missing field"},
      {"format version as string", [](json& j) { j["format_version"] = "1"; },
       "format_version: expected an integer, got string \"1\""},
      {"format version zero", [](json& j) { j["format_version"] = 0; },
       "format_version: expected an integer in [1, 2147483647], got 0"},
      {"abi version float", [](json& j) { j["abi_version"] = 1.5; },
       "abi_version: expected an integer, got number 1.5"},
      {"version not a string", [](json& j) { j["switchyard_version"] = 3; },
       "switchyard_version: expected a string, got number 3"},
      {"unknown top-level field", [](json& j) { j["extra"] = 1; }, "extra: unknown field"},
      {"no devices", [](json& j) { j["devices"] = json::array(); }, "devices: an artifact needs at least one device"},
      {"devices not an array", [](json& j) { j["devices"] = json::object(); },
       "devices: expected an array, got object of 0 fields"},
      {"device name mismatch", [](json& j) { j["devices"][1]["name"] = "cpu:7"; },
       "devices[1].name: 'cpu:7' does not match kind and id ('cpu:1')"},
      {"duplicate device",
       [](json& j) {
         j["devices"][1]["id"] = 0;
         j["devices"][1]["name"] = "cpu:0";
       },
       "devices[1].name: duplicate device 'cpu:0'"},
      {"cores out of order", [](json& j) { j["devices"][0]["cores"] = {1, 0}; },
       "devices[0].cores: must ascend, each core once"},
      {"core too high", [](json& j) { j["devices"][0]["cores"] = {5000}; },
       "devices[0].cores[0]: expected an integer in [0, 1023], got 5000"},
      {"core in two devices",
       [](json& j) {
         j["devices"][0]["cores"] = {0, 1};
         j["devices"][1]["cores"] = {1};
       },
       "devices: core 1 is in the core sets of both cpu:0 and cpu:1 (devices that run at once need cores of their own)"},
      {"zero threads", [](json& j) { j["devices"][0]["threads"] = 0; },
       "devices[0].threads: expected an integer in [1, 1024], got 0"},
      {"own threads beyond the bound",
       [](json& j) {
         j["devices"][0]["threads"] = 1000;
         j["devices"][1]["threads"] = 1000;
       },
       "devices[1].threads: the devices' own threads add up to 2000, more than 1024"},
      {"device missing target", [](json& j) { j["devices"][0].erase("target"); }, "devices[0].target: missing field"},
      {"unknown dtype", [](json& j) { j["inputs"][0]["dtype"] = "floot32"; },
       "inputs[0].dtype: unknown dtype 'floot32'"},
      {"negative dimension", [](json& j) { j["inputs"][0]["shape"][1] = -3; },
       "inputs[0].shape[1]: expected an integer in [0, 9223372036854775807], got -3"},
      {"shape not an array", [](json& j) { j["inputs"][0]["shape"] = "8x16"; },
       "inputs[0].shape: expected an array of dimensions, got string \"8x16\""},
      {"input device out of range", [](json& j) { j["inputs"][0]["device"] = 5; },
       "inputs[0].device: device index 5 out of range (2 devices)"},
      {"input missing span", [](json& j) { j["inputs"][0].erase("span"); }, "inputs[0].span: missing field"},
      {"duplicate output", [](json& j) { j["outputs"].push_back(j["outputs"][0]); },
       "outputs[1].name: duplicate name 'y'"},
      {"empty input name", [](json& j) { j["inputs"][0]["name"] = ""; }, "inputs[0].name: must not be empty"},
      {"input not an object", [](json& j) { j["inputs"][0] = 4; }, "inputs[0]: expected an object, got number 4"},
      {"weight size mismatch", [](json& j) { j["weights"][0]["nbytes"] = 100; },
       "weights[0].nbytes: 100 does not match float32 (8, 16) (512 bytes)"},
      {"unaligned weight", [](json& j) { j["weights"][1]["offset"] = 520; },
       "weights[1].offset: 520 is not a multiple of 64"},
      {"overlapping weights", [](json& j) { j["weights"][1]["offset"] = 448; },
       "weights[1]: 's' overlaps 'w' in weights.bin"},
      {"interleaved device blocks",
       [](json& j) {
         j["weights"].push_back(json{
             {"name", "late"}, {"dtype", "float32"}, {"shape", {4}}, {"device", 0}, {"offset", 576}, {"nbytes", 16}});
       },
       "weights: the weights of cpu:0 and cpu:1 interleave in weights.bin; each device's weights must be contiguous"},
      {"weight negative offset", [](json& j) { j["weights"][0]["offset"] = -64; },
       "weights[0].offset: expected an integer in [0, 9223372036854775807], got -64"},
      {"arena bound above size", [](json& j) { j["arenas"][0]["lower_bound_bytes"] = 4096; },
       "arenas[0].lower_bound_bytes: 4096 exceeds bytes (512)"},
      {"arena without scope", [](json& j) { j["arenas"][1]["scope"] = ""; }, "arenas[1].scope: must not be empty"},
      {"kernel device out of range", [](json& j) { j["kernels"][1]["device"] = 2; },
       "kernels[1].device: device index 2 out of range (2 devices)"},
      {"unknown kernel field", [](json& j) { j["kernels"][0]["color"] = "red"; }, "kernels[0].color: unknown field"},
      {"kernel operators not text", [](json& j) { j["kernels"][0]["operators"] = 3; },
       "kernels[0].operators: expected a string, got number 3"},
      {"copy to itself", [](json& j) { j["copies"][0]["dst_device"] = 0; }, "copies[0]: copies from cpu:0 to itself"},
      {"copy bytes mistyped", [](json& j) { j["copies"][0]["bytes"] = "512"; },
       "copies[0].bytes: expected an integer, got string \"512\""},
      {"hash not hex", [](json& j) { j["hashes"]["model.so"] = "ABC"; },
       "hashes.model.so: expected 64 lowercase hex digits (sha256), got 'ABC'"},
      {"missing weights hash", [](json& j) { j["hashes"].erase("weights.bin"); }, "hashes.weights.bin: missing field"},
      {"weights summed with sha256 in format 2", [](json& j) { j["hashes"]["weights.bin"] = std::string(64, 'e'); },
       "hashes.weights.bin: expected 32 lowercase hex digits (xxh128), got "
       "'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'"},
      {"weights summed with xxh128 in format 1",
       [](json& j) {
         j["format_version"] = 1;
         j["hashes"]["weights.bin"] = std::string(32, 'e');
       },
       "hashes.weights.bin: expected 64 lowercase hex digits (sha256), got 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee'"},
      {"too many threads", [](json& j) { j["devices"][1]["threads"] = 100000; },
       "devices[1].threads: expected an integer in [1, 1024], got 100000"},
      {"unknown cpu feature", [](json& j) { j["devices"][1]["cpu_features"] = {"avx2", "warp_drive"}; },
       "devices[1].cpu_features[1]: unknown CPU feature 'warp_drive'"},
      {"top level not an object", [](json& j) { j = json::array(); },
       "the top level: expected an object, got array of 0 elements"},
      {"compute capability of a cpu", [](json& j) { j["devices"][1]["compute_capability"] = 90; },
       "devices[1].compute_capability: only a cuda device has one, not a cpu device"},
      {"compute capability out of range",
       [](json& j) {
         on_cuda0(j);
         j["devices"][0]["compute_capability"] = 5;
       },
       "devices[0].compute_capability: expected an integer in [10, 1000], got 5"},
      {"image outside the artifact",
       [](json& j) {
         on_cuda0(j);
         j["kernels"][0]["image"] = "../elsewhere.cubin";
       },
       "kernels[0].image: must be a path inside the artifact, got '../elsewhere.cubin'"},
      {"image on a cpu", [](json& j) { with_image(j["kernels"][0]); },
       "kernels[0].image: a device image runs on a cuda device, but cpu:0 records no compute_capability"},
      {"image without functions",
       [](json& j) {
         on_cuda0(j);
         j["kernels"][0].erase("functions");
       },
       "kernels[0].functions: missing field"},
      {"image hash not hex",
       [](json& j) {
         on_cuda0(j);
         j["kernels"][0]["image_sha256"] = "cubin";
       },
       "kernels[0].image_sha256: expected 64 lowercase hex digits (sha256), got 'cubin'"},
  };
  for (const BadField& bad : cases) {
    SCOPED_TRACE(bad.what);
    EXPECT_EQ(manifest_parse_error(mutated(bad.change)), std::string("manifest.json: ") + bad.message);
  }
}

// Counts are bounded before anything is made from them: a list longer than
// any build writes is refused naming the list.
TEST(Manifest, CountsBeyondTheirBoundsAreRefused) {
  Manifest many_copies = complete_manifest();
  many_copies.copies.resize(kMaxManifestEntries + 1, many_copies.copies[0]);
  try {
    validate_manifest(many_copies);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "manifest.json: copies: " + std::to_string(kMaxManifestEntries + 1) +
                                         " entries, more than an artifact may have (" +
                                         std::to_string(kMaxManifestEntries) + ")");
  }
  json many_devices = mutated([](json& j) {
    j["devices"] = json::array();
    for (size_t i = 0; i <= kMaxManifestDevices; ++i)
      j["devices"].push_back({{"name", "cpu:" + std::to_string(i)}, {"kind", "cpu"}, {"id", i}, {"target", "cpu"}});
  });
  EXPECT_EQ(manifest_parse_error(many_devices), "manifest.json: devices: 257 devices, more than an artifact may have (256)");
}

// A field that is an array nested 100,000 deep is refused by its size,
// never serialised into the message (which overflowed the stack).
TEST(Manifest, DeeplyNestedValueIsDescribedNotSerialised) {
  constexpr size_t kDepth = 100000;
  std::string text = mutated([](json& j) { j["devices"] = "DEEP"; }).dump();
  text.replace(text.find("\"DEEP\""), 6, std::string(kDepth, '[') + std::string(kDepth, ']'));
  try {
    parse_manifest(text);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("devices[0]"), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 200u) << e.what();
  }
}

TEST(Manifest, OversizedFileIsRefusedBeforeItIsRead) {
  std::string path = testing::scratch_dir("manifest_huge") + "/manifest.json";
  { std::ofstream(path) << "{}"; }
  std::filesystem::resize_file(path, kMaxManifestBytes + 1);  // sparse: no disk used
  try {
    read_manifest_file(path);
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": " + std::to_string(kMaxManifestBytes + 1) +
                                         " bytes, more than a manifest may have (" +
                                         std::to_string(kMaxManifestBytes) + " bytes)");
  }
}

// `switchyard inspect` reads the manifest alone: a link to /dev/zero grew
// its memory without bound and a FIFO made it wait forever.
TEST(Manifest, OnlyARegularFileIsRead) {
  std::string dir = testing::scratch_dir("manifest_not_regular");
  auto error_of = [](const std::string& path) -> std::string {
    try {
      read_manifest_file(path);
    } catch (const RuntimeError& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::filesystem::create_symlink("/dev/zero", dir + "/zero.json");
  EXPECT_EQ(error_of(dir + "/zero.json"), dir + "/zero.json: is a character device, not a regular file");
  ASSERT_EQ(::mkfifo((dir + "/pipe.json").c_str(), 0600), 0);
  EXPECT_EQ(error_of(dir + "/pipe.json"), dir + "/pipe.json: is a pipe, not a regular file");
  EXPECT_EQ(error_of(dir), dir + ": is a directory, not a regular file");
  EXPECT_EQ(error_of(dir + "/absent.json"), dir + "/absent.json: file not found");
}

// A name or span from a model file may hold any bytes; JSON holds UTF-8 only,
// so such bytes are written "\xHH" rather than failing the write.
TEST(Manifest, TextThatIsNotUtf8IsEscapedNotFatal) {
  Manifest m = complete_manifest();
  m.kernels[0].span = std::string("layer") + char(0xff) + "/relu";
  m.inputs[0].name = std::string("in") + char(0xe9);
  std::string text = format_manifest(m);
  Manifest read = parse_manifest(text, "m.json");
  EXPECT_EQ(read.kernels[0].span, "layer\\xff/relu");
  EXPECT_EQ(read.inputs[0].name, "in\\xe9");
  // model.so's description says the same, so the artifact loads.
  EXPECT_NO_THROW(check_manifest_matches_model(read, model_description(m), "m.json", "m.so"));
}

// model.so's description is the manifest but for model.so's own hash, in
// ASCII, and the check names the first field that differs. weights.bin's
// checksum is in it: another model's weights.bin with its checksum edited
// into the manifest used to load.
TEST(ModelDescription, HoldsEveryFieldButModelSoHash) {
  Manifest m = complete_manifest();
  m.kernels[0].span = "h\u00e9llo \"quoted\".sy:2:3";
  std::string description = model_description(m);
  EXPECT_TRUE(std::all_of(description.begin(), description.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
  json document = json::parse(description);
  EXPECT_EQ(document["hashes"], json({{"weights.bin", m.hashes.weights_bin}}));
  EXPECT_EQ(document["kernels"][0]["span"], m.kernels[0].span);
  EXPECT_NO_THROW(check_manifest_matches_model(m, description, "m.json", "m.so"));
  Manifest other_model = m;
  other_model.hashes.model_so = std::string(64, 'b');
  EXPECT_NO_THROW(check_manifest_matches_model(other_model, description, "m.json", "m.so"));
  Manifest other_weights = m;
  other_weights.hashes.weights_bin = std::string(32, 'c');
  try {
    check_manifest_matches_model(other_weights, description, "m.json", "m.so");
    FAIL() << "another weights.bin checksum was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "m.json: hashes.weights.bin is \"" + std::string(32, 'c') +
                                         "\" but m.so was built for \"" + m.hashes.weights_bin + "\"");
  }
}

TEST(ModelDescription, MismatchNamesTheFieldAndBothValues) {
  std::string description = model_description(complete_manifest());
  auto mismatch = [&](const std::function<void(Manifest&)>& change) {
    Manifest m = complete_manifest();
    change(m);
    try {
      check_manifest_matches_model(m, description, "m/manifest.json", "m/model.so");
    } catch (const RuntimeError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(mismatch([](Manifest& m) { m.outputs[0].shape = {8, 9}; }),
            "m/manifest.json: outputs[0].shape is [8,9] but m/model.so was built for [8,16]");
  EXPECT_EQ(mismatch([](Manifest& m) { m.inputs.push_back(m.inputs[0]); }),
            "m/manifest.json: inputs has 2 entries but m/model.so was built for 1 entry");
  EXPECT_EQ(mismatch([](Manifest& m) { m.devices[1].threads = 0; }),
            "m/manifest.json: devices[1].threads is missing but m/model.so was built for 2");
  EXPECT_EQ(mismatch([](Manifest& m) { m.format_version = 0; }),
            "m/manifest.json: format_version is 0 but m/model.so was built for " + std::to_string(kArtifactFormatVersion));
  // The prediction is no free field either.
  EXPECT_EQ(mismatch([](Manifest& m) { m.prediction = ManifestPrediction{0.5, {}, {}, ""}; }),
            "m/manifest.json: prediction is {\"choice\":\"\",\"critical_path\":[],\"devices\":[],\"run_ms\":0.5} but m/model.so was built without it");
}

TEST(ModelDescription, DescriptionThatIsNotJsonIsNamed) {
  Manifest m = complete_manifest();
  try {
    check_manifest_matches_model(m, "{\"abi", "m.json", "m.so");
    FAIL();
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("m.so: its description (sy_model_description) is not valid JSON: ", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(check_manifest_matches_model(m, "[1, 2]", "m.json", "m.so"), RuntimeError);
}

TEST(Manifest, InvalidJsonIsReported) {
  try {
    parse_manifest("{\"format_version\": 1,", "dir/manifest.json");
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("dir/manifest.json: invalid JSON: ", 0), 0u) << e.what();
  }
}

TEST(Manifest, FormattingValidatesFirst) {
  Manifest m = complete_manifest();
  m.kernels[0].device = 9;
  EXPECT_THROW(format_manifest(m), RuntimeError);
}

TEST(Manifest, LayoutGroupsWeightsByDeviceAndAligns) {
  std::vector<ManifestWeight> weights = {
      {"a", DType::kFloat32, {3}, 1, 0, 0},     // 12 bytes
      {"b", DType::kInt8, {5}, 0, 0, 0},        // 5 bytes
      {"c", DType::kFloat16, {2, 2}, 1, 0, 0},  // 8 bytes
      {"d", DType::kInt64, {}, 0, 0, 0},        // 8 bytes
  };
  EXPECT_EQ(layout_weights(weights, 2), 200u);
  EXPECT_EQ(weights[1].offset, 0u);  // device 0 first, in list order
  EXPECT_EQ(weights[3].offset, 64u);
  EXPECT_EQ(weights[0].offset, 128u);
  EXPECT_EQ(weights[2].offset, 192u);
  EXPECT_EQ(weights[0].nbytes, 12u);

  Manifest m = complete_manifest();
  m.weights = weights;
  validate_manifest(m);
  std::vector<WeightBlock> blocks = weight_blocks(m);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].begin, 0u);
  EXPECT_EQ(blocks[0].end, 72u);
  EXPECT_EQ(blocks[1].begin, 128u);
  EXPECT_EQ(blocks[1].end, 200u);
  EXPECT_EQ(weight_offset_in_block(m, 2), 64u);  // "c": second weight of cpu:1
  EXPECT_EQ(weight_offset_in_block(m, 3), 64u);  // "d": second weight of cpu:0
}

TEST(Manifest, DeviceWithoutWeightsHasEmptyBlock) {
  Manifest m = complete_manifest();
  m.weights.pop_back();
  std::vector<WeightBlock> blocks = weight_blocks(m);
  EXPECT_FALSE(blocks[0].empty());
  EXPECT_TRUE(blocks[1].empty());
}

TEST(Manifest, TensorBytesChecksOverflow) {
  EXPECT_EQ(tensor_nbytes(DType::kFloat16, {3, 5}), 30u);
  EXPECT_EQ(tensor_nbytes(DType::kInt64, {}), 8u);
  EXPECT_EQ(tensor_nbytes(DType::kFloat32, {0, int64_t(1) << 62}), 0u);
  EXPECT_THROW(tensor_nbytes(DType::kFloat32, {int64_t(1) << 40, int64_t(1) << 30}), RuntimeError);
  EXPECT_THROW(tensor_nbytes(DType::kFloat32, {-1}), RuntimeError);
  json huge = mutated([](json& j) { j["inputs"][0]["shape"] = {int64_t(1) << 40, int64_t(1) << 30}; });
  EXPECT_EQ(manifest_parse_error(huge), "manifest.json: inputs[0].shape: tensor size overflows");
}

}  // namespace manifest_test
}  // namespace switchyard
