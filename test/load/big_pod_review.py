#!/usr/bin/env python3
"""Writes an AdmissionReview (CREATE) of one Pod with N containers, each asking
for a GPU with a fractional count, a mismatched request and no toleration: every
container trips several rules, as the red team's 1,500-container pod of issue 23.

    big_pod_review.py N OUT.json
"""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
containers = [{
    "name": "c%d" % i,
    "image": "nvcr.io/nvidia/pytorch:24.01-py3",
    "resources": {"limits": {"nvidia.com/gpu": "0.5", "memory": "1Gi"}, "requests": {"nvidia.com/gpu": "1"}},
    "env": [{"name": "RANK", "value": str(i)}],
} for i in range(n)]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "big", "namespace": "default", "labels": {"app": "big"}},
       "spec": {"containers": containers, "nodeSelector": {"nvidia.com/gpu.present": "true"}}}
review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
          "request": {"uid": "0d3c1a3e-8a1f-4e0e-9d5b-2f6a7c8b9d00",
                      "kind": {"group": "", "version": "v1", "kind": "Pod"},
                      "resource": {"group": "", "version": "v1", "resource": "pods"},
                      "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
                      "requestResource": {"group": "", "version": "v1", "resource": "pods"},
                      "name": "big", "namespace": "default", "operation": "CREATE",
                      "userInfo": {"username": "red-team"}, "object": pod, "oldObject": None,
                      "dryRun": False, "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}}
json.dump(review, open(out, "w"), separators=(",", ":"))
