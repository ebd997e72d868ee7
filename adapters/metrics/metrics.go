package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hostforge/hostforge/firmware"
)

// Namespace prefixes every metric name.
const Namespace = "hostforge"

// Firmware is firmware.Metrics on Prometheus collectors.
type Firmware struct {
	pending, active, exhausted, inMaintenance, started, available prometheus.Gauge
	updates                                                       *prometheus.CounterVec
	failures                                                      *prometheus.CounterVec
	retries                                                       prometheus.Counter
	catalogReloads                                                *prometheus.CounterVec
}

var _ firmware.Metrics = (*Firmware)(nil)

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
}

// NewFirmware creates the firmware metrics and registers them on reg.
func NewFirmware(reg prometheus.Registerer) (*Firmware, error) {
	f := &Firmware{
		pending: gauge("pending_host_firmware_update_count",
			"Drifted managed hosts without a reprovisioning request, as of the update manager's last pass."),
		active: gauge("active_host_firmware_update_count",
			"Hosts whose firmware update has started and not ended. Unlike NICo, assigned hosts' update substates are counted too."),
		exhausted: gauge("exhausted_reprovision_retry_count",
			"Hosts whose firmware update failed and spent its retry budget (they stay out of allocation until reset). Unlike NICo, assigned hosts are counted too."),
		inMaintenance: gauge("machines_in_maintenance_count",
			"Hosts consuming the shared update budget (in maintenance or with a reprovisioning request), as of the last pass."),
		started: gauge("machine_updates_started_count",
			"Reprovisioning requests the update manager's last pass created."),
		available: gauge("concurrent_machine_updates_available",
			"The calculated site-wide ceiling of concurrent machine updates."),
		updates: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "firmware_updates_total",
			Help: "Firmware updates started (they passed their start gate) and completed (handed back with every component at its default), by target and phase."},
			[]string{"target", "phase"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "firmware_update_failures_total",
			Help: "Failed firmware update attempts, by target and cause (the failure code)."},
			[]string{"target", "cause"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "host_reprovision_retries_total",
			Help: "Automatic retries of failed host firmware reprovisioning."}),
		catalogReloads: newCatalogReloads(),
	}
	for _, c := range []prometheus.Collector{f.pending, f.active, f.exhausted, f.inMaintenance, f.started, f.available, f.updates, f.failures, f.retries, f.catalogReloads} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Both phases of host updates exist from the start, at zero.
	f.updates.WithLabelValues(firmware.TargetHost, "started")
	f.updates.WithLabelValues(firmware.TargetHost, "completed")
	return f, nil
}

// Gauges sets the gauges.
func (f *Firmware) Gauges(g firmware.Gauges) {
	f.pending.Set(float64(g.Pending))
	f.active.Set(float64(g.Active))
	f.exhausted.Set(float64(g.Exhausted))
	f.inMaintenance.Set(float64(g.InMaintenance))
	f.started.Set(float64(g.Started))
	f.available.Set(float64(g.Ceiling))
}

// UpdateStarted counts a started update.
func (f *Firmware) UpdateStarted(target string) { f.updates.WithLabelValues(target, "started").Inc() }

// UpdateCompleted counts a completed update.
func (f *Firmware) UpdateCompleted(target string) {
	f.updates.WithLabelValues(target, "completed").Inc()
}

// UpdateFailed counts a failed attempt by its cause.
func (f *Firmware) UpdateFailed(target, cause string) {
	f.failures.WithLabelValues(target, cause).Inc()
}

// ReprovisionRetry counts an automatic retry.
func (f *Firmware) ReprovisionRetry() { f.retries.Inc() }

// NewRegistry returns a registry with the Go runtime and process
// collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves the registry's metrics (mount it on /metrics).
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
