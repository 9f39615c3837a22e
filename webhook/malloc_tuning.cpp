#include "webhook/malloc_tuning.h"

#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstdlib>
#include <string>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define GPUGUARD_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPUGUARD_SANITIZED 1
#endif
#if defined(__GLIBC__) && !defined(GPUGUARD_SANITIZED)
#define GPUGUARD_TUNE_MALLOC 1
#endif

namespace gpuguard::webhook {

bool mallocTuningSupported() {
#ifdef GPUGUARD_TUNE_MALLOC
  return true;
#else
  return false;
#endif
}

void reexecWithMallocTunables(char** argv) {
#ifdef GPUGUARD_TUNE_MALLOC
  const char* inherited = std::getenv("GLIBC_TUNABLES");
  const std::string before = inherited ? inherited : "";
  if (before.find("glibc.malloc.tcache_count") != std::string::npos) return;
  const std::string tuned = before.empty() ? kMallocTunable : before + ":" + kMallocTunable;
  if (setenv("GLIBC_TUNABLES", tuned.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // No /proc (or no exec permission): undo, and run with the defaults.
  if (inherited) setenv("GLIBC_TUNABLES", before.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
#else
  (void)argv;
#endif
}

void reserveMallocArenas(unsigned extraThreads) {
#ifdef GPUGUARD_TUNE_MALLOC
  if (extraThreads == 0) return;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const unsigned glibcDefault = 8u * static_cast<unsigned>(cores > 0 ? cores : 2);
  mallopt(M_ARENA_MAX, static_cast<int>(glibcDefault + extraThreads));
#else
  (void)extraThreads;
#endif
}

void releaseFreedMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

MemoryReleaser::MemoryReleaser() : thread_([this] { run(); }) {}

MemoryReleaser::~MemoryReleaser() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void MemoryReleaser::request() {
  {
    std::lock_guard lock(mutex_);
    pending_ = true;
  }
  wake_.notify_one();
}

std::uint64_t MemoryReleaser::releases() const {
  std::lock_guard lock(mutex_);
  return releases_;
}

void MemoryReleaser::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return pending_ || stopping_; });
    if (stopping_) return;
    pending_ = false;
    lock.unlock();
    releaseFreedMemory();
    lock.lock();
    ++releases_;
  }
}

}  // namespace gpuguard::webhook
