{{/* Names. With the release name "gpuguard" they are the kustomize install's names. */}}
{{- define "gpuguard.fullname" -}}
{{- if contains "gpuguard" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-gpuguard" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpuguard.webhookName" -}}{{ include "gpuguard.fullname" . }}-webhook{{- end -}}
{{/*
The certificate source in force. auto (the default) is certManager when the cluster serves
cert-manager.io/v1 (helm install/upgrade see the cluster's APIs; Argo CD passes them to helm
template as --api-versions), or when no cluster is reachable at all (helm template, lint,
package): its objects are the same on every render, so a GitOps tool never sees the caBundle
move. Only a helm install/upgrade against a cluster without cert-manager falls back to
selfSigned, which stays stable there because each upgrade looks up the Secrets it made.
*/}}
{{- define "gpuguard.certSource" -}}
{{- $source := .Values.certificate.source -}}
{{- if ne $source "auto" -}}
{{- $source -}}
{{- else if .Capabilities.APIVersions.Has "cert-manager.io/v1" -}}
certManager
{{- else if (lookup "v1" "Namespace" "" "kube-system") -}}
selfSigned
{{- else -}}
certManager
{{- end -}}
{{- end -}}

{{- define "gpuguard.tlsSecret" -}}
{{- if eq (include "gpuguard.certSource" .) "existingSecret" -}}
{{- required "certificate.existingSecret.name is required with certificate.source=existingSecret" .Values.certificate.existingSecret.name -}}
{{- else -}}
{{- include "gpuguard.webhookName" . }}-tls
{{- end -}}
{{- end -}}
{{- define "gpuguard.policyConfigMap" -}}{{ include "gpuguard.fullname" . }}-policy{{- end -}}
{{- define "gpuguard.serviceDNS" -}}{{ include "gpuguard.webhookName" . }}.{{ .Release.Namespace }}.svc{{- end -}}

{{- define "gpuguard.labels" -}}
app.kubernetes.io/name: gpuguard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: gpuguard
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "gpuguard.selectorLabels" -}}
app.kubernetes.io/name: gpuguard
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "gpuguard.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* failurePolicy: explicit, or from the mode. */}}
{{- define "gpuguard.failurePolicy" -}}
{{- if .Values.webhook.failurePolicy -}}
{{ .Values.webhook.failurePolicy }}
{{- else if eq .Values.mode "audit" -}}
Ignore
{{- else -}}
Fail
{{- end -}}
{{- end -}}

{{/*
The policy the webhook loads. In audit mode every rule is a warning: "*" covers the rules
not listed, and each listed rule becomes a warning unless it is off.
*/}}
{{- define "gpuguard.policy" -}}
{{- $policy := deepCopy .Values.policy -}}
{{- if eq .Values.mode "audit" -}}
{{- $rules := dict "*" "warning" -}}
{{- range $id, $setting := ($policy.rules | default dict) -}}
{{- if or (eq (toString $setting) "off") (eq (toString $setting) "false") -}}
{{- $_ := set $rules $id "off" -}}
{{- else -}}
{{- $_ := set $rules $id "warning" -}}
{{- end -}}
{{- end -}}
{{- $_ := set $policy "rules" $rules -}}
{{- end -}}
{{- toYaml $policy -}}
{{- end -}}

{{/* The policy as enforce renders it (the values' rules, unchanged): the audit judges with it, so
a "fail" result means "enforce would deny this" (docs/audit.md). */}}
{{- define "gpuguard.enforcePolicy" -}}
{{- toYaml .Values.policy -}}
{{- end -}}

{{/* "true" when the background audit runs: audit.enabled, or with auto, mode audit. */}}
{{- define "gpuguard.auditEnabled" -}}
{{- $e := .Values.audit.enabled -}}
{{- if eq (toString $e) "auto" -}}
{{- ternary "true" "" (eq .Values.mode "audit") -}}
{{- else if $e -}}
true
{{- end -}}
{{- end -}}

{{/* The API token is mounted, and the API server reachable, for the cluster facts or the audit. */}}
{{- define "gpuguard.callsApiServer" -}}
{{- if or .Values.clusterFacts.enabled (include "gpuguard.auditEnabled" .) -}}
true
{{- end -}}
{{- end -}}

{{- define "gpuguard.auditLease" -}}{{ include "gpuguard.fullname" . }}-audit{{- end -}}

