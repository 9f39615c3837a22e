// node-selector-conflict: a GPU pod whose nodeSelector sets a label to another
// value than an admission plugin merges into it. The plugin rejects the pod
// (a workload's pods, when its controller creates them: FailedCreate events,
// no pod): the RuntimeClass plugin (plugin/pkg/admission/runtimeclass,
// setScheduling: "conflict: runtimeClass.scheduling.nodeSelector[K] = V;
// pod.spec.nodeSelector[K] = W"), PodNodeSelector
// (plugin/pkg/admission/podnodeselector: "pod node label selector conflicts
// with its namespace node label selector") and OpenShift's
// OriginPodNodeEnvironment ("... with its project node label selector").
// The merge itself is rules/pod_admission.cpp's, run before every rule.
#include <array>
#include <string>

#include "rules/checks/checks.h"
#include "rules/gpu_use.h"
#include "rules/k8s/field_error.h"
#include "rules/pod_admission.h"

namespace gpuguard::checks {
namespace {

constexpr std::array<std::string_view, 3> kPolicyKeys{"gpuResources", "draExtendedResources", "assumePodNodeSelector"};

constexpr RuleDoc kDoc{
    .id = "node-selector-conflict",
    .defaultSeverity = Severity::Error,
    .summary = "A GPU pod whose nodeSelector sets a label to another value than its RuntimeClass or its namespace's "
               "node selector: the admission plugin rejects the pod.",
    .description =
        "The API server's admission plugins merge node selectors into a pod before it is stored: the RuntimeClass "
        "plugin (on by default) merges the scheduling.nodeSelector of the RuntimeClass the pod names "
        "(spec.runtimeClassName), PodNodeSelector (off by default upstream, on in OpenShift) the namespace's "
        "scheduler.alpha.kubernetes.io/node-selector, and OpenShift's OriginPodNodeEnvironment its "
        "openshift.io/node-selector in a namespace without the former. A label the pod (or a plugin before) "
        "already sets to another value is a conflict, and the plugin rejects the pod: \"conflict: "
        "runtimeClass.scheduling.nodeSelector[nvidia.com/gpu.product] = NVIDIA-H100-80GB-HBM3; "
        "pod.spec.nodeSelector[nvidia.com/gpu.product] = NVIDIA-A100-SXM4-80GB\", \"pod node label selector "
        "conflicts with its namespace node label selector\". A Pod is refused at once; a workload is admitted, and "
        "its controller's every pod is refused (FailedCreate events), so nothing runs. The RuntimeClass and the "
        "namespace come from the input (the same file) or the cluster facts; the namespace's selector counts only "
        "when the policy sets assumePodNodeSelector (platform: openshift does).",
    .remediation = "Drop the label from the pod's nodeSelector (the plugin adds the right value), or name another "
                   "RuntimeClass or namespace.",
    .wrongExample =
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: nvidia-h100}\nhandler: nvidia\n"
        "scheduling:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  runtimeClassName: nvidia-h100\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n  containers:\n  - name: c\n"
        "    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n",
    .rightExample =
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: nvidia-h100}\nhandler: nvidia\n"
        "scheduling:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train}\nspec:\n  runtimeClassName: nvidia-h100\n"
        "  containers:\n  - name: c\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n    resources:\n      limits:\n"
        "        nvidia.com/gpu: 1\n",
    .policyKeys = kPolicyKeys,
};

// What the plugin answers, in the API server's words.
std::string pluginsWords(const SelectorConflict& c) {
  switch (c.plugin) {
    case SelectorConflict::Plugin::RuntimeClass:
      return "conflict: runtimeClass.scheduling.nodeSelector[" + c.key + "] = " + c.wanted + "; pod.spec.nodeSelector[" +
             c.key + "] = " + c.existing;
    case SelectorConflict::Plugin::PodNodeSelector:
      return "pod node label selector conflicts with its namespace node label selector";
    case SelectorConflict::Plugin::OriginPodNodeEnvironment:
      return "pod node label selector conflicts with its project node label selector";
  }
  return "";
}

class NodeSelectorConflict final : public Rule {
 public:
  const RuleDoc& doc() const override { return kDoc; }

  void check(const CheckContext& ctx, Reporter& out) const override {
    for (const PodSite& site : ctx.sites) {
      if (!site.admitted || !site.admitted->conflict || !usesGpus(site, ctx.gpu())) continue;
      const SelectorConflict& c = *site.admitted->conflict;
      const FieldPath path = c.podsOwn ? site.nodeSelector.path.key(c.key) : site.specPath.field("runtimeClassName");
      out.report(path,
                 FieldError::forbidden(
                     (c.podsOwn ? "the pod's nodeSelector sets " : "the namespace's node selector sets ") + c.key +
                     "=" + c.existing + ", and " + c.source + " sets " + c.key + "=" + c.wanted +
                     ": its admission plugin rejects the pod (\"" + pluginsWords(c) + "\")" +
                     (site.ownerKind.empty() || site.ownerKind == "Pod"
                          ? std::string()
                          : ", so the controller creates no pod of it (FailedCreate events)") +
                     "; drop " + c.key + " from " + (c.podsOwn ? "the pod's nodeSelector" : "one of them") +
                     " or name another " + (c.plugin == SelectorConflict::Plugin::RuntimeClass ? "RuntimeClass" : "namespace")),
                 c.existing);
    }
  }
};

}  // namespace

std::unique_ptr<Rule> makeNodeSelectorConflict() { return std::make_unique<NodeSelectorConflict>(); }

}  // namespace gpuguard::checks
