// Wrapper module: builds go-containerregistry's in-memory OCI registry (cmd/registry) from the Go
// module proxy, for the release test (test/release.test.ts), with its go.sum committed so every
// machine builds from the same sources, like the helm and etcd wrappers beside it.
module karmada-quota/tools/kube-binaries/registry

go 1.26.0

require github.com/google/go-containerregistry v0.22.1
