package firmware

import (
	"time"
)

// Settings are a site's firmware update settings: NICo's firmware_global
// and machine_updater options, and the workflow's timings. The zero value
// of a duration or count takes its documented default.
type Settings struct {
	// AutoUpdate is the site default of automatic updates
	// (firmware_global.autoupdate); a per-machine override wins.
	AutoUpdate bool `json:"autoupdate"`
	// InstanceUpdatesManualTagging limits automatic selection to
	// unassigned Ready hosts.
	InstanceUpdatesManualTagging bool `json:"instance_updates_manual_tagging"`
	// HostDisableAutoupdate is the legacy list of machine IDs never
	// selected automatically (compared with machine IDs only). A listed
	// machine is skipped; the pass goes on (NICo ends the pass there). A
	// per-machine override wins over the list.
	HostDisableAutoupdate []string `json:"host_disable_autoupdate,omitempty"`
	// MaxConcurrentAbsolute and MaxConcurrentPercent set the site's update
	// ceiling (see Ceiling). Neither set: nothing starts automatically.
	MaxConcurrentAbsolute *int `json:"max_concurrent_machine_updates_absolute,omitempty"`
	MaxConcurrentPercent  *int `json:"max_concurrent_machine_updates_percent,omitempty"`
	// InstanceAutorebootPeriod, when set, lets an assigned host start its
	// update inside the period without tenant approval.
	InstanceAutorebootPeriod *Period `json:"instance_autoreboot_period,omitempty"`
	// RequiresManualUpgrade pauses MNNVL-capable hosts in
	// WaitingForManualUpgrade until an operator marks the platform
	// procedure complete.
	RequiresManualUpgrade bool `json:"requires_manual_upgrade"`
	// MaxUploads is the site's number of upload slots (default 4).
	MaxUploads int `json:"max_uploads,omitempty"`

	// RetryInterval is host_firmware_upgrade_retry_interval (default 60 min).
	RetryInterval time.Duration `json:"retry_interval,omitempty"`
	// MaxRetries is the failure retry budget (default 5).
	MaxRetries int `json:"max_retries,omitempty"`
	// NewFirmwareWait is how long NewFirmwareReportedWait waits before
	// resetting again (default 30 min).
	NewFirmwareWait time.Duration `json:"new_firmware_wait,omitempty"`
	// MaxResetRetries bounds the repeated activation resets (default 5).
	MaxResetRetries int `json:"max_reset_retries,omitempty"`
	// NoResetRetries fails at the first NewFirmwareWait instead of
	// resetting again.
	NoResetRetries bool `json:"no_reset_retries,omitempty"`
	// InitialResetWait is the pause after the pre-update power-on
	// (default 20 min).
	InitialResetWait time.Duration `json:"initial_reset_wait,omitempty"`
	// HGXRebootDelay is the off/on pause of hgxbmc and gpu (default 30 s).
	HGXRebootDelay time.Duration `json:"hgx_bmc_gpu_reboot_delay,omitempty"`
	// TaskPoll is how often a BMC task is polled (default 30 s).
	TaskPoll time.Duration `json:"task_poll,omitempty"`
	// TaskTimeout fails a task that never ends (default 2 h).
	TaskTimeout time.Duration `json:"task_timeout,omitempty"`
	// TaskGoneGrace is how long a task the BMC no longer knows is waited
	// for before checking again (default 15 min).
	TaskGoneGrace time.Duration `json:"task_gone_grace,omitempty"`
	// InventoryPoll is how often NewFirmwareReportedWait reads the
	// inventory (default 2 min).
	InventoryPoll time.Duration `json:"inventory_poll,omitempty"`
	// Recheck is how often a host waiting on someone (approval, the manual
	// gate, the retry interval, the agent) looks again (default 5 min).
	Recheck time.Duration `json:"recheck,omitempty"`
	// MaxTransientErrors bounds consecutive transient errors of one
	// substate before the attempt fails (default 10).
	MaxTransientErrors int `json:"max_transient_errors,omitempty"`
	// MaxUploadRetries bounds consecutive transient upload failures, each
	// of which returns to checking (default 5).
	MaxUploadRetries int `json:"max_upload_retries,omitempty"`
	// UploadLease bounds how long a crashed worker's upload slot stays
	// taken (default 2 h).
	UploadLease time.Duration `json:"upload_lease,omitempty"`
	// RunInterval is how often the update manager's pass runs
	// (machine_update_run_interval, default 300 s).
	RunInterval time.Duration `json:"machine_update_run_interval,omitempty"`
	// PowerDrainWait is how long a power drain keeps the host off on a
	// BMC that offers no AC power cycle: the drain is then a power-off
	// held this long, and on (default 90 s, the pause NICo keeps after an
	// AC cycle).
	PowerDrainWait time.Duration `json:"power_drain_wait,omitempty"`
	// HistoryRetention is how long finished updates are kept (default
	// DefaultHistoryRetention, 90 days).
	HistoryRetention time.Duration `json:"history_retention,omitempty"`
}

// Period is a span of time.
type Period struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Contains reports whether t is inside the period (start included).
func (p *Period) Contains(t time.Time) bool {
	return p != nil && !t.Before(p.Start) && t.Before(p.End)
}

// WithDefaults returns s with every unset duration and count at its default.
func (s Settings) WithDefaults() Settings {
	d := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	n := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	n(&s.MaxUploads, 4)
	d(&s.RetryInterval, time.Hour)
	n(&s.MaxRetries, 5)
	d(&s.NewFirmwareWait, 30*time.Minute)
	n(&s.MaxResetRetries, 5)
	d(&s.InitialResetWait, 20*time.Minute)
	d(&s.HGXRebootDelay, 30*time.Second)
	d(&s.TaskPoll, 30*time.Second)
	d(&s.TaskTimeout, 2*time.Hour)
	d(&s.TaskGoneGrace, 15*time.Minute)
	d(&s.InventoryPoll, 2*time.Minute)
	d(&s.Recheck, 5*time.Minute)
	n(&s.MaxTransientErrors, 10)
	n(&s.MaxUploadRetries, 5)
	d(&s.UploadLease, 2*time.Hour)
	d(&s.RunInterval, 300*time.Second)
	d(&s.PowerDrainWait, 90*time.Second)
	d(&s.HistoryRetention, DefaultHistoryRetention)
	return s
}

// Fleet is what the ceiling is computed from: every managed host, and how
// many of them are unhealthy (an alert other than the update's own).
type Fleet struct {
	Total     int
	Unhealthy int
}

// Ceiling is the site's update ceiling: how many hosts may be in
// maintenance or an update at once.
//
//   - absolute only: absolute;
//   - percent: ceil(percent × total / 100) − unhealthy, floored at 0, and
//     capped by absolute when both are set;
//   - neither: 0, and nothing starts automatically.
//
// The counts come in one struct so that total and unhealthy cannot be
// swapped (NICo passes them the wrong way round and always gets 0).
func Ceiling(absolute, percent *int, f Fleet) int {
	if percent == nil {
		if absolute == nil {
			return 0
		}
		return max(*absolute, 0)
	}
	c := (max(*percent, 0)*f.Total+99)/100 - f.Unhealthy
	c = max(c, 0)
	if absolute != nil {
		c = min(c, max(*absolute, 0))
	}
	return c
}
