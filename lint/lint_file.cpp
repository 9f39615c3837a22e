#include "lint/lint_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "lint/catalog.h"
#include "lint/lint_list.h"
#include "rules/engine.h"
#include "rules/k8s/json_pointer.h"
#include "rules/object_ref.h"
#include "rules/registry.h"
#include "yaml/yaml_to_json.h"
#include "text/edit_distance.h"

namespace gpuguard::lint {
namespace {

// Tells the engine how each plain YAML scalar was written (010 vs 8).
class YamlHints final : public SourceHints {
 public:
  explicit YamlHints(const yaml::SourceMap& sources) : sources_(sources) {}
  const std::string* writtenText(std::string_view pointer) const override {
    const yaml::NodeOrigin* origin = sources_.find(pointer);
    return origin && origin->plainScalar ? &origin->writtenText : nullptr;
  }

 private:
  const yaml::SourceMap& sources_;
};

std::string closestRuleId(std::string_view id) {
  std::string best;
  std::size_t bestDistance = 4;  // further than 3 edits is not a typo
  for (const Rule* r : allRules()) {
    const std::size_t d = text::editDistance(id, r->id());
    if (d < bestDistance) {
      bestDistance = d;
      best = std::string(r->id());
    }
  }
  return best;
}

Finding suppressionFinding(const std::string& pointer, const nlohmann::json& document, std::string value,
                           FieldError error) {
  Finding f;
  f.rule = std::string(kIneffectiveSuppressionCheck.id);
  f.severity = Severity::Warning;
  f.path = FieldPath::fromPointer(pointer, document);
  f.value = std::move(value);
  f.error = std::move(error);
  return f;
}

// The ignore.gpuguard.io/<id> annotations of one metadata.annotations map
// that suppress nothing.
void checkAnnotations(const nlohmann::json& annotations, const std::string& pointer, const nlohmann::json& document,
                      std::vector<Finding>& out) {
  const std::string_view prefix = kSuppressionPrefix;
  for (const auto& [key, value] : annotations.items()) {
    if (!std::string_view(key).starts_with(prefix)) continue;
    const std::string id = key.substr(prefix.size());
    const std::string at = pointer + "/" + escapeJsonPointerToken(key);
    if (!findRule(id)) {
      const std::string guess = closestRuleId(id);
      const bool builtIn = findEntry(id) != nullptr;  // in the catalog, but not a rule
      std::string why = builtIn ? "\"" + id + "\" is a built-in check, which cannot be silenced"
                                : "no rule has the id \"" + id + "\"";
      if (!guess.empty() && !builtIn) why += " (did you mean " + std::string(prefix) + guess + "?)";
      out.push_back(suppressionFinding(
          at, document, key,
          FieldError::invalid(quotedValue(key), "suppresses nothing: " + why + "; gpuguard-lint --list-rules prints the rule ids")));
    } else if (value.is_string() && value.get_ref<const std::string&>().empty()) {
      out.push_back(suppressionFinding(at, document, "",
                                       FieldError::required("a suppression needs its reason as the value (" + key +
                                                            ": \"<why>\"); without one it suppresses nothing")));
    }
  }
}

}  // namespace

void forgetJudgingState(Finding& f) {
  f.object.reset();
  f.fix.reset();
}

namespace {

// ineffectiveSuppressions() below `node`, whose pointer is `pointer` (one
// string, grown and cut back on the way, rather than one per node). Pre-order,
// last member first: the order these findings have always come in, which the
// report's stable sort keeps for findings at one position (an aliased map).
// Depth is bounded by the parsers' Limits::maxDepth.
void findIneffective(const nlohmann::json& node, std::string& pointer, const nlohmann::json& document,
                     std::vector<Finding>& found) {
  const std::size_t length = pointer.size();
  if (node.is_array()) {
    for (std::size_t i = node.size(); i-- > 0;) {
      if (!node[i].is_structured()) continue;
      pointer += '/';
      pointer += std::to_string(i);
      findIneffective(node[i], pointer, document, found);
      pointer.resize(length);
    }
    return;
  }
  if (!node.is_object()) return;
  const auto& members = node.get_ref<const nlohmann::json::object_t&>();
  const auto metadata = members.find("metadata");
  if (metadata != members.end() && metadata->second.is_object()) {
    const auto annotations = metadata->second.find("annotations");
    if (annotations != metadata->second.end() && annotations->is_object()) {
      pointer += "/metadata/annotations";
      checkAnnotations(*annotations, pointer, document, found);
      pointer.resize(length);
    }
  }
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (!it->second.is_structured() || it->first == "metadata") continue;
    pointer += '/';
    appendJsonPointerToken(pointer, it->first);
    findIneffective(it->second, pointer, document, found);
    pointer.resize(length);
  }
}

}  // namespace

