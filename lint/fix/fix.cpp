#include "lint/fix/fix.h"

#include <algorithm>
#include <map>
#include <set>

#include "lint/fix/planner.h"
#include "lint/fix/lines.h"
#include "lint/lint_file.h"
#include "rules/engine.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

using namespace fix_detail;


// Applies non-overlapping edits (sorted by line; inserts before replacements
// at the same line).
std::string apply(const Lines& lines, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return std::pair(a.line, a.remove) < std::pair(b.line, b.remove);
  });
  std::string out;
  std::size_t next = 0;
  for (std::size_t n = 1; n <= lines.count() + 1; ++n) {
    bool replaced = false;
    while (next < edits.size() && edits[next].line == n) {
      const Edit& e = edits[next++];
      for (std::size_t k = 0; k < e.lines.size(); ++k) {
        out += e.lines[k];
        // The last line of a replacement keeps the replaced line's break.
        const bool last = k + 1 == e.lines.size();
        out += e.remove > 0 && last ? std::string(lines.lineBreak(n + e.remove - 1)) : lines.eol();
      }
      if (e.remove > 0) {
        n += e.remove - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced && n <= lines.count()) {
      const std::string_view full = lines.full(n);
      out += full;
      // New lines inserted after a last line without a break need one.
      if (n == lines.count() && lines.lineBreak(n).empty() && next < edits.size()) out += lines.eol();
    }
  }
  return out;
}

// The lines the kept plans edit: replaced ranges and insertion points, so
// that a plan colliding with an earlier one is found in logarithmic time
// (thousands of fixes in one file stay linear).
// A CR not followed by LF: a line break to YAML that the line edits here
// (made on LF-terminated lines) do not know.
bool hasLoneCr(std::string_view text) {
  for (std::size_t cr = text.find('\r'); cr != std::string_view::npos; cr = text.find('\r', cr + 1)) {
    if (cr + 1 == text.size() || text[cr + 1] != '\n') return true;
  }
  return false;
}

class TakenLines {
 public:
  // Takes every edit of a plan, or none when one collides with what is
  // taken (or with another edit of the same plan).
  bool take(const std::vector<Edit>& edits) {
    std::vector<const Edit*> added;
    for (const Edit& e : edits) {
      if (collides(e)) {
        for (const Edit* a : added) forget(*a);
        return false;
      }
      remember(e);
      added.push_back(&e);
    }
    return true;
  }

 private:
  // Two replacements overlap, or an insertion falls strictly inside a
  // replacement (an insertion at its first line goes in front of it).
  bool collides(const Edit& e) const {
    if (e.remove > 0) {
      const std::size_t end = e.line + e.remove;
      auto before = replaced_.lower_bound(end);  // replaced ranges are disjoint: sorted by start and end
      if (before != replaced_.begin() && std::prev(before)->second > e.line) return true;
      const auto insert = inserts_.upper_bound(e.line);
      return insert != inserts_.end() && *insert < end;
    }
    auto after = replaced_.lower_bound(e.line);
    return after != replaced_.begin() && e.line < std::prev(after)->second && std::prev(after)->first < e.line;
  }
  void remember(const Edit& e) {
    if (e.remove > 0) replaced_.emplace(e.line, e.line + e.remove);
    else inserts_.insert(e.line);
  }
  void forget(const Edit& e) {
    if (e.remove > 0) replaced_.erase(e.line);
    else inserts_.erase(inserts_.find(e.line));
  }

  std::map<std::size_t, std::size_t> replaced_;  // first line -> one past the last
  std::multiset<std::size_t> inserts_;
};

}  // namespace

