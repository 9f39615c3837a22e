#include "webhook/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpuguard::webhook {
namespace {

std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> splitOnSpaces(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::optional<std::string> readFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Entries of /proc/self/fd, without the descriptor that reads the directory.
std::optional<std::uint64_t> openFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return std::nullopt;
  const int own = dirfd(dir);
  std::uint64_t count = 0;
  while (const dirent* e = readdir(dir)) {
    const auto fd = number(e->d_name);
    if (fd && static_cast<long long>(*fd) != own) ++count;
  }
  closedir(dir);
  return count;
}

// The shortest text that reads back as the same double (0.3, not 0.29999999999999999).
std::string formatDouble(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

void gauge(std::string& out, std::string_view name, std::string_view type, std::string_view help, double value) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ").append(name).append(" ");
  out.append(type).append("\n").append(name).append(" ").append(formatDouble(value)).append("\n");
}

}  // namespace

std::optional<ProcStat> parseProcStat(std::string_view line) {
  const std::size_t close = line.rfind(')');
  if (close == std::string_view::npos || line.find('(') > close) return std::nullopt;
  // After ") ": field 3 (state) is index 0, so field N is index N - 3.
  const std::vector<std::string_view> f = splitOnSpaces(line.substr(close + 1));
  constexpr std::size_t kUtime = 14 - 3, kStime = 15 - 3, kStart = 22 - 3, kVsize = 23 - 3, kRss = 24 - 3;
  if (f.size() <= kRss) return std::nullopt;
  const auto utime = number(f[kUtime]), stime = number(f[kStime]), start = number(f[kStart]);
  const auto vsize = number(f[kVsize]), rss = number(f[kRss]);
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  return ProcStat{*utime, *stime, *start, *vsize, *rss};
}

std::optional<std::uint64_t> parseBootTime(std::string_view procStat) {
  std::size_t pos = 0;
  while (pos < procStat.size()) {
    std::size_t end = procStat.find('\n', pos);
    if (end == std::string_view::npos) end = procStat.size();
    const std::string_view line = procStat.substr(pos, end - pos);
    if (line.substr(0, 6) == "btime ") return number(line.substr(6));
    pos = end + 1;
  }
  return std::nullopt;
}

void renderProcessMetrics(std::string& out) {
  const long ticksPerSecond = sysconf(_SC_CLK_TCK);
  const long pageSize = sysconf(_SC_PAGESIZE);
  const auto statLine = readFile("/proc/self/stat");
  const auto stat = statLine ? parseProcStat(*statLine) : std::nullopt;
  if (stat && ticksPerSecond > 0 && pageSize > 0) {
    const auto ticks = static_cast<double>(ticksPerSecond);
    gauge(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
          static_cast<double>(stat->utimeTicks + stat->stimeTicks) / ticks);
    gauge(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
          static_cast<double>(stat->residentPages) * static_cast<double>(pageSize));
    gauge(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
          static_cast<double>(stat->virtualBytes));
    const auto systemStat = readFile("/proc/stat");
    if (const auto boot = systemStat ? parseBootTime(*systemStat) : std::nullopt) {
      gauge(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
            static_cast<double>(*boot) + static_cast<double>(stat->startTimeTicks) / ticks);
    }
  }
  if (const auto fds = openFds()) {
    gauge(out, "process_open_fds", "gauge", "Number of open file descriptors.", static_cast<double>(*fds));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    gauge(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
          static_cast<double>(limit.rlim_cur));
  }
}

}  // namespace gpuguard::webhook
