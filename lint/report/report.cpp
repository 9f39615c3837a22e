#include "lint/report/report.h"

#include <filesystem>

#include "text/utf8.h"

namespace gpuguard::lint {

RunSummary summarize(const std::vector<FileReport>& reports) {
  RunSummary s;
  s.files = reports.size();
  for (const FileReport& r : reports) {
    s.documents += r.documents;
    s.inputErrors += r.errors.size();
    for (const Located& l : r.findings) {
      if (l.finding.suppressed) ++s.suppressed;
      else if (l.finding.severity == Severity::Error) ++s.errors;
      else ++s.warnings;
    }
  }
  return s;
}

namespace {

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

std::string summaryLine(const RunSummary& s) {
  std::string line = plural(s.errors, "error") + ", " + plural(s.warnings, "warning") + ", " +
                     std::to_string(s.suppressed) + " suppressed in " + plural(s.documents, "object") + " (" +
                     plural(s.files, "file");
  if (s.inputErrors) line += ", " + std::to_string(s.inputErrors) + " unreadable";
  return line + ")";
}

namespace {

bool unreservedUriChar(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '/';
}

std::string percentEncode(std::string_view path) {
  static const char* const hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (unreservedUriChar(c)) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// Decodes one UTF-8 sequence at text[i]; returns its length, 0 if invalid.
std::size_t utf8Sequence(std::string_view text, std::size_t i, char32_t& cp) {
  const utf8::Decoded c = utf8::decode(text, i);
  cp = c.codePoint;
  return c.length;
}

}  // namespace

std::string sarifUri(const std::string& path) {
  if (path == "<stdin>" || path == "-") return "stdin";
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.is_absolute()) {
    std::error_code ec;
    const fs::path cwd = fs::current_path(ec);
    if (!ec) {
      const fs::path rel = p.lexically_normal().lexically_relative(cwd);
      if (!rel.empty() && *rel.begin() != "..") return percentEncode(rel.generic_string());
    }
    return "file://" + percentEncode(p.lexically_normal().generic_string());
  }
  std::string s = p.lexically_normal().generic_string();
  return percentEncode(s);
}

std::string xmlEscape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    std::size_t len = utf8Sequence(text, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD for a byte that is not valid UTF-8
      ++i;
      continue;
    }
    const std::string_view bytes = text.substr(i, len);
    i += len;
    // XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]
    const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                         (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
    if (!allowed) continue;
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += attribute ? "&quot;" : "\""; break;
      case '\'': out += attribute ? "&apos;" : "'"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\r': out += "&#13;"; break;  // a bare CR would be normalised away by XML parsers
      default: out += bytes;
    }
  }
  return out;
}

namespace {

// The length of the UTF-8 sequence at text[i], 0 when it is not one.
std::size_t utf8Length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  const std::size_t n = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 && lead < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

std::string hexEscape(const char* prefix, unsigned value, int digits) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = prefix;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
  return out;
}

}  // namespace

std::string printable(std::string_view text, bool keepLineBreaks) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (keepLineBreaks && (c == '\n' || c == '\r')) {
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x80) {  // C0 and DEL
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : hexEscape("\\x", c, 2);
      ++i;
    } else if (const std::size_t n = utf8Length(text, i); n == 0) {
      out += hexEscape("\\x", c, 2);
      ++i;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {  // C1: U+0080..U+009F
      out += hexEscape("\\u", static_cast<unsigned char>(text[i + 1]), 4);
      i += 2;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

std::string githubEscapeData(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string githubEscapeProperty(std::string_view text) {
  std::string out;
  for (char c : githubEscapeData(text)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

}  // namespace gpuguard::lint
