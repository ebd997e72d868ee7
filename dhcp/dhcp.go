package dhcp

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
)

// Entry is one host's DHCP reservation: the BMC's management MAC gets the
// host's out-of-band address. It is the phase's whole input.
type Entry struct {
	// Hostname is the reservation's host name (the NetBox device name). It is
	// also the remote file's base name, so it is restricted to letters,
	// digits, '-', '_' and '.', starting and ending with a letter or digit,
	// at most 253 characters with labels of at most 63.
	Hostname string `json:"hostname"`
	// MAC is the BMC's management MAC address (EUI-48, any of the forms
	// net.ParseMAC accepts). It is rendered lower-case and colon-separated.
	MAC string `json:"mac"`
	// IP is the BMC's out-of-band IPv4 address, without a prefix length.
	IP string `json:"ip"`
}

// Result says what the phase did.
type Result struct {
	// Changed is true when the file was uploaded and the service restarted.
	Changed bool `json:"changed"`
	// Path is the remote file.
	Path string `json:"path,omitempty"`
	// SHA256 is the hex SHA-256 of the rendered file.
	SHA256 string `json:"sha256,omitempty"`
}

// reservation is a validated, normalised Entry.
type reservation struct {
	hostname string
	mac      string // lower-case, colon-separated
	ip       string // dotted quad
}

var labelRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9_-]*[A-Za-z0-9])?$`)

// FieldError names the Entry field that is wrong and why.
type FieldError struct {
	Field  string
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Field, e.Value, e.Reason)
}

// Validate checks the entry without rendering it. The error is a *FieldError.
func (e Entry) Validate() error {
	_, err := e.normalise()
	return err
}

func (e Entry) normalise() (reservation, error) {
	var r reservation
	if err := validHostname(e.Hostname); err != nil {
		return r, err
	}
	r.hostname = e.Hostname

	mac, err := net.ParseMAC(e.MAC)
	if err != nil || strings.TrimSpace(e.MAC) != e.MAC {
		return r, &FieldError{Field: "mac", Value: e.MAC, Reason: "not a MAC address"}
	}
	if len(mac) != 6 {
		return r, &FieldError{Field: "mac", Value: e.MAC, Reason: fmt.Sprintf("a %d-byte hardware address, want a 6-byte Ethernet MAC", len(mac))}
	}
	if mac[0]&1 == 1 {
		return r, &FieldError{Field: "mac", Value: e.MAC, Reason: "a multicast address cannot be a BMC's MAC"}
	}
	r.mac = mac.String()

	ip, err := netip.ParseAddr(e.IP)
	switch {
	case err != nil:
		return r, &FieldError{Field: "ip", Value: e.IP, Reason: "not an IPv4 address (without prefix length)"}
	case !ip.Is4():
		return r, &FieldError{Field: "ip", Value: e.IP, Reason: "not an IPv4 address; DHCPv4 reservations need one"}
	case ip.IsUnspecified(), ip.IsLoopback(), ip.IsMulticast(), ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return r, &FieldError{Field: "ip", Value: e.IP, Reason: "not a unicast host address"}
	}
	r.ip = ip.String()
	return r, nil
}

func validHostname(h string) error {
	fe := func(reason string) error { return &FieldError{Field: "hostname", Value: h, Reason: reason} }
	if h == "" {
		return fe("empty")
	}
	if len(h) > 253 {
		return fe("longer than 253 characters")
	}
	for _, l := range strings.Split(h, ".") {
		if len(l) > 63 {
			return fe("a label is longer than 63 characters")
		}
		if !labelRE.MatchString(l) {
			return fe("only letters, digits, '-', '_' and '.' are allowed, each dot-separated label starting and ending with a letter or digit (no spaces, quotes or config syntax)")
		}
	}
	return nil
}
