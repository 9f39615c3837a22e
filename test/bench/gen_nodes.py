#!/usr/bin/env python3
"""GPU nodes as kubelets and GPU Feature Discovery write them (~50 labels, conditions, 40 images,
addresses: ~9 KB of JSON each), for the benchmarks that need a cluster with GPU nodes.

    gen_nodes.py N OUT_DIR    writes OUT_DIR/nodes-00000.json, ... (Lists of 500 nodes)

Half the nodes run driver 550 and half 570, half are H100 and half A100 (GFD's labels, old and new names); every node has 8 GPUs and the nvidia.com/gpu taint.
"""
import json, os, sys
n, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
def node(i):
    name = "gpu-%05d" % i
    driver = "550" if i % 2 else "570"
    # Half H100, half A100 (the load benchmarks' sample pod selects an A100 on driver 550).
    product, family = (("NVIDIA-H100-80GB-HBM3", "hopper"), ("NVIDIA-A100-SXM4-80GB", "ampere"))[i // 2 % 2]
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": "us-east-1%s" % "abcd"[i % 4],
              "topology.kubernetes.io/region": "us-east-1", "eks.amazonaws.com/nodegroup": "gpu-%d" % (i % 20),
              "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
              "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.family": family,
              "nvidia.com/cuda.driver.major": driver, "nvidia.com/cuda.driver.minor": "54", "nvidia.com/cuda.driver.rev": "15",
              "nvidia.com/cuda.driver-version.major": driver, "nvidia.com/cuda.driver-version.minor": "54",
              "nvidia.com/cuda.driver-version.revision": "15",
              "nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "4", "nvidia.com/mig.capable": "true",
              "nvidia.com/mig.strategy": "single", "nvidia.com/gpu.compute.major": "9" if family == "hopper" else "8", "nvidia.com/gpu.compute.minor": "0"}
    for k in range(25):
        labels["feature.node.kubernetes.io/cpu-cpuid.AVX%d" % k] = "true"
    images = [{"names": ["registry.example/team-%d/image-%d@sha256:%064d" % (k, k, i), "registry.example/team-%d/image-%d:v1" % (k, k)],
               "sizeBytes": 1000000 * (k + 1)} for k in range(40)]
    cap = {"cpu": "192", "memory": "2Ti", "pods": "110", "ephemeral-storage": "3Ti", "nvidia.com/gpu": "8",
           "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                     "providerID": "aws:///us-east-1a/i-%017x" % i},
            "status": {"capacity": cap, "allocatable": dict(cap), "images": images,
                       "addresses": [{"type": "InternalIP", "address": "10.%d.%d.%d" % (i // 65536, (i // 256) % 256, i % 256)},
                                     {"type": "Hostname", "address": name}],
                       "conditions": [{"type": t, "status": "False", "reason": "Kubelet" + t, "message": "kubelet has no " + t,
                                       "lastHeartbeatTime": "2026-12-04T00:00:00Z", "lastTransitionTime": "2026-12-04T00:00:00Z"}
                                      for t in ("MemoryPressure", "DiskPressure", "PIDPressure")] +
                                     [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                                       "lastHeartbeatTime": "2026-12-04T00:00:00Z", "lastTransitionTime": "2026-12-04T00:00:00Z"}],
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "v1.37.2",
                                    "containerRuntimeVersion": "containerd://2.1.4", "kernelVersion": "6.1.0",
                                    "osImage": "Amazon Linux 2023", "kubeProxyVersion": "", "machineID": "%032x" % i,
                                    "systemUUID": "%032x" % i, "bootID": "%032x" % i}}}
chunk = 500
for c in range(0, n, chunk):
    with open("%s/nodes-%05d.json" % (out, c), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": [node(i) for i in range(c, min(n, c + chunk))]}, f)
print("# one node is %d bytes of JSON" % len(json.dumps(node(1))))
