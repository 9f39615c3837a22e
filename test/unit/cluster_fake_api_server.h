// A Kubernetes API server in the test process (cpp-httplib, an implementation
// independent of cluster/http_client.cpp): lists answered from what the test
// set, watches that stream the lines the test pushes, drop, end, or answer an
// HTTP error; objects stored and written with GET, POST, PUT, PATCH (apply)
// and DELETE (cluster_fake_object_store.h); failures injected per request; a
// log of every request and of every write's body.
//
//   FakeApiServer api;
//   api.setList("/api/v1/nodes", 200, {{"metadata", {{"resourceVersion", "5"}}}, {"items", ...}});
//   api.push("/api/v1/nodes", R"({"type":"ADDED","object":{...}})");
//   api.push("/api/v1/nodes", FakeApiServer::kDrop);   // the connection closes mid-stream
//   api.putObject("/apis/coordination.k8s.io/v1/namespaces/gg/leases/gpuguard-audit", lease);
//   api.failNext("PUT", "/apis/coordination.k8s.io/v1/namespaces/gg/leases/gpuguard-audit", 500);
//
// The request log: "PATH?QUERY auth=..." for a GET (params sorted), "VERB PATH?QUERY auth=..." otherwise.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "test/unit/cluster_fake_object_store.h"

namespace gpuguard::testing {

class FakeApiServer {
 public:
  static constexpr const char* kDrop = "!drop";  // close the watch without ending the chunked body
  static constexpr const char* kEnd = "!end";    // end the watch cleanly (its timeoutSeconds passed)

  // A write as it reached the server.
  struct Write {
    std::string method;
    std::string target;       // path?query
    std::string contentType;
    nlohmann::json body;      // null when the body is not JSON
  };

