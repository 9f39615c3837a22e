//go:build tools

// Package controlplane pins the commands build-controlplane.sh builds, so that `go mod tidy`
// keeps them (and everything they import) in go.mod and go.sum.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
