package redfish

import (
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/hostforge/hostforge/bmc"
)

// pinMismatch is a certificate that does not match the configured pin.
type pinMismatch struct{ got [sha256.Size]byte }

func (e *pinMismatch) Error() string {
	return fmt.Sprintf("redfish: BMC certificate fingerprint %x does not match the pin", e.got)
}

// Untrusted turns a TLS verification failure into BMC_TLS_UNTRUSTED with
// the presented certificate's SHA-256, so the operator can check it and
// trust it; nil when err is no such failure. A BMC whose certificate is
// not trusted answers the same way on every attempt: it is no wait.
func Untrusted(endpoint string, err error) error {
	var pin *pinMismatch
	if errors.As(err, &pin) {
		return bmc.TLSUntrusted.New("%s: the certificate's SHA-256 %s is not the pinned one", endpoint, Fingerprint(pin.got[:]))
	}
	var ve *tls.CertificateVerificationError
	if errors.As(err, &ve) {
		sum := "unknown (no certificate presented)"
		if len(ve.UnverifiedCertificates) > 0 {
			s := sha256.Sum256(ve.UnverifiedCertificates[0].Raw)
			sum = Fingerprint(s[:])
		}
		return bmc.TLSUntrusted.New("%s: certificate not trusted (%v); its SHA-256 is %s", endpoint, ve.Err, sum)
	}
	return nil
}

// Fingerprint writes a SHA-256 the way bmc.tls reads it: colon-separated
// upper-case hex.
func Fingerprint(sum []byte) string {
	b := make([]byte, 0, len(sum)*3)
	for i, c := range sum {
		if i > 0 {
			b = append(b, ':')
		}
		b = fmt.Appendf(b, "%02X", c)
	}
	return string(b)
}
