// The placed data-flow graph as Graphviz dot: one colour per device, copies
// drawn as distinct (dashed, labelled) edges, node labels with operator and
// span. `render_svg` runs Graphviz's `dot`.
#pragma once

#include <string>

#include "ir/module.h"

namespace switchyard {

std::string placed_graph_to_dot(const IRModule& mod);
// Writes `svg_path` from dot text; Error(kUsage) when `dot` is missing or fails.
void render_svg(const std::string& dot_text, const std::string& svg_path);

}  // namespace switchyard
