package dhcp

// Entry is one host's DHCP reservation.
type Entry struct {
	// Hostname is the reservation's host name (the NetBox device name).
	Hostname string `json:"hostname"`
	// MAC is the BMC's management MAC address.
	MAC string `json:"mac"`
	// IP is the BMC's out-of-band IPv4 address.
	IP string `json:"ip"`
}

// Result says what the phase did.
type Result struct {
	// Changed is true when the file was uploaded and the service restarted.
	Changed bool `json:"changed"`
	// Path is the remote file.
	Path string `json:"path,omitempty"`
}
