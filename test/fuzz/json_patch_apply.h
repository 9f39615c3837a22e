// A small, strict RFC 6902 applier, written apart from the code under test so
// that "the /mutate patch applies" is checked by a second implementation
// (rules/fix.cpp builds patches with nlohmann's patch_inplace). Strict the
// way the API server's applier (evanphx/json-patch) is: "add" needs the
// parent to exist, an array index must be "-" or a decimal without leading
// zeros within [0, size], "remove", "replace", "move" and "copy" need their
// source to exist, and "test" must match. Used by the unit tests and the
// fuzz_admission harness.
#pragma once

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard::fuzz {

namespace json_patch_detail {

using nlohmann::json;

// The reference tokens of an RFC 6901 pointer, unescaped; nullopt if malformed.
inline std::optional<std::vector<std::string>> tokens(std::string_view pointer) {
  std::vector<std::string> out;
  if (pointer.empty()) return out;
  if (pointer.front() != '/') return std::nullopt;
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      out.push_back(std::move(token));
      token.clear();
    } else if (pointer[i] == '~') {
      if (i + 1 >= pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')) return std::nullopt;
      token += pointer[++i] == '0' ? '~' : '/';
    } else {
      token += pointer[i];
    }
  }
  return out;
}

// An array index token: digits, no leading zero; nullopt otherwise.
inline std::optional<std::size_t> arrayIndex(const std::string& token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return std::nullopt;
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

// The node the tokens name, or nullptr.
inline json* find(json& root, const std::vector<std::string>& path, std::size_t count) {
  json* node = &root;
  for (std::size_t i = 0; i < count; ++i) {
    if (node->is_object()) {
      auto it = node->find(path[i]);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      const std::optional<std::size_t> index = arrayIndex(path[i]);
      if (!index || *index >= node->size()) return nullptr;
      node = &(*node)[*index];
    } else {
      return nullptr;
    }
  }
  return node;
}

inline bool add(json& root, const std::vector<std::string>& path, json value) {
  if (path.empty()) {
    root = std::move(value);
    return true;
  }
  json* parent = find(root, path, path.size() - 1);
  if (!parent) return false;
  const std::string& last = path.back();
  if (parent->is_object()) {
    (*parent)[last] = std::move(value);
    return true;
  }
  if (!parent->is_array()) return false;
  if (last == "-") {
    parent->push_back(std::move(value));
    return true;
  }
  const std::optional<std::size_t> index = arrayIndex(last);
  if (!index || *index > parent->size()) return false;
  parent->insert(parent->begin() + static_cast<std::ptrdiff_t>(*index), std::move(value));
  return true;
}

inline std::optional<json> remove(json& root, const std::vector<std::string>& path) {
  if (path.empty()) return std::nullopt;
  json* parent = find(root, path, path.size() - 1);
  if (!parent) return std::nullopt;
  if (parent->is_object()) {
    auto it = parent->find(path.back());
    if (it == parent->end()) return std::nullopt;
    json removed = std::move(*it);
    parent->erase(it);
    return removed;
  }
  const std::optional<std::size_t> index = parent->is_array() ? arrayIndex(path.back()) : std::nullopt;
  if (!index || *index >= parent->size()) return std::nullopt;
  json removed = std::move((*parent)[*index]);
  parent->erase(*index);
  return removed;
}

// One operation; false when it does not apply.
inline bool applyOne(json& doc, const json& op) {
  if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("path") || !op["path"].is_string()) {
    return false;
  }
  const std::string kind = op["op"];
  const std::optional<std::vector<std::string>> path = tokens(op["path"].get<std::string>());
  if (!path) return false;
  std::optional<std::vector<std::string>> from;
  if (kind == "move" || kind == "copy") {
    if (!op.contains("from") || !op["from"].is_string() || !(from = tokens(op["from"].get<std::string>()))) return false;
  } else if (kind != "remove" && !op.contains("value")) {
    return false;
  }
  if (kind == "add") return add(doc, *path, op["value"]);
  if (kind == "remove") return remove(doc, *path).has_value();
  if (kind == "replace") return remove(doc, *path).has_value() && add(doc, *path, op["value"]);
  if (kind == "test") {
    const json* node = find(doc, *path, path->size());
    return node && *node == op["value"];
  }
  if (kind == "copy") {
    const json* source = find(doc, *from, from->size());
    return source && add(doc, *path, json(*source));
  }
  if (kind == "move") {
    // A location cannot move into one of its children (RFC 6902 4.4).
    if (path->size() > from->size() && std::equal(from->begin(), from->end(), path->begin())) return false;
    std::optional<json> moved = remove(doc, *from);
    return moved && add(doc, *path, std::move(*moved));
  }
  return false;
}

}  // namespace json_patch_detail

// `document` with `patch` applied, or nullopt when the patch is no array of
// operations or an operation does not apply (the API server then fails the
// request).
inline std::optional<nlohmann::json> applyJsonPatch(nlohmann::json document, const nlohmann::json& patch) {
  if (!patch.is_array()) return std::nullopt;
  for (const nlohmann::json& op : patch) {
    if (!json_patch_detail::applyOne(document, op)) return std::nullopt;
  }
  return document;
}

}  // namespace gpuguard::fuzz
