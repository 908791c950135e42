// The IR rewrites of PlanLayouts (see layout_rewrite.h).
#include "layout/layout_rewrite.h"

#include "op/handles.h"
#include "op/registry.h"

namespace switchyard {

Expr layout_conversion(const Expr& value, const VirtualDevice* device) {
  Type type = value->checked_type();
  Span span = value->span();
  Var param = make_var("p0", type, {device, span, type});
  Call body = make_op_call(ops::layout_convert(), {param}, {}, {device, span, type});
  Function fn = make_function({param}, body, type, make_attrs({{"Primitive", int64_t(1)}}),
                              {device, span, func_type({type}, type)});
  return make_call(fn, {value}, Attrs(), {device, span, type});
}

}  // namespace switchyard
