// Explanations of placement decisions: for a chosen node, its device and the
// chain of reasons from the deciding wish (or rule, default, fallback, or the
// optimiser's choice and what it saved) to it.
#pragma once

#include <string>
#include <vector>

#include "placement/placement_rules.h"
#include "placement/plan_devices.h"

namespace switchyard {

// Place nodes a user-given name selects: "%2" (a graph binding of the text
// file, found in `source_text`), "%x" (a parameter or let variable), "12" or
// "file.sy:12" (a source line), or an imported model's node name.
std::vector<PlaceId> select_place_nodes(const PlacementGraph& graph, const std::string& name,
                                        const std::string& source_text);

// Multi-line explanation of one place node's device. A device set by one of
// `rules` (the build's --place rules) names the rule.
std::string explain_place_node(const PlanResult& plan, PlaceId id, const CompilationConfig& config,
                               const std::vector<PlacementRule>& rules = {});

}  // namespace switchyard
