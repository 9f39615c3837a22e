// The judging pool of HttpsServer (see server_state.h): a bounded
// queue of large requests and the threads that run the handler on them. Each
// answer goes back to the loop that owns the connection, which writes it (or
// frees the connection, when the answer is not wanted any more).
#include <algorithm>
#include <exception>

#include "https/internal/request_deadline.h"
#include "https/internal/server_state.h"

namespace gpuguard::webhook::https_detail {

namespace {
constexpr std::size_t kDefaultQueuedPerThread = 4;
}  // namespace

Clock::time_point requestDeadline(const HttpRequest& request, Clock::time_point began,
                                  std::chrono::milliseconds fallback) {
  // The longest timeoutSeconds the API server accepts for a webhook: a
  // larger ?timeout= does not come from it.
  constexpr std::chrono::nanoseconds kLongest = std::chrono::seconds(30);
  std::chrono::nanoseconds wait = fallback;
  if (auto timeout = timeoutParameter(request.target)) wait = std::min(*timeout, kLongest);
  return began + std::chrono::duration_cast<Clock::duration>(wait);
}

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

JudgePool::JudgePool(const Handler& handler, unsigned threads, std::size_t maxQueued)
    : handler_(handler), maxQueued_(maxQueued ? maxQueued : kDefaultQueuedPerThread * threads) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

// By now run() has returned and every connection is closed: what is still
// queued is dropped, what is being judged is waited for (a handler cannot be
// interrupted; it does not outlive the objects it uses).
JudgePool::~JudgePool() {
  std::deque<std::unique_ptr<Job>> left;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    left.swap(queue_);
  }
  ready_.notify_all();
  for (auto& job : left) {
    job->abandon(Abandon::Shutdown);
    finish(std::move(job));
  }
  for (auto& t : threads_) t.join();
}

bool JudgePool::trySubmit(std::unique_ptr<Job>& job) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= maxQueued_) return false;
    queue_.push_back(std::move(job));
  }
  ready_.notify_one();
  return true;
}

JudgeStats JudgePool::stats() const {
  JudgeStats s;
  {
    std::lock_guard lock(mutex_);
    s.queued = queue_.size();
  }
  s.judging = judging_.load(std::memory_order_relaxed);
  return s;
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
      judging_.fetch_add(1, std::memory_order_relaxed);  // under the lock: queued + judging never dips
    }
    // Nobody waits for this answer any more: do not spend the CPU on it. (The
    // loop counts what it receives back, judged or not.)
    if (job->unwanted(Clock::now()) == Abandon::None) {
      job->ok = callHandler(handler_, job->request, job->response, job->failure);
      job->judged = true;
    }
    judging_.fetch_sub(1, std::memory_order_relaxed);
    finish(std::move(job));
  }
}

void JudgePool::finish(std::unique_ptr<Job> job) {
  // The request's memory (up to the body limit) is not needed any more.
  job->request = HttpRequest();
  EventLoop* loop = job->loop;
  loop->complete(std::move(job));
}

}  // namespace gpuguard::webhook::https_detail
