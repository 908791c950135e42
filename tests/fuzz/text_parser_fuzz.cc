// Fuzz target: the text-IR parser. Any text either parses or is refused with
// an Error; a module that parses prints as text that parses back to the same
// module (spans aside: they name the other file).
#include "fuzz_target.h"
#include "ir/structural_equal.h"
#include "text/parser.h"
#include "text/printer.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  return fuzz::run_one([&] {
    IRModule mod = parse_module(text, "fuzz.sy");
    std::string printed = print_module(mod);
    IRModule again;
    try {
      again = parse_module(printed, "printed.sy");
    } catch (const std::exception& e) {
      fuzz::property_failed(std::string("the printed module does not parse: ") + e.what() + "\n" + printed);
    }
    if (auto diff = structural_diff(mod, again, {.compare_spans = false}))
      fuzz::property_failed("the printed module parses to another module: " + *diff + "\n" + printed);
  });
}
