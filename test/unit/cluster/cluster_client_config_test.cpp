// How the API server and the credential are found: kubeconfig files as
// kubectl reads and merges them, and the pod's service account.
#include <gtest/gtest.h>

#include <map>

#include "cluster/client_config.h"
#include "test/unit/tls_test_support.h"

namespace gpuguard::cluster {
namespace {

using testing::tls::TempDir;

Environment fakeEnv(std::map<std::string, std::string> vars, std::string serviceAccountDir = "/nonexistent") {
  Environment env;
  env.getenv = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  env.serviceAccountDir = std::move(serviceAccountDir);
  return env;
}

ConfigRequest request(std::optional<std::string> kubeconfig, std::optional<std::string> context = std::nullopt) {
  ConfigRequest r;
  r.kubeconfig = std::move(kubeconfig);
  r.context = std::move(context);
  return r;
}

std::string errorOf(const ConfigRequest& request, const Environment& env) {
  try {
    findClientConfig(request, env);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kOneCluster = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: ca.crt
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user}
- name: ops
  context: {cluster: dev-cluster, user: ops-user}
users:
- name: dev-user
  user: {token: dev-token}
- name: ops-user
  user: {tokenFile: tokens/ops}
)";

TEST(KubeconfigTest, ReadsTheCurrentContextsClusterAndUserWithPathsRelativeToTheFile) {
  TempDir dir;
  dir.write("ca.crt", "-----BEGIN CERTIFICATE-----\n");
  const std::string path = dir.write("config", kOneCluster);
  const auto config = findClientConfig(request(path), fakeEnv({}));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->url.host, "10.0.0.1");
  EXPECT_EQ(config->url.port, 6443);
  EXPECT_EQ(config->tls.caPem, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(config->credentials.token, "dev-token");
  EXPECT_EQ(config->describe, "kubeconfig " + path + ", context dev");
}

TEST(KubeconfigTest, ContextFlagChoosesAnotherContextAndTokenFileIsResolvedAgainstTheFile) {
  TempDir dir;
  dir.write("ca.crt", "x");
  const std::string path = dir.write("config", kOneCluster);
  const auto config = findClientConfig(request(path, "ops"), fakeEnv({}));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->credentials.tokenFile, dir.file("tokens/ops"));
  EXPECT_EQ(errorOf(request(path, "prod"), fakeEnv({})), path + ": context \"prod\" not found");
}

TEST(KubeconfigTest, KubeconfigListMergesAsKubectlDoesTheFirstFileSettingAKeyWins) {
  TempDir dir;
  const std::string first = dir.write("first", R"(clusters:
- name: shared
  cluster: {server: "https://first:6443", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: first-token}
)");
  const std::string second = dir.write("second", R"(current-context: c
contexts:
- name: c
  context: {cluster: shared, user: u}
clusters:
- name: shared
  cluster: {server: "https://second:6443"}
users:
- name: u
  user: {token: second-token}
)");
  const auto config = findClientConfig({}, fakeEnv({{"KUBECONFIG", first + ":" + dir.file("missing") + ":" + second}}));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->server, "https://first:6443");
  EXPECT_TRUE(config->tls.insecureSkipVerify);
  EXPECT_EQ(config->credentials.token, "first-token");
  EXPECT_EQ(config->describe, "kubeconfig " + first + ":" + second + ", context c");
}

TEST(KubeconfigTest, DataFieldsAreBase64AndClientCertificatesAreRead) {
  TempDir dir;
  const std::string path = dir.write("config", R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://[::1]:6443/prefix/", certificate-authority-data: Q0EtUEVN, tls-server-name: api.internal}}]
users: [{name: u, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}]
)");
  const auto config = findClientConfig(request(path), fakeEnv({}));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->url.host, "::1");
  EXPECT_EQ(config->url.pathPrefix, "/prefix");
  EXPECT_EQ(config->tls.caPem, "CA-PEM");
  EXPECT_EQ(config->tls.serverName, "api.internal");
  EXPECT_EQ(config->tls.clientCertPem, "CERT");
  EXPECT_EQ(config->tls.clientKeyPem, "KEY");
}

