#include "codegen/row_loop.h"

#include <set>

namespace switchyard {

namespace ki = kernel_ir;

ki::Stmt loop_over_rows(const std::vector<std::pair<std::string, ki::Expr>>& row_coordinates, ki::Stmt inner_loop) {
  std::set<std::string> read;
  ki::visit_exprs({inner_loop}, [&](const ki::Expr& e) {
    if (e->kind == ki::ExprKind::kVar) read.insert(e->name);
  });
  std::vector<ki::Stmt> row_body;
  for (const auto& [name, value] : row_coordinates)
    if (read.count(name)) row_body.push_back(ki::let(name, DType::kInt64, value));
  row_body.push_back(std::move(inner_loop));
  return ki::for_loop("row", ki::var("begin"), ki::var("end"), ki::LoopKind::kSerial, std::move(row_body));
}

}  // namespace switchyard
