package fakes

import (
	"context"
	"net/http"

	"github.com/hostforge/hostforge/bmc"
)

// DeleteAccount removes an account (on a BMC with fixed slots the slot is
// emptied: the fake keeps no empty slots, so the two look alike). An
// unknown account is a 404; the account the session logged in with cannot
// be deleted.
func (c *fakeBMCClient) DeleteAccount(ctx context.Context, id string) (err error) {
	if err := c.enter(ctx, "delete_account", true, false); err != nil {
		return err
	}
	defer c.m.site.answer(ctx, SysBMC, "delete_account", &err)
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.m.noAccounts {
		return bmc.HTTPError(http.StatusMethodNotAllowed, "accounts cannot be deleted")
	}
	for i, a := range c.m.accounts {
		if a.ID != id {
			continue
		}
		if a.UserName == c.cred.Username {
			return bmc.HTTPError(http.StatusBadRequest, "Base.1.8.ActionNotSupported: the account of this session cannot be deleted")
		}
		c.m.accounts = append(c.m.accounts[:i:i], c.m.accounts[i+1:]...)
		return c.m.answerLocked("delete_account")
	}
	return bmc.HTTPError(http.StatusNotFound, "account "+id+" not found")
}

// HasAccount reports whether the BMC has an account of that user name
// (test control: no call is counted).
func (m *FakeBMC) HasAccount(user string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, a := range m.accounts {
		if a.UserName == user {
			return true
		}
	}
	return false
}