FixResult fixText(std::string_view input, const LintPolicy& policy) {
  FixResult result;
  result.text = std::string(input);
  std::string_view bom;
  std::string_view text = input;
  if (text.starts_with("\xEF\xBB\xBF")) {
    bom = text.substr(0, 3);
    text.remove_prefix(3);
  }
  const yaml::ParseResult parsed = yaml::parseStream(text, manifestLimits());
  if (parsed.error) {
    result.notes.push_back({parsed.error->position.line, parsed.error->position.column, "", false,
                            "the file does not parse (" + parsed.error->message + ")"});
    return result;
  }
  if (text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE")) {
    result.notes.push_back({0, 0, "", false, "the file is UTF-16; fixes are made in UTF-8 files only"});
    return result;
  }
  if (hasLoneCr(text)) {
    result.notes.push_back({0, 0, "", false,
                            "the file's line breaks are CR only (classic Mac OS); fixes are made in files with LF or "
                            "CRLF line breaks"});
    return result;
  }
  const Lines lines(text);

  const InputFacts facts = inputFacts(parsed);  // judged as the lint judges them
  std::vector<std::vector<Finding>> findings(parsed.documents.size());
  std::vector<DocPlan> plans;
  std::vector<FixNote> notes;
  for (std::size_t i = 0; i < parsed.documents.size(); ++i) {
    const yaml::Document& doc = parsed.documents[i];
    if (!isKubernetesObject(doc.value)) continue;
    findings[i] = judgeDocument(doc, policy, looksLikeFragment(doc.value), &facts);  // a fragment: fix only what it is judged for
    const std::size_t lastLine = i + 1 < parsed.documents.size() && parsed.documents[i + 1].start.line > 0
                                     ? static_cast<std::size_t>(parsed.documents[i + 1].start.line - 1)
                                     : lines.count();
    DocPlan plan = planDocument(lines, doc, findings[i], lastLine, notes);
    if (!plan.edits.empty()) plans.push_back(std::move(plan));
  }

  // Drop plans whose edits collide with an earlier plan's, then apply and
  // verify; a plan whose document does not decode as intended is dropped
  // and the rest applied again.
  auto rejectPlan = [&](const DocPlan& plan, const std::string& why) {
    for (const auto& fixed : plan.fixed) noteFinding(parsed.documents[plan.index], *fixed.first, false, why, notes);
  };
  {
    TakenLines taken;
    std::vector<DocPlan> kept;
    for (DocPlan& plan : plans) {
      if (!taken.take(plan.edits)) {
        rejectPlan(plan, "two fixes would edit the same lines");
        continue;
      }
      kept.push_back(std::move(plan));
    }
    plans = std::move(kept);
  }
  std::string fixedText;
  while (!plans.empty()) {
    std::vector<Edit> edits;
    for (const DocPlan& plan : plans) edits.insert(edits.end(), plan.edits.begin(), plan.edits.end());
    fixedText = apply(lines, edits);
    const yaml::ParseResult again = yaml::parseStream(fixedText, manifestLimits());
    if (again.error || again.documents.size() != parsed.documents.size()) {
      for (const DocPlan& plan : plans) rejectPlan(plan, "the edited file did not parse back as intended");
      plans.clear();
      break;
    }
    std::vector<DocPlan> good;
    bool allGood = true;
    for (DocPlan& plan : plans) {
      if (again.documents[plan.index].value == plan.expected) {
        good.push_back(std::move(plan));
      } else {
        allGood = false;
        rejectPlan(plan, "the edit did not give the intended object (please report this)");
      }
    }
    plans = std::move(good);
    if (allGood) break;
  }

  for (const DocPlan& plan : plans) {
    for (const auto& [f, what] : plan.fixed) {
      noteFinding(parsed.documents[plan.index], *f, true, what, notes);
      ++result.fixed;
    }
  }
  std::stable_sort(notes.begin(), notes.end(), [](const FixNote& a, const FixNote& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  result.notes = std::move(notes);
  if (!plans.empty()) {
    result.text = std::string(bom) + fixedText;
    result.changed = result.text != input;
  }
  return result;
}

}  // namespace gpuguard::lint
