// client-go credential plugins (users[].user.exec): what the plugin is given,
// what it must print, and when it runs again.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster/credentials.h"
#include "test/unit/tls_test_support.h"

namespace gpuguard::cluster {
namespace {

using testing::tls::TempDir;

// A plugin that counts its runs in `runs`, records what it was given in `seen`,
// and prints `output` (a shell here-document: $RUN is its run number).
std::string writePlugin(const TempDir& dir, const std::string& output, const std::string& extra = "") {
  const std::string path = dir.write("plugin.sh", "#!/bin/sh\n"
                                                  "RUN=$(( $(cat " + dir.file("runs") + " 2>/dev/null || echo 0) + 1 ))\n"
                                                  "echo $RUN > " + dir.file("runs") + "\n"
                                                  "printf '%s\\n%s\\n%s\\n' \"$KUBERNETES_EXEC_INFO\" \"$PLUGIN_ZONE\" \"$*\" > " +
                                                  dir.file("seen") + "\n" + extra + "cat <<EOF\n" + output + "\nEOF\n");
  chmod(path.c_str(), 0755);
  return path;
}

ClientConfig withPlugin(const std::string& command, const std::string& apiVersion = "client.authentication.k8s.io/v1") {
  ClientConfig config;
  config.server = "https://api.example:6443";
  ExecConfig exec;
  exec.command = command;
  exec.args = {"get-token", "--cluster", "gpu"};
  exec.env = {{"PLUGIN_ZONE", "eu-west-1"}};
  exec.apiVersion = apiVersion;
  exec.interactiveMode = "Never";
  config.credentials.exec = exec;
  return config;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ExecPluginTest, ThePluginGetsItsArgsEnvAndExecInfoAndItsTokenBecomesTheBearer) {
  TempDir dir;
  const std::string plugin = writePlugin(
      dir, R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-$RUN"}})");
  Authenticator auth(withPlugin(plugin));
  const Authenticator::Current c = auth.current();
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.authorization, "Bearer tok-1");
  EXPECT_EQ(slurp(dir.file("seen")),
            R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}})"
            "\neu-west-1\nget-token --cluster gpu\n");
}

TEST(ExecPluginTest, ACredentialIsCachedUntilItExpiresAndA401RunsThePluginAgain) {
  TempDir dir;
  const std::string plugin = writePlugin(
      dir, R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-$RUN","expirationTimestamp":"2999-01-01T00:00:00Z"}})");
  Authenticator auth(withPlugin(plugin));
  EXPECT_EQ(auth.current().authorization, "Bearer tok-1");
  EXPECT_EQ(auth.current().authorization, "Bearer tok-1");
  EXPECT_EQ(auth.execRuns(), 1);
  auth.unauthorized();
  EXPECT_EQ(auth.current().authorization, "Bearer tok-2");
  EXPECT_EQ(auth.execRuns(), 2);
}

TEST(ExecPluginTest, AnExpiredCredentialRunsThePluginOnEveryRequest) {
  TempDir dir;
  const std::string plugin = writePlugin(
      dir, R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"tok-$RUN","expirationTimestamp":"2001-01-01T00:00:00Z"}})");
  Authenticator auth(withPlugin(plugin, "client.authentication.k8s.io/v1beta1"));
  EXPECT_EQ(auth.current().authorization, "Bearer tok-1");
  EXPECT_EQ(auth.current().authorization, "Bearer tok-2");
}

TEST(ExecPluginTest, AClientCertificateFromThePluginReplacesTheKubeconfigs) {
  TempDir dir;
  const std::string plugin = writePlugin(
      dir, R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}})");
  ClientConfig config = withPlugin(plugin);
  config.tls.clientCertPem = "OLD";
  Authenticator auth(config);
  const Authenticator::Current c = auth.current();
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(c.authorization, "");
  EXPECT_EQ(c.clientCertPem, "CERT");
  EXPECT_EQ(c.clientKeyPem, "KEY");
}

