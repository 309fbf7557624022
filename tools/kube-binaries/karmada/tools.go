//go:build tools

// Package tools pins Karmada's controller-manager, scheduler, scheduler-estimator and webhook commands so `go mod tidy`
// keeps their dependencies.
package tools

import (
	_ "github.com/karmada-io/karmada/cmd/controller-manager"
	_ "github.com/karmada-io/karmada/cmd/scheduler"
	_ "github.com/karmada-io/karmada/cmd/scheduler-estimator"
	_ "github.com/karmada-io/karmada/cmd/webhook"
)
