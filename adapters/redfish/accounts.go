package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// Accounts: the AccountService's user accounts (fixed slots or POST).

func (c *client) accountsPath(ctx context.Context) (string, error) {
	root, err := c.root(ctx)
	if err != nil {
		return "", err
	}
	as := link(root, "AccountService")
	if as == "" {
		return "", fmt.Errorf("redfish: no AccountService: %w", bmc.ErrUnsupported)
	}
	d, err := c.get(ctx, as)
	if errors.Is(err, hostforge.ErrNotFound) {
		return "", fmt.Errorf("redfish: %s: %w", as, bmc.ErrUnsupported)
	}
	if err != nil {
		return "", err
	}
	if p := link(d, "Accounts"); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("redfish: AccountService has no Accounts: %w", bmc.ErrUnsupported)
}

func (c *client) accountDocs(ctx context.Context) (string, []doc, error) {
	coll, err := c.accountsPath(ctx)
	if err != nil {
		return "", nil, err
	}
	ds, err := c.members(ctx, coll)
	if errors.Is(err, hostforge.ErrNotFound) {
		return "", nil, fmt.Errorf("redfish: %s: %w", coll, bmc.ErrUnsupported)
	}
	if err == nil {
		c.paths(ds, func(d doc) string { return "account " + str(d, "Id") })
	}
	return coll, ds, err
}

func (c *client) ListAccounts(ctx context.Context) ([]bmc.Account, error) {
	_, ds, err := c.accountDocs(ctx)
	if err != nil {
		return nil, err
	}
	var out []bmc.Account
	for _, d := range ds {
		if u := str(d, "UserName"); u != "" {
			en, _ := d["Enabled"].(bool)
			out = append(out, bmc.Account{ID: str(d, "Id"), UserName: u, Role: str(d, "RoleId"), Enabled: en})
		}
	}
	return out, nil
}

// accountPath is an account's resource, as the last listing of this client
// found it (one listing when there was none).
func (c *client) accountPath(ctx context.Context, id string) (string, error) {
	if p := c.path["account "+id]; p != "" {
		return p, nil
	}
	_, ds, err := c.accountDocs(ctx)
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if str(d, "Id") == id {
			return str(d, "@odata.id"), nil
		}
	}
	return "", bmc.HTTPError(http.StatusNotFound, "account "+id+" not found")
}

func (c *client) SetPassword(ctx context.Context, id, password string) error {
	c.secrets.Add(password)
	p, err := c.accountPath(ctx, id)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodPatch, p, doc{"Password": password})
	return err
}

func (c *client) CreateAccount(ctx context.Context, a bmc.Account, password string) (string, error) {
	c.secrets.AddCredential(a.UserName, password)
	coll, ds, err := c.accountDocs(ctx)
	if err != nil {
		return "", err
	}
	body := doc{"UserName": a.UserName, "Password": password, "RoleId": a.Role, "Enabled": a.Enabled}
	for _, d := range ds {
		// Fixed-slot BMCs: fill the first free slot (iDRAC reserves slot 1).
		if str(d, "UserName") == "" && !(c.vendorOf(ctx) == bmc.VendorDell && str(d, "Id") == "1") {
			if _, err := c.write(ctx, http.MethodPatch, str(d, "@odata.id"), body); err != nil {
				return "", err
			}
			return str(d, "Id"), nil
		}
	}
	loc, err := c.write(ctx, http.MethodPost, coll, body)
	if err != nil {
		return "", err
	}
	return path.Base(loc), nil
}

func (c *client) UpdateAccount(ctx context.Context, a bmc.Account) error {
	p, err := c.accountPath(ctx, a.ID)
	if err != nil {
		return err
	}
	_, err = c.write(ctx, http.MethodPatch, p, doc{"RoleId": a.Role, "Enabled": a.Enabled})
	return err
}
