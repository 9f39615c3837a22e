// The deadline of a request, from the `timeout` query parameter kube-apiserver
// puts on the webhook URL (client-go's Request.Timeout, a Go duration).
#include "https/internal/request_deadline.h"

#include <gtest/gtest.h>

namespace gpuguard::webhook {
namespace {

using namespace std::chrono_literals;

TEST(GoDuration, ParsesWhatTimeDurationStringWrites) {
  EXPECT_EQ(parseGoDuration("10s"), 10s);
  EXPECT_EQ(parseGoDuration("30s"), 30s);
  EXPECT_EQ(parseGoDuration("1m0s"), 60s);
  EXPECT_EQ(parseGoDuration("9.873s"), 9873ms);
  EXPECT_EQ(parseGoDuration("500ms"), 500ms);
  EXPECT_EQ(parseGoDuration("1h2m3.5s"), 1h + 2min + 3500ms);
  EXPECT_EQ(parseGoDuration("1.5us"), 1500ns);
  EXPECT_EQ(parseGoDuration("1.5\xC2\xB5s"), 1500ns);  // µs, as Go prints it
  EXPECT_EQ(parseGoDuration("2ns"), 2ns);
  EXPECT_EQ(parseGoDuration(".5s"), 500ms);
  EXPECT_EQ(parseGoDuration("0s"), 0ns);
}

TEST(GoDuration, RefusesAnythingElse) {
  for (const char* bad : {"", "10", "s", "-1s", "+1s", "1x", "1 s", "1.s.", ".s", "10S", "99999999999999999999s",
                          "9223372037s"}) {
    EXPECT_EQ(parseGoDuration(bad), std::nullopt) << bad;
  }
}

TEST(TimeoutParameter, IsReadFromTheQueryOfTheTarget) {
  EXPECT_EQ(timeoutParameter("/validate?timeout=10s"), 10s);
  EXPECT_EQ(timeoutParameter("/mutate?dryRun=All&timeout=3s"), 3s);
  EXPECT_EQ(timeoutParameter("/validate?timeout=2.5s&x=y"), 2500ms);
  EXPECT_EQ(timeoutParameter("/validate?timeout=1.5%C2%B5s"), 1500ns);  // url.Values.Encode escapes µ
}

TEST(TimeoutParameter, IsAbsentWhenNotAPositiveDuration) {
  for (const char* target : {"/validate", "/validate?", "/validate?timeout=", "/validate?timeout=0s",
                             "/validate?timeout=ten", "/validate?xtimeout=10s", "/validate?timeouts=10s"}) {
    EXPECT_EQ(timeoutParameter(target), std::nullopt) << target;
  }
}

}  // namespace
}  // namespace gpuguard::webhook