{{/*
What the audit lists and watches, by API group: the webhook's rules (gpuguard.webhookRules),
LimitRanges and Karpenter NodePools (rules read them), and audit.extraResources. A YAML list
of {apiGroups: [G], resources: [...]}, one entry per webhook rule plus the additions.
*/}}
{{- define "gpuguard.auditResources" -}}
{{- $rules := list -}}
{{- range (include "gpuguard.webhookRules" . | fromYamlArray) -}}
{{- $rules = append $rules (dict "apiGroups" .apiGroups "resources" .resources) -}}
{{- end -}}
{{- $rules = append $rules (dict "apiGroups" (list "") "resources" (list "limitranges")) -}}
{{- $rules = append $rules (dict "apiGroups" (list "karpenter.sh") "resources" (list "nodepools")) -}}
{{- range .Values.audit.extraResources -}}
{{- $rules = append $rules (dict "apiGroups" (list .group) "resources" (list .resource)) -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end -}}

{{/* The namespaceSelector: the release namespace and excludeNamespaces never reach the webhook. */}}
{{- define "gpuguard.namespaceSelector" -}}
{{- $excluded := concat (list .Release.Namespace) (.Values.webhook.excludeNamespaces | default list) -}}
{{- if eq (include "gpuguard.certSource" .) "certManager" -}}
{{- /* cert-manager renews gpuguard's certificate: its pods must start while gpuguard is down */ -}}
{{- $excluded = append $excluded "cert-manager" -}}
{{- end -}}
{{- $excluded = uniq $excluded -}}
{{- $sel := deepCopy (.Values.webhook.namespaceSelector | default dict) -}}
{{- $exprs := list (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" $excluded) -}}
{{- if .Values.webhook.disableLabel -}}
{{- $kv := splitList "=" .Values.webhook.disableLabel -}}
{{- $exprs = append $exprs (dict "key" (first $kv) "operator" "NotIn" "values" (list (last $kv))) -}}
{{- end -}}
{{- $_ := set $sel "matchExpressions" (concat $exprs ($sel.matchExpressions | default list)) -}}
{{- toYaml $sel -}}
{{- end -}}

{{/* The rules: pods, built-in pod-template owners, and custom resources that embed pod templates. */}}
{{- define "gpuguard.webhookRules" -}}
- apiGroups: [""]
  apiVersions: [v1]
  operations: [CREATE, UPDATE]
  resources: [pods, replicationcontrollers, podtemplates]
  scope: Namespaced
- apiGroups: [apps]
  apiVersions: [v1]
  operations: [CREATE, UPDATE]
  resources: [deployments, statefulsets, daemonsets, replicasets]
  scope: Namespaced
- apiGroups: [batch]
  apiVersions: [v1]
  operations: [CREATE, UPDATE]
  resources: [jobs, cronjobs]
  scope: Namespaced
- apiGroups: [ray.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [rayclusters, rayjobs, rayservices]
  scope: Namespaced
- apiGroups: [kubeflow.org]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [pytorchjobs, tfjobs, mpijobs, xgboostjobs, paddlejobs, jaxjobs]
  scope: Namespaced
- apiGroups: [trainer.kubeflow.org]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [trainjobs]
  scope: Namespaced
- apiGroups: [jobset.x-k8s.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [jobsets]
  scope: Namespaced
- apiGroups: [leaderworkerset.x-k8s.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [leaderworkersets]
  scope: Namespaced
- apiGroups: [serving.kserve.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [inferenceservices, servingruntimes, llminferenceservices]
  scope: Namespaced
- apiGroups: [batch.volcano.sh]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [jobs]
  scope: Namespaced
- apiGroups: [argoproj.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [workflows, cronworkflows, workflowtemplates]
  scope: Namespaced
# ClusterWorkflowTemplates are cluster-scoped (no namespace to select on).
- apiGroups: [argoproj.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [clusterworkflowtemplates]
  scope: Cluster
- apiGroups: [apps.nvidia.com]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [nimservices]
  scope: Namespaced
- apiGroups: [nvidia.com]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [dynamographdeployments]
  scope: Namespaced
- apiGroups: [sparkoperator.k8s.io]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [sparkapplications, scheduledsparkapplications]
  scope: Namespaced
- apiGroups: [serving.knative.dev]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [services, configurations]
  scope: Namespaced
{{- end -}}

{{- define "gpuguard.clientService" -}}
service:
  name: {{ include "gpuguard.webhookName" . }}
  namespace: {{ .Release.Namespace }}
  port: 443
{{- end -}}
