// glibc malloc settings for the webhook's allocation pattern, applied by
// re-executing the process once with GLIBC_TUNABLES (glibc reads tunables
// only at start-up; mallopt() cannot set them).
//
// Why: each admission request builds and frees a JSON tree of ~450 small
// blocks on its event-loop thread. glibc's per-thread cache keeps only 7
// freed blocks per size, so most of them fall through to the shared arena,
// where frees are coalesced and re-split on every request. A cache of 4096
// blocks per size keeps one request's blocks for the next: about 25 % less
// CPU per request at 32 connections, at the same RSS (docs/performance.md).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace gpuguard::webhook {

// The setting added to GLIBC_TUNABLES.
inline constexpr const char* kMallocTunable = "glibc.malloc.tcache_count=4096";

// False where reexecWithMallocTunables() does nothing: a C library other
// than glibc, or a sanitized build (the sanitizers bring their own allocator).
bool mallocTuningSupported();

// Re-executes /proc/self/exe with `argv` and kMallocTunable added to
// GLIBC_TUNABLES, unless that variable already names tcache_count (set by
// the operator, or by this re-execution) or tuning is not supported. Returns only when nothing was done or exec failed (no
// /proc): the process then runs on with glibc's defaults. Call it before
// any thread starts.
void reexecWithMallocTunables(char** argv);

// Gives each thread of the process a malloc arena of its own, up to
// glibc's default number (8 per core) plus `extraThreads`: the background
// audit's threads (one per audited resource, ~40) would otherwise share the
// 16 arenas of a 2-core machine with the admission threads. A thread that
// allocates takes its arena's lock, and an audit thread runs SCHED_IDLE: one
// preempted while it holds an admission thread's arena would stall that
// request until the idle thread gets a CPU again (priority inversion, worst
// on a busy node). Call it before any thread starts: glibc fixes the limit
// when it first needs it.
void reserveMallocArenas(unsigned extraThreads);

// Calls releaseFreedMemory() on a thread of its own, at normal priority,
// when asked: malloc_trim locks every arena in turn, the audit's too, and
// one of its SCHED_IDLE threads may hold its arena's lock while preempted,
// so the request that asked must not wait for it. Requests made while a
// release runs or waits are served by one more release (coalesced).
class MemoryReleaser {
 public:
  MemoryReleaser();
  ~MemoryReleaser();  // waits for a release in progress
  MemoryReleaser(const MemoryReleaser&) = delete;
  MemoryReleaser& operator=(const MemoryReleaser&) = delete;

  void request();                       // never blocks on the allocator
  std::uint64_t releases() const;       // releases done so far

 private:
  void run();
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false;
  bool stopping_ = false;
  std::uint64_t releases_ = 0;
  std::thread thread_;
};

// Returns the memory freed since the last call to the kernel (glibc's
// malloc_trim). glibc otherwise keeps it in its arenas: a review of a
// 3 MiB object builds a tree of ~100 MiB, and the process would stay that
// large. Costs a walk of the heap, so call it after large requests only.
void releaseFreedMemory();

}  // namespace gpuguard::webhook
