// A Kubernetes API server in the test process (cpp-httplib, an implementation
// independent of cluster/http_client.cpp): lists answered from what the test
// set, watches that stream the lines the test pushes, drop, end, or answer an
// HTTP error, and a log of every request.
//
//   FakeApiServer api;
//   api.setList("/api/v1/nodes", 200, {{"metadata", {{"resourceVersion", "5"}}}, {"items", ...}});
//   api.push("/api/v1/nodes", R"({"type":"ADDED","object":{...}})");
//   api.push("/api/v1/nodes", FakeApiServer::kDrop);   // the connection closes mid-stream
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuguard::testing {

class FakeApiServer {
 public:
  static constexpr const char* kDrop = "!drop";  // close the watch without ending the chunked body
  static constexpr const char* kEnd = "!end";    // end the watch cleanly (its timeoutSeconds passed)

  FakeApiServer() {
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); });
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

  std::vector<std::string> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
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

  void handle(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock lock(mutex_);
    requests_.push_back(target(req) + " auth=" + req.get_header_value("Authorization"));
    if (req.has_param("watch")) return watch(req, res, lock);
    auto found = pages_.find(req.path);
    if (found == pages_.end()) {
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
  int watchesOpen_ = 0;
};

}  // namespace gpuguard::testing
