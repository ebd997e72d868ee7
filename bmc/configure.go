package bmc

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// Vault holds the BMC credentials as items of named fields (see the package
// documentation for the item names). The BMC phase writes to it only during
// a password rotation.
type Vault interface {
	// Item returns the item's fields; hostforge.ErrNotFound when absent.
	Item(ctx context.Context, name string) (map[string]string, error)
	// PutItem replaces the item's fields.
	PutItem(ctx context.Context, name string, fields map[string]string) error
}

// Budgets bound every wait of the phase on the injected clock.
type Budgets struct {
	// Busy is how long a write answered 5xx is retried; BusyBackoff is the
	// first pause (doubling, at most 30s).
	Busy, BusyBackoff time.Duration
	// Reset is how long Redfish may take to come back after a cold reset,
	// polled every ResetPoll.
	Reset, ResetPoll time.Duration
	// JobSchedule is how long the iDRAC Lifecycle Controller may take to
	// schedule a staged job; JobRun how long a running job may take to
	// finish; both polled every JobPoll.
	JobSchedule, JobRun, JobPoll time.Duration
}

// DefaultBudgets are used for zero fields.
var DefaultBudgets = Budgets{
	Busy: 2 * time.Minute, BusyBackoff: 5 * time.Second,
	Reset: 10 * time.Minute, ResetPoll: 15 * time.Second,
	JobSchedule: 3 * time.Minute, JobRun: 20 * time.Minute, JobPoll: 10 * time.Second,
}

// DefaultBIOS is the BIOS convergence of the vendors that have one.
var DefaultBIOS = map[Vendor]map[string]any{
	VendorDell: {
		"BootMode":           "Uefi",
		"ProcVirtualization": "Enabled",
		"SriovGlobalEnable":  "Enabled",
		"AcPwrRcvry":         "On",
	},
	VendorLenovo: {
		"BootModes_SystemBootMode":                  "UEFIMode",
		"Processors_IntelVirtualizationTechnology":  "Enabled",
		"DevicesandIOPorts_IntelVTforDirectedIOVTd": "Enabled",
		"OperatingModes_ChooseOperatingMode":        "MaximumPerformance",
	},
}

// IPMIRole is the Redfish role of the shared monitoring user.
const IPMIRole = "ReadOnly"

// Configurator runs phase 2 for one host at a time; it is safe for
// concurrent use by many enrollments.
type Configurator struct {
	Connector Connector
	Vault     Vault
	// Clock paces every retry and wait (clock.Real in production).
	Clock clock.Clock
	Log   *slog.Logger
	// BIOS overrides DefaultBIOS per vendor.
	BIOS map[Vendor]map[string]any
	// Budgets overrides DefaultBudgets field by field.
	Budgets Budgets
	// NewPassword generates a rotated admin password (nil: 24 random
	// characters from crypto/rand).
	NewPassword func() (string, error)
}

var hostnameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// Hostname is the BMC hostname a device gets: its NetBox name, lower-cased.
func Hostname(device string) string { return strings.ToLower(strings.TrimSpace(device)) }

func validate(t Target) error {
	switch {
	case strings.TrimSpace(t.Device) == "":
		return InputInvalid.New("device: empty name")
	case !hostnameRE.MatchString(Hostname(t.Device)):
		return InputInvalid.New("device %q: not usable as a BMC hostname (letters, digits, '-' and '.')", t.Device)
	case strings.TrimSpace(t.Address) == "":
		return InputInvalid.New("%s: address: no out-of-band address", t.Device)
	case t.AdminItem == "" || t.FactoryItem == "" || t.MonitoringItem == "":
		return InputInvalid.New("%s: admin_item, factory_item and monitoring_item must all name vault items", t.Device)
	case t.AdminItem == t.MonitoringItem || t.AdminItem == t.FactoryItem:
		return InputInvalid.New("%s: admin_item %q is the factory or the shared monitoring item; the per-host credential needs its own", t.Device, t.AdminItem)
	}
	if t.ProvisioningMAC != "" {
		if _, err := net.ParseMAC(t.ProvisioningMAC); err != nil {
			return InputInvalid.New("%s: provisioning_mac %q: not a MAC address", t.Device, t.ProvisioningMAC)
		}
	}
	for _, s := range append(append([]string(nil), t.NTPServers...), t.SyslogServers...) {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, " \t/") {
			return InputInvalid.New("%s: ntp/syslog server %q: not a host name or address", t.Device, s)
		}
	}
	return nil
}

