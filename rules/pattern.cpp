#include "rules/pattern.h"

#include <vector>

#include <re2/re2.h>

namespace gpuguard {
namespace {

std::shared_ptr<const re2::RE2> compile(const std::string& text) {
  re2::RE2::Options options;
  options.set_log_errors(false);  // the error goes into PatternError, not to stderr
  auto re = std::make_shared<const re2::RE2>(text, options);
  if (!re->ok()) throw PatternError("invalid pattern: " + re->error());
  return re;
}

}  // namespace

Pattern::Pattern(std::string_view text) : text_(text), re_(compile(text_)) {}

bool Pattern::fullMatch(std::string_view s) const { return re2::RE2::FullMatch(s, *re_); }

bool Pattern::hasGroup(std::string_view name) const {
  return re_->NamedCapturingGroups().count(std::string(name)) > 0;
}

std::optional<std::string> Pattern::fullMatchGroup(std::string_view s, std::string_view name) const {
  const auto& groups = re_->NamedCapturingGroups();
  const auto it = groups.find(std::string(name));
  if (it == groups.end()) return fullMatch(s) ? std::optional<std::string>("") : std::nullopt;
  // Match() fills submatch 0 (the whole match) and one per group up to ours.
  std::vector<re2::StringPiece> submatches(static_cast<std::size_t>(it->second) + 1);
  if (!re_->Match(s, 0, s.size(), re2::RE2::ANCHOR_BOTH, submatches.data(), static_cast<int>(submatches.size()))) {
    return std::nullopt;
  }
  const re2::StringPiece group = submatches.back();
  return group.data() ? std::string(group.data(), group.size()) : std::string();
}

}  // namespace gpuguard
