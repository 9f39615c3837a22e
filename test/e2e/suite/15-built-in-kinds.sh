# shellcheck shell=bash
# ---- built-in kinds ----------------------------------------------------------------
case_begin "good GPU Pod and Deployment are admitted"
kc apply -n e2e-strict -f "$CASES/pod-gpu-good.yaml" -f "$CASES/deployment-good.yaml"
expect_ok
expect_out "pod/pod-gpu-good created" "deployment.apps/dep-gpu-good created"
expect_no_rule_warning
case_end

# 1.20 did not validate StatefulSet pod templates (gpuguard was the only judge); current API
# servers do, before any webhook
case_begin "StatefulSet with 250m GPU is rejected by the API server itself (422) before any webhook"
kc apply -n e2e-strict -f "$CASES/statefulset-fractional.yaml"
expect_fail
expect_out 'The StatefulSet "sts-gpu-fractional" is invalid' \
    'spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "250m": must be an integer'
expect_no_out "admission webhook"
case_end

case_begin "Pod with 0.5 GPU is rejected by the API server itself (422) before any webhook"
kc apply -n e2e-strict -f "$CASES/pod-gpu-fractional.yaml"
expect_fail
expect_out 'The Pod "pod-gpu-fractional" is invalid' \
    "spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value:" "must be an integer"
expect_no_out "admission webhook"
case_end

case_begin "Deployment with GPU requests only is rejected by the API server (422)"
kc apply -n e2e-strict -f "$CASES/deployment-requests-only.yaml"
expect_fail
expect_out 'The Deployment "dep-gpu-requests-only" is invalid' \
    "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
expect_no_out "admission webhook"
case_end

case_begin "Pod with an unquoted integer nodeSelector value fails to decode (400)"
kc apply -n e2e-strict -f "$CASES/pod-nodeselector-int.yaml"
expect_fail
expect_out "Error from server (BadRequest)" "cannot be handled as a Pod"
# 1.20 (json-iterator) said "NodeSelector: ReadString: expects \" or n", current releases
# (encoding/json) "cannot unmarshal number into Go struct field PodSpec.spec.nodeSelector of type string"
grep -qi "nodeSelector" <<<"$OUT" || problem "output does not name the nodeSelector"
expect_no_out "admission webhook"
case_end

# resource.k8s.io/v1beta1 and v1beta2 are off by default in 1.37 (pkg/controlplane/instance.go,
# betaAPIGroupVersionsDisabledByDefault): kubectl finds no such kind; gpuguard-lint's
# dra-with-device-plugin says so on each object (reference §15.2)
case_begin "DRA objects of resource.k8s.io/v1beta1 and v1beta2 are not served (no matches for kind), as gpuguard-lint says"
kc apply --dry-run=server -f "$CASES/dra-v1beta.yaml"
expect_fail
expect_out 'no matches for kind "ResourceClaimTemplate" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "DeviceClass" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1beta2"'
OUT=$("${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}" "$CASES/dra-v1beta.yaml" 2>&1); RC=$?
LAST_CMD="gpuguard-lint $CASES/dra-v1beta.yaml"
note_output
((RC == 0)) || problem "gpuguard-lint: warnings only, expected exit 0 (got $RC)"
expect_out 'apiVersion: resource.k8s.io/v1beta1 is not served by a default Kubernetes 1.37 API server' \
    'no matches for kind "ResourceClaimTemplate" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "DeviceClass" in version "resource.k8s.io/v1beta1"' \
    'no matches for kind "ResourceClaim" in version "resource.k8s.io/v1beta2"' \
    '0 errors, 3 warnings'
case_end

# adminAccess: true needs resource.kubernetes.io/admin-access: "true" on the claim's namespace
# (pkg/registry/resource/utils.go AuthorizedForAdmin); gpuguard-lint knows the Namespace from the
# same file and reports the API server's Forbidden as an error (reference §15.2)
case_begin "adminAccess in a namespace without the admin-access label: Forbidden, as gpuguard-lint says"
kc create namespace e2e-dra-admin
kc apply --dry-run=server -f "$CASES/dra-admin-access.yaml"
expect_fail
expect_out 'admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace'
OUT=$("${GPUGUARD_LINT:-$ROOT/build/gpuguard-lint}" "$CASES/dra-admin-access.yaml" 2>&1); RC=$?
LAST_CMD="gpuguard-lint $CASES/dra-admin-access.yaml"
note_output
((RC == 1)) || problem "gpuguard-lint: expected exit 1 for the error (got $RC)"
expect_out 'Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace' \
    '[dra-with-device-plugin]'
kc label namespace e2e-dra-admin resource.kubernetes.io/admin-access=true
kc apply --dry-run=server -f "$CASES/dra-admin-access.yaml"
expect_ok
case_end
