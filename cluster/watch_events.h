// The body of a watch (GET ...?watch=1): newline-delimited JSON events,
//   {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}
// split from a byte stream that arrives in arbitrary pieces. An ERROR event
// carries a metav1.Status (code 410: the resourceVersion is too old, relist).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuguard::cluster {

struct WatchEvent {
  enum class Type { Added, Modified, Deleted, Bookmark, Error };
  Type type = Type::Added;
  nlohmann::json object;
};

class WatchStreamParser {
 public:
  static constexpr std::size_t kMaxLineBytes = 16u << 20;  // one object; the API server caps requests at 3 MiB

  // Feeds the next bytes; calls `onEvent` for every complete line. Returns ""
  // or why the stream is unusable (a line that is not an event, a line over
  // the cap); the caller then drops the watch and resumes it. `onEvent`
  // returning false stops at once (returns "").
  std::string feed(std::string_view bytes, const std::function<bool(WatchEvent&&)>& onEvent);
  // Bytes of an incomplete line held.
  std::size_t pending() const { return partial_.size(); }

 private:
  std::string parseLine(std::string_view line, const std::function<bool(WatchEvent&&)>& onEvent, bool& stop);
  std::string partial_;
};

// The HTTP code of a metav1.Status (an ERROR event's object), 0 if none.
int statusCode(const nlohmann::json& status);

// metadata.resourceVersion of an object or a list, "" if none.
std::string resourceVersionOf(const nlohmann::json& object);

}  // namespace gpuguard::cluster
