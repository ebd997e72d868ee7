package ironic

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
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
	BMCCredential(ctx context.Context, device string) (Credential, error)
}

// Vault is the part of a secrets vault VaultCredentials reads.
type Vault interface {
	Item(ctx context.Context, name string) (map[string]string, error)
}

// MonitoringItem is the vault item of the shared ipmi_exporter monitoring
// user. VaultCredentials refuses to hand it to Ironic.
const MonitoringItem = bmc.IPMIExporterItem

// DefaultItemName is the vault item of a host's BMC admin credential: the
// same item the BMC phase maintains.
func DefaultItemName(device string) string { return bmc.AdminItem(device) }

// VaultCredentials reads per-host credentials from a vault: the item
// ItemName(device) (DefaultItemName when nil) with fields "username" and
// "password".
type VaultCredentials struct {
	Vault    Vault
	ItemName func(device string) string
}

// BMCCredential reads the device's credential.
func (v VaultCredentials) BMCCredential(ctx context.Context, device string) (Credential, error) {
	name := DefaultItemName(device)
	if v.ItemName != nil {
		name = v.ItemName(device)
	}
	if name == MonitoringItem {
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

func (p *Phases) credential(ctx context.Context, device string) (Credential, error) {
	if p.Credentials == nil {
		return Credential{}, CredentialMissing.New("device %s: no credential source is configured", device)
	}
	c, err := p.Credentials.BMCCredential(ctx, device)
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