std::vector<Finding> ineffectiveSuppressions(const nlohmann::json& document) {
  std::vector<Finding> found;
  std::string pointer;
  findIneffective(document, pointer, document, found);
  return found;
}

Finding sourceFinding(const yaml::ParseWarning& warning, const nlohmann::json& document) {
  const RuleDoc& check =
      warning.kind == yaml::ParseWarning::Kind::DuplicateKey ? kDuplicateKeyCheck : kIgnoredContentCheck;
  Finding f;
  f.rule = std::string(check.id);
  f.severity = Severity::Warning;
  f.path = FieldPath::fromPointer(warning.pointer, document);
  std::string detail = warning.message + ". " + std::string(check.remediation);
  if (warning.kind == yaml::ParseWarning::Kind::DuplicateKey) {
    // The API server's words for a repeated field ("Duplicate value: ...").
    f.error = {FieldErrorType::Duplicate, std::nullopt, std::move(detail), {}};
  } else {
    detail.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(detail.front())));
    f.error = FieldError::note(std::move(detail));
  }
  return f;
}

yaml::Limits manifestLimits() {
  yaml::Limits limits;
  limits.refuseFlowSequenceDocuments = true;
  limits.onlyWhatKubectlReads = true;
  return limits;
}

bool isKubernetesObject(const nlohmann::json& v) {
  if (!v.is_object()) return false;
  auto kind = v.find("kind");
  auto apiVersion = v.find("apiVersion");
  if (kind == v.end() || !kind->is_string() || apiVersion == v.end() || !apiVersion->is_string()) return false;
  // kustomization.yaml with its apiVersion: kustomize's input, never applied.
  return !apiVersion->get_ref<const std::string&>().starts_with("kustomize.config.k8s.io/");
}

std::vector<Finding> judgeDocument(const yaml::Document& doc, const LintPolicy& policy, bool fragment,
                                   const InputFacts* facts) {
  const YamlHints hints(doc.sources);
  JudgeOptions options{&hints};
  options.fragment = fragment;
  options.exemptions = &policy.exemptions;
  options.facts = facts;
  options.cluster = policy.cluster.get();
  std::vector<Finding> findings = judge(doc.value, policy.engine, options);
  if (!policy.allowSuppressions) forgetSuppressions(findings);
  return findings;
}

InputFacts inputFacts(const yaml::ParseResult& parsed) {
  InputFacts facts;
  for (const yaml::Document& doc : parsed.documents) {
    if (isKubernetesObject(doc.value)) facts.add(doc.value);
  }
  return facts;
}

