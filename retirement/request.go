package retirement

import (
	"fmt"
	"strings"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

// Request asks for one device to be retired. Like an enrollment request it
// is fixed at submission: the site's settings are snapshotted into it, so a
// configuration change cannot alter a running retirement.
type Request struct {
	// Device is the NetBox device name.
	Device string `json:"device"`
	// DeviceClass routes the device to the Ironic instance that holds its
	// node (its NetBox role's device_class, read at submission).
	DeviceClass string `json:"device_class"`
	// Site is the site slug.
	Site string `json:"site"`
	// Run names this retirement: the NetBox journal entry records it, the
	// archived BMC credential records it, and the events it fires take
	// their IDs from it. A rerun of a device NetBox already has offline by
	// a retirement resumes that retirement's run instead.
	Run string `json:"run"`
	// Identity is the device's fleet-manager identity at submission ("" when
	// the submitter has no ledger): the ledger step clears the record only
	// while the device still has it.
	Identity string `json:"identity,omitempty"`
	Params   Params `json:"params"`
	// Site configuration in force at submission.
	Snapshot SiteConfig `json:"snapshot"`
}

// Params are the operator's parameters of one retirement.
type Params struct {
	// NoErase skips the erase; the result records it.
	NoErase bool `json:"no_erase,omitempty"`
	// Force retires a device NetBox has offline although no retirement's
	// journal entry says why (taken offline by hand).
	Force bool `json:"force,omitempty"`
	// MaxAttemptsOverride, when > 0, replaces the site's attempt budget.
	MaxAttemptsOverride int `json:"max_attempts_override,omitempty"`
}

// EraseMode is the site's erase: which of the agent's clean steps wipes a
// retiring host's disks.
type EraseMode string

// Erase modes.
const (
	// EraseMetadata runs erase_devices_metadata: partition tables and
	// file-system signatures, in seconds (the default).
	EraseMetadata EraseMode = "metadata"
	// EraseFull runs erase_devices: every disk overwritten or securely
	// erased; hours on large disks.
	EraseFull EraseMode = "full"
)

// Steps are the clean steps of the mode.
func (m EraseMode) Steps() []ironic.CleanStep {
	if m == EraseFull {
		return []ironic.CleanStep{ironic.EraseFull}
	}
	return []ironic.CleanStep{ironic.EraseMetadata}
}

// DNSZone is the site's DNS zone the BMC records live in, for the
// serverDeleteDNS event.
type DNSZone struct {
	Name        string   `json:"name,omitempty"`
	SOAEmail    string   `json:"soa_email,omitempty"`
	NameServers []string `json:"name_servers,omitempty"`
	TTL         int      `json:"ttl,omitempty"`
}

// SiteConfig is one site's retirement settings, snapshotted into each request.
type SiteConfig struct {
	// The site's enrollment gates: a system enrollment does not configure
	// holds nothing of the host to take out.
	ConfigureDHCP bool `json:"configure_dhcp"`
	ConfigureBMC  bool `json:"configure_bmc"`
	IronicEnrol   bool `json:"ironic_enrol"`
	// IronicInstances maps a device_class to the Ironic instance managing it.
	IronicInstances map[string]string `json:"ironic_instances,omitempty"`
	// Erase is retire.erase (EraseMetadata when empty).
	Erase EraseMode `json:"erase,omitempty"`
	// KeepNode is retire.keep_node: the node stays in Ironic, manageable
	// and in maintenance (reason "retired"), instead of being deleted.
	KeepNode bool `json:"keep_node,omitempty"`
	// ArchiveRetention is how long the archived BMC credential is kept
	// (retire.archive_retention; bmc.DefaultRetention when 0).
	ArchiveRetention time.Duration `json:"archive_retention,omitempty"`
	// MonitoringItem names the vault item of the shared monitoring user
	// (DefaultMonitoringItem when empty).
	MonitoringItem string `json:"monitoring_item,omitempty"`
	// Ledger: the site has a fleet manager's ledger, whose record of the
	// device is cleared.
	Ledger bool `json:"ledger,omitempty"`
	// Events: the site dispatches extensions; serverDecommissioned and
	// serverDeleteDNS are fired.
	Events bool `json:"events,omitempty"`
	// DNSZone is the zone of the BMC records serverDeleteDNS names.
	DNSZone DNSZone `json:"dns_zone,omitzero"`
	// NodeLockMaxWait bounds how long a locked node is waited out (15 min).
	NodeLockMaxWait time.Duration `json:"node_lock_max_wait,omitempty"`
	// EraseDeadline bounds the erase (the site's cleaning deadline, 3 h).
	EraseDeadline time.Duration `json:"erase_deadline,omitempty"`
	// MaxAttempts is the attempt budget of a retryable failure (3).
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// Defaults of SiteConfig fields left zero.
const (
	DefaultMonitoringItem  = "ipmi-exporter"
	DefaultNodeLockMaxWait = 15 * time.Minute
	DefaultEraseDeadline   = 3 * time.Hour
	DefaultMaxAttempts     = 3
)

// WithDefaults returns s with every zero optional field set.
func (s SiteConfig) WithDefaults() SiteConfig {
	if s.Erase == "" {
		s.Erase = EraseMetadata
	}
	if s.ArchiveRetention <= 0 {
		s.ArchiveRetention = bmc.DefaultRetention
	}
	if s.MonitoringItem == "" {
		s.MonitoringItem = DefaultMonitoringItem
	}
	if s.NodeLockMaxWait <= 0 {
		s.NodeLockMaxWait = DefaultNodeLockMaxWait
	}
	if s.EraseDeadline <= 0 {
		s.EraseDeadline = DefaultEraseDeadline
	}
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	return s
}

// Validate checks the settings, naming the first bad one.
func (s SiteConfig) Validate() error {
	switch s.Erase {
	case "", EraseMetadata, EraseFull:
	default:
		return InputInvalid.New("retire.erase %q: want metadata or full", s.Erase)
	}
	if s.ArchiveRetention < 0 {
		return InputInvalid.New("retire.archive_retention %s: want a positive duration", s.ArchiveRetention)
	}
	return nil
}

// NewRequest builds the request of one device, snapshotting the site's
// settings with their defaults.
func NewRequest(device, deviceClass, site, run, identity string, cfg SiteConfig, p Params) Request {
	return Request{Device: device, DeviceClass: deviceClass, Site: site, Run: run, Identity: identity, Params: p, Snapshot: cfg.WithDefaults()}
}

// validate refuses a request that cannot be run, before any step.
func (r Request) validate() error {
	switch {
	case strings.TrimSpace(r.Device) == "":
		return InputInvalid.New("the request names no device")
	case strings.TrimSpace(r.Run) == "" || strings.ContainsAny(r.Run, " \t\r\n"):
		return InputInvalid.New("device %s: run %q: want a run ID without spaces", r.Device, r.Run)
	case r.Params.MaxAttemptsOverride < 0:
		return InputInvalid.New("device %s: max_attempts_override %d: want 0 or more", r.Device, r.Params.MaxAttemptsOverride)
	}
	return r.Snapshot.Validate()
}

// route is the Ironic instance holding the device's node.
func (r Request) route() (string, error) {
	if r.DeviceClass == "" {
		return "", RoutingUnresolved.New("device %s: the request carries no device_class", r.Device)
	}
	inst, ok := r.Snapshot.IronicInstances[r.DeviceClass]
	if !ok || inst == "" {
		return "", RoutingUnresolved.New("device %s: no Ironic instance manages device_class %q", r.Device, r.DeviceClass)
	}
	return inst, nil
}

func (r Request) maxAttempts() int {
	if r.Params.MaxAttemptsOverride > 0 {
		return r.Params.MaxAttemptsOverride
	}
	if r.Snapshot.MaxAttempts > 0 {
		return r.Snapshot.MaxAttempts
	}
	return DefaultMaxAttempts
}

// Policy is the request's retry policy: its attempt budget, the node-lock
// budget (IRONIC_NODE_LOCKED past it), and the BMC's waits (bmc.Waits).
func (r Request) Policy() flow.Policy {
	lock := r.Snapshot.NodeLockMaxWait
	if lock <= 0 {
		lock = DefaultNodeLockMaxWait
	}
	waits := map[string]flow.WaitPolicy{
		ironic.WaitNodeLocked: {Budget: lock, Backoff: ironic.LockBackoff, Exhausted: ironic.LockWaitExhausted},
	}
	for _, w := range bmc.Waits() {
		waits[w.Reason] = flow.WaitPolicy{Budget: w.Budget, Backoff: w.Backoff, Exhausted: w.Exhausted}
	}
	return flow.Policy{MaxAttempts: r.maxAttempts(), Retry: flow.DefaultRetry, Waits: waits}
}

// eventID is the ID of one of the run's events: the run, then the stage,
// so the two events of a run never share delivery IDs.
func eventID(run, stage string) string { return fmt.Sprintf("%s/%s", run, stage) }
