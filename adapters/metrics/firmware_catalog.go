package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hostforge/hostforge/firmware"
)

var _ firmware.CatalogMetrics = (*Firmware)(nil)

// newCatalogReloads counts the reloads of changed catalog files, by
// result: ok (the new catalog is in force) or refused (the last good one
// stays; the error is logged).
func newCatalogReloads() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "firmware_catalog_reloads_total",
		Help: "Reloads of changed firmware catalog files, by result: ok (in force) or refused (the last good catalog stays in force)."},
		[]string{"result"})
	c.WithLabelValues("ok")
	c.WithLabelValues("refused")
	return c
}

// CatalogReload counts one reload of changed catalog files.
func (f *Firmware) CatalogReload(ok bool) {
	r := "refused"
	if ok {
		r = "ok"
	}
	f.catalogReloads.WithLabelValues(r).Inc()
}