// Configure detects the BMC's vendor and runs its strategy: password setup,
// cold reset, settings convergence, IPMI monitoring user. It re-reads live
// state at every step and writes only what differs, so a rerun on a
// converged BMC makes no writes. Errors are *hostforge.Failure.
func (c *Configurator) Configure(ctx context.Context, t Target) (Result, error) {
	if err := validate(t); err != nil {
		return Result{}, err
	}
	r := c.newRun(t)
	err := r.configure(ctx)
	if err != nil {
		r.log.Warn("BMC configuration failed", "code", hostforge.CodeOf(err), "error", err.Error())
		return r.res, err
	}
	r.log.Info("BMC configured", "vendor", string(r.vendor), "writes", r.res.Writes, "steps", strings.Join(r.res.Steps, ","))
	return r.res, nil
}

type run struct {
	c      *Configurator
	t      Target
	b      Budgets
	log    *slog.Logger
	cl     Client
	cred   Credential
	vendor Vendor
	res    Result
	// hostResetNeeded is set by a step that staged settings for the next
	// boot on a BMC without a job queue (Lenovo).
	hostResetNeeded bool
}

func (c *Configurator) newRun(t Target) *run {
	b := c.Budgets
	d := DefaultBudgets
	for _, p := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&b.Busy, d.Busy}, {&b.BusyBackoff, d.BusyBackoff}, {&b.Reset, d.Reset}, {&b.ResetPoll, d.ResetPoll},
		{&b.JobSchedule, d.JobSchedule}, {&b.JobRun, d.JobRun}, {&b.JobPoll, d.JobPoll},
	} {
		if *p.v <= 0 {
			*p.v = p.def
		}
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &run{c: c, t: t, b: b, log: log.With("device", t.Device, "phase", Phase)}
}

func (r *run) clock() clock.Clock {
	if r.c.Clock == nil {
		return clock.Real{}
	}
	return r.c.Clock
}

func (r *run) step(name, outcome string) {
	r.res.Steps = append(r.res.Steps, name+":"+outcome)
	r.log.Info("BMC step", "step", name, "outcome", outcome)
}

func (r *run) configure(ctx context.Context) error {
	if r.c.Connector == nil || r.c.Vault == nil {
		return InputInvalid.New("%s: the BMC configurator has no connector or vault", r.t.Device)
	}
	if err := r.login(ctx); err != nil {
		return err
	}
	r.res.Vendor = string(r.vendor)
	if r.res.Rotated && r.vendor != VendorSupermicro || r.t.ForceRestart {
		if err := r.coldReset(ctx); err != nil {
			return err
		}
		r.step("cold_reset", "done")
	} else {
		r.step("cold_reset", "not_needed")
	}
	for _, s := range r.plan() {
		out, err := s.fn(ctx)
		if err != nil {
			r.log.Warn("BMC step failed", "step", s.name, "code", hostforge.CodeOf(err))
			return err
		}
		r.step(s.name, out)
	}
	return nil
}

type namedStep struct {
	name string
	fn   func(context.Context) (string, error)
}

