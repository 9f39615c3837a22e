#include "cluster/client_config.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "yaml/yaml_to_json.h"

namespace gpuguard::cluster {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxFileBytes = 16u << 20;

std::optional<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) throw ConfigError(path + ": larger than 16 MiB");
  }
  return text;
}

std::string dirOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

// kubectl resolves relative paths in a kubeconfig against the file's directory.
std::string resolvePath(const std::string& path, const std::string& baseDir) {
  if (path.empty() || path.front() == '/') return path;
  if (path.starts_with("~/")) {
    if (const char* home = std::getenv("HOME")) return std::string(home) + path.substr(1);
  }
  return baseDir + "/" + path;
}

// One named entry (a cluster, user or context) and the file it came from.
struct Entry {
  json body;
  std::string file;
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string currentContext;
  std::vector<std::string> files;
};

std::string keyPath(const std::string& file, const std::string& key) { return file + ": " + key; }

const json* objectAt(const json& parent, const char* key, const std::string& file, const std::string& where) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return nullptr;
  if (!it->is_object()) throw ConfigError(keyPath(file, where + key) + ": want a map");
  return &*it;
}

std::string stringAt(const json& parent, const char* key, const std::string& file, const std::string& where) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return "";
  if (!it->is_string()) throw ConfigError(keyPath(file, where + key) + ": want a string, got " + it->dump());
  return it->get<std::string>();
}

// clusters:, users:, contexts: — lists of {name, <kind>: {...}}; the first file naming an entry wins.
void mergeList(const json& doc, const char* list, const char* inner, const std::string& file,
               std::map<std::string, Entry>& into) {
  auto it = doc.find(list);
  if (it == doc.end() || it->is_null()) return;
  if (!it->is_array()) throw ConfigError(keyPath(file, list) + ": want a list");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    const std::string where = std::string(list) + "[" + std::to_string(i) + "].";
    if (!item.is_object()) throw ConfigError(keyPath(file, where.substr(0, where.size() - 1)) + ": want a map");
    const std::string name = stringAt(item, "name", file, where);
    if (name.empty()) throw ConfigError(keyPath(file, where + "name") + ": Required value");
    const json* body = objectAt(item, inner, file, where);
    into.try_emplace(name, Entry{body ? *body : json::object(), file});
  }
}

void mergeFile(const std::string& path, Merged& merged) {
  const std::optional<std::string> text = readFile(path);
  if (!text) throw ConfigError(path + ": cannot read the kubeconfig");
  const yaml::ParseResult parsed = yaml::parseStream(*text);
  if (parsed.error) {
    throw ConfigError(path + ":" + std::to_string(parsed.error->position.line) + ":" +
                      std::to_string(parsed.error->position.column) + ": " + parsed.error->message);
  }
  merged.files.push_back(path);
  if (parsed.documents.empty() || parsed.documents.front().value.is_null()) return;  // kubectl: an empty file is fine
  if (parsed.documents.size() > 1) throw ConfigError(path + ": more than one YAML document");
  const json& doc = parsed.documents.front().value;
  if (!doc.is_object()) throw ConfigError(path + ": a kubeconfig is a map (apiVersion: v1, kind: Config)");
  mergeList(doc, "clusters", "cluster", path, merged.clusters);
  mergeList(doc, "users", "user", path, merged.users);
  mergeList(doc, "contexts", "context", path, merged.contexts);
  if (merged.currentContext.empty()) merged.currentContext = stringAt(doc, "current-context", path, "");
}

// A PEM from "<key>-data" (base64) or "<key>" (a file); "" when neither is set.
std::string pemFrom(const Entry& entry, const char* key, const std::string& where) {
  const std::string dataKey = std::string(key) + "-data";
  const std::string data = stringAt(entry.body, dataKey.c_str(), entry.file, where);
  if (!data.empty()) {
    std::optional<std::string> decoded = decodeBase64(data);
    if (!decoded) throw ConfigError(keyPath(entry.file, where + dataKey) + ": not base64");
    return *decoded;
  }
  const std::string file = stringAt(entry.body, key, entry.file, where);
  if (file.empty()) return "";
  const std::string path = resolvePath(file, dirOf(entry.file));
  std::optional<std::string> pem = readFile(path);
  if (!pem) throw ConfigError(keyPath(entry.file, where + key) + ": cannot read " + path);
  return *pem;
}