namespace {

// What lintParsed hands each document besides itself.
struct DocumentInputs {
  const InputFacts* facts = nullptr;  // what the rest of the input defines
  const TextFixer* fixer = nullptr;   // LintOptions::textFixes
  std::size_t lastLine = 0;           // the document's last line in the text, for the fixer
  std::optional<std::vector<Finding>>* prior = nullptr;  // its findings, judged already
  JudgedItems* items = nullptr;  // a List's items, judged as they were parsed (itemsHandedOver)
};

// Judges one parsed document into `report` (lintParsed's loop body).
void lintDocument(yaml::Document& doc, const LintPolicy& policy, const LintOptions& options, const DocumentInputs& in,
                  FileReport& report) {
  if (!isKubernetesObject(doc.value)) return;  // empty documents, Helm values, kustomization...
  if (!options.remap && isItemList(doc.value)) return lintListDocument(doc, policy, options, in.facts, report, in.items);
  if (options.remap) options.remap->prepare(doc);
  ++report.documents;
  // Only a patch a kustomization of the run lists is a fragment; a pod spec
  // without an image (a Spark pod template, an operator's pod spec) is judged
  // whole, as the webhook judges it (rules/engine.h).
  report.fragments += options.fragment;
  std::vector<Finding> findings = in.prior && *in.prior ? std::move(**in.prior)
                                                        : judgeDocument(doc, policy, options.fragment, in.facts);
  std::vector<std::optional<TextFix>> textFixes =
      in.fixer ? in.fixer->fixesOf(doc, findings, in.lastLine) : std::vector<std::optional<TextFix>>{};
  const ObjectLocator objects(doc.value);
  if (options.objects) {
    for (ObjectRef& ref : objects.objects()) report.objects.push_back({doc.index, std::move(ref)});
  }
  auto add = [&](Finding f, yaml::Position pos, std::optional<TextFix> fix = std::nullopt) {
    // The engine's findings say their object; the loader's warnings and
    // the ineffective suppressions are located here.
    ObjectRef object = f.object ? std::move(*f.object) : objects.at(f.path);
    forgetJudgingState(f);
    Located l{std::move(f), pos.line, pos.column, doc.index, "", std::move(object), std::move(fix)};
    if (options.remap) options.remap->place(doc, l);
    report.findings.push_back(l);
  };
  for (std::size_t i = 0; i < findings.size(); ++i) {
    // The position first: the finding is moved into add() (argument order is unspecified).
    const yaml::Position pos = doc.sources.locate(findings[i].pointer());
    add(std::move(findings[i]), pos, i < textFixes.size() ? std::move(textFixes[i]) : std::nullopt);
  }
  for (const yaml::ParseWarning& w : doc.warnings) add(sourceFinding(w, doc.value), w.position);
  if (policy.allowSuppressions) {
    for (Finding& f : ineffectiveSuppressions(doc.value)) {
      const yaml::Position pos = doc.sources.locate(f.pointer());
      add(std::move(f), pos);
    }
  }
}

// What judging one document needs besides itself: the input's facts (none
// when each document stands alone) and, for text fixes, the fixer with the
// document's last line (the line before `nextStart`, where the next one
// begins; 0: the text's end).
DocumentInputs inputsFor(const InputFacts& facts, const std::optional<TextFixer>& fixer, const LintOptions& options,
                         int nextStart) {
  DocumentInputs in;
  in.facts = options.eachDocumentAlone ? nullptr : &facts;
  if (fixer) {
    in.fixer = &*fixer;
    in.lastLine = fixer->lastLineBefore(nextStart);
  }
  return in;
}

// Every document that could not be parsed, each with its position: the
// others were judged all the same.
void addParseErrors(FileReport& report, const std::vector<yaml::ParseError>& errors) {
  for (const yaml::ParseError& e : errors) report.errors.push_back({report.file, e.position.line, e.position.column, e.message});
}

// What the documents of `stream` define for the others, from a first pass
// that parses only the documents whose text may define a fact (most
// streams: none), each let go once read.
InputFacts streamFacts(const yaml::DocumentStream& stream) {
  // A List's items as they are parsed: those of a kind that may define a
  // fact kept until the List is known to be one worth reading, then taken
  // in order, as InputFacts::add takes a List's (none of them is a List).
  class ItemFacts final : public yaml::ListItemSink {
   public:
    void item(std::size_t, yaml::Document& item) override {
      const auto kind = item.value.is_object() ? item.value.find("kind") : item.value.end();
      if (kind != item.value.end() && kind->is_string() && mayDefineFacts(kind->get_ref<const std::string&>())) {
        kept.push_back(std::move(item.value));
      }
    }
    void discard() override { kept.clear(); }
    std::vector<nlohmann::json> kept;
  } items;
  InputFacts facts;
  auto take = [&](yaml::Document& doc) {
    if (isKubernetesObject(doc.value)) {
      facts.add(doc.value);
      if (doc.itemsHandedOver) {
        for (const nlohmann::json& item : items.kept) facts.add(item);
      }
    }
    items.kept.clear();
  };
  stream.read(take, mayDefineFacts, &items);
  return facts;
}

// lintText() on a stream of documents, in bounded memory: its facts first
// (streamFacts), then each document judged as it is parsed and let go once
// judged, so that only two documents' trees are alive at a time (a
// document's text fixes need where the next one starts); a List's items
// each judged as it is parsed (ItemJudge), the List's findings held until
// it is complete.
FileReport lintStreamed(const std::string& file, std::string_view text, const yaml::DocumentStream& stream,
                        const LintPolicy& policy, const LintOptions& options) {
  FileReport report;
  report.file = file;
  const InputFacts facts = options.eachDocumentAlone ? InputFacts{} : streamFacts(stream);
  std::optional<TextFixer> fixer;
  if (options.textFixes) fixer.emplace(text);
  ItemJudge itemJudge(policy, options, options.eachDocumentAlone ? nullptr : &facts);
  std::optional<yaml::Document> waiting;
  JudgedItems waitingItems;  // a List's, judged as it was parsed
  auto judgeWaiting = [&](int nextStart) {
    const std::size_t first = report.findings.size();
    DocumentInputs in = inputsFor(facts, fixer, options, nextStart);
    if (waiting->itemsHandedOver) in.items = &waitingItems;
    lintDocument(*waiting, policy, options, in, report);
    report.findings.sortFrom(first);  // in line order as judged: the whole is mostly in order
    waiting.reset();
    waitingItems = {};
  };
  auto judgePrevious = [&](yaml::Document& doc) {
    if (waiting) judgeWaiting(doc.start.line);
    waiting = std::move(doc);
    waitingItems = itemJudge.take();
  };
  const yaml::ParseResult read = stream.read(judgePrevious, {}, &itemJudge);
  if (waiting) judgeWaiting(0);
  addParseErrors(report, read.errors);
  report.findings.sortFrom(0);  // line order, by file first (a rendered stream's)
  return report;
}

}  // namespace

