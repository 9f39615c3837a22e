// gpuguard-lint --cluster --pending [-n NS | -A]: "why is it Pending?" for
// the GPU pods that are Pending now in a live cluster. One list each of the
// facts (nodes, namespaces, DeviceClasses, claims, NodePools) and of the
// pods that are not finished (all namespaces: the bound ones hold GPUs, the
// unbound Pending ones are explained); each Pending GPU pod replayed with
// the --nodes filters (schedule/diagnose.h) against the live nodes and the
// pods holding resources, kube-scheduler's own PodScheduled=False message
// beside it with whether the two agree (schedule/scheduler_message.h), and
// the rules' findings on the pod with the cluster's facts (what to change).
#pragma once

#include "lint/options.h"
#include "lint/run.h"
#include "lint/run_config.h"

namespace gpuguard::lint {

// Exit status: 0 no Pending GPU pod, or each only waits for resources other
// pods hold (it fits some node that is empty); 1 some Pending GPU pod can
// never schedule (no node could take it even empty, and no Karpenter NodePool
// can launch one); 2 no cluster, an API error, or the report not written.
int runClusterPending(const Options& options, const RunConfig& config, const RunStreams& streams);

}  // namespace gpuguard::lint
