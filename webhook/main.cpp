// gpuguard-webhook: the HTTPS ValidatingAdmissionWebhook front end of the GPU
// rule engine. See docs/webhook.md.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "cluster/client_config.h"
#include "cluster/facts_cache.h"
#include "audit/audited_resources.h"
#include "gpuguard_version.h"
#include "webhook/app.h"
#include "webhook/audit_run.h"
#include "webhook/flags.h"
#include "https/memory_budget.h"
#include "https/server.h"
#include "webhook/malloc_tuning.h"
#include "webhook/policy_source.h"
#include "yaml/policy_file.h"

namespace {

using namespace gpuguard;
using namespace gpuguard::webhook;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int checkPolicy(const std::string& path) {
  try {
    const AdmissionPolicy p = *loadPolicy(path).policy;  // as the webhook loads it: an empty file is an error
    auto count = [](std::size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    std::cout << path << ": ok (" << count(p.engine.rules.size(), "rule override") << ", "
              << count(p.exemptNamespaces.size(), "exempt namespace") << ", " << count(p.exemptions.size(), "exemption")
              << ", suppressions " << (p.allowSuppressions ? "allowed" : "ignored") << ")\n";
    return kExitOk;
  } catch (const std::exception& e) {
    std::cerr << "gpuguard-webhook: " << e.what() << "\n";
    return kExitFailure;
  }
}

// run() returns at --shutdown-timeout at the latest, but a handler judging a
// huge object cannot be interrupted and the server's destructor would wait
// for it: its answer is discarded anyway, so leave without it.
void exitIfStillJudging(const HttpsServer& server, const Logger& logger) {
  const std::uint64_t judging = server.stats().judgingInProgress;
  if (judging == 0) return;
  logger.warn("stopped; not waiting for the requests still being judged (their answers are discarded)")
      .num("judging", static_cast<long long>(judging));
  logger.flush();
  std::_Exit(kExitOk);  // no destructors: the judging threads still use the handler's objects
}

// The watched cluster facts (docs/cluster-facts.md), or null: judged without
// them. `failed` is set when an explicit --kubeconfig/--context cannot be read.
std::unique_ptr<cluster::FactsCache> startClusterFacts(const Flags& flags, const Logger& logger, bool& failed) {
  if (flags.clusterFacts == Flags::ClusterFacts::Off) {
    logger.info("cluster facts off (--cluster-facts=off): judging without them");
    return nullptr;
  }
  std::optional<cluster::ClientConfig> config;
  try {
    config = cluster::findClientConfig({flags.kubeconfig, flags.kubeContext}, cluster::Environment::process());
  } catch (const cluster::ConfigError& e) {
    const bool explicitly = flags.kubeconfig || flags.kubeContext;
    logger.error(explicitly ? "cannot read the cluster configuration"
                            : "cannot read the cluster configuration: judging without cluster facts")
        .str("error", e.what());
    failed = explicitly;
    return nullptr;
  }
  if (!config) {
    logger.log(flags.clusterFacts == Flags::ClusterFacts::On ? LogLevel::Warn : LogLevel::Info,
               "no kubeconfig and no service account: judging without cluster facts");
    return nullptr;
  }
  cluster::CacheOptions options;
  options.log = [&logger](bool warning, const std::string& message) {
    logger.log(warning ? LogLevel::Warn : LogLevel::Info, message);
  };
  logger.info("cluster facts: listing and watching").str("from", config->describe);
  auto cache = std::make_unique<cluster::FactsCache>(std::move(*config), std::move(options));
  cache->start();
  return cache;
}

// The HTTPS server's messages in the log, at the level their words call for.
decltype(ServerConfig::log) serverLog(const Logger& logger) {
  return [&logger](const std::string& message) {
    auto has = [&message](const char* word) { return message.find(word) != std::string::npos; };
    const bool bad = has("fail") || has("reject") || has("has expired") || has("cannot accept");
    // Connections closed unanswered; a certificate about to expire.
    const bool worrying = has("shutdown timeout") || has("expires in") || has("out of file descriptors");
    logger.log(bad ? LogLevel::Error : worrying ? LogLevel::Warn : LogLevel::Info, message);
  };
}

int serve(const Flags& flags, const Logger& logger, const sigset_t& signals) {
  std::unique_ptr<PolicySource> policy;
  try {
    policy = std::make_unique<PolicySource>(flags.policy, logger);
  } catch (const std::exception& e) {
    logger.error("cannot load the policy").str("path", flags.policy.value_or("")).str("error", e.what());
    return kExitFailure;
  }

  bool failed = false;  // an explicit cluster configuration that cannot be read, an audit asked for that cannot start
  std::unique_ptr<cluster::FactsCache> facts = startClusterFacts(flags, logger, failed);
  std::unique_ptr<AuditRun> audit = failed ? nullptr : startAudit(flags, logger, *policy, facts.get(), failed);
  if (failed) return kExitFailure;

  Metrics metrics(GPUGUARD_VERSION);
  WebhookApp app(*policy, metrics, logger);
  app.attachClusterFacts(facts.get());
  if (audit) app.attachAudit(audit.get(), flags.audit.metricsMaxNamespaces);
  const MemoryLimit memory = memoryLimit(flags, cgroupMemoryLimit());
  ServerConfig config = serverConfig(flags, serverMemory(flags, memory.bytes));  // the audit's share apart
  const std::size_t maxConnections = config.maxConnections, maxHandshakes = config.maxHandshakes;
  config.log = serverLog(logger);
  HttpsServer server(std::move(config), [&app](const HttpRequest& request) { return app.handle(request); });
  app.attach(&server);

  std::string error;
  if (!server.start(error)) {
    logger.error("cannot start the HTTPS server").str("error", error);
    return kExitFailure;
  }
  app.setServing(true);
  policy->start(flags.policyPollInterval);

  logger.info("serving")
      .str("version", GPUGUARD_VERSION)
      .str("bindAddress", flags.bindAddress)
      .num("port", static_cast<long long>(server.boundPort()))
      .str("policy", flags.policy.value_or("(built-in defaults)"))
      .flag("clientCertificates", flags.clientCaFile.has_value())
      .num("memoryLimit", static_cast<long long>(memory.bytes.value_or(0)))
      .str("memoryLimitFrom", memory.source)
      .num("maxConnections", static_cast<long long>(maxConnections))
      .num("maxHandshakes", static_cast<long long>(maxHandshakes));

  // Signals are blocked in every thread; this one waits for them.
  std::atomic<bool> finished{false};
  std::atomic<bool> signalled{false};
  std::thread waiter([&] {
    const timespec tick{0, 200'000'000};
    while (!finished.load()) {
      const int sig = sigtimedwait(&signals, nullptr, &tick);
      if (sig <= 0) continue;
      if (sig == SIGHUP) {  // the habit of "kill -HUP to reload" must not drop admission calls
        logger.info("SIGHUP ignored: the certificate, client CAs and policy reload on their own when their files change");
        continue;
      }
      signalled.store(true);
      app.setServing(false);  // /readyz fails while in-flight requests drain
      logger.info("shutting down").str("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      server.stop();
      return;
    }
  });

  server.run();
  finished.store(true);
  waiter.join();
  app.setServing(false);
  policy->stop();
  if (audit) audit->stop();  // before the facts it reads
  if (facts) facts->stop();
  if (!signalled.load()) {
    logger.error("the HTTPS server stopped unexpectedly");
    return kExitFailure;
  }
  exitIfStillJudging(server, logger);
  logger.info("stopped");
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const FlagsResult parsed = parseFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.error.empty()) {
    std::cerr << "gpuguard-webhook: " << parsed.error << "\nRun gpuguard-webhook --help for usage.\n";
    return kExitUsage;
  }
  const Flags& flags = parsed.flags;
  if (flags.help) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (flags.version) {
    std::cout << "gpuguard-webhook " << GPUGUARD_VERSION_LONG << "\n";
    return kExitOk;
  }
  if (flags.checkPolicy) return checkPolicy(*flags.policy);
  if (flags.audit.printResources) {
    std::cout << audit::printAuditedResources(audit::withExtraResources(flags.audit.extraResources));
    return kExitOk;
  }
  reexecWithMallocTunables(argv);  // serving only: --help and friends stay one exec
  if (flags.audit.mode != AuditFlags::Mode::Off) {
    // The audit's threads: a reflector per resource, the worker, the control loop, the elector.
    reserveMallocArenas(static_cast<unsigned>(audit::withExtraResources(flags.audit.extraResources).size()) + 3);
  }

  // Block the signals handled (SIGTERM, SIGINT; SIGHUP, ignored) before any thread exists, so every thread
  // inherits the mask and only the waiter in serve() receives them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const Logger logger(flags.logLevel);
  try {
    return serve(flags, logger, signals);
  } catch (const std::exception& e) {
    logger.error("fatal error").str("error", e.what());
    return kExitFailure;
  }
}
