package bmc

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/link"
)

// AdminCredential reads a per-host admin credential from the vault item.
func AdminCredential(ctx context.Context, v Vault, item string) (Credential, error) {
	f, err := v.Item(ctx, item)
	if errors.Is(err, hostforge.ErrNotFound) {
		return Credential{}, CredentialMissing.New("vault item %q missing", item)
	}
	if err != nil {
		return Credential{}, VaultUnavailable.Wrap(err, "vault item %q", item)
	}
	c := credOf(f, FieldPassword)
	if !c.Valid() {
		return Credential{}, CredentialMissing.New("vault item %q has no username/password", item)
	}
	return c, nil
}

// LinkReader reads frontend link state over Redfish for the Ironic phases'
// link guard, logging in with the per-host admin credential from the vault
// item the caller names (the item the BMC phase maintains). It talks
// Redfish even for ipmi-driver nodes.
type LinkReader struct {
	Connector Connector
	Vault     Vault
	// Secrets is the process's set of secret values: the credential a read
	// logs in with is registered in it, and the BMC's text scrubbed with it
	// (nil: a set per read).
	Secrets *hostforge.Secrets
}

// LinkStates maps each requested MAC (keyed lower-case with colons) to its
// state; a MAC the BMC does not list, or lists without a status, is UNKNOWN.
func LinkStates(nics []HostNIC, macs []string) map[string]link.State {
	seen := map[string]string{}
	for _, n := range nics {
		if m, ok := hostforge.NormalizeMAC(n.MAC); ok {
			seen[m] = n.LinkStatus
		}
	}
	out := make(map[string]link.State, len(macs))
	for _, m := range macs {
		k, _ := hostforge.NormalizeMAC(m)
		out[k] = link.FromRedfish(seen[k])
	}
	return out
}

// FrontendLinks reports UP/DOWN/UNKNOWN per MAC. A BMC that cannot report
// link state (no endpoint, an error, refused credentials) returns a Failure,
// never UNKNOWN: the fail-open applies to unknown values only.
func (l *LinkReader) FrontendLinks(ctx context.Context, bmcAddress, credentialItem string, macs []string) (map[string]link.State, error) {
	if l.Connector == nil || l.Vault == nil {
		// A wiring defect, not a BMC to check.
		return nil, hostforge.Unclassified.New("%s: link reader has no connector or vault", bmcAddress)
	}
	cred, err := AdminCredential(ctx, l.Vault, credentialItem)
	if err != nil {
		if _, ok := hostforge.AsFailure(err); ok {
			return nil, err
		}
		return nil, LinkUnobservable.Wrap(err, "%s: no credential", bmcAddress)
	}
	sec := l.Secrets.OrNew()
	sec.AddCredential(cred.Username, cred.Password)
	cl, err := l.Connector.Connect(ctx, bmcAddress, cred)
	if err != nil {
		return nil, sec.Failure(LinkUnobservable.Wrap(err, "%s: connecting", bmcAddress))
	}
	nics, err := cl.HostNICs(ctx)
	if err != nil {
		return nil, sec.Failure(LinkUnobservable.Wrap(err, "%s: reading host NIC link state", bmcAddress))
	}
	return LinkStates(nics, macs), nil
}