// plan is each vendor's step set, exactly as the specification lists it.
func (r *run) plan() []namedStep {
	switch r.vendor {
	case VendorDell:
		return []namedStep{
			{"hostname", r.hostname}, {"dhcp", r.dhcp}, {"security", r.security},
			{"ntp", r.ntp}, {"syslog", r.syslog}, {"bios", r.idracBios}, {"boot_order", r.idracBoot},
			{"ipmi_user", r.ipmiUserAndLAN},
		}
	case VendorLenovo:
		return []namedStep{
			{"hostname", r.hostname}, {"dhcp", r.dhcp}, {"security", r.security},
			{"ntp", r.ntp}, {"syslog", r.syslog}, {"bios", r.stagedBios}, {"boot_order", r.lenovoBoot},
			{"host_reset", r.hostReset}, {"ipmi_user", r.ipmiUserAndLAN},
		}
	case VendorAMI:
		return []namedStep{
			{"hostname", r.hostname}, {"ntp", r.ntp}, {"ipmi_user", r.ipmiUser},
			{"virtual_media", r.virtualMedia}, {"boot_restriction", r.amiBoot},
		}
	case VendorSupermicro:
		return []namedStep{
			{"hostname", r.hostname}, {"ntp", r.ntp}, {"syslog", r.syslog}, {"ipmi_user", r.ipmiUser},
		}
	}
	return nil
}

// ---- calls: reads, writes, busy retries, classification -------------------

// read runs a read, retrying a busy (5xx) answer within the busy budget.
func (r *run) read(ctx context.Context, what string, fn func() error) error {
	return r.call(ctx, what, false, fn)
}

// write runs a configuration write and counts it.
func (r *run) write(ctx context.Context, what string, fn func() error) error {
	return r.call(ctx, what, true, fn)
}

