// The judging pool of HttpsServer (see https_server_internal.h): a queue of
// large requests and the threads that run the handler on them. Each answer
// goes back to the loop that owns the connection, which writes it.
#include <exception>

#include "webhook/https_server_internal.h"

namespace gpuguard::webhook::https_detail {

bool callHandler(const Handler& handler, const HttpRequest& request, HttpResponse& response, std::string& failure) {
  try {
    response = handler(request);
    return true;
  } catch (const std::exception& e) {
    failure = std::string("handler failed: ") + e.what();
  } catch (...) {
    failure = "handler failed";
  }
  return false;
}

JudgePool::JudgePool(const Handler& handler, unsigned threads) : handler_(handler) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

JudgePool::~JudgePool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void JudgePool::submit(std::unique_ptr<Job> job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void JudgePool::work() {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to judge
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job->ok = callHandler(handler_, job->request, job->response, job->failure);
    // The request's memory (up to the body limit) is not needed any more.
    job->request = HttpRequest();
    EventLoop* loop = job->loop;
    loop->complete(std::move(job));
  }
}

}  // namespace gpuguard::webhook::https_detail
