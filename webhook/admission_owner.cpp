#include "webhook/admission_owner.h"

#include <array>
#include <string_view>

#include "rules/k8s/owner_references.h"

namespace gpuguard::webhook {
namespace {

using nlohmann::json;

// kube-controller-manager's controllers that create objects from an owner's
// template, by the service account each runs as with
// --use-service-account-credentials (plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy/controller_policy.go).
constexpr std::array<std::string_view, 7> kWorkloadControllers{
    "deployment-controller", "replicaset-controller",  "replication-controller", "statefulset-controller",
    "daemon-set-controller", "job-controller",         "cronjob-controller"};
constexpr std::string_view kControllerAccountPrefix = "system:serviceaccount:kube-system:";

bool isWorkloadController(std::string_view username) {
  if (username == "system:kube-controller-manager") return true;
  if (!username.starts_with(kControllerAccountPrefix)) return false;
  username.remove_prefix(kControllerAccountPrefix.size());
  for (std::string_view name : kWorkloadControllers) {
    if (username == name) return true;
  }
  return false;
}

}  // namespace

std::string ownerOfControllerChild(const AdmissionRequest& request) {
  if (request.operation != "CREATE" || !request.object || !isWorkloadController(request.username)) return "";
  const json* owner = controllerReference(*request.object);
  if (!owner) return "";
  return stringOr(*owner, "kind") + "/" + stringOr(*owner, "name");
}

bool ownerComparesTemplate(const AdmissionRequest& request) {
  return request.group == "apps" && request.kind == "ReplicaSet" && request.object &&
         controllerReference(*request.object) != nullptr;
}

}  // namespace gpuguard::webhook
