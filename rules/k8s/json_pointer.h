// RFC 6901 reference tokens: how findings, source maps, JSONPatch operations
// and kustomize paths name a JSON node. One implementation for every module.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace gpuguard {

// Appends `token` escaped ("~" -> "~0", "/" -> "~1"); most tokens need no
// escaping and are appended as they are.
inline void appendJsonPointerToken(std::string& out, std::string_view token) {
  if (token.find_first_of("~/") == std::string_view::npos) {
    out.append(token);
    return;
  }
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
}

// Escapes one reference token for a JSON pointer ("nvidia.com/gpu" -> "nvidia.com~1gpu").
inline std::string escapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  appendJsonPointerToken(out, token);
  return out;
}

// The member name or index a reference token stands for ("~1" -> "/",
// "~0" -> "~"; a "~" before anything else is kept as written).
inline std::string unescapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

// The reference tokens of a pointer, one at a time and decoded:
// "/spec/containers/0" gives "spec", "containers", "0". The one tokenizer of
// the tree: whoever must read a pointer (a source map, a kustomize patch
// path) reads it with this; findings carry FieldPath segments instead.
class JsonPointerTokens {
 public:
  explicit JsonPointerTokens(std::string_view pointer) : rest_(pointer) {}

  bool done() const { return rest_.empty(); }
  // What is left, itself a pointer ("/containers/0" after "spec").
  std::string_view rest() const { return rest_; }
  // The next token, decoded. Call only when !done(); the character before
  // each token ('/') is skipped unread.
  std::string next() {
    rest_.remove_prefix(1);
    const std::size_t slash = rest_.find('/');
    std::string token = unescapeJsonPointerToken(rest_.substr(0, slash));
    rest_ = slash == std::string_view::npos ? std::string_view() : rest_.substr(slash);
    return token;
  }

 private:
  std::string_view rest_;
};

// A pointer's parent and its last token, decoded: "/spec/nodeSelector/a~1b"
// -> {"/spec/nodeSelector", "a/b"}; a pointer without '/' is its own token
// under "".
inline std::pair<std::string_view, std::string> splitLastJsonPointerToken(std::string_view pointer) {
  const std::size_t slash = pointer.rfind('/');
  if (slash == std::string_view::npos) return {std::string_view(), unescapeJsonPointerToken(pointer)};
  return {pointer.substr(0, slash), unescapeJsonPointerToken(pointer.substr(slash + 1))};
}

}  // namespace gpuguard
