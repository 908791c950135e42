// Helpers for operator tests: run an operator's type relation the way
// InferType does (arity, normalized attributes, relation) on given types.
#pragma once

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "op/registry.h"
#include "support/error.h"

namespace switchyard {
// Readable types in failure messages.
inline void PrintTo(const Type& t, std::ostream* os) { *os << type_to_string(t); }
}  // namespace switchyard

namespace switchyard::testing {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

inline Type f32(std::vector<int64_t> shape) { return tensor_type(std::move(shape), DType::kFloat32); }
inline Type of(DType dtype, std::vector<int64_t> shape) { return tensor_type(std::move(shape), dtype); }
inline AttrValue ints(std::vector<int64_t> values) { return AttrValue(std::move(values)); }
inline AttrValue integer(int64_t value) { return AttrValue(value); }
inline AttrValue text(const char* value) { return AttrValue(std::string(value)); }

// The result type of `op` applied to `args`; throws Error(kType) like InferType.
inline Type relate(const std::string& op, const std::vector<Type>& args, AttrList attrs = {}) {
  const OpDef* def = find_op_def(op);
  if (!def) throw std::logic_error("no operator " + op);
  if (def->num_inputs >= 0 && args.size() != size_t(def->num_inputs))
    throw Error(ErrorKind::kType, "'" + op + "' arity");
  Attrs normalized = normalize_attrs(*def, std::move(attrs));
  return call_type_relation(*def, args, *normalized);
}

// The message of the Error(kType) that relate() throws; fails the test when
// it throws nothing or something else.
inline std::string relate_error(const std::string& op, const std::vector<Type>& args, AttrList attrs = {}) {
  try {
    Type t = relate(op, args, std::move(attrs));
    ADD_FAILURE() << "'" << op << "' accepted the arguments, giving " << type_to_string(t);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    return e.message();
  }
  return "";
}

// The message of the Error(kType) that attribute normalization throws.
inline std::string attrs_error(const std::string& op, AttrList attrs) {
  try {
    normalize_attrs(*find_op_def(op), std::move(attrs));
    ADD_FAILURE() << "'" << op << "' accepted the attributes";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    return e.message();
  }
  return "";
}

inline std::string type_str(const Type& t) { return type_to_string(t); }

}  // namespace switchyard::testing

// EXPECT that `haystack` contains `needle`, printing both otherwise.
#define EXPECT_CONTAINS(haystack, needle)                                                   \
  do {                                                                                     \
    std::string sy_haystack = (haystack);                                                  \
    EXPECT_NE(sy_haystack.find(needle), std::string::npos) << "in: " << sy_haystack;       \
  } while (0)
