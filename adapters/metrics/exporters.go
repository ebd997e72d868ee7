package metrics

import "github.com/prometheus/client_golang/prometheus"

// Exporters are the hostforge metrics a process exports: the firmware
// update manager's and the workflows'. A worker registers them all on the
// registry it serves, with or without a firmware: section (then the
// firmware metrics stay at zero), so every worker exports the same
// families — the ones the dashboard and the alert rules under deploy/ read.
type Exporters struct {
	Firmware  *Firmware
	Workflows *Workflows
}

// NewExporters creates every hostforge metric and registers it on reg
// (NewRegistry adds the Go runtime's and the process's).
func NewExporters(reg prometheus.Registerer) (*Exporters, error) {
	f, err := NewFirmware(reg)
	if err != nil {
		return nil, err
	}
	w, err := NewWorkflows(reg)
	if err != nil {
		return nil, err
	}
	return &Exporters{Firmware: f, Workflows: w}, nil
}
