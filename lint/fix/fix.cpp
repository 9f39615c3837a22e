#include "lint/fix/fix.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "lint/fix/apply.h"
#include "lint/fix/lines.h"
#include "lint/fix/planner.h"
#include "lint/lint_file.h"
#include "rules/engine.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {
namespace {

using namespace fix_detail;

// A CR not followed by LF: a line break to YAML that the line edits here
// (made on LF-terminated lines) do not know.
bool hasLoneCr(std::string_view text) {
  for (std::size_t cr = text.find('\r'); cr != std::string_view::npos; cr = text.find('\r', cr + 1)) {
    if (cr + 1 == text.size() || text[cr + 1] != '\n') return true;
  }
  return false;
}

// Why the text (without its BOM) cannot be fixed at all, or nullopt.
std::optional<FixNote> unfixable(std::string_view text, const yaml::ParseResult& parsed) {
  if (parsed.error) {
    return FixNote{parsed.error->position.line, parsed.error->position.column, "", false,
                   "the file does not parse (" + parsed.error->message + ")"};
  }
  if (text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE")) {
    return FixNote{0, 0, "", false, "the file is UTF-16; fixes are made in UTF-8 files only"};
  }
  if (hasLoneCr(text)) {
    return FixNote{0, 0, "", false,
                   "the file's line breaks are CR only (classic Mac OS); fixes are made in files with LF or "
                   "CRLF line breaks"};
  }
  return std::nullopt;
}

// The plans of every Kubernetes document, judged as the lint judges them;
// `findings` holds what the plans point to.
std::vector<DocPlan> planAll(const Lines& lines, const yaml::ParseResult& parsed, const LintPolicy& policy,
                             std::vector<std::vector<Finding>>& findings, std::vector<bool>& judged,
                             std::vector<FixNote>& notes) {
  const InputFacts facts = inputFacts(parsed);
  findings.assign(parsed.documents.size(), {});
  judged.assign(parsed.documents.size(), false);
  std::vector<DocPlan> plans;
  for (std::size_t i = 0; i < parsed.documents.size(); ++i) {
    const yaml::Document& doc = parsed.documents[i];
    if (!isKubernetesObject(doc.value)) continue;
    findings[i] = judgeDocument(doc, policy, false, &facts);  // a listed patch is never fixed (lint/run.cpp)
    judged[i] = true;
    const std::size_t lastLine = i + 1 < parsed.documents.size() && parsed.documents[i + 1].start.line > 0
                                     ? static_cast<std::size_t>(parsed.documents[i + 1].start.line - 1)
                                     : lines.count();
    DocPlan plan = planDocument(lines, doc, findings[i], lastLine, notes);
    if (!plan.edits.empty()) plans.push_back(std::move(plan));
  }
  return plans;
}

void rejectPlan(const yaml::ParseResult& parsed, const DocPlan& plan, const std::string& why,
                std::vector<FixNote>& notes) {
  for (const auto& fixed : plan.fixed) noteFinding(parsed.documents[plan.index], *fixed.first, false, why, notes);
}

// The plans whose edits collide with no earlier plan's.
std::vector<DocPlan> withoutCollisions(std::vector<DocPlan> plans, const yaml::ParseResult& parsed,
                                       std::vector<FixNote>& notes) {
  TakenLines taken;
  std::vector<DocPlan> kept;
  for (DocPlan& plan : plans) {
    if (taken.take(plan.edits)) {
      kept.push_back(std::move(plan));
    } else {
      rejectPlan(parsed, plan, "two fixes would edit the same lines", notes);
    }
  }
  return kept;
}

// The fixed text of the plans left in `plans`, and its parse.
struct Applied {
  std::string text;
  yaml::ParseResult parsed;
};

// Applies the plans and parses the result again: a plan whose document does
// not decode as intended is dropped and the rest applied again.
Applied applyVerified(const Lines& lines, const yaml::ParseResult& parsed, std::vector<DocPlan>& plans,
                      std::vector<FixNote>& notes) {
  Applied applied;
  while (!plans.empty()) {
    std::vector<Edit> edits;
    for (const DocPlan& plan : plans) edits.insert(edits.end(), plan.edits.begin(), plan.edits.end());
    applied.text = applyEdits(lines, edits);
    applied.parsed = yaml::parseStream(applied.text, manifestLimits());
    const yaml::ParseResult& again = applied.parsed;
    if (again.error || again.documents.size() != parsed.documents.size()) {
      for (const DocPlan& plan : plans) rejectPlan(parsed, plan, "the edited file did not parse back as intended", notes);
      plans.clear();
      break;
    }
    std::vector<DocPlan> good;
    for (DocPlan& plan : plans) {
      if (again.documents[plan.index].value == plan.expected) {
        good.push_back(std::move(plan));
      } else {
        rejectPlan(parsed, plan, "the edit did not give the intended object (please report this)", notes);
      }
    }
    const bool allGood = good.size() == plans.size();
    plans = std::move(good);
    if (allGood) break;
  }
  return applied;
}

// An object whose edit may change what the input defines for the others
// (InputFacts: DRA objects, ComputeDomains, and a List's items).
bool definesFacts(const nlohmann::json& object) {
  const auto kind = object.find("kind");
  if (kind == object.end() || !kind->is_string()) return true;
  const std::string& k = kind->get_ref<const std::string&>();
  return k == "List" || k == "DeviceClass" || k == "ResourceClaimTemplate" || k == "ResourceClaim" ||
         k == "ComputeDomain";
}

// What the report of the result's text may take from the fixing: the parse
// of that text and the findings of the documents left as they were.
void keepForTheReport(FixResult& result, yaml::ParseResult parsed, std::vector<std::vector<Finding>>& findings,
                      const std::vector<bool>& judged, const std::vector<DocPlan>& plans) {
  std::vector<bool> edited(findings.size(), false);
  bool factsMayChange = false;
  for (const DocPlan& plan : plans) {
    edited[plan.index] = true;
    factsMayChange |= definesFacts(parsed.documents[plan.index].value) || definesFacts(plan.expected);
  }
  result.judged.assign(findings.size(), std::nullopt);
  for (std::size_t i = 0; i < findings.size() && !factsMayChange; ++i) {
    if (judged[i] && !edited[i]) result.judged[i] = std::move(findings[i]);
  }
  result.parsed = std::move(parsed);
}

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
  yaml::ParseResult parsed = yaml::parseStream(text, manifestLimits());
  if (std::optional<FixNote> note = unfixable(text, parsed)) {
    result.notes.push_back(std::move(*note));
    return result;
  }
  const Lines lines(text);
  std::vector<std::vector<Finding>> findings;
  std::vector<bool> judged;
  std::vector<FixNote> notes;
  std::vector<DocPlan> plans =
      withoutCollisions(planAll(lines, parsed, policy, findings, judged, notes), parsed, notes);
  Applied applied = applyVerified(lines, parsed, plans, notes);
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
    result.text = std::string(bom) + applied.text;
    result.changed = result.text != input;
  }
  if (bom.empty()) {
    if (result.changed) keepForTheReport(result, std::move(applied.parsed), findings, judged, plans);
    else keepForTheReport(result, std::move(parsed), findings, judged, {});
  }
  return result;
}

}  // namespace gpuguard::lint
