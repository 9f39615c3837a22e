// Linting one input (a file or stdin): YAML stream -> documents -> findings
// with file positions. Knows nothing of output formats.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rules/finding.h"
#include "rules/policy.h"
#include "yaml/yaml_to_json.h"

namespace gpuguard::lint {

struct Located {
  Finding finding;
  int line = 0;
  int column = 0;
  std::size_t document = 0;  // 0-based index in the stream
};

struct InputError {
  std::string file;
  int line = 0;  // 0 when the file could not be read at all
  int column = 0;
  std::string message;
};

struct FileReport {
  std::string file;          // as given on the command line, "<stdin>" for "-"
  std::vector<Located> findings;  // in line order
  std::vector<InputError> errors;
  std::size_t documents = 0;      // Kubernetes objects judged
};

// What the linter reports about how a manifest is written, besides the
// engine's rules: things kubectl accepts silently although part of what the
// user wrote is lost. Reported as warnings, like findings, under these ids;
// they do not fail the run and cannot be suppressed or configured.
struct SourceCheck {
  std::string_view id;
  std::string_view summary;
  std::string_view description;
  std::string_view remediation;
};
inline constexpr SourceCheck kDuplicateKeyCheck{
    "duplicate-key", "A map key is written twice in one object",
    "kubectl keeps the last value of a duplicated key and drops the first without a word (its YAML and JSON "
    "decoders are not strict, and it sends the API server JSON, so strict field validation never sees the "
    "duplicate).",
    "Delete one of the two keys, or merge their values into one."};
inline constexpr SourceCheck kIgnoredContentCheck{
    "ignored-content", "Text after the end of a document that kubectl never reads",
    "After a document end marker (...) kubectl reads nothing more until the next --- line: a document written "
    "there is never applied.",
    "Put a --- line before the next document, or delete the ... line."};
inline constexpr SourceCheck kSourceChecks[] = {kDuplicateKeyCheck, kIgnoredContentCheck};

// The diagnostic for a loader warning, as a warning finding on the node it
// names (field in API notation, message with what to do).
Finding sourceFinding(const yaml::ParseWarning& warning, const nlohmann::json& document);

// A document the linter judges: a map with string kind and apiVersion.
// Anything else (empty documents, Helm values, kustomization.yaml without
// apiVersion...) is skipped quietly.
bool isKubernetesObject(const nlohmann::json& value);

// Runs the engine on one parsed document, telling it how scalars were
// written. Findings come in the engine's order, not located.
std::vector<Finding> judgeDocument(const yaml::Document& doc, const Policy& policy);

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

// Lints YAML/JSON text. `file` names it in the report.
FileReport lintText(const std::string& file, std::string_view text, const Policy& policy);

// Reads and lints a file ("-" is stdin). Read errors become InputErrors.
FileReport lintPath(const std::string& path, const Policy& policy);

}  // namespace gpuguard::lint