TEST(KubeconfigTest, ExecPluginsAreReadWithTheirArgsEnvAndMode) {
  TempDir dir;
  const std::string path = dir.write("config", R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://eks.example:443"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/get-token
      args: [token, -i, gpu]
      env: [{name: AWS_PROFILE, value: ml}]
      interactiveMode: Never
      provideClusterInfo: true
)");
  const auto config = findClientConfig(request(path), fakeEnv({}));
  ASSERT_TRUE(config && config->credentials.exec);
  const ExecConfig& exec = *config->credentials.exec;
  EXPECT_EQ(exec.command, dir.file("./bin/get-token"));
  EXPECT_EQ(exec.args, (std::vector<std::string>{"token", "-i", "gpu"}));
  ASSERT_EQ(exec.env.size(), 1u);
  EXPECT_EQ(exec.env[0].first, "AWS_PROFILE");
  EXPECT_EQ(exec.interactiveMode, "Never");
  EXPECT_TRUE(exec.provideClusterInfo);
}

TEST(KubeconfigTest, EveryMalformedFileIsAnErrorNamingTheFileAndTheKey) {
  TempDir dir;
  auto errorFor = [&](const std::string& text) {
    return errorOf(request(dir.write("config", text)), fakeEnv({}));
  };
  const std::string file = dir.file("config");
  EXPECT_EQ(errorOf(request(dir.file("absent")), fakeEnv({})), dir.file("absent") + ": cannot read the kubeconfig");
  EXPECT_EQ(errorFor("clusters: [\n"), file + ":1:11: did not find expected ',' or ']' to continue or close the flow sequence opened at line 1, column 11");
  EXPECT_EQ(errorFor("- a\n"), file + ": a kubeconfig is a map (apiVersion: v1, kind: Config)");
  EXPECT_EQ(errorFor("clusters: {a: 1}\n"), file + ": clusters: want a list");
  EXPECT_EQ(errorFor("clusters: [{cluster: {}}]\n"), file + ": clusters[0].name: Required value");
  EXPECT_EQ(errorFor("users: [{name: u, user: []}]\n"), file + ": users[0].user: want a map");
  EXPECT_EQ(errorFor("clusters: [{name: 1}]\n"), file + ": clusters[0].name: want a string, got 1");
  EXPECT_EQ(errorFor("contexts: []\n"), file + ": no current-context (pass --context NAME)");
  const std::string head = "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n";
  EXPECT_EQ(errorFor(head), file + ": contexts[c].context.cluster: cluster \"k\" not found");
  EXPECT_EQ(errorFor(head + "clusters: [{name: k, cluster: {}}]\n"), file + ": clusters[k].cluster.server: Required value");
  EXPECT_EQ(errorFor(head + "clusters: [{name: k, cluster: {server: ftp://x}}]\n"),
            file + ": clusters[k].cluster.server: server \"ftp://x\": want https://HOST[:PORT] (or http:// for kubectl proxy)");
  EXPECT_EQ(errorFor(head + "clusters: [{name: k, cluster: {server: 'https://h:99999'}}]\n"),
            file + ": clusters[k].cluster.server: server \"https://h:99999\": bad port");
  const std::string withCluster = head + "clusters: [{name: k, cluster: {server: 'https://h'}}]\n";
  EXPECT_EQ(errorFor(withCluster), file + ": contexts[c].context.user: user \"u\" not found");
  EXPECT_EQ(errorFor(withCluster + "users: [{name: u, user: {client-key-data: '!!'}}]\n"),
            file + ": users[u].user.client-key-data: not base64");
  EXPECT_EQ(errorFor(withCluster + "users: [{name: u, user: {client-certificate: nope.crt}}]\n"),
            file + ": users[u].user.client-certificate: cannot read " + dir.file("nope.crt"));
  EXPECT_EQ(errorFor(withCluster + "users: [{name: u, user: {exec: {apiVersion: v1, command: x}}}]\n"),
            file + ": users[u].user.exec.apiVersion: Unsupported value: \"v1\": supported values: "
                   "\"client.authentication.k8s.io/v1\", \"client.authentication.k8s.io/v1beta1\"");
  EXPECT_EQ(errorFor(withCluster + "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1}}}]\n"),
            file + ": users[u].user.exec.command: Required value");
  EXPECT_NE(errorFor(withCluster + "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n").find("exec plugins such as"),
            std::string::npos);
}

TEST(KubeconfigTest, NothingFoundIsNoConfigButAContextWithoutAnyKubeconfigIsAnError) {
  TempDir home;
  EXPECT_FALSE(findClientConfig({}, fakeEnv({{"HOME", home.path().string()}})));
  EXPECT_EQ(errorOf(request(std::nullopt, "x"), fakeEnv({{"HOME", home.path().string()}})), "--context x: no kubeconfig found");
}

