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
	if isCanonicalMAC(s) {
		return s, true // already the form ParseMAC and String give back
	}
	if hw, err := net.ParseMAC(s); err == nil {
		return hw.String(), true
	}
	return strings.ToLower(s), false
}

// isCanonicalMAC reports whether s is already aa:bb:cc:dd:ee:ff in lower case.
func isCanonicalMAC(s string) bool {
	if len(s) != 17 {
		return false
	}
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