ExecConfig execFrom(const Entry& user, const json& exec, const std::string& where) {
  const std::string& file = user.file;
  ExecConfig out;
  out.apiVersion = stringAt(exec, "apiVersion", file, where);
  if (out.apiVersion != "client.authentication.k8s.io/v1" && out.apiVersion != "client.authentication.k8s.io/v1beta1") {
    throw ConfigError(keyPath(file, where + "apiVersion") + ": Unsupported value: \"" + out.apiVersion +
                      "\": supported values: \"client.authentication.k8s.io/v1\", \"client.authentication.k8s.io/v1beta1\"");
  }
  out.command = stringAt(exec, "command", file, where);
  if (out.command.empty()) throw ConfigError(keyPath(file, where + "command") + ": Required value");
  if (out.command.find('/') != std::string::npos) out.command = resolvePath(out.command, dirOf(file));
  if (auto args = exec.find("args"); args != exec.end() && !args->is_null()) {
    if (!args->is_array()) throw ConfigError(keyPath(file, where + "args") + ": want a list of strings");
    for (const json& a : *args) {
      if (!a.is_string()) throw ConfigError(keyPath(file, where + "args") + ": want a list of strings");
      out.args.push_back(a.get<std::string>());
    }
  }
  if (auto env = exec.find("env"); env != exec.end() && !env->is_null()) {
    if (!env->is_array()) throw ConfigError(keyPath(file, where + "env") + ": want a list of {name, value}");
    for (std::size_t i = 0; i < env->size(); ++i) {
      const std::string at = where + "env[" + std::to_string(i) + "].";
      if (!(*env)[i].is_object()) throw ConfigError(keyPath(file, at) + ": want {name, value}");
      out.env.emplace_back(stringAt((*env)[i], "name", file, at), stringAt((*env)[i], "value", file, at));
    }
  }
  const std::string mode = stringAt(exec, "interactiveMode", file, where);
  if (!mode.empty() && mode != "Never" && mode != "IfAvailable" && mode != "Always") {
    throw ConfigError(keyPath(file, where + "interactiveMode") + ": Unsupported value: \"" + mode +
                      "\": supported values: \"Never\", \"IfAvailable\", \"Always\"");
  }
  if (!mode.empty()) out.interactiveMode = mode;
  if (auto p = exec.find("provideClusterInfo"); p != exec.end() && p->is_boolean()) out.provideClusterInfo = p->get<bool>();
  out.installHint = stringAt(exec, "installHint", file, where);
  return out;
}

void readUser(const Entry& user, const std::string& name, ClientConfig& out) {
  const std::string where = "users[" + name + "].user.";
  if (!stringAt(user.body, "username", user.file, where).empty() || user.body.contains("auth-provider")) {
    throw ConfigError(keyPath(user.file, where) +
                      " basic auth and auth-provider are not supported (the API server dropped basic auth in 1.19; "
                      "auth-provider plugins were replaced by exec plugins such as gke-gcloud-auth-plugin)");
  }
  out.tls.clientCertPem = pemFrom(user, "client-certificate", where);
  out.tls.clientKeyPem = pemFrom(user, "client-key", where);
  out.credentials.token = stringAt(user.body, "token", user.file, where);
  const std::string tokenFile = stringAt(user.body, "tokenFile", user.file, where);
  if (!tokenFile.empty()) out.credentials.tokenFile = resolvePath(tokenFile, dirOf(user.file));
  if (const json* exec = objectAt(user.body, "exec", user.file, where)) {
    out.credentials.exec = execFrom(user, *exec, where + "exec.");
  }
}

void readCluster(const Entry& cluster, const std::string& name, ClientConfig& out) {
  const std::string where = "clusters[" + name + "].cluster.";
  out.server = stringAt(cluster.body, "server", cluster.file, where);
  if (out.server.empty()) throw ConfigError(keyPath(cluster.file, where + "server") + ": Required value");
  if (std::string error = parseServerUrl(out.server, out.url); !error.empty()) {
    throw ConfigError(keyPath(cluster.file, where + "server") + ": " + error);
  }
  out.tls.caPem = pemFrom(cluster, "certificate-authority", where);
  if (auto skip = cluster.body.find("insecure-skip-tls-verify"); skip != cluster.body.end() && !skip->is_null()) {
    if (!skip->is_boolean()) throw ConfigError(keyPath(cluster.file, where + "insecure-skip-tls-verify") + ": want true or false");
    out.tls.insecureSkipVerify = skip->get<bool>();
  }
  out.tls.serverName = stringAt(cluster.body, "tls-server-name", cluster.file, where);
  if (!stringAt(cluster.body, "proxy-url", cluster.file, where).empty()) {
    throw ConfigError(keyPath(cluster.file, where + "proxy-url") + ": proxies are not supported");
  }
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

ClientConfig select(const Merged& merged, const ConfigRequest& request) {
  const std::string files = [&] {
    std::string s;
    for (const std::string& f : merged.files) s += (s.empty() ? "" : ":") + f;
    return s;
  }();
  const std::string contextName = request.context.value_or(merged.currentContext);
  if (contextName.empty()) throw ConfigError(files + ": no current-context (pass --context NAME)");
  auto context = merged.contexts.find(contextName);
  if (context == merged.contexts.end()) throw ConfigError(files + ": context \"" + contextName + "\" not found");
  const std::string where = "contexts[" + contextName + "].context.";
  const std::string clusterName = stringAt(context->second.body, "cluster", context->second.file, where);
  const std::string userName = stringAt(context->second.body, "user", context->second.file, where);
  auto cluster = merged.clusters.find(clusterName);
  if (cluster == merged.clusters.end()) {
    throw ConfigError(keyPath(context->second.file, where + "cluster") + ": cluster \"" + clusterName + "\" not found");
  }
  ClientConfig out;
  readCluster(cluster->second, clusterName, out);
  if (!userName.empty()) {
    auto user = merged.users.find(userName);
    if (user == merged.users.end()) {
      throw ConfigError(keyPath(context->second.file, where + "user") + ": user \"" + userName + "\" not found");
    }
    readUser(user->second, userName, out);
  }
  const std::string ns = stringAt(context->second.body, "namespace", context->second.file, where);
  if (!ns.empty()) out.namespaceName = ns;
  out.describe = "kubeconfig " + files + ", context " + contextName;
  return out;
}

}  // namespace