  FakeApiServer() {
    const auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Put(".*", handler);
    server_.Patch(".*", handler);
    server_.Delete(".*", handler);
    // Like the API server (Go): no Nagle delay, and a thread for every open
    // connection, so idle keep-alive connections never hold up a watch; an
    // idle one is closed after 1 s, which bounds how long stop() waits for it.
    server_.set_tcp_nodelay(true);
    server_.set_keep_alive_timeout(1);
    server_.new_task_queue = [] { return new httplib::ThreadPool(64); };
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeApiServer() { stop(); }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // Every list of `path` answers `status` with `body` (pages: see setPages).
  void setList(const std::string& path, int status, nlohmann::json body) {
    std::lock_guard lock(mutex_);
    pages_[path] = {{status, std::move(body)}};
  }
  // Page i answers the request whose continue token is "page-i" (the first: none).
  void setPages(const std::string& path, std::vector<nlohmann::json> pages) {
    std::lock_guard lock(mutex_);
    pages_[path].clear();
    for (std::size_t i = 0; i < pages.size(); ++i) {
      if (i + 1 < pages.size()) pages[i]["metadata"]["continue"] = "page-" + std::to_string(i + 1) + "/&=";
      pages_[path].push_back({200, std::move(pages[i])});
    }
  }
  // The next watches of `path` answer this HTTP status instead of streaming.
  void failWatches(const std::string& path, int status) {
    std::lock_guard lock(mutex_);
    watchStatus_[path] = status;
  }
  void push(const std::string& path, std::string line) {
    {
      std::lock_guard lock(mutex_);
      lines_[path].push_back(std::move(line));
    }
    changed_.notify_all();
  }

  // Stores an object as if created (uid and resourceVersion assigned when
  // absent); the answer is the stored object.
  nlohmann::json putObject(const std::string& path, nlohmann::json object) {
    std::lock_guard lock(mutex_);
    return store_.put(path, std::move(object));
  }
  std::optional<nlohmann::json> object(const std::string& path) const {
    std::lock_guard lock(mutex_);
    return store_.get(path);
  }
  void deleteObject(const std::string& path) {
    std::lock_guard lock(mutex_);
    store_.erase(path);
  }
  std::size_t objectCount() const {
    std::lock_guard lock(mutex_);
    return store_.size();
  }
  // An empty collection answers an empty list, not 404 (the resource is served).
  void serveCollection(const std::string& path) {
    std::lock_guard lock(mutex_);
    store_.serve(path);
  }
  // The next `times` requests `method path` (no query) answer `status` with a metav1.Status.
  void failNext(const std::string& method, const std::string& path, int status, int times = 1) {
    std::lock_guard lock(mutex_);
    failures_[{method, path}] = {status, times};
  }

  std::vector<std::string> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::vector<Write> writes() const {
    std::lock_guard lock(mutex_);
    return writes_;
  }
  // How many TCP connections the requests came on (keep-alive reuses them).
  std::size_t connections() const {
    std::lock_guard lock(mutex_);
    return clientPorts_.size();
  }
  int watchesOpen() const {
    std::lock_guard lock(mutex_);
    return watchesOpen_;
  }
  // Waits until `n` watches are open (at most 5 s).
  bool waitForWatches(int n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (watchesOpen() != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }
  // Waits until `predicate(requests)` holds (at most 5 s).
  template <typename Predicate>
  bool waitFor(Predicate predicate) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(mutex_);
        if (predicate(requests_)) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  static std::string target(const httplib::Request& req) {
    std::string t = req.path;
    char sep = '?';
    for (const auto& [k, v] : req.params) {
      t += sep + k + "=" + v;
      sep = '&';
    }
    return t;
  }

  static void answer(httplib::Response& res, const FakeAnswer& a) {
    res.status = a.status;
    res.set_content(a.body.dump(), "application/json");
  }

  // A failure the test asked for, consumed.
  bool injectedFailure(const httplib::Request& req, httplib::Response& res) {
    auto found = failures_.find({req.method, req.path});
    if (found == failures_.end() || found->second.second <= 0) return false;
    --found->second.second;
    const int code = found->second.first;
    answer(res, FakeObjectStore::status(code, code == 409 ? "Conflict" : "InternalError", "injected by the test"));
    return true;
  }

  void write(const httplib::Request& req, httplib::Response& res) {
    const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    const std::string contentType = req.get_header_value("Content-Type");
    writes_.push_back({req.method, target(req), contentType, body.is_discarded() ? nlohmann::json() : body});
    if (injectedFailure(req, res)) return;
    if (body.is_discarded() && !(req.method == "DELETE" && req.body.empty())) {
      return answer(res, FakeObjectStore::status(400, "BadRequest", "the body is not JSON"));
    }
    if (req.method == "POST") return answer(res, store_.create(req.path, body));
    if (req.method == "PUT") return answer(res, store_.replace(req.path, body));
    if (req.method == "DELETE") return answer(res, store_.remove(req.path, body));
    if (contentType != "application/apply-patch+yaml") {
      return answer(res, FakeObjectStore::status(415, "UnsupportedMediaType", "the fake serves only apply patches"));
    }
    if (!req.has_param("fieldManager")) {
      return answer(res, FakeObjectStore::status(400, "BadRequest", "PATCH, fieldManager: Required value: is required for apply patch"));
    }
    answer(res, store_.apply(req.path, body));
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock lock(mutex_);
    clientPorts_.insert(req.remote_port);
    requests_.push_back((req.method == "GET" ? "" : req.method + " ") + target(req) +
                        " auth=" + req.get_header_value("Authorization"));
    if (req.method != "GET") return write(req, res);
    if (req.has_param("watch")) return watch(req, res, lock);
    if (injectedFailure(req, res)) return;
    auto found = pages_.find(req.path);
    if (found == pages_.end()) {
      if (auto stored = store_.read(req.path, req.get_param_value("labelSelector"))) return answer(res, *stored);
      res.status = 404;
      res.set_content(R"({"kind":"Status","code":404,"message":"the server could not find the requested resource"})",
                      "application/json");
      return;
    }
    std::size_t page = 0;
    if (req.has_param("continue")) page = std::stoul(req.get_param_value("continue").substr(5));
    const auto& [status, body] = found->second.at(std::min(page, found->second.size() - 1));
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }

  void watch(const httplib::Request& req, httplib::Response& res, std::unique_lock<std::mutex>& lock) {
    if (auto failing = watchStatus_.find(req.path); failing != watchStatus_.end()) {
      res.status = failing->second;
      res.set_content(R"({"kind":"Status","code":)" + std::to_string(failing->second) + R"(,"message":"refused by the test"})",
                      "application/json");
      return;
    }
    ++watchesOpen_;
    lock.unlock();
    const std::string path = req.path;
    res.set_chunked_content_provider(
        "application/json",
        [this, path](std::size_t, httplib::DataSink& sink) {
          std::unique_lock l(mutex_);
          changed_.wait_for(l, std::chrono::milliseconds(50), [&] { return stopping_ || !lines_[path].empty(); });
          if (stopping_) return false;
          while (!lines_[path].empty()) {
            std::string line = std::move(lines_[path].front());
            lines_[path].pop_front();
            if (line == kDrop) return false;
            if (line == kEnd) {
              sink.done();
              return true;
            }
            line += "\n";
            if (!sink.write(line.data(), line.size())) return false;
          }
          return true;
        },
        [this](bool) {
          std::lock_guard l(mutex_);
          --watchesOpen_;
        });
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::map<std::string, std::vector<std::pair<int, nlohmann::json>>> pages_;
  std::map<std::string, int> watchStatus_;
  std::map<std::string, std::deque<std::string>> lines_;
  std::vector<std::string> requests_;
  std::vector<Write> writes_;
  std::set<int> clientPorts_;
  FakeObjectStore store_;
  std::map<std::pair<std::string, std::string>, std::pair<int, int>> failures_;  // (method, path) -> (status, times)
  int watchesOpen_ = 0;
};

}  // namespace gpuguard::testing