TEST(ExecPluginTest, AFailingPluginIsAnErrorWithItsExitStatusAndStderr) {
  TempDir dir;
  const std::string plugin = writePlugin(dir, "", "echo 'error: no SSO session, run aws sso login' >&2\nexit 3\n");
  const Authenticator::Current c = Authenticator(withPlugin(plugin)).current();
  EXPECT_EQ(c.error, "exec plugin " + plugin + " failed (exit status 3): error: no SSO session, run aws sso login");
  EXPECT_EQ(c.authorization, "");
}

TEST(ExecPluginTest, WhatThePluginPrintsMustBeAnExecCredentialOfTheConfiguredVersion) {
  auto errorFor = [](const std::string& output) {
    std::string error;
    EXPECT_FALSE(parseExecCredential(output, "client.authentication.k8s.io/v1", error));
    return error;
  };
  EXPECT_EQ(errorFor("token"), "the plugin did not print a JSON ExecCredential");
  EXPECT_EQ(errorFor(R"({"kind":"Token"})"), "the plugin printed kind \"Token\", want ExecCredential");
  EXPECT_EQ(errorFor(R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{"token":"t"}})"),
            "the plugin printed apiVersion \"client.authentication.k8s.io/v1beta1\", the kubeconfig asks for "
            "client.authentication.k8s.io/v1");
  const std::string head = R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1")";
  EXPECT_EQ(errorFor(head + "}"), "the plugin's ExecCredential has no status");
  EXPECT_EQ(errorFor(head + R"(,"status":{}})"),
            "the plugin's ExecCredential has neither status.token nor status.clientCertificateData");
  EXPECT_EQ(errorFor(head + R"(,"status":{"clientKeyData":"k"}})"),
            "the plugin's ExecCredential has only one of status.clientCertificateData and status.clientKeyData");
  EXPECT_EQ(errorFor(head + R"(,"status":{"token":"t","expirationTimestamp":"tomorrow"}})"),
            "status.expirationTimestamp: Invalid value: \"tomorrow\": want RFC 3339");
}

TEST(ExecPluginTest, AMissingPluginNamesItsInstallHintAndAnInteractiveOneIsRefused) {
  ClientConfig config = withPlugin("/nonexistent/gke-gcloud-auth-plugin");
  config.credentials.exec->installHint = "install gke-gcloud-auth-plugin";
  EXPECT_EQ(Authenticator(config).current().error,
            "exec plugin /nonexistent/gke-gcloud-auth-plugin: No such file or directory (install gke-gcloud-auth-plugin)");
  config.credentials.exec->interactiveMode = "Always";
  EXPECT_EQ(Authenticator(config).current().error,
            "exec plugin /nonexistent/gke-gcloud-auth-plugin: interactiveMode Always needs a terminal, which gpuguard never has");
}

TEST(ExecPluginTest, APluginThatHangsIsKilledAtTheTimeout) {
  TempDir dir;
  const std::string plugin = writePlugin(dir, "{}", "exec sleep 30\n");
  const Authenticator::Current c = Authenticator(withPlugin(plugin), std::chrono::milliseconds(100)).current();
  EXPECT_EQ(c.error, "exec plugin " + plugin + ": no answer within 100 ms (killed)");
}

TEST(ExecPluginTest, ATokenFileIsReadOnEveryRequestSoARotatedTokenIsUsed) {
  TempDir dir;
  ClientConfig config;
  config.credentials.tokenFile = dir.write("token", "first\n");
  Authenticator auth(config);
  EXPECT_EQ(auth.current().authorization, "Bearer first");
  dir.write("token", "second");
  EXPECT_EQ(auth.current().authorization, "Bearer second");
  std::filesystem::remove(dir.file("token"));
  EXPECT_EQ(auth.current().error, "cannot read the token file " + dir.file("token"));
}