FileReport lintParsed(const std::string& file, std::string_view text, yaml::ParseResult parsed,
                      const LintPolicy& policy, const LintOptions& options, PriorFindings* prior) {
  FileReport report;
  report.file = file;
  const InputFacts facts = options.eachDocumentAlone ? InputFacts{} : inputFacts(parsed);
  std::optional<TextFixer> fixer;
  if (options.textFixes && !options.remap) fixer.emplace(text);
  const bool usePrior = prior && !options.fragment && !options.remap && !options.eachDocumentAlone;
  for (std::size_t i = 0; i < parsed.documents.size(); ++i) {
    yaml::Document& doc = parsed.documents[i];
    DocumentInputs in =
        inputsFor(facts, fixer, options, i + 1 < parsed.documents.size() ? parsed.documents[i + 1].start.line : 0);
    if (usePrior && i < prior->size()) in.prior = &(*prior)[i];
    lintDocument(doc, policy, options, in, report);
    // Judged: its findings are all the report needs, so its tree and source
    // map go now rather than with the last document (a renderer's remapper
    // may still look at it).
    if (!options.remap) doc = yaml::Document{};
  }
  addParseErrors(report, parsed.errors);
  report.findings.sortFrom(0);  // line order, by file first (a rendered stream's)
  return report;
}

