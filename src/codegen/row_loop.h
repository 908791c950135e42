// The serial loop over a parallel chunk's rows that the generated
// element-wise and concatenation kernels share: each row binds the
// coordinates its inner loop reads, and only those.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernel_ir/stmt.h"

namespace switchyard {

// `for row in [begin, end)`: the (name, value) coordinates of the row that
// `inner_loop` reads as variables, bound by lets, then `inner_loop`.
kernel_ir::Stmt loop_over_rows(const std::vector<std::pair<std::string, kernel_ir::Expr>>& row_coordinates,
                               kernel_ir::Stmt inner_loop);

}  // namespace switchyard
