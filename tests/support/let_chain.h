// A long chain of lets in the text format, which the long-chain tests and
// bench/pipeline_bench.cc build through the pipeline.
#pragma once

#include <cstdint>
#include <string>

namespace switchyard::testing {

// @main(%x: Tensor[(4), float32]): `length` lets, each `op` of the one
// before (add: plus 1f).
inline std::string let_chain(int64_t length, const std::string& op) {
  std::string text = "def @main(%x: Tensor[(4), float32]) {\n";
  std::string previous = "%x";
  for (int64_t i = 0; i < length; ++i) {
    std::string name = "%v" + std::to_string(i);
    text += "  let " + name + " = " + op + "(" + previous + (op == "add" ? ", 1f" : "") + ");\n";
    previous = name;
  }
  return text + "  " + previous + "\n}\n";
}

}  // namespace switchyard::testing
