// Stage 2b of yaml_to_json.cpp's pipeline: what kubectl reads of a text with
// lone CRs (CR-only line breaks, classic Mac OS), for
// Limits::onlyWhatKubectlReads. k8s.io/apimachinery pkg/util/yaml: the
// YAMLReader reads lines with LineReader, which is bufio.Reader.ReadLine
// (lines end at LF; a CR only just before an LF is dropped), cuts a document
// at a line that starts with "---" (the rest of the line, after
// strings.TrimSpace, may only be empty or a comment, else "invalid Yaml
// document separator"), and hands each document to sigs.k8s.io/yaml, whose
// go-yaml v2 takes a lone CR for a line break and reads only the first YAML
// document of what it is given.
#include <string>

#include "yaml/yaml_to_json_internal.h"

namespace gpuguard::yaml::detail {

bool KubectlDocuments::startsDocument(const Section& sec) const {
  return sec.separatorAt == npos || sec.separatorAt == 0 || original_[sec.separatorAt - 1] == '\n';
}

// A "---" line that starts an LF line but goes on past a lone CR: to kubectl
// the line is everything up to the next LF, and what follows "---" there is
// not blanks or a comment ("invalid Yaml document separator"). The pure
// CR-only file that starts with "---" is one such line: kubectl applies none
// of it.
std::optional<ParseError> KubectlDocuments::refusedSeparator(const Section& sec) const {
  if (sec.separatorAt == npos || sec.error) return std::nullopt;
  const std::size_t lf = original_.find('\n', sec.separatorAt);
  const std::string_view line = original_.substr(sec.separatorAt, lf == npos ? npos : lf - sec.separatorAt);
  if (line.find('\r') == npos) return std::nullopt;
  const std::string_view rest = trimGoSpace(line.substr(3));
  if (rest.empty() || rest[0] == '#') return std::nullopt;
  const std::string_view shown = rest.substr(0, std::min(rest.find('\r'), std::size_t{60}));
  return ParseError{{sec.separatorLine, 1},
                    "CR-only line breaks: kubectl reads this \"---\" line up to the next LF, so to it the line goes "
                    "on with \"" + std::string(shown) + "...\" (kubectl: \"invalid Yaml document separator: " +
                        std::string(shown) + "...\"; it stops there and applies nothing from here on); convert "
                        "the line breaks to LF"};
}

bool KubectlDocuments::reads(const Section& sec) {
  if (startsDocument(sec)) {
    finishGroup();
    if (auto refused = refusedSeparator(sec)) {
      if (!result_.error) result_.error = *refused;
      result_.errors.push_back(std::move(*refused));
      settled_ = true;  // what follows on that line is never read either
      return false;
    }
    return true;
  }
  if (!settled_) return true;  // only comments so far: go-yaml's first document is still to come
  if (dropped_++ == 0) firstDroppedLine_ = sec.separatorLine;
  return false;
}

void KubectlDocuments::parsed(bool document) {
  if (!document) {
    settled_ = true;  // go-yaml fails on it: kubectl reads nothing more of this document
    return;
  }
  if (result_.documents.back().value.is_null()) return;  // comments only: no YAML document yet
  settled_ = true;
  read_ = result_.documents.size() - 1;
}

void KubectlDocuments::finishGroup() {
  if (dropped_ > 0 && read_) {
    const bool wholeFile = original_.find('\n') == npos;
    std::string message = "CR-only line breaks: kubectl reads only the first document of ";
    message += wholeFile ? "this file" : "the lines up to the next LF line break";
    message += " (its reader ends lines at LF only, so it cuts no document at the \"---\" on line " +
               std::to_string(firstDroppedLine_) +
               ", and the YAML parser reads one document of what it is given): the " + std::to_string(dropped_) +
               (dropped_ == 1 ? " document" : " documents") + " from line " + std::to_string(firstDroppedLine_) +
               " on " + (dropped_ == 1 ? "is" : "are") + " never applied, nor judged here";
    Document& doc = result_.documents[*read_];
    doc.warnings.push_back(ParseWarning{{firstDroppedLine_, 1}, std::move(message), "", ParseWarning::Kind::IgnoredContent});
  }
  settled_ = false;
  read_.reset();
  dropped_ = 0;
  firstDroppedLine_ = 0;
}

}  // namespace gpuguard::yaml::detail
