// Where the Kubernetes API server is and how to authenticate to it, found as
// kubectl and client-go find it:
//   --kubeconfig FILE (only that file), else $KUBECONFIG (a colon-separated
//   list, merged: the first file that sets a key wins), else ~/.kube/config;
//   --context NAME, else current-context;
//   in a pod: the service account (KUBERNETES_SERVICE_HOST/PORT, its token
//   file, re-read on every request since the kubelet rotates it, and its CA).
// Every malformed file is an error that names the file and the key.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cluster/http_client.h"

namespace gpuguard::cluster {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// users[].user.exec: a client-go credential plugin (ExecCredential).
struct ExecConfig {
  std::string command;                                   // resolved: relative paths with a '/' against the file's directory
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the webhook's environment
  std::string apiVersion;                                // client.authentication.k8s.io/v1 or v1beta1
  std::string interactiveMode = "IfAvailable";           // Never, IfAvailable, Always (we are never interactive)
  bool provideClusterInfo = false;
  std::string installHint;
};

struct Credentials {
  std::string token;       // a bearer token written in the file
  std::string tokenFile;   // read on every request (the kubelet rotates projected tokens)
  std::optional<ExecConfig> exec;
};

struct ClientConfig {
  std::string server;      // as written, for logs and KUBERNETES_EXEC_INFO
  ServerUrl url;
  TlsSettings tls;
  Credentials credentials;
  std::string describe;    // "kubeconfig /home/u/.kube/config, context kind-gpu" or "in-cluster service account"
  // The namespace kubectl would use without -n: the context's `namespace`,
  // in a pod the service account's namespace file; "default" otherwise.
  std::string namespaceName = "default";
};

// What the process sees; tests substitute their own.
struct Environment {
  std::function<std::optional<std::string>(const std::string&)> getenv;
  std::string serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
  static Environment process();
};

struct ConfigRequest {
  std::optional<std::string> kubeconfig;  // --kubeconfig
  std::optional<std::string> context;     // --context
};

// The kubeconfig files named by the flag or the environment, merged; the
// context chosen. Throws ConfigError. Returns nullopt when no file exists at
// all (no flag, no $KUBECONFIG file, no ~/.kube/config).
std::optional<ClientConfig> loadKubeconfig(const ConfigRequest& request, const Environment& env);

// The pod's service account; nullopt when not running in a pod
// (KUBERNETES_SERVICE_HOST unset or no token file). Throws ConfigError for a
// pod whose CA cannot be read.
std::optional<ClientConfig> inClusterConfig(const Environment& env);

// The order client-go's tools use (controller-runtime's GetConfig, kubectl):
// --kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config. nullopt: nothing
// found. --context without any kubeconfig is an error.
std::optional<ClientConfig> findClientConfig(const ConfigRequest& request, const Environment& env);

// Standard base64 (padding optional, white space ignored), as *-data fields are written.
std::optional<std::string> decodeBase64(std::string_view text);

}  // namespace gpuguard::cluster
