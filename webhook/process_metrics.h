// The process_* series every Prometheus client library exports (the names and
// units of client_golang's process collector), read from /proc/self at scrape
// time:
//
//   process_cpu_seconds_total        user + system CPU time      (/proc/self/stat)
//   process_resident_memory_bytes    resident set size           (/proc/self/stat)
//   process_virtual_memory_bytes     virtual memory size         (/proc/self/stat)
//   process_start_time_seconds       since the Unix epoch        (/proc/self/stat + btime)
//   process_open_fds                 open file descriptors       (/proc/self/fd)
//   process_max_fds                  RLIMIT_NOFILE, soft limit
//
// A series whose source cannot be read is left out rather than reported as 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuguard::webhook {

// The fields of /proc/<pid>/stat this needs, in the kernel's units.
struct ProcStat {
  std::uint64_t utimeTicks = 0;      // field 14
  std::uint64_t stimeTicks = 0;      // field 15
  std::uint64_t startTimeTicks = 0;  // field 22: ticks after boot
  std::uint64_t virtualBytes = 0;    // field 23
  std::uint64_t residentPages = 0;   // field 24
};

// Parses one /proc/<pid>/stat line. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'. Nullopt if the line is cut short or malformed.
std::optional<ProcStat> parseProcStat(std::string_view line);

// The btime line of /proc/stat: boot time in seconds since the epoch.
std::optional<std::uint64_t> parseBootTime(std::string_view procStat);

// Appends the process_* series (with HELP and TYPE) for this process.
void renderProcessMetrics(std::string& out);

}  // namespace gpuguard::webhook
