// The contract of every fuzz target in tests/fuzz/: one input in, and an
// outcome that is either success or a documented error. Switchyard's errors
// (switchyard::Error, RuntimeError, the readers' std::runtime_error) are the
// clear refusals bad input must get; anything else escaping (std::bad_alloc,
// std::out_of_range, a crash, a sanitizer report) is a finding.
//
// Built with -DSY_FUZZ=ON (clang), each target is a libFuzzer program; in
// the ordinary build the same target links replay_main.cc and ctest runs it
// over its seed corpus (tests/fuzz/corpus/<target>/), so no target rots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

namespace switchyard::fuzz {

// Runs `body`, swallowing the refusals a bad input may get.
template <typename Body>
int run_one(Body&& body) {
  try {
    body();
  } catch (const std::runtime_error&) {
    // switchyard::Error and RuntimeError derive from it: a clear refusal.
  }
  return 0;
}

// Aborts with `what`: a property a valid input must keep did not hold.
[[noreturn]] void property_failed(const std::string& what);

}  // namespace switchyard::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
