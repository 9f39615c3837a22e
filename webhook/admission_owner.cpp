#include "webhook/admission_owner.h"

#include <array>
#include <string_view>

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

// The ownerReference with controller: true, or nullptr.
const json* controllerReference(const json& object) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return nullptr;
  auto refs = metadata->find("ownerReferences");
  if (refs == metadata->end() || !refs->is_array()) return nullptr;
  for (const json& ref : *refs) {
    auto controller = ref.is_object() ? ref.find("controller") : ref.end();
    if (controller != ref.end() && controller->is_boolean() && controller->get<bool>()) return &ref;
  }
  return nullptr;
}

std::string stringOf(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string ownerOfControllerChild(const AdmissionRequest& request) {
  if (request.operation != "CREATE" || !request.object || !isWorkloadController(request.username)) return "";
  const json* owner = controllerReference(*request.object);
  if (!owner) return "";
  return stringOf(*owner, "kind") + "/" + stringOf(*owner, "name");
}

bool ownerComparesTemplate(const AdmissionRequest& request) {
  return request.group == "apps" && request.kind == "ReplicaSet" && request.object &&
         controllerReference(*request.object) != nullptr;
}

}  // namespace gpuguard::webhook