Environment Environment::process() {
  Environment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return env;
}

std::optional<ClientConfig> loadKubeconfig(const ConfigRequest& request, const Environment& env) {
  Merged merged;
  if (request.kubeconfig) {
    mergeFile(*request.kubeconfig, merged);  // an explicit file must exist
  } else if (std::optional<std::string> list = env.getenv("KUBECONFIG"); list && !list->empty()) {
    for (const std::string& path : splitList(*list)) {
      if (readFile(path)) mergeFile(path, merged);  // kubectl skips the files of the list that do not exist
    }
  } else if (std::optional<std::string> home = env.getenv("HOME")) {
    const std::string path = *home + "/.kube/config";
    if (readFile(path)) mergeFile(path, merged);
  }
  if (merged.files.empty()) return std::nullopt;
  return select(merged, request);
}

std::optional<ClientConfig> inClusterConfig(const Environment& env) {
  const std::optional<std::string> host = env.getenv("KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = env.getenv("KUBERNETES_SERVICE_PORT");
  const std::string tokenFile = env.serviceAccountDir + "/token";
  if (!host || host->empty() || !readFile(tokenFile)) return std::nullopt;
  ClientConfig out;
  const bool ipv6 = host->find(':') != std::string::npos;
  out.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + port.value_or("443");
  if (std::string error = parseServerUrl(out.server, out.url); !error.empty()) {
    throw ConfigError("KUBERNETES_SERVICE_HOST/PORT: " + error);
  }
  const std::string caFile = env.serviceAccountDir + "/ca.crt";
  std::optional<std::string> ca = readFile(caFile);
  if (!ca) throw ConfigError("in-cluster: cannot read the service account's CA " + caFile);
  out.tls.caPem = *ca;
  out.credentials.tokenFile = tokenFile;
  // The pod's own namespace, as client-go's in-cluster loader reads it.
  if (std::optional<std::string> ns = readFile(env.serviceAccountDir + "/namespace")) {
    while (!ns->empty() && (ns->back() == '\n' || ns->back() == ' ')) ns->pop_back();
    if (!ns->empty()) out.namespaceName = *ns;
  }
  out.describe = "in-cluster service account (" + out.server + ")";
  return out;
}

std::optional<ClientConfig> findClientConfig(const ConfigRequest& request, const Environment& env) {
  if (request.kubeconfig || env.getenv("KUBECONFIG").value_or("") != "") {
    if (auto config = loadKubeconfig(request, env)) return config;
  }
  if (!request.context) {
    if (auto config = inClusterConfig(env)) return config;
  }
  if (auto config = loadKubeconfig(request, env)) return config;
  if (request.context) throw ConfigError("--context " + *request.context + ": no kubeconfig found");
  return std::nullopt;
}

std::optional<std::string> decodeBase64(std::string_view text) {
  std::string out;
  unsigned value = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    int digit;
    if (c >= 'A' && c <= 'Z') digit = c - 'A';
    else if (c >= 'a' && c <= 'z') digit = c - 'a' + 26;
    else if (c >= '0' && c <= '9') digit = c - '0' + 52;
    else if (c == '+') digit = 62;
    else if (c == '/') digit = 63;
    else if (c == '=') { padding = true; continue; }
    else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    else return std::nullopt;
    if (padding) return std::nullopt;  // data after '='
    value = (value << 6) | static_cast<unsigned>(digit);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace gpuguard::cluster
