package wiring

import (
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/redfish"
)

// BMCTLS is one rule of bmc.tls: how the certificates of the BMCs it
// matches are verified.
type BMCTLS struct {
	// Devices are NetBox device names; a rule naming a BMC's device wins
	// over every range.
	Devices []string `yaml:"devices"`
	// CIDRs are address ranges; the narrowest range holding a BMC's
	// out-of-band address wins among ranges.
	CIDRs []string `yaml:"cidrs"`
	// Exactly one trust:
	CAFile             string `yaml:"ca_file"`
	FingerprintSHA256  string `yaml:"fingerprint_sha256"`
	InsecureSkipVerify bool   `yaml:"insecure_skip_verify"`
}

// validateBMCTLS checks bmc.tls, bmc.networks and bmc.redfish_verify_ca_paths.
func (c *Config) validateBMCTLS() error {
	if c.BMC.CAFile != "" && c.BMC.InsecureSkipVerify {
		return c.keyError("bmc.insecure_skip_verify", "set ca_file or insecure_skip_verify, not both")
	}
	devices := map[string]int{}
	ranges := map[netip.Prefix]int{}
	for i, r := range c.BMC.TLS {
		at := fmt.Sprintf("bmc.tls[%d]", i)
		if len(r.Devices) == 0 && len(r.CIDRs) == 0 {
			return c.keyError(at, "names no devices and no cidrs: a rule must say which BMCs it is for")
		}
		n := 0
		for _, set := range []bool{r.CAFile != "", r.FingerprintSHA256 != "", r.InsecureSkipVerify} {
			if set {
				n++
			}
		}
		if n != 1 {
			return c.keyError(at, "set exactly one of ca_file, fingerprint_sha256 or insecure_skip_verify")
		}
		if r.FingerprintSHA256 != "" {
			if _, err := redfish.ParseFingerprint(r.FingerprintSHA256); err != nil {
				return c.keyError(at+".fingerprint_sha256", "%q: want the SHA-256 of the BMC's certificate, 64 hex digits (colons optional)", r.FingerprintSHA256)
			}
		}
		for j, d := range r.Devices {
			key := fmt.Sprintf("%s.devices[%d]", at, j)
			if strings.TrimSpace(d) == "" || strings.ContainsAny(d, " \t\n") {
				return c.keyError(key, "%q: want a NetBox device name", d)
			}
			if prev, dup := devices[d]; dup {
				return c.keyError(key, "device %s is already named by bmc.tls[%d]; a device has one rule", d, prev)
			}
			devices[d] = i
		}
		for j, s := range r.CIDRs {
			key := fmt.Sprintf("%s.cidrs[%d]", at, j)
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return c.keyError(key, "%q: want an address range, e.g. 10.10.0.0/24", s)
			}
			p = p.Masked()
			if prev, dup := ranges[p]; dup {
				return c.keyError(key, "%s is already covered by bmc.tls[%d]; a range has one rule", p, prev)
			}
			ranges[p] = i
		}
	}
	for i, s := range c.BMC.Networks {
		if _, err := netip.ParsePrefix(s); err != nil {
			return c.keyError(fmt.Sprintf("bmc.networks[%d]", i), "%q: want an address range, e.g. 10.10.0.0/16", s)
		}
	}
	for i, p := range c.BMC.RedfishVerifyCAPaths {
		if !strings.HasPrefix(p, "/") || strings.Contains(p, "..") || strings.ContainsAny(p, " \t\n\x00") {
			return c.keyError(fmt.Sprintf("bmc.redfish_verify_ca_paths[%d]", i), "%q: want an absolute path of a CA bundle on the Ironic conductors", p)
		}
	}
	return nil
}

// tlsRule is a validated rule with its trust loaded.
type tlsRule struct {
	index   int
	devices map[string]bool
	ranges  []netip.Prefix
	tls     redfish.TLS
}

// bmcTLS chooses each BMC's TLS trust from bmc.tls and the section-wide
// default (the bmc section of Reference).
type bmcTLS struct {
	rules []tlsRule
	def   redfish.TLS
}

// loadBMCTLS reads the CA files the bmc section names.
func (c *Config) loadBMCTLS() (*bmcTLS, error) {
	out := &bmcTLS{def: redfish.TLS{InsecureSkipVerify: c.BMC.InsecureSkipVerify}}
	if c.BMC.CAFile != "" {
		pem, err := os.ReadFile(c.BMC.CAFile)
		if err != nil {
			return nil, c.invalid("bmc.ca_file", "%v", err)
		}
		out.def.CAPEM = pem
	}
	for i, r := range c.BMC.TLS {
		rule := tlsRule{index: i, devices: map[string]bool{}, tls: redfish.TLS{FingerprintSHA256: r.FingerprintSHA256, InsecureSkipVerify: r.InsecureSkipVerify}}
		for _, d := range r.Devices {
			rule.devices[d] = true
		}
		for _, s := range r.CIDRs {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, c.invalid(fmt.Sprintf("bmc.tls[%d].cidrs", i), "%q: not an address range", s)
			}
			rule.ranges = append(rule.ranges, p.Masked())
		}
		if r.CAFile != "" {
			pem, err := os.ReadFile(r.CAFile)
			if err != nil {
				return nil, c.invalid(fmt.Sprintf("bmc.tls[%d].ca_file", i), "%v", err)
			}
			rule.tls.CAPEM = pem
		}
		out.rules = append(out.rules, rule)
	}
	return out, nil
}

// For is the TLS trust of the BMC of device at address: the rule naming
// the device, else the narrowest range holding the address, else the
// default.
func (b *bmcTLS) For(device, address string) redfish.TLS {
	if device != "" {
		for _, r := range b.rules {
			if r.devices[device] {
				return r.tls
			}
		}
	}
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return b.def
	}
	ip = ip.Unmap()
	best, bits := -1, -1
	for i, r := range b.rules {
		for _, p := range r.ranges {
			if p.Contains(ip) && p.Bits() > bits {
				best, bits = i, p.Bits()
			}
		}
	}
	if best >= 0 {
		return b.rules[best].tls
	}
	return b.def
}

// openBMCConnector builds the Redfish connector the BMC phase and the link
// guard share: each BMC's TLS trust from bmc.tls and the section-wide
// default, bmc.endpoints applied, every credential it sends registered in
// secrets. Opt-outs of verification are logged here once, and by the
// connector at every connection.
func openBMCConnector(cfg *Config, log *slog.Logger, secrets *hostforge.Secrets) (*redfish.Connector, error) {
	trust, err := cfg.loadBMCTLS()
	if err != nil {
		return nil, err
	}
	if cfg.BMC.InsecureSkipVerify {
		log.Warn("BMC TLS verification is off for BMCs no bmc.tls rule matches, by the config file's explicit opt-in (bmc.insecure_skip_verify)", "phase", "wiring")
	}
	for _, r := range trust.rules {
		if r.tls.InsecureSkipVerify {
			log.Warn("BMC TLS verification is off for the BMCs of a bmc.tls rule, by the config file's explicit opt-in", "phase", "wiring", "rule", fmt.Sprintf("bmc.tls[%d]", r.index))
		}
	}
	return &redfish.Connector{TLSFor: trust.For, Endpoints: cfg.BMC.EndpointMap(), Log: log, Secrets: secrets}, nil
}
