// The IR's layout vocabulary: how a 4-d activation's elements lie in its
// buffer. A value's layout is part of its virtual device (written
// layout="nhwc" in the text IR); a target maps each layout it supports to
// its library's own (the CPU: oneDNN's format tags of the same names).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace switchyard {

struct Layout {
  enum class Kind : unsigned char {
    kPlain,           // "": dense row-major, NCHW for an activation
    kChannelsLast,    // "nhwc": each pixel's channels together
    kChannelBlocked,  // "nChw<N>c": blocks of N channels, each block's pixels in rows
  };
  Kind kind = Kind::kPlain;
  int channel_block = 0;  // N of kChannelBlocked, else 0

  // Null for a name that is no layout.
  static std::optional<Layout> parse(std::string_view name);
  // A layout the IR holds (its virtual device's, already parsed): plain when unknown.
  static Layout of(std::string_view name) { return parse(name).value_or(Layout{}); }
  std::string name() const;
  bool plain() const { return kind == Kind::kPlain; }
  bool channels_last() const { return kind == Kind::kChannelsLast; }
  bool channel_blocked() const { return kind == Kind::kChannelBlocked; }
  bool operator==(const Layout&) const = default;
};

// What parse accepts, for messages.
constexpr const char* kLayoutSpellings = "nhwc (channels last), or nChw<N>c (blocks of N channels, N from 2 to 64)";

}  // namespace switchyard
