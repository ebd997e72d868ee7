// Package bmctest is the contract suite every bmc.Connector must pass: the
// in-memory fake world, the Redfish adapter against the emulator for each
// vendor tree, and a user's own adapter. [Converge] runs the BMC phase's
// attempts to an end on virtual time, as a workflow runtime would.
package bmctest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// Env is one BMC ready for the suite: a fresh one per call of newEnv.
type Env struct {
	Connector bmc.Connector
	Address   string
	// Admin is a working administrator credential.
	Admin bmc.Credential
	// Vendor is what detection must say.
	Vendor bmc.Vendor
}

// Run runs the contract against fresh environments from newEnv.
func Run(t *testing.T, newEnv func(t *testing.T) Env) {
	ctx := context.Background()
	connect := func(t *testing.T) (Env, bmc.Client) {
		t.Helper()
		e := newEnv(t)
		c, err := e.Connector.Connect(ctx, e.Address, e.Admin)
		if err != nil {
			t.Fatalf("Connect with the admin credential: %v", err)
		}
		return e, c
	}

	t.Run("Identify", func(t *testing.T) {
		e, c := connect(t)
		id, err := c.Identify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v, err := bmc.Detect(id); err != nil || v != e.Vendor {
			t.Fatalf("Detect(%+v) = %q, %v; want %q", id, v, err, e.Vendor)
		}
	})

	t.Run("WrongPasswordIsUnauthorized", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.Connector.Connect(ctx, e.Address, bmc.Credential{Username: e.Admin.Username, Password: e.Admin.Password + "-wrong"})
		if !errors.Is(err, hostforge.ErrUnauthorized) {
			t.Fatalf("err = %v, want ErrUnauthorized", err)
		}
	})

	t.Run("ManagerNetworkRoundTrip", func(t *testing.T) {
		_, c := connect(t)
		before, err := c.ManagerNetwork(ctx)
		if err != nil {
			t.Fatal(err)
		}
		host, on := "contract-bmc-1", true
		p := bmc.NetworkPatch{Hostname: &host, NTPEnabled: &on, NTPServers: []string{"192.0.2.1", "192.0.2.2"}, DHCP: &on, IPMIOverLAN: &on, VirtualMedia: &on}
		off := map[string]bool{}
		for k := range before.Protocols {
			off[k] = false
		}
		p.Protocols = off
		if err := c.SetManagerNetwork(ctx, p); err != nil {
			t.Fatal(err)
		}
		got, err := c.ManagerNetwork(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Hostname != host || !got.NTPEnabled || !slices.Equal(got.NTPServers, p.NTPServers) || !got.DHCP || !got.IPMIOverLAN || !got.VirtualMedia {
			t.Fatalf("read back %+v after %+v", got, p)
		}
		for k := range before.Protocols {
			if got.Protocols[k] {
				t.Errorf("protocol %s still on", k)
			}
		}
	})

	t.Run("SyslogRoundTrip", func(t *testing.T) {
		_, c := connect(t)
		want := []string{"192.0.2.10"}
		if err := c.SetSyslogServers(ctx, want); errors.Is(err, bmc.ErrUnsupported) {
			t.Skip("no syslog endpoint on this model")
		} else if err != nil {
			t.Fatal(err)
		}
		got, err := c.SyslogServers(ctx)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("syslog = %v, %v; want %v", got, err, want)
		}
		// More servers than the model keeps: stored in full or refused as
		// invalid, never silently truncated.
		two := []string{"192.0.2.10", "192.0.2.11"}
		if err := c.SetSyslogServers(ctx, two); err != nil {
			if !errors.Is(err, hostforge.ErrInvalid) {
				t.Fatalf("two servers: %v, want success or ErrInvalid", err)
			}
			return
		}
		if got, err := c.SyslogServers(ctx); err != nil || !slices.Equal(got, two) {
			t.Fatalf("syslog = %v, %v; want %v", got, err, two)
		}
	})

	t.Run("Accounts", func(t *testing.T) {
		e, c := connect(t)
		accts, err := c.ListAccounts(ctx)
		if errors.Is(err, bmc.ErrUnsupported) {
			t.Skip("no account endpoint on this model")
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(accts, func(a bmc.Account) bool { return a.UserName == e.Admin.Username }) {
			t.Fatalf("admin %q not listed: %+v", e.Admin.Username, accts)
		}
		user := bmc.Credential{Username: "contract_user", Password: "Contract-Pass-1"}
		id, err := c.CreateAccount(ctx, bmc.Account{UserName: user.Username, Role: bmc.IPMIRole, Enabled: true}, user.Password)
		if err != nil || id == "" {
			t.Fatalf("CreateAccount = %q, %v", id, err)
		}
		uc, err := e.Connector.Connect(ctx, e.Address, user)
		if err != nil {
			t.Fatalf("new account cannot log in: %v", err)
		}
		accts, _ = c.ListAccounts(ctx)
		i := slices.IndexFunc(accts, func(a bmc.Account) bool { return a.ID == id })
		if i < 0 || accts[i].UserName != user.Username || accts[i].Role != bmc.IPMIRole || !accts[i].Enabled {
			t.Fatalf("created account reads back as %+v", accts)
		}
		if err := c.SetPassword(ctx, id, "Contract-Pass-2"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Connector.Connect(ctx, e.Address, user); !errors.Is(err, hostforge.ErrUnauthorized) {
			t.Fatalf("old password still accepted: %v", err)
		}
		// Every request presents the credential again (basic auth, no
		// session): the client opened with the old password is refused.
		if _, err := uc.ManagerNetwork(ctx); !errors.Is(err, hostforge.ErrUnauthorized) {
			t.Fatalf("a client opened with the old password still reads: %v", err)
		}
		user.Password = "Contract-Pass-2"
		if _, err := e.Connector.Connect(ctx, e.Address, user); err != nil {
			t.Fatalf("new password refused: %v", err)
		}
		if err := c.UpdateAccount(ctx, bmc.Account{ID: id, UserName: user.Username, Role: "Operator", Enabled: true}); err != nil {
			t.Fatal(err)
		}
		accts, _ = c.ListAccounts(ctx)
		if i := slices.IndexFunc(accts, func(a bmc.Account) bool { return a.ID == id }); i < 0 || accts[i].Role != "Operator" {
			t.Fatalf("role not updated: %+v", accts)
		}
	})

	t.Run("DeleteAccount", func(t *testing.T) {
		e, c := connect(t)
		if _, err := c.ListAccounts(ctx); errors.Is(err, bmc.ErrUnsupported) {
			t.Skip("no account endpoint on this model")
		}
		user := bmc.Credential{Username: "contract_gone", Password: "Contract-Pass-3"}
		id, err := c.CreateAccount(ctx, bmc.Account{UserName: user.Username, Role: bmc.IPMIRole, Enabled: true}, user.Password)
		if err != nil {
			t.Fatalf("CreateAccount: %v", err)
		}
		if err := c.DeleteAccount(ctx, id); err != nil {
			t.Fatalf("DeleteAccount(%s): %v", id, err)
		}
		accts, err := c.ListAccounts(ctx)
		if err != nil || slices.ContainsFunc(accts, func(a bmc.Account) bool { return a.UserName == user.Username }) {
			t.Fatalf("after the deletion the accounts are %+v, %v; want %s gone", accts, err, user.Username)
		}
		if _, err := e.Connector.Connect(ctx, e.Address, user); !errors.Is(err, hostforge.ErrUnauthorized) {
			t.Fatalf("the deleted account still logs in: %v", err)
		}
		if !slices.ContainsFunc(accts, func(a bmc.Account) bool { return a.UserName == e.Admin.Username }) {
			t.Fatalf("the admin account went with it: %+v", accts)
		}
		// The slot is free again: the same user can be created anew.
		if _, err := c.CreateAccount(ctx, bmc.Account{UserName: user.Username, Role: bmc.IPMIRole, Enabled: true}, user.Password); err != nil {
			t.Fatalf("re-creating the deleted account: %v", err)
		}
	})

	t.Run("BootOrder", func(t *testing.T) {
		_, c := connect(t)
		opts, err := c.BootOptions(ctx)
		if err != nil || len(opts) == 0 {
			t.Fatalf("BootOptions = %v, %v", opts, err)
		}
		cur, _, err := c.BootOrder(ctx)
		if err != nil || len(cur) == 0 {
			t.Fatalf("BootOrder = %v, %v", cur, err)
		}
		want := slices.Clone(cur)
		slices.Reverse(want)
		if _, err := c.SetBootOrder(ctx, want); err != nil {
			t.Fatal(err)
		}
		cur2, pend, err := c.BootOrder(ctx)
		if err != nil || !(slices.Equal(cur2, want) || slices.Equal(pend, want)) {
			t.Fatalf("order %v pending %v; want %v in either", cur2, pend, want)
		}
		for _, o := range opts {
			if o.Enabled == nil {
				continue
			}
			if err := c.SetBootOptionEnabled(ctx, o.ID, false); err != nil {
				t.Fatal(err)
			}
			after, _ := c.BootOptions(ctx)
			i := slices.IndexFunc(after, func(a bmc.BootOption) bool { return a.ID == o.ID })
			if i < 0 || after[i].Enabled == nil || *after[i].Enabled {
				t.Fatalf("%s not disabled", o.ID)
			}
			break
		}
	})

	t.Run("BiosStaging", func(t *testing.T) {
		e, c := connect(t)
		want := bmc.DefaultBIOS[e.Vendor]
		if want == nil {
			t.Skip("vendor has no BIOS convergence")
		}
		cur, _, err := c.BiosAttributes(ctx)
		if err != nil || len(cur) == 0 {
			t.Fatalf("BiosAttributes = %v, %v", cur, err)
		}
		k, v := "", any(nil)
		for key, val := range want {
			if fmt.Sprint(cur[key]) != fmt.Sprint(val) {
				k, v = key, val
				break
			}
		}
		if k == "" {
			t.Skip("every desired attribute already set")
		}
		job, err := c.SetBiosAttributes(ctx, map[string]any{k: v})
		if err != nil {
			t.Fatal(err)
		}
		cur, pend, err := c.BiosAttributes(ctx)
		if err != nil || (fmt.Sprint(cur[k]) != fmt.Sprint(v) && fmt.Sprint(pend[k]) != fmt.Sprint(v)) {
			t.Fatalf("%s not staged: current %v pending %v", k, cur[k], pend[k])
		}
		if e.Vendor == bmc.VendorDell {
			jobs, err := c.ListJobs(ctx)
			if err != nil || job == "" || !slices.ContainsFunc(jobs, func(j bmc.Job) bool { return j.ID == job }) {
				t.Fatalf("iDRAC staged %s without a listed job (%q): %v %v", k, job, jobs, err)
			}
			if err := c.DeleteJob(ctx, job); err != nil {
				t.Fatalf("DeleteJob: %v", err)
			}
			if _, pend, _ := c.BiosAttributes(ctx); pend[k] != nil && fmt.Sprint(pend[k]) == fmt.Sprint(v) {
				t.Fatal("deleting the job left the value pending")
			}
		}
	})

	t.Run("HostNICs", func(t *testing.T) {
		_, c := connect(t)
		nics, err := c.HostNICs(ctx)
		if errors.Is(err, bmc.ErrUnsupported) {
			t.Skip("no link observation")
		}
		if err != nil || len(nics) == 0 {
			t.Fatalf("HostNICs = %v, %v", nics, err)
		}
		for _, n := range nics {
			if _, err := net.ParseMAC(n.MAC); err != nil {
				t.Errorf("MAC %q: %v", n.MAC, err)
			}
		}
	})
}

// Configurer is one attempt of the BMC phase; *bmc.Configurator is one.
type Configurer interface {
	Configure(ctx context.Context, t bmc.Target) (bmc.Result, error)
}

// Advancer moves virtual time forward; *clock.Fake is one.
type Advancer interface {
	Advance(d time.Duration)
}

// Outcome is a run of attempts of the BMC phase to its end.
type Outcome struct {
	// Attempts are each attempt's result, in order.
	Attempts []bmc.Result
	// Waits are the waits between them.
	Waits []*hostforge.Wait
	// Waited is the virtual time slept.
	Waited time.Duration
	// Err is the failure the run ended with (nil when converged).
	Err error
}

// Last is the last attempt's result.
func (o Outcome) Last() bmc.Result {
	if len(o.Attempts) == 0 {
		return bmc.Result{}
	}
	return o.Attempts[len(o.Attempts)-1]
}

// Writes is the writes of every attempt.
func (o Outcome) Writes() int {
	n := 0
	for _, a := range o.Attempts {
		n += a.Writes
	}
	return n
}

// Rotated reports whether an attempt promoted a new admin password.
func (o Outcome) Rotated() bool {
	return slices.ContainsFunc(o.Attempts, func(r bmc.Result) bool { return r.Rotated })
}

// Reset reports whether an attempt requested a cold reset.
func (o Outcome) Reset() bool {
	return slices.ContainsFunc(o.Attempts, func(r bmc.Result) bool { return r.Reset })
}

// Steps lists every attempt's step outcomes, in order.
func (o Outcome) Steps() []string {
	var out []string
	for _, a := range o.Attempts {
		out = append(out, a.Steps...)
	}
	return out
}

// Reasons lists the reasons of the waits, in order.
func (o Outcome) Reasons() []string {
	var out []string
	for _, w := range o.Waits {
		out = append(out, w.Reason)
	}
	return out
}

// MaxAttempts bounds the attempts Converge makes before it gives up.
const MaxAttempts = 5000

// Converge runs the BMC phase the way a workflow runtime does: it calls
// Configure, sleeps each wait on clk within the reason's budget and pacing
// from bmc.Waits, and calls again, until an attempt is done or fails (the
// runtime's reruns of a retryable failure are not made: the caller sees
// the failure). A wait reason bmc.Waits does not list is a failure of the
// phase's own contract.
func Converge(ctx context.Context, cfg Configurer, t bmc.Target, clk Advancer) Outcome {
	specs := map[string]bmc.WaitSpec{}
	for _, s := range bmc.Waits() {
		specs[s.Reason] = s
	}
	type meter struct {
		n      int
		waited time.Duration
	}
	meters := map[string]*meter{}
	var o Outcome
	for range MaxAttempts {
		res, err := cfg.Configure(ctx, t)
		o.Attempts = append(o.Attempts, res)
		w, waiting := hostforge.AsWait(err)
		if _, failed := hostforge.AsFailure(err); failed || !waiting {
			o.Err = err
			return o
		}
		spec, ok := specs[w.Reason]
		if !ok {
			o.Err = fmt.Errorf("bmctest: the phase waited for %q, a reason bmc.Waits does not list", w.Reason)
			return o
		}
		m := meters[w.Reason]
		if m == nil {
			m = &meter{}
			meters[w.Reason] = m
		}
		m.n++
		after := w.After
		if spec.Backoff.First > 0 {
			after = spec.Backoff.After(m.n)
		}
		if m.waited+after > spec.Budget {
			o.Err = spec.Exhausted("configure_bmc", w, m.waited, spec.Budget)
			return o
		}
		m.waited += after
		o.Waits = append(o.Waits, w)
		o.Waited += after
		clk.Advance(after)
	}
	o.Err = fmt.Errorf("bmctest: the phase neither converged nor failed in %d attempts", MaxAttempts)
	return o
}
