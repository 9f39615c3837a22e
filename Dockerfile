# gpuguard: the admission webhook image (gpuguard-lint is in it too).
#
#   docker build -t REGISTRY/gpuguard-webhook:0.1.0 .
#
# Build stage: Debian bookworm's packages and the project's own CMake build.
# Runtime stage: bookworm-slim with only the shared libraries the two binaries
# load (test/ship/dockerfile_test.sh checks the list against `ldd`).
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz (manifests/base).

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make pkg-config \
      libssl-dev nlohmann-json3-dev libyaml-cpp-dev libre2-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGPUGUARD_BUILD_TESTS=OFF \
 && cmake --build build --target gpuguard-webhook gpuguard-lint -j"$(nproc)"
RUN mkdir -p /out \
 && for b in gpuguard-webhook gpuguard-lint; do \
      f=$(find build -type f -name "$b" -perm -u+x | head -n 1); \
      test -n "$f" || { echo "$b was not built" >&2; exit 1; }; \
      install -m 0755 -s "$f" "/out/$b"; \
    done

FROM debian:bookworm-slim
# What `ldd` lists for the two binaries: libssl3 (libssl, libcrypto),
# libyaml-cpp0.7 and libre2-9 (the policy's patterns); libc6, libgcc-s1 and
# libstdc++6 are already in bookworm-slim. cpp-httplib is used by the tests
# and the benchmark's reference server only, never by a shipped binary
# (test/ship/dockerfile_test.sh fails when a binary loads a library missing here).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libssl3 libyaml-cpp0.7 libre2-9 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/gpuguard-webhook /out/gpuguard-lint /usr/local/bin/
COPY --from=build /src/LICENSE /usr/share/doc/gpuguard/copyright
LABEL org.opencontainers.image.title="gpuguard-webhook" \
      org.opencontainers.image.licenses="Apache-2.0"
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["gpuguard-webhook"]
