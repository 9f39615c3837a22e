"""Dry-run pod creates through kube-apiserver, one per arm in a shuffled order each round, on one
keep-alive connection, so that every arm meets the same moments of a noisy machine; then each arm's
latency and what it adds to the arm "none", as the median of its paired differences (round by round)
and by p50 and p99. Used by test/bench/admission_floor.sh.

    paired_creates.py PORT PKI_DIR ROUNDS ARM...   (each arm's pods go to namespace b-ARM)
"""
import http.client
import json
import random
import ssl
import statistics
import sys
import time


def pod(namespace):
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "bench-", "namespace": namespace},
        "spec": {"containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                                 "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}],
                 "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                 "nodeSelector": {"nvidia.com/cuda.driver.major": "550"}}}).encode()


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def main():
    port, pki, rounds, arms = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    ctx = ssl.create_default_context(cafile=f"{pki}/ca.crt")
    ctx.load_cert_chain(f"{pki}/admin.crt", f"{pki}/admin.key")
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
    bodies = {arm: pod(f"b-{arm}") for arm in arms}

    def create(arm):
        conn.request("POST", f"/api/v1/namespaces/b-{arm}/pods?dryRun=All", bodies[arm],
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        if response.status != 201:
            sys.exit(f"paired_creates.py: {arm}: HTTP {response.status}: {data[:300]!r}")

    for _ in range(30):
        for arm in arms:
            create(arm)
    latency = {arm: [] for arm in arms}
    for _ in range(rounds):
        order = arms[:]
        random.shuffle(order)
        for arm in order:
            start = time.perf_counter()
            create(arm)
            latency[arm].append((time.perf_counter() - start) * 1e3)
    for arm in arms:
        lat = latency[arm]
        print(f"{arm:9s} p50 {quantile(lat, .5):7.3f} ms  p90 {quantile(lat, .9):7.3f} ms  "
              f"p99 {quantile(lat, .99):7.3f} ms  mean {statistics.mean(lat):7.3f} ms")
    # "added ARM PAIRED P50 P99": machine-readable, one line per arm but none
    base = latency["none"]
    for arm in arms:
        if arm == "none":
            continue
        lat = latency[arm]
        paired = statistics.median(a - b for a, b in zip(lat, base))
        print(f"added {arm} {paired:.3f} {quantile(lat, .5) - quantile(base, .5):.3f} "
              f"{quantile(lat, .99) - quantile(base, .99):.3f}")
    if "gpuguard" in latency:
        for other in ("noop-h1", "vap"):
            if other in latency:
                paired = statistics.median(a - b for a, b in zip(latency["gpuguard"], latency[other]))
                print(f"over {other} {paired:.3f}")


if __name__ == "__main__":
    main()