func (r *run) call(ctx context.Context, what string, write bool, fn func() error) error {
	clk := r.clock()
	start := clk.Now()
	backoff := r.b.BusyBackoff
	for {
		err := fn()
		if err == nil {
			if write {
				r.res.Writes++
			}
			return nil
		}
		if !errors.Is(err, hostforge.ErrUnavailable) || ctx.Err() != nil {
			return r.classify(what, err)
		}
		waited := clk.Now().Sub(start)
		if waited+backoff > r.b.Busy {
			if write {
				return ServiceUnavailable.Wrap(err, "%s: %s: BMC still busy after %s: %s", r.t.Device, what, waited, bmcMessage(err))
			}
			return Unreachable.Wrap(err, "%s: %s: no answer after %s", r.t.Device, what, waited)
		}
		r.log.Warn("BMC busy, retrying", "step", what, "after", backoff.String(), "reason", bmcMessage(err))
		if err := clk.Sleep(ctx, backoff); err != nil {
			return Unreachable.Wrap(err, "%s: %s: cancelled while the BMC was busy", r.t.Device, what)
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// classify turns a client error into the phase's Failure.
func (r *run) classify(what string, err error) error {
	if _, ok := hostforge.AsFailure(err); ok {
		return err
	}
	switch {
	case errors.Is(err, hostforge.ErrUnauthorized):
		return CredentialInvalid.Wrap(err, "%s: %s: the BMC refused the admin credential", r.t.Device, what)
	case errors.Is(err, ErrUnsupported), errors.Is(err, hostforge.ErrNotFound):
		return EndpointMissing.Wrap(err, "%s: %s", r.t.Device, what)
	case errors.Is(err, hostforge.ErrInvalid), errors.Is(err, hostforge.ErrConflict):
		return WriteRejected.Wrap(err, "%s: %s: %s", r.t.Device, what, bmcMessage(err))
	}
	return Unreachable.Wrap(err, "%s: %s", r.t.Device, what)
}

func (r *run) vaultErr(item string, err error) error {
	return VaultUnavailable.Wrap(err, "%s: vault item %q", r.t.Device, item)
}

// ---- password setup ------------------------------------------------------

func credOf(fields map[string]string, passwordField string) Credential {
	return Credential{Username: fields[FieldUsername], Password: fields[passwordField]}
}

func (r *run) item(ctx context.Context, name string) (map[string]string, error) {
	f, err := r.c.Vault.Item(ctx, name)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, r.vaultErr(name, err)
	}
	return f, nil
}

// connect opens a session with cred, retrying a busy BMC; an
// ErrUnauthorized is returned unclassified so the caller can try the next
// credential.
func (r *run) connect(ctx context.Context, cred Credential) (Client, error) {
	var cl Client
	err := r.call(ctx, "connect", false, func() error {
		var err error
		cl, err = r.c.Connector.Connect(ctx, r.t.Address, cred)
		if errors.Is(err, hostforge.ErrUnauthorized) {
			return &unauthorized{err}
		}
		return err
	})
	var u *unauthorized
	if errors.As(err, &u) {
		return nil, hostforge.ErrUnauthorized
	}
	return cl, err
}

// unauthorized carries a refusal through call's classification untouched.
type unauthorized struct{ err error }

func (u *unauthorized) Error() string { return u.err.Error() }

func (r *run) identify(ctx context.Context) error {
	var id Identity
	if err := r.read(ctx, "identify", func() (err error) { id, err = r.cl.Identify(ctx); return err }); err != nil {
		return err
	}
	v, err := Detect(id)
	if err != nil {
		return err
	}
	r.vendor = v
	r.log = r.log.With("vendor", string(v))
	return nil
}

// login implements the password plan written down in the package
// documentation: per-host credential, then a pending one left by an
// interrupted rotation, then the factory credential and a rotation.
func (r *run) login(ctx context.Context) error {
	adminItem := r.t.AdminItem
	admin, err := r.item(ctx, adminItem)
	if err != nil {
		return err
	}
	if cred := credOf(admin, FieldPassword); cred.Valid() {
		cl, err := r.connect(ctx, cred)
		if err == nil {
			r.cl, r.cred = cl, cred
			if err := r.identify(ctx); err != nil {
				return err
			}
			if r.vendor != VendorSupermicro {
				r.step("password", "ok")
			}
			return nil
		}
		if !errors.Is(err, hostforge.ErrUnauthorized) {
			return err
		}
		r.log.Warn("per-host BMC credential refused", "step", "password")
	}
	if pend := credOf(admin, FieldPendingPassword); pend.Valid() {
		cl, err := r.connect(ctx, pend)
		if err == nil {
			// An earlier run changed the BMC and stopped before the vault
			// write: finish it.
			r.cl, r.cred = cl, pend
			if err := r.identify(ctx); err != nil {
				return err
			}
			if err := r.c.Vault.PutItem(ctx, adminItem, map[string]string{FieldUsername: pend.Username, FieldPassword: pend.Password}); err != nil {
				return r.vaultErr(adminItem, err)
			}
			r.res.Rotated = true
			r.step("password", "recovered")
			return nil
		}
		if !errors.Is(err, hostforge.ErrUnauthorized) {
			return err
		}
	}
	factoryItem := r.t.FactoryItem
	factory, err := r.item(ctx, factoryItem)
	if err != nil {
		return err
	}
	fcred := credOf(factory, FieldPassword)
	if !fcred.Valid() {
		if admin == nil {
			return CredentialMissing.New("%s: vault items %q and %q: neither holds a username and password", r.t.Device, adminItem, factoryItem)
		}
		return CredentialMissing.New("%s: per-host credential %q refused and factory item %q has no username and password", r.t.Device, adminItem, factoryItem)
	}
	cl, err := r.connect(ctx, fcred)
	if errors.Is(err, hostforge.ErrUnauthorized) {
		return CredentialInvalid.New("%s: the BMC refused the per-host (%q), pending and factory (%q) credentials", r.t.Device, adminItem, factoryItem)
	}
	if err != nil {
		return err
	}
	r.cl, r.cred = cl, fcred
	if err := r.identify(ctx); err != nil {
		return err
	}
	if r.vendor == VendorSupermicro {
		if admin == nil {
			return CredentialMissing.New("%s: vault item %q: missing; Supermicro BMCs have no password setup, the per-host credential must exist", r.t.Device, adminItem)
		}
		return CredentialInvalid.New("%s: the BMC refused the per-host credential %q; Supermicro BMCs have no password setup", r.t.Device, adminItem)
	}
	return r.rotate(ctx, adminItem, fcred, credOf(admin, FieldPendingPassword).Password)
}

// rotate changes the admin password away from the factory credential. The
// new password is in the vault (as pending_password) before the BMC changes,
// so a crash at any point leaves a credential a rerun can use.
func (r *run) rotate(ctx context.Context, adminItem string, factory Credential, pending string) error {
	newPass := pending
	if newPass == "" {
		gen := r.c.NewPassword
		if gen == nil {
			gen = randomPassword
		}
		p, err := gen()
		if err != nil {
			return Unreachable.Wrap(err, "%s: generating a password", r.t.Device)
		}
		newPass = p
	}
	// 1. Write-ahead: the vault learns the new password first.
	if err := r.c.Vault.PutItem(ctx, adminItem, map[string]string{FieldUsername: factory.Username, FieldPendingPassword: newPass}); err != nil {
		return r.vaultErr(adminItem, err)
	}
	var accts []Account
	if err := r.read(ctx, "password: list accounts", func() (err error) { accts, err = r.cl.ListAccounts(ctx); return err }); err != nil {
		return err
	}
	id := ""
	for _, a := range accts {
		if a.UserName == factory.Username {
			id = a.ID
		}
	}
	if id == "" {
		return CredentialInvalid.New("%s: the BMC has no account %q to rotate", r.t.Device, factory.Username)
	}
	// 2. The BMC changes.
	if err := r.write(ctx, "password: set", func() error { return r.cl.SetPassword(ctx, id, newPass) }); err != nil {
		return err
	}
	// Crash point: the BMC has the new password, the vault has it only as
	// pending_password. A rerun logs in with it and finishes step 3.
	// 3. Promote.
	if err := r.c.Vault.PutItem(ctx, adminItem, map[string]string{FieldUsername: factory.Username, FieldPassword: newPass}); err != nil {
		return r.vaultErr(adminItem, err)
	}
	cred := Credential{Username: factory.Username, Password: newPass}
	cl, err := r.connect(ctx, cred)
	if errors.Is(err, hostforge.ErrUnauthorized) {
		return CredentialInvalid.New("%s: the BMC refused the rotated password (some BMCs apply it only after a cold reset; rerun with force_bmc_restart)", r.t.Device)
	}
	if err != nil {
		return err
	}
	r.cl, r.cred = cl, cred
	r.res.Rotated = true
	r.step("password", "rotated")
	return nil
}

const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

func randomPassword() (string, error) {
	b := make([]byte, 24)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(passwordAlphabet))))
		if err != nil {
			return "", err
		}
		b[i] = passwordAlphabet[n.Int64()]
	}
	return string(b), nil
}

// ---- cold reset ------------------------------------------------------------

func (r *run) coldReset(ctx context.Context) error {
	if err := r.write(ctx, "cold_reset", func() error { return r.cl.ResetManager(ctx) }); err != nil {
		return err
	}
	r.res.Reset = true
	clk := r.clock()
	deadline := clk.Now().Add(r.b.Reset)
	var last error
	for clk.Now().Before(deadline) {
		if err := clk.Sleep(ctx, r.b.ResetPoll); err != nil {
			return Unreachable.Wrap(err, "%s: cancelled waiting for Redfish after the cold reset", r.t.Device)
		}
		cl, err := r.c.Connector.Connect(ctx, r.t.Address, r.cred)
		if err == nil {
			if _, err = cl.Identify(ctx); err == nil {
				r.cl = cl
				return nil
			}
		}
		if errors.Is(err, hostforge.ErrUnauthorized) {
			return CredentialInvalid.Wrap(err, "%s: the BMC refused the admin credential after its cold reset", r.t.Device)
		}
		last = err
	}
	return ResetTimeout.Wrap(last, "%s: Redfish did not come back within %s of the cold reset", r.t.Device, r.b.Reset)
}
