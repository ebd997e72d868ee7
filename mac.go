package hostforge

import (
	"net"
	"strings"
)

// NormalizeMAC is the one MAC normaliser of the SDK: every map keyed by MAC
// (ports, link states, inventory interfaces, boot options) uses it, so two
// spellings of one address always meet. It returns the lower-case,
// colon-separated form and ok=true for a MAC net.ParseMAC accepts (EUI-48,
// EUI-64, 20-octet IPoIB); anything else comes back trimmed and lower-cased
// with ok=false, so junk still keys consistently and never matches a MAC.
func NormalizeMAC(s string) (mac string, ok bool) {
	s = strings.TrimSpace(s)
	if hw, err := net.ParseMAC(s); err == nil {
		return hw.String(), true
	}
	return strings.ToLower(s), false
}
