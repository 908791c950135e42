// Fuzz target: what the artifact loader reads before it trusts anything.
// The first byte picks the reader: a manifest (parsed and validated, as
// every load does before opening model.so, then checked against its own
// model.so description), or a .npy input file (written to
// a private temporary file, since inputs are read only from regular files).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "fuzz_target.h"
#include "runtime/manifest.h"
#include "runtime/model_description.h"
#include "runtime/npy.h"

using namespace switchyard;

namespace {

void read_npy_bytes(const std::string& bytes) {
  static std::string path = [] {
    char dir[] = "/tmp/sy_fuzz_npy_XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    return std::string(dir) + "/input.npy";
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  read_npy(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  return fuzz::run_one([&] {
    if (data[0] % 2 == 0) {
      Manifest manifest = parse_manifest(rest, "fuzz/manifest.json");
      validate_manifest(manifest, "fuzz/manifest.json");
      // What validates must also print and read back the same.
      Manifest again = parse_manifest(format_manifest(manifest), "formatted");
      if (format_manifest(again) != format_manifest(manifest))
        fuzz::property_failed("a validated manifest does not survive format and parse");
      // And match the description a model.so built for it would carry.
      try {
        check_manifest_matches_model(again, model_description(manifest), "formatted", "model.so");
      } catch (const std::runtime_error&) {
        fuzz::property_failed("a validated manifest does not match its own model.so description");
      }
    } else {
      read_npy_bytes(rest);
    }
  });
}
