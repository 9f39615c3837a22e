// Factories of the checks, one per file in this directory. The registry
// (rules/registry.cpp) is the only caller.
#pragma once

#include <memory>

#include "rules/rule.h"

namespace gpuguard::checks {

std::unique_ptr<Rule> makeGpuInvalidQuantity();
std::unique_ptr<Rule> makeGpuFractional();
std::unique_ptr<Rule> makeGpuRequestsLimitsMismatch();
std::unique_ptr<Rule> makeGpuRequestsWithoutLimits();
std::unique_ptr<Rule> makeGpuMissingToleration();
std::unique_ptr<Rule> makeGpuMissingDriverPin();
std::unique_ptr<Rule> makeLabelValueNotString();

std::unique_ptr<Rule> makeGpuResourceName();
std::unique_ptr<Rule> makeMigResourceName();
std::unique_ptr<Rule> makeGpuInPodLevelResources();
std::unique_ptr<Rule> makeGpuCountExceedsNode();
std::unique_ptr<Rule> makeDraWithDevicePlugin();
std::unique_ptr<Rule> makeDraClaimWithNodeName();
std::unique_ptr<Rule> makeDraSharedClaimReplicated();
std::unique_ptr<Rule> makeDevicePluginConfig();
std::unique_ptr<Rule> makeLimitRangeGpuDefault();
std::unique_ptr<Rule> makeGpuResizePolicy();
std::unique_ptr<Rule> makeSharedGpuRequestGtOne();
std::unique_ptr<Rule> makeGpuNodepoolTaint();

std::unique_ptr<Rule> makeCudaDriverTooOld();
std::unique_ptr<Rule> makeNodeAffinityGtLt();
std::unique_ptr<Rule> makeGpuLabelValue();
std::unique_ptr<Rule> makeGpuTolerationWithoutRequest();
std::unique_ptr<Rule> makeTensorParallelGpuCount();
std::unique_ptr<Rule> makeTensorParallelWithoutNvlink();
std::unique_ptr<Rule> makeGpuUnschedulable();
std::unique_ptr<Rule> makeNvidiaVisibleDevicesEnv();
std::unique_ptr<Rule> makeCudaVisibleDevicesIndex();

}  // namespace gpuguard::checks
