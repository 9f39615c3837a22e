#include "rules/serving/launch_env.h"

#include <algorithm>
#include <string_view>

namespace gpuguard {

using nlohmann::json;

EnvValues literalEnvValues(const json& container) {
  EnvValues out;
  auto env = container.find("env");
  if (env == container.end() || !env->is_array()) return out;
  for (const json& e : *env) {
    if (!e.is_object()) continue;
    auto name = e.find("name");
    auto value = e.find("value");
    if (name == e.end() || !name->is_string()) continue;
    const std::string& key = name->get_ref<const std::string&>();
    if (value != e.end() && value->is_string() && value->get_ref<const std::string&>().find("$(") == std::string::npos) {
      out.insert_or_assign(key, value->get<std::string>());
    } else {
      out.erase(key);  // valueFrom or a reference: unknown here
    }
  }
  return out;
}

// The kubelet's expansion (third_party/forked/golang/expansion).
std::string expandEnvReferences(const std::string& s, const EnvValues& env) {
  if (s.find('$') == std::string::npos || env.empty()) return s;
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '$' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    if (s[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    const std::size_t close = s[i + 1] == '(' ? s.find(')', i + 2) : std::string::npos;
    if (close == std::string::npos) {
      // No $(...) closes after here (or this is a lone $): the rest is literal,
      // and scanning on would make each later $( search to the end again.
      if (s[i + 1] == '(') {
        out.append(s, i, std::string::npos);
        break;
      }
      out += s[i];
      continue;
    }
    const auto it = env.find(std::string_view(s).substr(i + 2, close - i - 2));
    out += it != env.end() ? it->second : s.substr(i, close - i + 1);
    i = close;
  }
  return out;
}

std::optional<long long> visibleCount(const std::string& value, bool dynamic) {
  if (dynamic || value.empty()) return std::nullopt;
  long long n = 0;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    if (comma > start) ++n;
    start = comma + 1;
  }
  return n > 0 ? std::optional<long long>(n) : std::nullopt;
}

}  // namespace gpuguard
