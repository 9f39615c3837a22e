#include "https/memory_budget.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpuguard::webhook {

namespace {

constexpr std::size_t kMinConnections = 64;
constexpr std::size_t kMinHandshakes = 16;
// cgroup v1 writes PAGE_COUNTER_MAX (about 2^63) for "no limit".
constexpr std::uint64_t kNoLimitAbove = std::uint64_t{1} << 60;

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The path of this process's cgroup in hierarchy `controller` ("" for v2's
// unified hierarchy, "memory" for v1), from /proc/self/cgroup lines
// "ID:CONTROLLERS:PATH".
std::optional<std::string> cgroupPath(std::string_view procSelfCgroup, std::string_view controller) {
  while (!procSelfCgroup.empty()) {
    const std::size_t eol = procSelfCgroup.find('\n');
    std::string_view line = procSelfCgroup.substr(0, eol);
    procSelfCgroup = eol == std::string_view::npos ? std::string_view() : procSelfCgroup.substr(eol + 1);
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    bool match = controller.empty() ? controllers.empty() : false;
    while (!controller.empty() && !controllers.empty()) {
      const std::size_t comma = controllers.find(',');
      if (controllers.substr(0, comma) == controller) match = true;
      controllers = comma == std::string_view::npos ? std::string_view() : controllers.substr(comma + 1);
    }
    if (match) return std::string(line.substr(second + 1));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> limitIn(const std::vector<std::string>& files) {
  for (const std::string& file : files) {
    if (auto text = readFile(file)) return parseCgroupMemoryLimit(*text);
  }
  return std::nullopt;
}

}  // namespace

ConnectionLimits connectionLimitsFor(std::optional<std::uint64_t> memoryLimit, ConnectionLimits defaults) {
  if (!memoryLimit) return defaults;
  const std::uint64_t limit = *memoryLimit;
  const std::uint64_t budget = std::max<std::uint64_t>(limit > kReservedBytes ? limit - kReservedBytes : 0, limit / 4);
  ConnectionLimits out;
  out.maxConnections = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(budget / 2 / kConnectionCostBytes, kMinConnections,
                                std::max<std::uint64_t>(defaults.maxConnections, kMinConnections)));
  out.maxHandshakes = static_cast<std::size_t>(
      std::clamp<std::uint64_t>(budget / 4 / kHandshakeCostBytes, kMinHandshakes,
                                std::max<std::uint64_t>(defaults.maxHandshakes, kMinHandshakes)));
  out.maxConnections = std::min(out.maxConnections, std::max(defaults.maxConnections, kMinConnections));
  out.maxHandshakes = std::min(out.maxHandshakes, out.maxConnections);
  return out;
}

std::size_t bodyBudgetFor(std::optional<std::uint64_t> memoryLimit) {
  if (!memoryLimit) return SIZE_MAX;
  const std::uint64_t limit = *memoryLimit;
  const std::uint64_t budget = std::max<std::uint64_t>(limit > kReservedBytes ? limit - kReservedBytes : 0, limit / 4);
  const std::uint64_t memory = std::min<std::uint64_t>(budget / 4 + kJudgingReserveBytes, limit / 2);
  return static_cast<std::size_t>(std::min<std::uint64_t>(memory / kBodyCostFactor, SIZE_MAX));
}

std::optional<std::uint64_t> parseCgroupMemoryLimit(std::string_view content) {
  while (!content.empty() && (content.back() == '\n' || content.back() == ' ')) content.remove_suffix(1);
  std::uint64_t bytes = 0;
  const auto [end, error] = std::from_chars(content.data(), content.data() + content.size(), bytes);
  if (error != std::errc() || end != content.data() + content.size() || bytes == 0 || bytes >= kNoLimitAbove) {
    return std::nullopt;  // "max", empty, garbage, or no limit
  }
  return bytes;
}

std::optional<std::uint64_t> cgroupMemoryLimit(std::string_view procSelfCgroup, const std::string& cgroupRoot) {
  std::vector<std::string> files;
  if (auto v2 = cgroupPath(procSelfCgroup, "")) files.push_back(cgroupRoot + *v2 + "/memory.max");
  if (auto v1 = cgroupPath(procSelfCgroup, "memory")) {
    files.push_back(cgroupRoot + "/memory" + *v1 + "/memory.limit_in_bytes");
  }
  files.push_back(cgroupRoot + "/memory.max");
  files.push_back(cgroupRoot + "/memory/memory.limit_in_bytes");
  // The first file that exists decides: a v2 "max" in the process's own
  // cgroup means no limit, not "look further".
  return limitIn(files);
}

std::optional<std::uint64_t> cgroupMemoryLimit() {
  return cgroupMemoryLimit(readFile("/proc/self/cgroup").value_or(""), "/sys/fs/cgroup");
}

}  // namespace gpuguard::webhook
