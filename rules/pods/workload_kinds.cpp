// The workload kinds whose pods gpuguard finds and where, for the docs
// ("Where the pods are" in docs/rules.md).
#include <array>

#include "rules/pod_specs.h"

namespace gpuguard {

std::span<const WorkloadKind> workloadKinds() {
  static constexpr std::array<WorkloadKind, 22> kKinds{{
      {"Pod", "v1", "spec", "containers[], initContainers[] (sidecars: restartPolicy Always) .resources"},
      {"PodTemplate", "v1", "template.spec", "containers[].resources"},
      {"Deployment, ReplicaSet, StatefulSet, DaemonSet", "apps/v1", "spec.template.spec", "containers[].resources"},
      {"ReplicationController", "v1", "spec.template.spec", "containers[].resources"},
      {"Job; CronJob", "batch/v1", "spec.template.spec; spec.jobTemplate.spec.template.spec", "containers[].resources"},
      {"RayCluster, RayService, RayJob", "ray.io/v1",
       "headGroupSpec.template.spec, workerGroupSpecs[].template.spec (RayService: under spec.rayClusterConfig, "
       "RayJob: spec.rayClusterSpec)",
       "containers[].resources; a worker group's pods form one Ray cluster with the head"},
      {"RayClusterFleet, RayClusterReplicaSet (AIBrix)", "orchestration.aibrix.ai/v1alpha1",
       "spec.template.spec (a RayClusterSpec: headGroupSpec, workerGroupSpecs[]); each replica is a RayCluster",
       "containers[].resources; as in a RayCluster, a worker group's pods form one Ray cluster with the head"},
      {"PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob", "kubeflow.org/v1 (MPIJob v2beta1)",
       "spec.<kind>ReplicaSpecs.<role>.template.spec (MPIJob: spec.mpiReplicaSpecs)", "containers[].resources"},
      {"TrainJob", "trainer.kubeflow.org/v1alpha1",
       "spec.trainer (a container), scheduled by spec.podTemplateOverrides[].spec, spec.podSpecOverrides[] or "
       "spec.runtimePatches[] on top of the runtime spec.runtimeRef names, which supplies what they leave unset "
       "(and adds its tolerations to theirs)",
       "spec.trainer.resourcesPerNode"},
      {"JobSet", "jobset.x-k8s.io/v1alpha2", "spec.replicatedJobs[].template.spec.template.spec",
       "containers[].resources"},
      {"LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1",
       "spec.leaderWorkerTemplate.leaderTemplate.spec, .workerTemplate.spec",
       "containers[].resources; leaderWorkerTemplate.size pods run one replica"},
      {"InferenceService", "serving.kserve.io/v1beta1",
       "spec.predictor (and transformer, explainer): the component is the pod spec; model, or a framework "
       "predictor (sklearn, pytorch, huggingface...), is its container; a model naming its runtime takes the "
       "ServingRuntime's tolerations, nodeSelector and affinity where the predictor leaves them unset",
       "predictor.model.resources, predictor.containers[].resources; in Serverless (Knative) deployment mode "
       "tolerations, nodeSelector and affinity need Knative's feature flags, as for a Knative Service"},
      {"LLMInferenceService", "serving.kserve.io/v1alpha1, v1alpha2",
       "spec.template and spec.worker (PodSpecs), spec.prefill.template and spec.prefill.worker; "
       "spec.baseRefs' LLMInferenceServiceConfigs supply what they leave unset",
       "containers[].resources; Managed DRA: the annotation serving.kserve.io/exp-dra-device-class (with "
       "exp-dra-device-count, default 1, and exp-dra-cel-selector) makes the controller add a claim of that many "
       "devices of the class to each of these pods, listed in the container exp-dra-container-name names (else "
       "the first)"},
      {"Job (Volcano)", "batch.volcano.sh/v1alpha1", "spec.tasks[].template.spec", "containers[].resources"},
      {"Workflow, WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow", "argoproj.io/v1alpha1",
       "spec.templates[] (container, script, containerSet: the template is the pod; spec.workflowSpec in a "
       "CronWorkflow)",
       "templates[].container.resources, .script.resources, .containerSet.containers[].resources"},
      {"NIMService", "apps.nvidia.com/v1alpha1", "spec (the pod and its container at once)",
       "spec.resources; spec.draResources (DRA: the operator makes them the pod's resourceClaims; an entry names "
       "a ResourceClaim or ResourceClaimTemplate, or claimCreationSpec.devices[] ask count devices of "
       "deviceClassName, gpu.nvidia.com by default)"},
      {"DynamoGraphDeployment", "nvidia.com/v1alpha1",
       "spec.services.<name>.extraPodSpec (a PodSpec), main container extraPodSpec.mainContainer; "
       "multinode.nodeCount pods run one replica",
       "spec.services.<name>.resources.{limits,requests}.gpu: the operator sets it as nvidia.com/gpu on the main "
       "container; .custom holds other resource names"},
      {"DynamoGraphDeployment", "nvidia.com/v1beta1", "spec.components[].podTemplate.spec", "containers[].resources"},
      {"SparkApplication; ScheduledSparkApplication", "sparkoperator.k8s.io/v1beta2",
       "spec.driver, spec.executor (SparkPodSpec: the pod and its container at once); spec.template.driver/"
       "executor",
       "driver.gpu, executor.gpu {name, quantity}: the operator sets it as a limit of that resource on the driver "
       "or every executor pod"},
      {"Service, Configuration (Knative Serving)", "serving.knative.dev/v1",
       "spec.template.spec",
       "containers[].resources; tolerations, nodeSelector and affinity need Knative's feature flags "
       "kubernetes.podspec-tolerations, -nodeselector, -affinity (ConfigMap config-features), disabled by default"},
      {"Notebook (Kubeflow), PodCliqueSet (Grove), and any other kind", "any",
       "any object with a containers list (a pod spec) or a resources map with limits or requests (a container)",
       "containers[].resources"},
      {"Workspace (KAITO)", "kaito.sh/v1beta1", "not read",
       "the GPUs come from resource.instanceType (a cloud instance type), which no field counts"},
  }};
  return kKinds;
}

}  // namespace gpuguard
