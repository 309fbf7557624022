//go:build tools

// Package tools pins go-containerregistry's registry command so `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/google/go-containerregistry/cmd/registry"
