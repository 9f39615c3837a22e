// The smallest correct admission webhook: the floor any webhook pays (test/bench/admission_vs_peers.sh).
// Test tooling, standard library only; built by ../build-peers.sh.
module gpuguard.test/bench/noop-webhook

go 1.26