TEST(KubeconfigTest, HomeKubeConfigIsReadWhenNeitherFlagNorEnvironmentNamesOne) {
  TempDir home;
  std::filesystem::create_directories(home.path() / ".kube");
  home.write(".kube/config", "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                             "clusters: [{name: k, cluster: {server: 'http://127.0.0.1:8001'}}]\n");
  const auto config = findClientConfig({}, fakeEnv({{"HOME", home.path().string()}}));
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->url.tls);
  EXPECT_EQ(config->url.port, 8001);
}

TEST(InClusterConfigTest, ReadsTheServiceAccountWhenRunningInAPod) {
  TempDir sa;
  sa.write("token", "sa-token\n");
  sa.write("ca.crt", "POD-CA");
  const Environment env = fakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
                                  sa.path().string());
  const auto config = findClientConfig({}, env);
  ASSERT_TRUE(config);
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->tls.caPem, "POD-CA");
  EXPECT_EQ(config->credentials.tokenFile, sa.file("token"));
  EXPECT_EQ(config->describe, "in-cluster service account (https://10.96.0.1:443)");

  const auto v6 = inClusterConfig(fakeEnv({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}},
                                          sa.path().string()));
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->url.host, "fd00::1");
  EXPECT_EQ(v6->url.port, 6443);
}

TEST(ClientNamespaceTest, IsTheContextsNamespaceThePodsOwnInAClusterAndDefaultOtherwise) {
  TempDir dir;
  const std::string withNamespace = dir.write("ns-config", R"(apiVersion: v1
kind: Config
current-context: ml
clusters: [{name: k, cluster: {server: 'https://10.0.0.1:6443'}}]
contexts:
- {name: ml, context: {cluster: k, user: u, namespace: team-ml}}
- {name: plain, context: {cluster: k, user: u}}
users: [{name: u, user: {token: t}}]
)");
  EXPECT_EQ(findClientConfig(request(withNamespace), fakeEnv({}))->namespaceName, "team-ml");
  EXPECT_EQ(findClientConfig(request(withNamespace, "plain"), fakeEnv({}))->namespaceName, "default");

  TempDir sa;
  sa.write("token", "t");
  sa.write("ca.crt", "POD-CA");
  const Environment pod = fakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}, sa.path().string());
  EXPECT_EQ(inClusterConfig(pod)->namespaceName, "default");  // no namespace file
  sa.write("namespace", "gpuguard-system\n");
  EXPECT_EQ(inClusterConfig(pod)->namespaceName, "gpuguard-system");
}

TEST(InClusterConfigTest, OutsideAPodThereIsNoneAndAPodWithoutItsCaIsAnError) {
  TempDir sa;
  EXPECT_FALSE(inClusterConfig(fakeEnv({}, sa.path().string())));
  EXPECT_FALSE(inClusterConfig(fakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}, sa.path().string())));  // no token
  sa.write("token", "t");
  try {
    inClusterConfig(fakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}, sa.path().string()));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "in-cluster: cannot read the service account's CA " + sa.file("ca.crt"));
  }
}

TEST(InClusterConfigTest, AnExplicitKubeconfigWinsOverTheServiceAccount) {
  TempDir sa;
  sa.write("token", "t");
  sa.write("ca.crt", "c");
  sa.write("ca.crt.pem", "c");
  const std::string kubeconfig = sa.write("kubeconfig", "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
                                                        "clusters: [{name: k, cluster: {server: 'https://other'}}]\n");
  const auto config = findClientConfig(request(kubeconfig),
                                       fakeEnv({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}, sa.path().string()));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->server, "https://other");
  EXPECT_EQ(config->url.port, 443);
}

TEST(Base64Test, DecodesStandardBase64WithOrWithoutPaddingAndRefusesOtherCharacters) {
  EXPECT_EQ(decodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(decodeBase64("aGVsbG8"), "hello");
  EXPECT_EQ(decodeBase64("aGVs\nbG8="), "hello");
  EXPECT_FALSE(decodeBase64("aGVs_bG8"));
  EXPECT_FALSE(decodeBase64("aG=Vs"));
}

}  // namespace
}  // namespace gpuguard::cluster
