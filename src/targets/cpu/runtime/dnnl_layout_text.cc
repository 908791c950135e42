// oneDNN layouts as text (see dnnl_layout_text.h).
#include "targets/cpu/runtime/dnnl_layout_text.h"

#include <map>
#include <sstream>
#include <vector>

#include "runtime/runtime_error.h"

namespace switchyard {

using dnnl::memory;

std::string joined(const int64_t* values, int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text;
}

std::string layout_text(const memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.format_kind != dnnl_blocked || d.data_type != dnnl_f32 || d.extra.flags != 0) return "";
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  std::string blocks;
  for (int i = 0; i < b.inner_nblks; ++i)
    blocks += (i ? "," : "") + std::to_string(b.inner_idxs[i]) + ":" + std::to_string(b.inner_blks[i]);
  return "onednn dims=" + joined(d.dims, d.ndims) + " padded=" + joined(d.padded_dims, d.ndims) +
         " offsets=" + joined(d.padded_offsets, d.ndims) + " offset0=" + std::to_string(d.offset0) +
         " strides=" + joined(b.strides, d.ndims) + " blocks=" + blocks;
}

memory::desc layout_from_text(const std::string& text) {
  auto bad = [&](const std::string& why) { return RuntimeError("unreadable oneDNN layout '" + text + "': " + why); };
  std::map<std::string, std::vector<int64_t>> fields;
  std::istringstream words(text);
  std::string word;
  words >> word;
  if (word != "onednn") throw bad("it does not start with 'onednn'");
  while (words >> word) {
    size_t eq = word.find('=');
    if (eq == std::string::npos) throw bad("'" + word + "' is not name=values");
    std::vector<int64_t>& values = fields[word.substr(0, eq)];
    std::string list = word.substr(eq + 1);
    for (size_t at = 0; at < list.size();) {
      size_t end = list.find_first_of(",:", at);
      if (end == std::string::npos) end = list.size();
      try {
        size_t used = 0;
        values.push_back(std::stoll(list.substr(at, end - at), &used));
        if (used != end - at) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw bad("'" + list + "' is not a list of integers");
      }
      at = end + 1;
    }
  }
  for (const char* name : {"dims", "padded", "offsets", "offset0", "strides", "blocks"})
    if (!fields.count(name)) throw bad(std::string("no ") + name);
  dnnl_memory_desc_t d{};
  const std::vector<int64_t>& dims = fields["dims"];
  d.ndims = int(dims.size());
  if (d.ndims < 1 || d.ndims > DNNL_MAX_NDIMS) throw bad("bad number of dimensions");
  for (const char* name : {"padded", "offsets", "strides"})
    if (fields[name].size() != dims.size()) throw bad(std::string(name) + " has another rank than dims");
  const std::vector<int64_t>& blocks = fields["blocks"];
  if (blocks.size() % 2 != 0 || blocks.size() / 2 > DNNL_MAX_NDIMS || fields["offset0"].size() != 1)
    throw bad("bad blocks or offset0");
  d.data_type = dnnl_f32;
  d.format_kind = dnnl_blocked;
  d.offset0 = fields["offset0"][0];
  dnnl_blocking_desc_t& b = d.format_desc.blocking;
  for (int i = 0; i < d.ndims; ++i) {
    d.dims[i] = dims[size_t(i)];
    d.padded_dims[i] = fields["padded"][size_t(i)];
    d.padded_offsets[i] = fields["offsets"][size_t(i)];
    b.strides[i] = fields["strides"][size_t(i)];
    if (d.dims[i] < 1 || d.padded_dims[i] < d.dims[i] || d.padded_offsets[i] != 0 || b.strides[i] < 0)
      throw bad("bad dimension " + std::to_string(i));
  }
  b.inner_nblks = int(blocks.size() / 2);
  for (int i = 0; i < b.inner_nblks; ++i) {
    b.inner_idxs[i] = blocks[size_t(2 * i)];
    b.inner_blks[i] = blocks[size_t(2 * i + 1)];
    if (b.inner_idxs[i] < 0 || b.inner_idxs[i] >= d.ndims || b.inner_blks[i] < 1) throw bad("bad block");
  }
  if (d.offset0 != 0) throw bad("offset0 is not 0");
  return memory::desc(d);
}

}  // namespace switchyard