TEST(Rfc3339Test, ReadsUtcOffsetsAndFractions) {
  using std::chrono::system_clock;
  const auto epoch = [](long long s) { return system_clock::time_point(std::chrono::seconds(s)); };
  EXPECT_EQ(parseRfc3339("1970-01-01T00:01:00Z"), epoch(60));
  EXPECT_EQ(parseRfc3339("1970-01-01T01:00:00.123456+01:00"), epoch(0));
  EXPECT_EQ(parseRfc3339("1970-01-01T00:00:00-00:30"), epoch(1800));
  EXPECT_FALSE(parseRfc3339("1970-01-01 00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("1970-13-01T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("1970-01-01T00:00:00"));
  EXPECT_EQ(parseRfc3339("2999-01-01T00:00:00Z"), system_clock::time_point::max());  // beyond system_clock's 2262
}

// The webhook blocks SIGTERM, SIGINT and SIGHUP in its threads to wait for
// them; a plugin must not inherit that, or it ignores the kill of a shutdown.
// The plugin reads its own mask with shell builtins only: a shell waiting
// for a child blocks every signal for the wait, so a child reading the
// shell's mask (grep /proc/$$/status) saw that mask now and then.
TEST(ExecPluginTest, APluginRunsWithNoSignalBlocked) {
  TempDir dir;
  const std::string plugin = writePlugin(
      dir, R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}})",
      "while read -r key value; do [ \"$key\" = SigBlk: ] && mask=$value; done < /proc/$$/status\n"
      "echo \"SigBlk:\t$mask\" > " + dir.file("signals") + "\n");
  sigset_t blocked, before;
  sigemptyset(&blocked);
  for (const int signal : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&blocked, signal);
  pthread_sigmask(SIG_BLOCK, &blocked, &before);
  const Authenticator::Current c = Authenticator(withPlugin(plugin)).current();
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  EXPECT_EQ(c.error, "");
  EXPECT_EQ(slurp(dir.file("signals")), "SigBlk:\t0000000000000000\n");
}

// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
bool exited(const std::string& pid) {
  const std::string stat = slurp("/proc/" + pid + "/stat");
  const std::size_t close = stat.rfind(')');
  return stat.empty() || (close != std::string::npos && stat.compare(close, 4, ") Z ") == 0);
}

// A shutdown cancels every request; a plugin that hangs with SIGTERM ignored
// (as `sleep` under a blocked mask did) is killed with what it started.
TEST(ExecPluginTest, ACancelStopsAHangingPluginAndWhatItStarted) {
  TempDir dir;
  const std::string started = dir.file("child");
  const std::string plugin =
      writePlugin(dir, "{}", "trap '' TERM INT HUP\nsleep 1000 &\necho $! > " + started + ".tmp\nmv " + started +
                                 ".tmp " + started + "\nwait\n");
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    while (!std::filesystem::exists(started)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancel = true;
  });
  Authenticator auth(withPlugin(plugin), std::chrono::hours(1));
  const Authenticator::Current c = auth.current(&cancel);
  canceller.join();
  EXPECT_EQ(c.error, "exec plugin " + plugin + ": stopped, the request was cancelled (killed)");
  std::string child = slurp(started);
  child.erase(child.find_last_not_of('\n') + 1);
  ASSERT_FALSE(child.empty());
  for (int i = 0; i < 3000 && !exited(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(exited(child)) << "the plugin's own child " << child << " outlived it";
}

TEST(ExecPluginTest, NoPluginRunsForARequestAlreadyCancelled) {
  TempDir dir;
  const std::string plugin = writePlugin(dir, "{}");
  const std::atomic<bool> cancel{true};
  Authenticator auth(withPlugin(plugin));
  EXPECT_EQ(auth.current(&cancel).error, "exec plugin " + plugin + ": not run, the request was cancelled");
  EXPECT_EQ(auth.execRuns(), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.file("runs")));
}

}  // namespace
}  // namespace gpuguard::cluster
