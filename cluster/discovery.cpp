#include "cluster/discovery.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace gpuguard::cluster {

using nlohmann::json;

namespace {

const json& member(const json& object, const char* key, json::value_t type, const std::string& where) {
  if (!object.is_object() || !object.contains(key) || object[key].type() != type) {
    const char* want = type == json::value_t::array ? "a list" : type == json::value_t::object ? "an object" : "a string";
    throw std::runtime_error(where + ": \"" + key + "\" is missing or not " + want);
  }
  return object[key];
}

std::string text(const json& object, const char* key, const std::string& where) {
  return member(object, key, json::value_t::string, where).get<std::string>();
}

// One group's resources: each plural from the first version (preferred first) that serves it.
struct GroupReader {
  ApiClient& api;
  const std::atomic<bool>* cancel;

  // "" when every version was read (or is gone: 404), else why not.
  std::string read(const GroupVersions& group, std::vector<ServedResource>& out) {
    std::set<std::string> seen;
    for (const std::string& version : group.versions) {
      const std::string path = group.group.empty() ? "/api/" + version : "/apis/" + group.group + "/" + version;
      const ApiResult answer = api.getPath(path, cancel);
      if (answer.notFound()) continue;  // removed between /apis and now
      if (!answer.ok()) return "GET " + path + ": " + answer.error;
      try {
        for (ServedResource& r : parseResourceList(answer.body, group.group, version)) {
          if (seen.insert(r.plural).second) out.push_back(std::move(r));
        }
      } catch (const std::runtime_error& e) {
        return "GET " + path + ": " + e.what();
      }
    }
    return "";
  }
};

}  // namespace

bool ServedResource::has(const std::string& verb) const {
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

const ServedResource* Discovery::find(const std::string& group, const std::string& plural) const {
  for (const ServedResource& r : resources) {
    if (r.group == group && r.plural == plural) return &r;
  }
  return nullptr;
}

std::vector<GroupVersions> parseGroupList(const json& document) {
  std::vector<GroupVersions> groups;
  for (const json& entry : member(document, "groups", json::value_t::array, "the APIGroupList")) {
    GroupVersions group;
    group.group = text(entry, "name", "an APIGroup");
    const std::string where = "the APIGroup " + group.group;
    std::string preferred;
    if (entry.contains("preferredVersion")) {
      preferred = text(member(entry, "preferredVersion", json::value_t::object, where), "version", where);
      group.versions.push_back(preferred);
    }
    for (const json& v : member(entry, "versions", json::value_t::array, where)) {
      std::string version = text(v, "version", where);
      if (version != preferred) group.versions.push_back(std::move(version));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<ServedResource> parseResourceList(const json& document, const std::string& group,
                                              const std::string& version) {
  const std::string where = "the APIResourceList of " + (group.empty() ? version : group + "/" + version);
  std::vector<ServedResource> resources;
  for (const json& entry : member(document, "resources", json::value_t::array, where)) {
    ServedResource r;
    r.plural = text(entry, "name", where);
    if (r.plural.find('/') != std::string::npos) continue;  // a subresource: pods/status, pods/log
    r.group = group;
    r.version = version;
    r.kind = text(entry, "kind", where + " " + r.plural);
    r.namespaced = entry.contains("namespaced") && entry["namespaced"].is_boolean() && entry["namespaced"].get<bool>();
    if (entry.contains("verbs") && entry["verbs"].is_array()) {
      for (const json& verb : entry["verbs"]) {
        if (verb.is_string()) r.verbs.push_back(verb.get<std::string>());
      }
    }
    resources.push_back(std::move(r));
  }
  return resources;
}

Discovery discover(ApiClient& api, const std::vector<std::string>& groups, const std::atomic<bool>* cancel) {
  Discovery discovery;
  const std::set<std::string> wanted(groups.begin(), groups.end());
  const auto asked = [&](const std::string& g) { return wanted.empty() || wanted.count(g) > 0; };
  GroupReader reader{api, cancel};
  std::vector<GroupVersions> toRead;
  if (asked("")) toRead.push_back({"", {"v1"}});
  if (wanted.empty() || wanted.size() > (wanted.count("") ? 1u : 0u)) {
    const ApiResult list = api.getPath("/apis", cancel);
    try {
      if (!list.ok()) throw std::runtime_error(list.error);
      for (GroupVersions& g : parseGroupList(list.body)) {
        if (asked(g.group)) toRead.push_back(std::move(g));
      }
    } catch (const std::runtime_error& e) {
      for (const std::string& g : wanted.empty() ? std::set<std::string>{"*"} : wanted) {
        if (!g.empty()) discovery.errors[g] = std::string("GET /apis: ") + e.what();
      }
    }
  }
  for (const GroupVersions& group : toRead) {
    std::vector<ServedResource> served;
    if (std::string error = reader.read(group, served); !error.empty()) {
      discovery.errors[group.group] = std::move(error);
      continue;
    }
    for (ServedResource& r : served) discovery.resources.push_back(std::move(r));
  }
  return discovery;
}

}  // namespace gpuguard::cluster
