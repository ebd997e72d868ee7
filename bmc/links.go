package bmc

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/verify"
)

// CredentialSource returns the admin credential of the BMC at an address.
type CredentialSource func(ctx context.Context, bmcAddress string) (Credential, error)

// AdminCredential reads a device's per-host admin credential from the vault.
func AdminCredential(ctx context.Context, v Vault, device string) (Credential, error) {
	f, err := v.Item(ctx, AdminItem(device))
	if errors.Is(err, hostforge.ErrNotFound) {
		return Credential{}, CredentialMissing.New("%s: vault item %q missing", device, AdminItem(device))
	}
	if err != nil {
		return Credential{}, VaultUnavailable.Wrap(err, "%s: vault item %q", device, AdminItem(device))
	}
	c := credOf(f, FieldPassword)
	if !c.Valid() {
		return Credential{}, CredentialMissing.New("%s: vault item %q has no username/password", device, AdminItem(device))
	}
	return c, nil
}

// LinkReader reads frontend link state over Redfish for the Ironic phases'
// link guard. It talks Redfish even for ipmi-driver nodes.
type LinkReader struct {
	Connector   Connector
	Credentials CredentialSource
}

// NormalizeMAC returns the lower-case, colon-separated form of a MAC ("" if
// it is not one).
func NormalizeMAC(mac string) string {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil {
		return ""
	}
	return hw.String()
}

// LinkStateOf maps a Redfish LinkStatus to the guard's three states.
func LinkStateOf(status string) verify.LinkState {
	switch status {
	case "LinkUp", "Up":
		return verify.LinkUp
	case "LinkDown", "NoLink", "Down":
		return verify.LinkDown
	}
	return verify.LinkUnknown
}

// LinkStates maps each requested MAC (keyed lower-case with colons) to its
// state; a MAC the BMC does not list, or lists without a status, is UNKNOWN.
func LinkStates(nics []HostNIC, macs []string) map[string]verify.LinkState {
	seen := map[string]string{}
	for _, n := range nics {
		if m := NormalizeMAC(n.MAC); m != "" {
			seen[m] = n.LinkStatus
		}
	}
	out := make(map[string]verify.LinkState, len(macs))
	for _, m := range macs {
		k := NormalizeMAC(m)
		if k == "" {
			k = strings.ToLower(m)
		}
		out[k] = LinkStateOf(seen[k])
	}
	return out
}

// FrontendLinks reports UP/DOWN/UNKNOWN per MAC. A BMC that cannot report
// link state (no endpoint, an error, refused credentials) returns a Failure,
// never UNKNOWN: the fail-open applies to unknown values only.
func (l *LinkReader) FrontendLinks(ctx context.Context, bmcAddress string, macs []string) (map[string]verify.LinkState, error) {
	if l.Connector == nil || l.Credentials == nil {
		return nil, LinkUnobservable.New("%s: link reader has no connector or credential source", bmcAddress)
	}
	cred, err := l.Credentials(ctx, bmcAddress)
	if err != nil {
		if _, ok := hostforge.AsFailure(err); ok {
			return nil, err
		}
		return nil, LinkUnobservable.Wrap(err, "%s: no credential", bmcAddress)
	}
	cl, err := l.Connector.Connect(ctx, bmcAddress, cred)
	if err != nil {
		return nil, LinkUnobservable.Wrap(err, "%s: connecting", bmcAddress)
	}
	nics, err := cl.HostNICs(ctx)
	if err != nil {
		return nil, LinkUnobservable.Wrap(err, "%s: reading host NIC link state", bmcAddress)
	}
	return LinkStates(nics, macs), nil
}
