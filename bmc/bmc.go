package bmc

import "log/slog"

// Target is the BMC to configure and the intent it is configured to.
type Target struct {
	// Device is the NetBox device name; the BMC hostname derives from it.
	Device string `json:"device"`
	// Address is the BMC's out-of-band address.
	Address string `json:"address"`
	// NTPServers and SyslogServers come from the site.
	NTPServers    []string `json:"ntp_servers,omitempty"`
	SyslogServers []string `json:"syslog_servers,omitempty"`
	// ProvisioningMAC is the MAC of the NIC Ironic PXE-boots from ("" when unknown).
	ProvisioningMAC string `json:"provisioning_mac,omitempty"`
	// RestrictBoot restricts boot to the provisioning NIC.
	RestrictBoot bool `json:"restrict_boot"`
	// ForceRestart cold-resets the BMC even without a password rotation,
	// once per RunID.
	ForceRestart bool `json:"force_restart,omitempty"`
	// RunID identifies the run (one enrollment execution) the attempts
	// belong to. A forced cold reset happens once per RunID, however many
	// attempts the run makes; it is required with ForceRestart.
	RunID string `json:"run_id,omitempty"`
	// AdminItem names the vault item of the host's per-host admin
	// credential: the one the phase rotates and Ironic authenticates with.
	AdminItem string `json:"admin_item"`
	// FactoryItem names the vault item of the factory/initial admin
	// credential the site's BMCs ship with.
	FactoryItem string `json:"factory_item"`
	// MonitoringItem names the vault item of the shared ipmi_exporter
	// monitoring user.
	MonitoringItem string `json:"monitoring_item"`
	// ArchivedItem, when set, names where a retirement archived the host's
	// per-host credential (ArchivedItem(AdminItem)): a host enrolled again
	// after its retirement is reached with it, and rotated to a fresh one.
	ArchivedItem string `json:"archived_item,omitempty"`
}

// Result says what one attempt did.
type Result struct {
	Vendor string `json:"vendor"`
	// Steps lists each step the vendor ran as "name:outcome", in order, e.g.
	// "password:ok", "ntp:set", "boot_restriction:not_identified".
	Steps []string `json:"steps,omitempty"`
	// Writes counts the configuration writes the attempt made
	// (PATCH/POST/DELETE), including one whose answer was lost.
	Writes int `json:"writes"`
	// Rotated is true when the attempt promoted a new admin password.
	Rotated bool `json:"rotated,omitempty"`
	// Reset is true when the attempt requested the BMC's cold reset.
	Reset bool `json:"reset,omitempty"`
}

// Credential is a user name and password. It never prints its password:
// String, GoString and slog all redact it.
type Credential struct {
	Username string `json:"-"`
	Password string `json:"-"`
}

func (c Credential) String() string   { return c.Username + ":<redacted>" }
func (c Credential) GoString() string { return "bmc.Credential{" + c.String() + "}" }

// LogValue redacts the password in structured logs.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Valid reports whether both fields are set.
func (c Credential) Valid() bool { return c.Username != "" && c.Password != "" }
