// The text of an admission decision: one denial message in the API server's
// aggregate style, and warnings made safe for the API server's warning
// recorder (valid UTF-8, no control characters, <= 256 runes each, <= 4096
// runes in total).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "rules/finding.h"
#include "webhook/admission_limits.h"

namespace gpuguard::webhook {

// Makes `text` acceptable to the API server's warning recorder: invalid UTF-8
// becomes U+FFFD, control characters (C0, DEL, C1) become spaces, runs of
// spaces collapse, and the result is cut to `maxRunes` runes (ending in "...").
std::string sanitizeWarning(std::string_view text, std::size_t maxRunes);

// "<rule>: <prefix><field>: <what is wrong>", without the remedy when that
// keeps it within the preferred length. `suffix`, if any, follows after a
// space and survives any cut; so does `prefix` (a note on how it was judged).
std::string warningText(const Finding& f, std::string_view suffix, const AdmissionLimits& limits,
                        std::string_view prefix = {});

// "<field>: <message> [<rule>]", as one entry of a denial message.
std::string denialEntry(const Finding& f);

// Joins entries like the API server's aggregate error: one entry alone,
// several as "[e1, e2]"; de-duplicated; capped with "and N more".
std::string denialMessage(const std::vector<std::string>& entries, const AdmissionLimits& limits);

// Adds warnings within the API server's total budget: duplicates dropped,
// and once the budget would run out, one closing "and N more" note.
class WarningList {
 public:
  explicit WarningList(const AdmissionLimits& limits) : limits_(limits) {}

  void add(std::string text);
  std::vector<std::string> finish() &&;

 private:
  static constexpr std::size_t kNoteReserve = 80;
  const AdmissionLimits& limits_;
  std::vector<std::string> items_;
  std::size_t total_ = 0;
  std::size_t omitted_ = 0;
};

}  // namespace gpuguard::webhook
