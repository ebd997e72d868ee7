package enrollment

import (
	"fmt"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/intent"
)

// Request asks for one device to be enrolled. It is fixed at submission: the
// per-site gates and the platform-class readiness are snapshotted into it, so
// a configuration change cannot alter a running execution.
type Request struct {
	// Device is the NetBox device name.
	Device string `json:"device"`
	// DeviceClass routes the request to the Ironic instance that manages it.
	DeviceClass string `json:"device_class"`
	// Site is the site slug the request was submitted for.
	Site string `json:"site"`
	// Params are the operator parameters.
	Params Params `json:"params"`
	// Snapshot is the configuration in force at submission.
	Snapshot Snapshot `json:"snapshot"`
}

// Params are the operator parameters of one enrollment.
type Params struct {
	// ForceBMCRestart cold-resets the BMC even when its password was not rotated.
	ForceBMCRestart bool `json:"force_bmc_restart,omitempty"`
	// RunInspection: nil or true runs inspection and verification (the default);
	// false skips both.
	RunInspection *bool `json:"run_inspection,omitempty"`
	// ForceInspection runs a fresh inspection even when the existing inventory verifies.
	ForceInspection bool `json:"force_inspection,omitempty"`
	// MaxAttemptsOverride, when > 0, replaces the site's attempt budget
	// (1 fails fast on the first retryable failure).
	MaxAttemptsOverride int `json:"max_attempts_override,omitempty"`
}

// InspectionEnabled reports whether inspection runs (default on).
func (p Params) InspectionEnabled() bool { return p.RunInspection == nil || *p.RunInspection }

// Snapshot is the per-site configuration captured at submission.
type Snapshot struct {
	// PlatformClassActivityReady is the site's worker-readiness gate for
	// recording the platform class (phase 0b). While false the step is skipped.
	PlatformClassActivityReady bool `json:"platform_class_activity_ready"`
	// Site is the site configuration.
	Site SiteConfig `json:"site"`
}

// SiteConfig is one site's enrollment configuration.
type SiteConfig struct {
	// ConfigureDHCP gates phase 1 (enrollment_configure_dhcp).
	ConfigureDHCP bool `json:"enrollment_configure_dhcp"`
	// ConfigureBMC gates phase 2 (enrollment_configure_bmc).
	ConfigureBMC bool `json:"enrollment_configure_bmc"`
	// IronicEnrol gates phases 4-7 (enrollment_ironic_enrol).
	IronicEnrol bool `json:"enrollment_ironic_enrol"`
	// SwitchToIPMIAfterInspection enables phase 6.
	SwitchToIPMIAfterInspection bool `json:"switch_to_ipmi_after_inspection"`
	// RestrictBoot: nil or true restricts boot to the provisioning NIC (the
	// default); false opts the site out.
	RestrictBoot *bool `json:"restrict_boot,omitempty"`
	// IronicTag is the NetBox tag slug marking an enrolled host (default "ironic").
	IronicTag string `json:"ironic_tag,omitempty"`
	// NodeLockMaxWait bounds how long a locked Ironic node is waited out
	// (nodeLockMaxWaitSeconds, default 15 minutes).
	NodeLockMaxWait Duration `json:"node_lock_max_wait,omitempty"`
	// CleaningDeadline bounds the whole cleaning half (default 3 hours).
	CleaningDeadline Duration `json:"cleaning_deadline,omitempty"`
	// MaxAttempts is the retry policy's attempt budget for a retryable
	// failure of one step or of a whole Ironic attempt (default 3).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// IronicInstances maps a device_class to the Ironic instance that manages it.
	IronicInstances map[string]string `json:"ironic_instances"`
	// EnrolProject is the Ironic owner/lessee project of enrolled nodes.
	EnrolProject string `json:"enrol_project,omitempty"`
	// FactoryItem names the vault item of the factory credential the site's
	// BMCs ship with (default "bmc-factory").
	FactoryItem string `json:"factory_item,omitempty"`
	// MonitoringItem names the vault item of the shared ipmi_exporter
	// monitoring user (default "ipmi-exporter").
	MonitoringItem string `json:"monitoring_item,omitempty"`
	// BMCNetworks are the site's BMC address ranges (CIDRs). When set, a
	// NetBox ironic_settings.redfish_address_override must be an IP address
	// in one of them (see IronicSettings).
	BMCNetworks []string `json:"bmc_networks,omitempty"`
	// RedfishVerifyCAPaths are the CA bundles (paths on the Ironic
	// conductors) that NetBox's ironic_driver_info.redfish_verify_ca may
	// name; empty allows only true.
	RedfishVerifyCAPaths []string `json:"redfish_verify_ca_paths,omitempty"`
}

// Defaults of SiteConfig fields left zero.
const (
	DefaultNodeLockMaxWait  = 15 * time.Minute
	DefaultCleaningDeadline = 3 * time.Hour
	DefaultMaxAttempts      = 3
	DefaultFactoryItem      = "bmc-factory"
	DefaultMonitoringItem   = "ipmi-exporter"
)

// AdminItem names the vault item of a device's per-host BMC admin
// credential. It is computed here, once, and handed to the BMC phase (which
// rotates it), the Ironic phases (driver_info) and the link guard (Redfish
// login), so the three always name the same item; the rule itself is
// bmc.AdminItem, which retirement (archiving the item) shares.
func AdminItem(device string) string { return bmc.AdminItem(device) }

// BootRestricted reports whether boot restriction is on (default on).
func (s SiteConfig) BootRestricted() bool { return s.RestrictBoot == nil || *s.RestrictBoot }

// WithDefaults returns s with every zero optional field set to its default.
func (s SiteConfig) WithDefaults() SiteConfig {
	if s.IronicTag == "" {
		s.IronicTag = intent.DefaultIronicTag
	}
	if s.NodeLockMaxWait <= 0 {
		s.NodeLockMaxWait = Duration(DefaultNodeLockMaxWait)
	}
	if s.CleaningDeadline <= 0 {
		s.CleaningDeadline = Duration(DefaultCleaningDeadline)
	}
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.FactoryItem == "" {
		s.FactoryItem = DefaultFactoryItem
	}
	if s.MonitoringItem == "" {
		s.MonitoringItem = DefaultMonitoringItem
	}
	return s
}

// NewRequest builds a request for one device, snapshotting the site
// configuration (with defaults applied) and the platform-class readiness gate.
func NewRequest(device, deviceClass string, site string, cfg SiteConfig, platformClassReady bool, p Params) Request {
	return Request{
		Device:      device,
		DeviceClass: deviceClass,
		Site:        site,
		Params:      p,
		Snapshot:    Snapshot{PlatformClassActivityReady: platformClassReady, Site: cfg.WithDefaults()},
	}
}

// maxAttempts is the attempt budget for this request.
func (r Request) maxAttempts() int {
	if r.Params.MaxAttemptsOverride > 0 {
		return r.Params.MaxAttemptsOverride
	}
	if r.Snapshot.Site.MaxAttempts > 0 {
		return r.Snapshot.Site.MaxAttempts
	}
	return DefaultMaxAttempts
}

// Duration is a time.Duration that reads and writes as a Go duration string
// ("15m") in JSON and YAML, and also accepts a number of seconds.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalText renders "15m0s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads "15m" or "900" (seconds).
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	var secs int64
	if _, err := fmt.Sscanf(s, "%d", &secs); err == nil && fmt.Sprint(secs) == s {
		*d = Duration(time.Duration(secs) * time.Second)
		return nil
	}
	return fmt.Errorf("invalid duration %q (want e.g. 15m or a number of seconds)", s)
}
