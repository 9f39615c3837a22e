// The object side of FakeApiServer (cluster_fake_api_server.h): objects kept
// by path, answered as the API server answers GET, POST, PUT, server-side
// apply PATCH and DELETE (uid, resourceVersion, 404, 409 AlreadyExists,
// Conflict, failed preconditions), and collections listed with label
// selectors. Not a real API server: apply replaces the whole object (gpuguard
// applies whole objects), lists come in one page.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace gpuguard::testing {

struct FakeAnswer {
  int status = 200;
  nlohmann::json body;
};

class FakeObjectStore {
 public:
  using json = nlohmann::json;

  // "/apis/g/v/namespaces/ns/plural/name" -> "/apis/g/v/plural" (the all-namespaces collection).
  static std::string allNamespaces(const std::string& collection) {
    const std::size_t ns = collection.find("/namespaces/");
    if (ns == std::string::npos) return collection;
    const std::size_t plural = collection.find('/', ns + 12);
    if (plural == std::string::npos) return collection;  // "/api/v1/namespaces/x": the Namespace itself
    return collection.substr(0, ns) + collection.substr(plural);
  }
  static std::string parentOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

  static FakeAnswer status(int code, const std::string& reason, const std::string& message) {
    return {code, {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"}, {"code", code},
                   {"reason", reason}, {"message", message}}};
  }

  // Stores `object` at `path` as the server would (uid, resourceVersion).
  json put(const std::string& path, json object) {
    json& meta = object["metadata"];
    if (!meta.contains("uid")) meta["uid"] = "uid-" + std::to_string(++uids_);
    meta["resourceVersion"] = std::to_string(++resourceVersion_);
    objects_[path] = object;
    return object;
  }
  std::optional<json> get(const std::string& path) const {
    auto found = objects_.find(path);
    if (found == objects_.end()) return std::nullopt;
    return found->second;
  }
  void erase(const std::string& path) { objects_.erase(path); }
  void serve(const std::string& collection) { served_[collection] = true; }
  std::size_t size() const { return objects_.size(); }
  std::string resourceVersion() const { return std::to_string(resourceVersion_); }

  // The answer to a GET of `path`, or nullopt when it names nothing stored.
  std::optional<FakeAnswer> read(const std::string& path, const std::string& labelSelector) const {
    if (auto object = get(path)) return FakeAnswer{200, *object};
    bool collection = served_.count(path) > 0;
    json items = json::array();
    for (const auto& [p, object] : objects_) {
      const std::string parent = parentOf(p);
      if (parent != path && allNamespaces(parent) != path) continue;
      collection = true;
      if (matches(object, labelSelector)) items.push_back(object);
    }
    if (!collection) return std::nullopt;
    return FakeAnswer{200, {{"kind", "List"}, {"metadata", {{"resourceVersion", resourceVersion()}}}, {"items", items}}};
  }

  FakeAnswer create(const std::string& collection, const json& object) {
    if (!object.is_object() || !object.contains("metadata") || !object["metadata"].contains("name")) {
      return status(422, "Invalid", "metadata.name: Required value: name or generateName is required");
    }
    const std::string name = object["metadata"]["name"];
    const std::string path = collection + "/" + name;
    if (objects_.count(path)) return status(409, "AlreadyExists", "\"" + name + "\" already exists");
    return {201, put(path, object)};
  }

  FakeAnswer replace(const std::string& path, json object) {
    auto found = objects_.find(path);
    if (found == objects_.end()) return notFound(path);
    const json& stored = found->second["metadata"];
    const std::string sent = object["metadata"].value("resourceVersion", "");
    if (!sent.empty() && sent != stored.value("resourceVersion", "")) {
      return status(409, "Conflict",
                    "Operation cannot be fulfilled on " + path +
                        ": the object has been modified; please apply your changes to the latest version and try again");
    }
    object["metadata"]["uid"] = stored["uid"];
    return {200, put(path, std::move(object))};
  }

  // Server-side apply of a whole object: created when absent; unchanged
  // content keeps its resourceVersion (the API server writes nothing then).
  FakeAnswer apply(const std::string& path, json object) {
    auto found = objects_.find(path);
    if (found == objects_.end()) return {201, put(path, std::move(object))};
    object["metadata"]["uid"] = found->second["metadata"]["uid"];
    object["metadata"]["resourceVersion"] = found->second["metadata"]["resourceVersion"];
    if (object == found->second) return {200, found->second};
    return {200, put(path, std::move(object))};
  }

  FakeAnswer remove(const std::string& path, const json& options) {
    auto found = objects_.find(path);
    if (found == objects_.end()) return notFound(path);
    const std::string uid = found->second["metadata"].value("uid", "");
    if (options.is_object() && options.contains("preconditions") && options["preconditions"].contains("uid") &&
        options["preconditions"]["uid"] != uid) {
      return status(409, "Conflict",
                    "Precondition failed: UID in precondition: " + options["preconditions"]["uid"].get<std::string>() +
                        ", UID in object meta: " + uid);
    }
    json gone = std::move(found->second);
    objects_.erase(found);
    return {200, gone};
  }

 private:
  static FakeAnswer notFound(const std::string& path) {
    return status(404, "NotFound", "\"" + path.substr(path.rfind('/') + 1) + "\" not found");
  }

  // "a=b,c!=d,e": equality, inequality and existence, as the API server reads them.
  static bool matches(const json& object, const std::string& selector) {
    const json labels = object.contains("metadata") ? object["metadata"].value("labels", json::object()) : json::object();
    std::size_t start = 0;
    while (start < selector.size()) {
      std::size_t end = selector.find(',', start);
      if (end == std::string::npos) end = selector.size();
      const std::string term = selector.substr(start, end - start);
      start = end + 1;
      const std::size_t ne = term.find("!=");
      const std::size_t eq = term.find('=');
      if (ne != std::string::npos) {
        if (labels.value(term.substr(0, ne), "") == term.substr(ne + 2)) return false;
      } else if (eq != std::string::npos) {
        const std::size_t value = term.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
        if (!labels.contains(term.substr(0, eq)) || labels[term.substr(0, eq)] != term.substr(value)) return false;
      } else if (!labels.contains(term)) {
        return false;
      }
    }
    return true;
  }

  std::map<std::string, json> objects_;
  std::map<std::string, bool> served_;
  long resourceVersion_ = 100;
  long uids_ = 0;
};

}  // namespace gpuguard::testing
