package bmc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// Vault holds the BMC credentials as items of named fields (see the package
// documentation for the item names). The BMC phase writes to it during a
// password rotation, and keeps in the per-host admin item what a later
// attempt must know (a reset owed or requested, the iDRAC job in flight).
type Vault interface {
	// Item returns the item's fields; hostforge.ErrNotFound when absent.
	Item(ctx context.Context, name string) (map[string]string, error)
	// PutItem replaces the item's fields.
	PutItem(ctx context.Context, name string, fields map[string]string) error
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
	// Clock stamps the times the phase persists (a reset request, a staged
	// job) and measures them; it never sleeps (clock.Real in production).
	Clock clock.Clock
	Log   *slog.Logger
	// BIOS overrides DefaultBIOS per vendor.
	BIOS map[Vendor]map[string]any
	// NewPassword generates a rotated admin password (nil: 24 random
	// characters from crypto/rand). One shorter than
	// hostforge.MinSecretLen characters is refused (SECRET_TOO_SHORT)
	// before it is stored or sent.
	NewPassword func() (string, error)
	// Secrets is the process's set of secret values. Every credential an
	// attempt handles (read from the vault, generated, sent to the BMC) is
	// registered in it, and every error, wait and log line the phase makes
	// from a BMC's text is scrubbed with it; nil keeps a set per attempt.
	Secrets *hostforge.Secrets
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
	case t.ArchivedItem != "" && (t.ArchivedItem == t.AdminItem || t.ArchivedItem == t.FactoryItem || t.ArchivedItem == t.MonitoringItem):
		return InputInvalid.New("%s: archived_item %q is another of the BMC's items; a retired credential needs its own", t.Device, t.ArchivedItem)
	case t.ForceRestart && t.RunID == "":
		return InputInvalid.New("%s: force_restart needs a run_id, so the forced cold reset happens once per run and not once per attempt", t.Device)
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

// Configure is one attempt of phase 2: it detects the BMC's vendor and runs
// its strategy — password setup, cold reset, settings convergence, IPMI
// monitoring user — reading live state and acting at most once per thing
// it converges. It never sleeps: where the BMC must be waited for (busy,
// resetting, an iDRAC job scheduling or running) it returns a
// *hostforge.Wait, and the next call continues where this one stopped,
// from live state and the admin vault item. A converged BMC gets no
// writes. Every other error is a *hostforge.Failure.
func (c *Configurator) Configure(ctx context.Context, t Target) (Result, error) {
	if err := validate(t); err != nil {
		return Result{}, err
	}
	r := c.newRun(t)
	err := r.configure(hostforge.WithDevice(ctx, t.Device))
	if w, ok := hostforge.AsWait(err); ok && !isFailure(err) {
		w = r.secrets.Err(w).(*hostforge.Wait)
		if r.log.Enabled(ctx, slog.LevelInfo) {
			r.log.Info("BMC configuration waits", "reason", w.Reason, "after", w.After.String(), "detail", w.Detail, "writes", r.res.Writes)
		}
		return r.res, w
	}
	if err != nil {
		// The phase's one exit: whatever text a BMC echoed, the Failure
		// that leaves carries none of the credentials the attempt handled.
		err = r.secrets.Err(hostforge.Classified(err))
		r.log.Warn("BMC configuration failed", "code", hostforge.CodeOf(err), "error", err.Error())
		return r.res, err
	}
	r.log.Info("BMC configured", "vendor", string(r.vendor), "writes", r.res.Writes, "steps", strings.Join(r.res.Steps, ","))
	return r.res, nil
}

func isFailure(err error) bool { _, ok := hostforge.AsFailure(err); return ok }

type run struct {
	c      *Configurator
	t      Target
	log    *slog.Logger
	clk    clock.Clock
	admin  admin
	cl     Client
	cred   Credential
	vendor Vendor
	res    Result
	// secrets holds the credentials this attempt handles (the
	// configurator's set, or one of its own); text a BMC echoes is
	// scrubbed of them before it reaches an error or a log.
	secrets *hostforge.Secrets
	// net is the manager network as last read this attempt (nil: read it).
	net *ManagerNetwork
	// hostResetNeeded is set by a step that staged settings for the next
	// boot on a BMC without a job queue (Lenovo).
	hostResetNeeded bool
}

func (c *Configurator) newRun(t Target) *run {
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clk := c.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	sec := c.Secrets.OrNew()
	r := &run{c: c, t: t, clk: clk, secrets: sec, log: log}
	if log.Handler() != slog.DiscardHandler { // nothing to bind where nothing is written
		r.log = slog.New(sec.Handler(log.Handler())).With("device", t.Device, "phase", Phase)
	}
	return r
}

func (r *run) now() time.Time { return r.clk.Now() }

func (r *run) step(name, outcome string) {
	r.res.Steps = append(r.res.Steps, name+":"+outcome)
	if r.log.Enabled(context.Background(), slog.LevelInfo) {
		r.log.Info("BMC step", "step", name, "outcome", outcome)
	}
}

// wait is the phase's Wait, its detail naming the device.
func (r *run) wait(reason string, after time.Duration, format string, args ...any) *hostforge.Wait {
	w := hostforge.RetryAfter(after, reason, format, args...)
	w.Detail = r.scrub(r.t.Device + ": " + w.Detail)
	return w
}

func (r *run) configure(ctx context.Context) error {
	if r.c.Connector == nil || r.c.Vault == nil {
		// A wiring defect, not a NetBox field to fix.
		return hostforge.Unclassified.New("%s: the BMC configurator has no connector or vault", r.t.Device)
	}
	fields, err := r.item(ctx, r.t.AdminItem)
	if err != nil {
		return err
	}
	r.admin = admin{fields: fields}
	r.remember(credOf(fields, FieldPassword), credOf(fields, FieldPendingPassword))
	if err := r.credentials(ctx); err != nil {
		return err
	}
	r.res.Vendor = string(r.vendor)
	if err := r.jobInFlight(ctx); err != nil {
		return err
	}
	for _, s := range r.plan() {
		out, err := s.fn(r, ctx)
		if err != nil {
			if _, ok := hostforge.AsWait(err); ok && !isFailure(err) {
				r.step(s.name, "waiting")
				return err
			}
			r.log.Warn("BMC step failed", "step", s.name, "code", hostforge.CodeOf(err))
			return err
		}
		r.step(s.name, out)
	}
	// The run is complete: a host reset this run made no longer needs
	// guarding against a second one.
	if r.admin.get(FieldHostResetAt) != "" {
		return r.save(ctx, map[string]string{FieldHostResetAt: ""})
	}
	return nil
}

type namedStep struct {
	name string
	fn   func(*run, context.Context) (string, error)
}

// plans are each vendor's step set, exactly as the specification lists it.
var plans = map[Vendor][]namedStep{
	VendorDell: {
		{"hostname", (*run).hostname}, {"dhcp", (*run).dhcp}, {"security", (*run).security},
		{"ntp", (*run).ntp}, {"syslog", (*run).syslog}, {"bios", (*run).idracBios}, {"boot_order", (*run).idracBoot},
		{"ipmi_user", (*run).ipmiUserAndLAN},
	},
	VendorLenovo: {
		{"hostname", (*run).hostname}, {"dhcp", (*run).dhcp}, {"security", (*run).security},
		{"ntp", (*run).ntp}, {"syslog", (*run).syslog}, {"bios", (*run).stagedBios}, {"boot_order", (*run).lenovoBoot},
		{"host_reset", (*run).hostReset}, {"ipmi_user", (*run).ipmiUserAndLAN},
	},
	VendorAMI: {
		{"hostname", (*run).hostname}, {"ntp", (*run).ntp}, {"ipmi_user", (*run).ipmiUser},
		{"virtual_media", (*run).virtualMedia}, {"boot_restriction", (*run).amiBoot},
	},
	VendorSupermicro: {
		{"hostname", (*run).hostname}, {"ntp", (*run).ntp}, {"syslog", (*run).syslog}, {"ipmi_user", (*run).ipmiUser},
	},
}

// plan is the vendor's step set.
func (r *run) plan() []namedStep { return plans[r.vendor] }

// ---- calls: one try each, then a wait or a classified failure -------------

// read runs one read.
func (r *run) read(ctx context.Context, what string, fn func() error) error {
	return r.call(ctx, what, false, fn)
}

// write runs one configuration write and counts it.
func (r *run) write(ctx context.Context, what string, fn func() error) error {
	return r.call(ctx, what, true, fn)
}

func (r *run) call(ctx context.Context, what string, write bool, fn func() error) error {
	err := fn()
	if err == nil {
		if write {
			r.res.Writes++
		}
		return nil
	}
	return r.classify(ctx, what, err)
}

// specs maps the system errors a client returns to the phase's codes; an
// unavailable BMC never reaches it (see classify).
var specs = hostforge.SystemSpecs{
	NotFound:     EndpointMissing,
	Unauthorized: CredentialInvalid,
	Unavailable:  Unreachable,
	Conflict:     WriteRejected,
	Invalid:      WriteRejected,
}

// classify turns a client error into a wait (the BMC answered 5xx, or not
// at all) or the phase's Failure. The BMC's own message is kept, scrubbed
// of every credential the attempt handles.
func (r *run) classify(ctx context.Context, what string, err error) error {
	if isFailure(err) {
		return err
	}
	if w, ok := hostforge.AsWait(err); ok {
		return w
	}
	if ctx.Err() != nil {
		// The attempt itself was stopped (cancelled, or past its deadline):
		// the runtime reports it as such.
		return fmt.Errorf("%s: %s: %w", r.t.Device, what, ctx.Err())
	}
	var he *Error
	switch {
	case errors.As(err, &he) && he.Status >= 500:
		return r.wait(WaitBusy, BusyBackoff.First, "%s: BMC answered HTTP %d: %s", what, he.Status, r.scrub(bmcMessage(err)))
	case errors.Is(err, hostforge.ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// A context error while the attempt's own context is alive is
		// the request's timeout: the BMC did not answer.
		return r.wait(WaitUnreachable, BusyBackoff.First, "%s: no answer: %s", what, r.scrub(err.Error()))
	case errors.Is(err, ErrUnsupported):
		return EndpointMissing.Wrap(r.redact(err), "%s: %s", r.t.Device, what)
	}
	msg := r.scrub(bmcMessage(err))
	if errors.Is(err, hostforge.ErrUnauthorized) {
		msg = "the BMC refused the admin credential"
	}
	return specs.Classify(r.redact(err), Phase, "%s: %s: %s", r.t.Device, what, msg)
}

func (r *run) vaultErr(item string, err error) error {
	return VaultUnavailable.Wrap(r.redact(err), "%s: vault item %q", r.t.Device, item)
}

// ---- secrets in remote text --------------------------------------------------

// remember registers credentials the attempt handles: their passwords and
// basic-auth encodings.
func (r *run) remember(creds ...Credential) {
	for _, c := range creds {
		r.secrets.AddCredential(c.Username, c.Password)
	}
}

func (r *run) scrub(s string) string { return r.secrets.Scrub(s) }

// redact is err with its text scrubbed; errors.Is still sees the original.
func (r *run) redact(err error) error { return r.secrets.Err(err) }
