// The manifest of a specialised artifact (`switchyard compile --specialize
// n=1,8`): the model's symbolic inputs and outputs and the values of its
// dimension variables each compiled program was made for. Each program is a
// whole artifact of its own in a subdirectory named after its values
// ("n=8", "n=4,s=16"); the one weights.bin at the top serves every program
// whose weights came out byte for byte the same. The runtime reads it to pick
// the program that fits the inputs of a run, and to refuse inputs none fits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/dtype.h"

namespace switchyard {

// A dimension: a constant, or the text of a symbolic one ("n", "196*n").
struct ManifestDim {
  int64_t value = -1;  // the constant; -1 when symbolic
  std::string symbol;  // empty when constant
  bool is_symbolic() const { return !symbol.empty(); }
};

struct SymbolicTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<ManifestDim> shape;
};

struct Specialization {
  std::vector<int64_t> values;  // one per SpecializedManifest::dims
  // Reads the top-level weights.bin (else its own directory's).
  bool shared_weights = false;
};

// How a run takes a value of dimension `dim` that no program was compiled
// for (format 8): as a sum of compiled values, each a run of its program
// on a slice of the inputs (analysis/chunkable_dims.h proved the outputs
// the same). Axes per input and output, -1 where the tensor does not hold
// the dimension; `refusal` says why runs cannot chunk it, when they cannot.
struct DimChunking {
  std::string dim;
  std::vector<int> input_axes, output_axes;
  std::string refusal;
  bool chunkable() const { return refusal.empty(); }
};

struct SpecializedManifest {
  int format_version = 0;
  std::string switchyard_version;
  std::vector<std::string> dims;  // the dimension variables given values
  std::vector<SymbolicTensor> inputs, outputs;
  std::vector<Specialization> specializations;
  // One per dims entry from format 8; empty in format 7 (no chunked runs).
  std::vector<DimChunking> chunking;
};

// "n=8", "n=4,s=16": the specialisation's subdirectory and its name in messages.
std::string specialization_name(const SpecializedManifest& manifest, size_t index);
// One line on how runs take other values of chunking entry `d`: "n: any
// value, in chunks of the compiled ones (along x axis 0; y axis 0)" or
// "s: only the compiled values (nn.softmax(%x) at ...: normalises ...)".
std::string chunking_text(const SpecializedManifest& manifest, size_t d);
// "(n, 3, 224, 224)".
std::string symbolic_shape_text(const std::vector<ManifestDim>& shape);

// The manifest at `path` when it describes a specialised artifact (it has
// `specializations`); nullopt for any other file, left to read_manifest_file.
// Throws RuntimeError naming the file and JSON path of a malformed one.
std::optional<SpecializedManifest> read_specialized_manifest_file(const std::string& path);
std::string format_specialized_manifest(const SpecializedManifest& manifest);

// Throws RuntimeError naming both inputs and dimensions when two inputs'
// dimensions that share a symbol (`batch` in both) differ in `input_shapes`:
// the model needs them equal, whatever the programs.
void check_shared_dims_agree(const SpecializedManifest& manifest,
                             const std::vector<std::vector<int64_t>>& input_shapes);

// The specialisation whose programs' input shapes (`program_inputs[s][i]`)
// equal `input_shapes` (in manifest order). Throws RuntimeError naming the
// input, the dimension, its value and the specialisations there are when
// none does.
size_t choose_specialization(const SpecializedManifest& manifest,
                             const std::vector<std::vector<std::vector<int64_t>>>& program_inputs,
                             const std::vector<std::vector<int64_t>>& input_shapes);

}  // namespace switchyard
