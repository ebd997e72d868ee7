package dhcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
)

// Flavour is the DHCP server software a site runs.
type Flavour string

// The supported flavours.
const (
	// ISC is ISC dhcpd (Debian isc-dhcp-server): one host stanza per file.
	ISC Flavour = "isc"
	// Kea is Kea DHCPv4 (Debian kea-dhcp4-server): one reservation object per file.
	Kea Flavour = "kea"
)

// Extension is the file-name suffix of the flavour's host files.
func (f Flavour) Extension() string {
	if f == Kea {
		return ".json"
	}
	return ".conf"
}

// RenderISC renders the entry as an ISC dhcpd host stanza, for a file that
// dhcpd.conf includes:
//
//	# hostforge: DHCP reservation for the BMC of node-01.
//	# Written by enrollment from NetBox; local edits are replaced on the next run.
//	host node-01 {
//	  hardware ethernet 0a:1b:2c:3d:4e:5f;
//	  fixed-address 10.10.0.3;
//	  option host-name "node-01";
//	}
//
// The output depends on the entry only: equal entries render equal bytes.
func RenderISC(e Entry) ([]byte, error) {
	r, err := e.normalise()
	if err != nil {
		return nil, err
	}
	return renderISC(r), nil
}

func renderISC(r reservation) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# hostforge: DHCP reservation for the BMC of %s.\n", r.hostname)
	b.WriteString("# Written by enrollment from NetBox; local edits are replaced on the next run.\n")
	fmt.Fprintf(&b, "host %s {\n", r.hostname)
	fmt.Fprintf(&b, "  hardware ethernet %s;\n", r.mac)
	fmt.Fprintf(&b, "  fixed-address %s;\n", r.ip)
	fmt.Fprintf(&b, "  option host-name %s;\n", strconv.Quote(r.hostname))
	b.WriteString("}\n")
	return b.Bytes()
}

// RenderKea renders the entry as one Kea DHCPv4 host reservation, a JSON
// object for a "reservations" list (global, or a subnet's whose prefix holds
// the address):
//
//	{
//	  "hostname": "node-01",
//	  "hw-address": "0a:1b:2c:3d:4e:5f",
//	  "ip-address": "10.10.0.3"
//	}
//
// The output depends on the entry only: equal entries render equal bytes.
func RenderKea(e Entry) ([]byte, error) {
	r, err := e.normalise()
	if err != nil {
		return nil, err
	}
	return renderKea(r), nil
}

func renderKea(r reservation) []byte {
	// Written by hand rather than with encoding/json so that the key order
	// and layout are part of this file, not of a library's choices. Every
	// value is validated to need no JSON escaping; strconv.Quote is a second
	// line of defence that escapes anything outside printable ASCII.
	var b bytes.Buffer
	b.WriteString("{\n")
	fmt.Fprintf(&b, "  \"hostname\": %s,\n", strconv.Quote(r.hostname))
	fmt.Fprintf(&b, "  \"hw-address\": %s,\n", strconv.Quote(r.mac))
	fmt.Fprintf(&b, "  \"ip-address\": %s\n", strconv.Quote(r.ip))
	b.WriteString("}\n")
	return b.Bytes()
}

// Render renders the entry for the flavour and returns the file's content
// and its remote path under dir.
func Render(f Flavour, dir string, e Entry) (data []byte, file string, err error) {
	r, err := e.normalise()
	if err != nil {
		return nil, "", err
	}
	switch f {
	case ISC:
		data = renderISC(r)
	case Kea:
		data = renderKea(r)
	default:
		return nil, "", fmt.Errorf("dhcp: unknown flavour %q", f)
	}
	return data, path.Join(dir, r.hostname+f.Extension()), nil
}

// SHA256 returns the lower-case hex SHA-256 of data, the form Remote.Hash returns.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
