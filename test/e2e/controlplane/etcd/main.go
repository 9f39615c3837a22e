// Command etcd is etcd's own server entry point (go.etcd.io/etcd/server/v3/etcdmain), built
// from the version pinned in ../go.mod, so that the tests need no Debian etcd.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
