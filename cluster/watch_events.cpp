#include "cluster/watch_events.h"

namespace gpuguard::cluster {

namespace {

std::optional<WatchEvent::Type> typeNamed(std::string_view name) {
  if (name == "ADDED") return WatchEvent::Type::Added;
  if (name == "MODIFIED") return WatchEvent::Type::Modified;
  if (name == "DELETED") return WatchEvent::Type::Deleted;
  if (name == "BOOKMARK") return WatchEvent::Type::Bookmark;
  if (name == "ERROR") return WatchEvent::Type::Error;
  return std::nullopt;
}

std::string excerpt(std::string_view line) {
  return std::string(line.substr(0, 120)) + (line.size() > 120 ? "..." : "");
}

}  // namespace

std::string WatchStreamParser::parseLine(std::string_view line, const std::function<bool(WatchEvent&&)>& onEvent,
                                         bool& stop) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return "";
  nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return "a watch line that is not JSON: " + excerpt(line);
  auto type = doc.find("type");
  auto object = doc.find("object");
  if (type == doc.end() || !type->is_string() || object == doc.end() || !object->is_object()) {
    return "a watch line without type and object: " + excerpt(line);
  }
  const std::optional<WatchEvent::Type> t = typeNamed(type->get_ref<const std::string&>());
  if (!t) return "a watch event of unknown type " + type->dump();
  WatchEvent event{*t, std::move(*object)};
  stop = !onEvent(std::move(event));
  return "";
}

std::string WatchStreamParser::feed(std::string_view bytes, const std::function<bool(WatchEvent&&)>& onEvent) {
  bool stop = false;
  while (!bytes.empty() && !stop) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (partial_.size() + piece.size() > kMaxLineBytes) {
      partial_.clear();
      return "a watch line longer than 16 MiB";
    }
    if (newline == std::string_view::npos) {
      partial_.append(piece);
      return "";
    }
    bytes.remove_prefix(newline + 1);
    std::string error;
    if (partial_.empty()) {
      error = parseLine(piece, onEvent, stop);
    } else {
      partial_.append(piece);
      const std::string line = std::move(partial_);
      partial_.clear();
      error = parseLine(line, onEvent, stop);
    }
    if (!error.empty()) return error;
  }
  return "";
}

int statusCode(const nlohmann::json& status) {
  auto code = status.find("code");
  return code != status.end() && code->is_number_integer() ? code->get<int>() : 0;
}

std::string resourceVersionOf(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

}  // namespace gpuguard::cluster
