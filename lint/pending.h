// gpuguard-lint --nodes NODES.json [--pods PODS.json] MANIFEST...:
// "Why is my GPU pod Pending?" The front end of schedule/ (which is pure):
// reads the snapshot files and the manifests, runs the diagnosis on every
// GPU pod and pod template, prints a table per pod (or JSON with
// --format json).
#pragma once

#include "lint/run_config.h"
#include "lint/options.h"

namespace gpuguard::lint {

// Exit status: 0 every GPU pod is schedulable on some node of the snapshot,
// 1 at least one is not, 2 unreadable input or bad usage.
int runPending(const Options& options, const RunConfig& config);

}  // namespace gpuguard::lint
