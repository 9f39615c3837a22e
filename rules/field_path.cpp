#include "rules/field_path.h"

#include "rules/finding.h"

namespace gpuguard {

std::string_view severityName(Severity s) { return s == Severity::Error ? "error" : "warning"; }

std::string Finding::fieldError() const { return field.empty() ? message : field + ": " + message; }

// A path grows one segment at a time from its parent, which is kept: copy
// into a vector that already has room for the new segment, so each step costs
// one allocation for the segments instead of two (copy, then regrow).
FieldPath FieldPath::field(std::string_view name) const {
  FieldPath p;
  p.segments_.reserve(segments_.size() + 1);
  p.segments_ = segments_;
  p.segments_.push_back({Kind::Field, std::string(name), 0});
  return p;
}

FieldPath FieldPath::index(std::size_t i) const {
  FieldPath p;
  p.segments_.reserve(segments_.size() + 1);
  p.segments_ = segments_;
  p.segments_.push_back({Kind::Index, {}, i});
  return p;
}

FieldPath FieldPath::key(std::string_view k) const {
  FieldPath p;
  p.segments_.reserve(segments_.size() + 1);
  p.segments_ = segments_;
  p.segments_.push_back({Kind::Key, std::string(k), 0});
  return p;
}

std::string FieldPath::apiPath() const {
  std::string out;
  for (const Segment& s : segments_) {
    switch (s.kind) {
      case Kind::Field:
        if (!out.empty()) out += '.';
        out += s.name;
        break;
      case Kind::Index:
        out += '[' + std::to_string(s.index) + ']';
        break;
      case Kind::Key:
        out += '[' + s.name + ']';
        break;
    }
  }
  return out;
}

std::string FieldPath::jsonPointer() const {
  std::string out;
  for (const Segment& s : segments_) {
    out += '/';
    out += s.kind == Kind::Index ? std::to_string(s.index) : escapeJsonPointerToken(s.name);
  }
  return out;
}

std::string escapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

}  // namespace gpuguard
