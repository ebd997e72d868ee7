package bmc

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
	// ForceRestart cold-resets the BMC even without a password rotation.
	ForceRestart bool `json:"force_restart,omitempty"`
}

// Result says what the strategy did.
type Result struct {
	Vendor string   `json:"vendor"`
	Steps  []string `json:"steps,omitempty"`
	Writes int      `json:"writes"`
}