FileReport lintText(const std::string& file, std::string_view text, const LintPolicy& policy, const LintOptions& options) {
  const yaml::DocumentStream stream(text, manifestLimits());
  // One document is read once, facts and all, unless it may be a List
  // (whose items are judged one by one as they are parsed); a renderer's
  // remapper looks back at the documents it placed, so a rendered stream is
  // kept whole.
  const bool mayBeList = text.find("items") != std::string_view::npos;
  if ((stream.singleDocument() && !mayBeList) || options.remap) {
    return lintParsed(file, text, stream.read(), policy, options);
  }
  return lintStreamed(file, text, stream, policy, options);
}

std::string displayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

namespace {

std::string tooLarge(std::size_t limit) {
  return "input is larger than the limit of " + std::to_string(limit) + " bytes";
}

// Reads `fd` to its end, but never more than `limit` + 1 bytes: an input
// that is too large (a 10 GB log named by mistake, /dev/zero) is an error
// at once, not a hang. read(2) rather than iostreams so that a closed or
// broken descriptor is an error, not an empty input. `expected`: the size
// of a regular file, read straight into the text in one call (and one more
// that finds its end) rather than through a buffer.
InputText readDescriptor(int fd, std::size_t limit, const char* what, std::size_t expected = 0) {
  InputText in;
  std::size_t used = 0;
  std::size_t room = expected > 0 ? expected + 1 : 64 * 1024;
  while (true) {
    // Grown only once full: a regular file's text (its size + 1, so that
    // the read after it finds the end) is allocated once, never doubled.
    if (used == in.text.size()) in.text.resize(used + room);
    const ssize_t n = ::read(fd, in.text.data() + used, in.text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      in.error = std::string("cannot read ") + what + ": " + std::strerror(errno);
      in.text.clear();
      return in;
    }
    if (n == 0) {
      in.text.resize(used);
      return in;
    }
    used += static_cast<std::size_t>(n);
    if (used > limit) {
      in.error = tooLarge(limit);
      in.text.clear();
      return in;
    }
    room = 64 * 1024;
  }
}

// Why `path` cannot be opened (errno `openErrno`), in the order the checks
// were always made: a directory, then too large, then open's reason.
InputText unopenable(const std::string& path, std::size_t limit, int openErrno) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return InputText{"", "cannot read file: is a directory"};
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > limit) return InputText{"", tooLarge(limit)};
  return InputText{"", std::string("cannot read file: ") + std::strerror(openErrno)};
}

}  // namespace

// One open and one fstat per file (the linter reads thousands): a directory
// or a regular file over the limit is refused from its fstat, before reading.
InputText readInput(const std::string& path, std::size_t limit) {
  if (path == "-") return readDescriptor(STDIN_FILENO, limit, "standard input");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unopenable(path, limit, errno);
  struct stat st {};
  std::size_t expected = 0;
  if (::fstat(fd, &st) == 0) {
    const bool regular = S_ISREG(st.st_mode);
    std::optional<std::string> refused;
    if (S_ISDIR(st.st_mode)) refused = "cannot read file: is a directory";
    else if (regular && static_cast<std::uintmax_t>(st.st_size) > limit) refused = tooLarge(limit);
    if (refused) {
      ::close(fd);
      return InputText{"", std::move(*refused)};
    }
    if (regular) expected = static_cast<std::size_t>(st.st_size);
  }
  InputText in = readDescriptor(fd, limit, "file", expected);
  ::close(fd);
  return in;
}

FileReport lintPath(const std::string& path, const LintPolicy& policy) {
  InputText in = readInput(path);
  if (!in.error.empty()) {
    FileReport r;
    r.file = displayName(path);
    r.errors.push_back({r.file, 0, 0, in.error});
    return r;
  }
  return lintText(displayName(path), in.text, policy);
}

}  // namespace gpuguard::lint
