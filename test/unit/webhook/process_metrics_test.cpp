// The process_* series: parsing /proc/<pid>/stat and /proc/stat, and the
// values rendered for this very process.
#include "webhook/process_metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "webhook/metrics.h"

namespace gpuguard::webhook {
namespace {

using ::testing::HasSubstr;

// A real line (kernel 6.1), with a command name that holds ") (" and spaces.
constexpr std::string_view kStatLine =
    "4242 (gpuguard ) (web) S 1 4242 4242 0 -1 4194560 1290 0 0 0 37 12 0 0 20 0 3 0 81234 "
    "224485376 2613 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

TEST(ProcStat, ParsesTheFieldsAfterTheLastParenthesis) {
  const auto s = parseProcStat(kStatLine);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->utimeTicks, 37u);
  EXPECT_EQ(s->stimeTicks, 12u);
  EXPECT_EQ(s->startTimeTicks, 81234u);
  EXPECT_EQ(s->virtualBytes, 224485376u);
  EXPECT_EQ(s->residentPages, 2613u);
}

TEST(ProcStat, RejectsCutShortOrMalformedLines) {
  EXPECT_FALSE(parseProcStat(""));
  EXPECT_FALSE(parseProcStat("4242 (gpuguard S 1 2 3"));  // no closing parenthesis
  EXPECT_FALSE(parseProcStat("4242 (gpuguard) S 1 4242 4242 0 -1 4194560 1290 0 0 0 37 12"));
  std::string bad(kStatLine);
  bad.replace(bad.find(" 37 "), 4, " x7 ");
  EXPECT_FALSE(parseProcStat(bad));
}

TEST(ProcStat, BootTimeIsTheBtimeLine) {
  EXPECT_EQ(parseBootTime("cpu  1 2 3\nintr 5\nbtime 1764576000\nprocesses 9\n"), 1764576000u);
  EXPECT_FALSE(parseBootTime("cpu  1 2 3\nintr 5\n"));
  EXPECT_FALSE(parseBootTime("btime soon\n"));
}

// The value of an unlabelled sample in a rendered exposition, or -1.
double valueOf(const std::string& text, const std::string& name) {
  const std::regex line("(^|\n)" + name + " ([-+0-9.eE]+)\n");
  std::smatch m;
  return std::regex_search(text, m, line) ? std::stod(m[2].str()) : -1;
}

TEST(ProcessMetrics, DescribeThisProcess) {
  const int extra = open("/proc/self/stat", O_RDONLY);
  ASSERT_GE(extra, 0);
  std::string out;
  renderProcessMetrics(out);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                           "process_start_time_seconds", "process_open_fds", "process_max_fds"}) {
    EXPECT_THAT(out, HasSubstr(std::string("# TYPE ") + name + " ")) << name;
  }
  EXPECT_THAT(out, HasSubstr("# TYPE process_cpu_seconds_total counter\n"));
  EXPECT_GE(valueOf(out, "process_cpu_seconds_total"), 0);
  EXPECT_GT(valueOf(out, "process_resident_memory_bytes"), 1 << 20);  // a test binary is well over 1 MiB
  EXPECT_GE(valueOf(out, "process_virtual_memory_bytes"), valueOf(out, "process_resident_memory_bytes"));
  const double started = valueOf(out, "process_start_time_seconds");
  const auto now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(started, now + 1);
  EXPECT_GT(started, now - 24 * 3600);  // this test process started within the day
  EXPECT_GE(valueOf(out, "process_open_fds"), 4);  // stdin, stdout, stderr and `extra`
  EXPECT_GT(valueOf(out, "process_max_fds"), valueOf(out, "process_open_fds"));
  close(extra);
}

TEST(ProcessMetrics, AreInEveryScrape) {
  const Metrics metrics("9.8.7");
  const std::string out = metrics.render();
  EXPECT_THAT(out, HasSubstr("gpuguard_build_info{version=\"9.8.7\"} 1\n"));
  EXPECT_THAT(out, HasSubstr("\nprocess_resident_memory_bytes "));
  EXPECT_THAT(out, ::testing::Not(HasSubstr("gpuguard_serving_certificate_expiration_timestamp_seconds")))
      << "no certificate, no series";
  ExternalCounters external;
  external.certificateNotAfter = 1798761600;  // 2027-01-01T00:00:00Z
  EXPECT_THAT(metrics.render(external),
              HasSubstr("# TYPE gpuguard_serving_certificate_expiration_timestamp_seconds gauge\n"
                        "gpuguard_serving_certificate_expiration_timestamp_seconds 1798761600\n"));
}

}  // namespace
}  // namespace gpuguard::webhook
