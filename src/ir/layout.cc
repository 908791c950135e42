// Parses and names the IR's layouts (see layout.h).
#include "ir/layout.h"

#include <charconv>

namespace switchyard {

namespace {
constexpr int kLargestChannelBlock = 64;
}  // namespace

std::optional<Layout> Layout::parse(std::string_view name) {
  if (name.empty()) return Layout{};
  if (name == "nhwc") return Layout{Kind::kChannelsLast, 0};
  constexpr std::string_view prefix = "nChw";
  if (name.size() < prefix.size() + 2 || name.substr(0, prefix.size()) != prefix || name.back() != 'c')
    return std::nullopt;
  std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - 1);
  int block = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), block);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.front() == '0' || block < 2 ||
      block > kLargestChannelBlock)
    return std::nullopt;
  return Layout{Kind::kChannelBlocked, block};
}

std::string Layout::name() const {
  switch (kind) {
    case Kind::kPlain: return "";
    case Kind::kChannelsLast: return "nhwc";
    case Kind::kChannelBlocked: return "nChw" + std::to_string(channel_block) + "c";
  }
  return "";
}

}  // namespace switchyard
