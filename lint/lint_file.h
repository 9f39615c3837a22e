// Linting one input (a file or stdin): YAML stream -> documents -> findings
// with file positions. Knows nothing of output formats.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"
#include "rules/input_facts.h"
#include "rules/object_ref.h"
#include "lint/builtin_checks.h"
#include "lint/finding_store.h"
#include "lint/fix/text_fix.h"
#include "lint/lint_policy.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

// An input that could not be read, parsed or rendered (id: kInputErrorCheck).
struct InputError {
  std::string file;
  int line = 0;  // 0 when the file could not be read at all
  int column = 0;
  std::string message;
};

struct FileReport {
  std::string file;          // as given on the command line, "<stdin>" for "-"
  // In line order, stored compact (a large input has many).
  FindingStore findings;
  std::vector<InputError> errors;
  std::size_t documents = 0;      // Kubernetes objects judged
  std::size_t fragments = 0;      // of which judged as fragments (LintOptions)
  struct Object {
    std::size_t document = 0;
    ObjectRef ref;
  };
  std::deque<Object> objects;     // every object judged, a List's items one by one (a deque, as findings)
  std::vector<std::string> notes; // what was not judged and why (a chart left unrendered), said on stderr
};

// The file a finding is reported in.
inline const std::string& fileOf(const FileReport& report, const Located& l) {
  return l.file.empty() ? report.file : l.file;
}

// The linter's own checks (duplicate-key, ignored-content,
// ineffective-suppression) report warnings beside the engine's findings,
// under the ids lint/builtin_checks.h documents; they do not fail the run
// and cannot be suppressed or configured.

// The diagnostic for a loader warning, as a warning finding on the node it
// names (field in API notation, message with what to do).
Finding sourceFinding(const yaml::ParseWarning& warning, const nlohmann::json& document);

// How the linter reads a manifest: yaml::Limits' defaults, a document
// written as a JSON array is an error, as in kubectl (not "no objects"), and
// of a file with CR-only line breaks only what kubectl reads is judged.
yaml::Limits manifestLimits();

// The ineffective-suppression warnings of every metadata.annotations map in
// `document` (the object, List items, pod templates).
std::vector<Finding> ineffectiveSuppressions(const nlohmann::json& document);

// What a report has no use for once a finding is Located (its object,
// moved to Located::object; its JSON fix, which --fix and the text fixes
// took from the judged findings): dropped, as a report may hold many.
void forgetJudgingState(Finding& f);

// A document the linter judges: a map with string kind and apiVersion.
// Anything else (empty documents, Helm values, kustomization.yaml without
// apiVersion...) is skipped quietly.
bool isKubernetesObject(const nlohmann::json& value);

// Runs the engine on one parsed document, telling it how scalars were
// written and what the rest of its input defines (`facts`, null: nothing
// beyond the document). Findings come in the engine's order, not located.
std::vector<Finding> judgeDocument(const yaml::Document& doc, const LintPolicy& policy, bool fragment = false,
                                   const InputFacts* facts = nullptr);

// What the Kubernetes objects of a stream define for the others (DRA device
// classes and claim templates), read before any of them is judged.
InputFacts inputFacts(const yaml::ParseResult& parsed);

// The text of a file ("-" is stdin), or the reason it could not be read.
struct InputText {
  std::string text;
  std::string error;  // non-empty: could not be read
};
// Inputs larger than `limit` bytes are an error, found without reading
// them whole.
InputText readInput(const std::string& path, std::size_t limit = yaml::Limits{}.maxDocumentBytes);

// The name a path has in reports: "<stdin>" for "-".
std::string displayName(const std::string& path);

// Places the findings of a rendered stream (kustomize, helm) in the files
// they came from, and may edit each document before it is judged.
class Remapper {
 public:
  virtual ~Remapper() = default;
  // Before judging: may take annotations the renderer added off `doc`.
  virtual void prepare(yaml::Document& doc) = 0;
  // After: `l` holds the position in the rendered text; set its file,
  // line and column to the source's.
  virtual void place(const yaml::Document& doc, Located& l) = 0;
};

struct LintOptions {
  // Every document is a fragment (a kustomize patch a kustomization of the
  // run lists: lint/units.h): judged only by the rules that need no whole
  // object (registry.h Judges). Nothing else is a fragment: a pod spec
  // without an image is judged whole.
  bool fragment = false;
  Remapper* remap = nullptr;
  // Judge each document knowing only itself, as the webhook judges one
  // object: without the DeviceClasses and claim templates the rest of the
  // input defines (InputFacts). For comparing the two front ends.
  bool eachDocumentAlone = false;
  // Give each fixable finding its fix as text (Located::fix; SARIF's
  // `fixes`). Not for rendered streams, whose text is not the source.
  bool textFixes = false;
  // Keep every object judged (FileReport::objects: JUnit's testcases); a
  // report for another format has no use for them.
  bool objects = true;
};

// Lints YAML/JSON text. `file` names it in the report.
FileReport lintText(const std::string& file, std::string_view text, const LintPolicy& policy,
                    const LintOptions& options = {});

// By document index: the findings judgeDocument() already gave for a
// document of the stream (with the input's facts, never as a fragment), or
// nullopt to judge it.
using PriorFindings = std::vector<std::optional<std::vector<Finding>>>;

// lintText() on a stream already parsed (yaml::parseStream(text,
// manifestLimits())), judging only what `prior` does not hold (--fix has
// judged the documents it did not edit; lint/fix/fix.h). `prior` counts only
// for plain files (no fragment option, remapper or eachDocumentAlone), and
// never for a List, whose items are judged one by one.
FileReport lintParsed(const std::string& file, std::string_view text, yaml::ParseResult parsed,
                      const LintPolicy& policy, const LintOptions& options = {}, PriorFindings* prior = nullptr);

// Reads and lints a file ("-" is stdin). Read errors become InputErrors.
FileReport lintPath(const std::string& path, const LintPolicy& policy);

}  // namespace gpuguard::lint
