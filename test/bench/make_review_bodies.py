#!/usr/bin/env python3
"""Wraps every Kubernetes object of YAML or JSON files into an AdmissionReview CREATE request (compact
JSON, as the API server sends it), one file per object, for gpuguard-review-loop (review_loop.cpp):
a set of bodies whose responses must stay byte-identical across a change to the webhook or the rules.

  make_review_bodies.py OUT_DIR FILE_OR_DIR...

Objects without apiVersion/kind, and documents that do not parse, are skipped. The namespace is the
object's own, else "default"; the uid is made from the output file's number.
"""
import json
import os
import sys

import yaml


def objects_of(path):
    try:
        with open(path, encoding="utf-8") as f:
            docs = list(yaml.safe_load_all(f))
    except (yaml.YAMLError, UnicodeDecodeError):
        return
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        if doc.get("kind", "").endswith("List") and isinstance(doc.get("items"), list):
            yield from (item for item in doc["items"] if isinstance(item, dict))
        elif "apiVersion" in doc and "kind" in doc:
            yield doc


def files_of(args):
    for arg in args:
        if os.path.isdir(arg):
            for root, _, names in sorted(os.walk(arg)):
                for name in sorted(names):
                    if name.endswith((".yaml", ".yml", ".json")):
                        yield os.path.join(root, name)
        else:
            yield arg


def review(obj, number):
    group_version = str(obj.get("apiVersion", ""))
    group, _, version = group_version.rpartition("/")
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    namespace = metadata.get("namespace") if isinstance(metadata.get("namespace"), str) else "default"
    kind = str(obj.get("kind", ""))
    resource = kind.lower() + "s"
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "00000000-0000-4000-8000-%012d" % number,
                        "kind": {"group": group, "version": version, "kind": kind},
                        "resource": {"group": group, "version": version, "resource": resource},
                        "requestKind": {"group": group, "version": version, "kind": kind},
                        "requestResource": {"group": group, "version": version, "resource": resource},
                        "name": str(metadata.get("name", "")), "namespace": namespace, "operation": "CREATE",
                        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
                        "object": obj, "oldObject": None, "dryRun": False,
                        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}}}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    number = 0
    for path in files_of(sys.argv[2:]):
        for obj in objects_of(path):
            number += 1
            with open(os.path.join(out, "review-%05d.json" % number), "w", encoding="utf-8") as f:
                json.dump(review(obj, number), f, separators=(",", ":"), default=str)
    print("%d AdmissionReview bodies in %s" % (number, out))


if __name__ == "__main__":
    main()
