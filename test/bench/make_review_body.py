#!/usr/bin/env python3
"""Writes the ~5 KB AdmissionReview used by load_vs_nginx.sh (compact JSON, as
the API server sends it): the allowed GPU Pod CREATE sample, completed with
what a Job-created pod carries in a real cluster (ownerReferences, controller
labels, a kube-controller-manager managedFields entry, userInfo.extra, env).

  make_review_body.py SAMPLE.json OUT.json
"""
import json
import sys

d = json.load(open(sys.argv[1]))
req = d["request"]
req["userInfo"] = {"username": "system:serviceaccount:kube-system:job-controller",
                   "uid": "8d2e7f1c-3a4b-4c5d-9e6f-7a8b9c0d1e2f",
                   "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
                   "extra": {"authentication.kubernetes.io/credential-id": ["JTI=4f1c2e3d-5a6b-7c8d-9e0f-1a2b3c4d5e6f"]}}
obj = req["object"]
md = obj["metadata"]
md["generateName"] = "train-resnet-"
md["labels"].update({"batch.kubernetes.io/controller-uid": "0f9b3c2a-6d7e-4f81-a2b3-c4d5e6f7a8b9",
                     "batch.kubernetes.io/job-name": "train-resnet",
                     "controller-uid": "0f9b3c2a-6d7e-4f81-a2b3-c4d5e6f7a8b9", "job-name": "train-resnet"})
md["annotations"] = {"batch.kubernetes.io/job-completion-index": "0",
                     "kubectl.kubernetes.io/default-container": "c"}
md["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "train-resnet",
                          "uid": "0f9b3c2a-6d7e-4f81-a2b3-c4d5e6f7a8b9", "controller": True,
                          "blockOwnerDeletion": True}]
md["managedFields"].append({
    "manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
    "time": "2026-11-29T09:52:17Z", "fieldsType": "FieldsV1",
    "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:batch.kubernetes.io/job-completion-index": {}},
                                "f:generateName": {}, "f:labels": {".": {}, "f:batch.kubernetes.io/controller-uid": {},
                                                                    "f:batch.kubernetes.io/job-name": {},
                                                                    "f:controller-uid": {}, "f:job-name": {}},
                                "f:ownerReferences": {".": {}, "k:{\"uid\":\"0f9b3c2a-6d7e-4f81-a2b3-c4d5e6f7a8b9\"}": {}}},
                 "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:command": {}, "f:env": {".": {}},
                                                                      "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                                                                      "f:resources": {".": {}, "f:limits": {".": {}, "f:nvidia.com/gpu": {}}},
                                                                      "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                            "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {},
                            "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}, "f:tolerations": {}}}})
c = obj["spec"]["containers"][0]
c["env"] = []
obj["spec"]["tolerations"].append({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
# A driver pin, as the GPU Operator's node labels allow: the typical pod is allowed
# (a denial would also be logged at info level on every request).
obj["spec"]["nodeSelector"] = {"nvidia.com/cuda.driver-version.major": "550",
                               "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
i = 0
while len(json.dumps(d, separators=(",", ":"))) < 5200:
    c["env"].append({"name": f"TRAIN_OPTION_{i}", "value": f"value-{i:04d}"})
    i += 1
open(sys.argv[2], "w").write(json.dumps(d, separators=(",", ":")))
