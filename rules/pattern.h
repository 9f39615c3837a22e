// A regular expression from the policy (cudaImages, exemptions), in RE2
// syntax, always matched against the whole string.
//
// RE2 because these patterns come from configuration and run against strings
// any pod author controls (image references, names): RE2 matches in time
// linear in the input, whatever the pattern, where a backtracking engine
// (std::regex, PCRE) can take exponential time on a pattern such as (a+)+$.
// RE2 has no backreferences and no lookaround; such a pattern is an error.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace gpuguard {

class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Pattern {
 public:
  // Compiles `text` once; copies share the compiled program. Throws
  // PatternError with RE2's reason when the pattern is not valid RE2.
  explicit Pattern(std::string_view text);

  // True when the pattern matches all of `s`, not just a part of it.
  bool fullMatch(std::string_view s) const;

  // When the pattern matches all of `s`: the text its group `name` took ("" if
  // the group took no part). nullopt when it does not match.
  std::optional<std::string> fullMatchGroup(std::string_view s, std::string_view name) const;

  bool hasGroup(std::string_view name) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace gpuguard
