// The text IR parser: reads what print_module writes (and the hand-written
// forms in docs/text-format.md) into an IRModule whose every node has the
// span (file:line:column) of its first token.
//
// Bad input throws Error(ErrorKind::kParse, message, span): syntax errors,
// unknown operators, bad attributes (the registry's message), undefined or
// twice-bound names, malformed devices. Long binding sequences and let chains
// are parsed without recursion; nesting inside one expression deeper than
// 1000 levels is reported as an error.
#pragma once

#include <string>

#include "ir/module.h"
#include "support/error.h"  // callers catch the Error values parsing throws

namespace switchyard {

// Parses `text`; spans name `source_name`. Records nothing global (call
// register_source_text first to have errors quote the source line).
IRModule parse_module(const std::string& text, const std::string& source_name);

// Reads and parses a file, registering its text for diagnostics. An
// unreadable file is Error(kUsage).
IRModule parse_file(const std::string& path);

}  // namespace switchyard
