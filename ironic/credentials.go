package ironic

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge"
)

// Credential is a BMC login. It never appears in logs or errors: String
// and the JSON form redact the password.
type Credential struct {
	Username string `json:"username"`
	Password string `json:"-"`
}

// String redacts the password.
func (c Credential) String() string { return c.Username + ":<redacted>" }

// Credentials resolves a host's per-host BMC admin credential. Ironic
// always authenticates with it, never with the shared monitoring user.
type Credentials interface {
	BMCCredential(ctx context.Context, spec NodeSpec) (Credential, error)
}

// Vault is the part of a secrets vault VaultCredentials reads.
type Vault interface {
	Item(ctx context.Context, name string) (map[string]string, error)
}

// VaultCredentials reads per-host credentials from a vault: the item
// spec.CredentialItem with fields "username" and "password". It refuses the
// shared monitoring item.
type VaultCredentials struct {
	Vault Vault
}

// BMCCredential reads the node's credential.
func (v VaultCredentials) BMCCredential(ctx context.Context, spec NodeSpec) (Credential, error) {
	device, name := spec.Name, spec.CredentialItem
	if name == "" {
		return Credential{}, CredentialMissing.New("device %s: the node spec names no credential vault item", device)
	}
	if name == spec.MonitoringItem {
		return Credential{}, CredentialMissing.New("device %s: item %q is the shared monitoring credential; Ironic must use the per-host admin credential", device, name)
	}
	it, err := v.Vault.Item(ctx, name)
	switch {
	case err == nil:
	case errors.Is(err, hostforge.ErrNotFound):
		return Credential{}, CredentialMissing.New("device %s: vault item %q does not exist", device, name)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Credential{}, err
	default:
		return Credential{}, CredentialUnavailable.Wrap(err, "device %s: reading vault item %q", device, name)
	}
	c := Credential{Username: it["username"], Password: it["password"]}
	if c.Username == "" || c.Password == "" {
		return Credential{}, CredentialMissing.New("device %s: vault item %q lacks a username or password", device, name)
	}
	return c, nil
}

func (p *Phases) credential(ctx context.Context, spec NodeSpec) (Credential, error) {
	device := spec.Name
	if p.Credentials == nil {
		// A wiring defect, not a vault item to create.
		return Credential{}, hostforge.Unclassified.New("device %s: no credential source is configured", device)
	}
	c, err := p.Credentials.BMCCredential(ctx, spec)
	if err != nil {
		if _, ok := hostforge.AsFailure(err); ok {
			return Credential{}, err
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return Credential{}, err
		}
		if errors.Is(err, hostforge.ErrNotFound) {
			return Credential{}, CredentialMissing.Wrap(err, "device %s", device)
		}
		return Credential{}, CredentialUnavailable.Wrap(err, "device %s", device)
	}
	if c.Username == "" || c.Password == "" {
		return Credential{}, CredentialMissing.New("device %s: the credential lacks a username or password", device)
	}
	return c, nil
}
