package bmc

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hostforge/hostforge"
)

// Step outcomes.
const (
	outOK      = "ok"      // already converged, nothing written
	outSet     = "set"     // written
	outSkipped = "skipped" // not applicable
)

// network reads the manager's network settings once per attempt: the
// steps that converge them share the reading until one of them writes.
func (r *run) network(ctx context.Context) (ManagerNetwork, error) {
	if r.net != nil {
		return *r.net, nil
	}
	var n ManagerNetwork
	if err := r.read(ctx, "read manager network", func() (err error) { n, err = r.cl.ManagerNetwork(ctx); return err }); err != nil {
		return n, err
	}
	r.net = &n
	return n, nil
}

func (r *run) patchNetwork(ctx context.Context, what string, p NetworkPatch) error {
	r.net = nil // read back what the BMC made of the write
	return r.write(ctx, what, func() error { return r.cl.SetManagerNetwork(ctx, p) })
}

func ptr[T any](v T) *T { return &v }

func (r *run) hostname(ctx context.Context) (string, error) {
	n, err := r.network(ctx)
	if err != nil {
		return "", err
	}
	want := Hostname(r.t.Device)
	if n.Hostname == want {
		return outOK, nil
	}
	return outSet, r.patchNetwork(ctx, "hostname", NetworkPatch{Hostname: &want})
}

func (r *run) dhcp(ctx context.Context) (string, error) {
	n, err := r.network(ctx)
	if err != nil {
		return "", err
	}
	if n.DHCP {
		return outOK, nil
	}
	return outSet, r.patchNetwork(ctx, "dhcp", NetworkPatch{DHCP: ptr(true)})
}

// InsecureProtocols are switched off by security hardening where the BMC
// exposes them: plain HTTP, Telnet and SSDP discovery.
var InsecureProtocols = []string{"HTTP", "Telnet", "SSDP"}

func (r *run) security(ctx context.Context) (string, error) {
	n, err := r.network(ctx)
	if err != nil {
		return "", err
	}
	off := map[string]bool{}
	for _, p := range InsecureProtocols {
		if on, ok := n.Protocols[p]; ok && on {
			off[p] = false
		}
	}
	if len(off) == 0 {
		return outOK, nil
	}
	return outSet, r.patchNetwork(ctx, "security", NetworkPatch{Protocols: off})
}

func (r *run) ntp(ctx context.Context) (string, error) {
	if len(r.t.NTPServers) == 0 {
		r.log.Warn("site has no NTP servers", "step", "ntp")
		return outSkipped + "_no_servers", nil
	}
	n, err := r.network(ctx)
	if err != nil {
		return "", err
	}
	if n.NTPEnabled && slices.Equal(n.NTPServers, r.t.NTPServers) {
		return outOK, nil
	}
	return outSet, r.patchNetwork(ctx, "ntp", NetworkPatch{NTPEnabled: ptr(true), NTPServers: r.t.NTPServers})
}

func (r *run) syslog(ctx context.Context) (string, error) {
	if len(r.t.SyslogServers) == 0 {
		r.log.Warn("site has no syslog servers", "step", "syslog")
		return outSkipped + "_no_servers", nil
	}
	var cur []string
	if err := r.read(ctx, "read syslog", func() (err error) { cur, err = r.cl.SyslogServers(ctx); return err }); err != nil {
		return "", err
	}
	if slices.Equal(cur, r.t.SyslogServers) {
		return outOK, nil
	}
	return outSet, r.write(ctx, "syslog", func() error { return r.cl.SetSyslogServers(ctx, r.t.SyslogServers) })
}

func (r *run) virtualMedia(ctx context.Context) (string, error) {
	n, err := r.network(ctx)
	if err != nil {
		return "", err
	}
	if n.VirtualMedia {
		return outOK, nil
	}
	return outSet, r.patchNetwork(ctx, "virtual_media", NetworkPatch{VirtualMedia: ptr(true)})
}

// ---- IPMI monitoring user -------------------------------------------------

func (r *run) ipmiUserAndLAN(ctx context.Context) (string, error) {
	out, err := r.ipmiUser(ctx)
	if err != nil {
		return "", err
	}
	n, err := r.network(ctx)
	if err != nil {
		return "", err
	}
	if n.IPMIOverLAN {
		return out, nil
	}
	if err := r.patchNetwork(ctx, "ipmi_over_lan", NetworkPatch{IPMIOverLAN: ptr(true)}); err != nil {
		return "", err
	}
	return out + "+lan_enabled", nil
}

func (r *run) ipmiUser(ctx context.Context) (string, error) {
	var accts []Account
	err := r.read(ctx, "ipmi_user: list accounts", func() (err error) { accts, err = r.cl.ListAccounts(ctx); return err })
	if errors.Is(err, ErrUnsupported) {
		r.log.Info("BMC model has no account endpoint; IPMI user skipped", "step", "ipmi_user")
		return outSkipped + "_no_endpoint", nil
	}
	if err != nil {
		return "", err
	}
	name := r.t.MonitoringItem
	item, err := r.item(ctx, name)
	if err != nil {
		return "", err
	}
	cred := credOf(item, FieldPassword)
	// Known before it is ever sent: a BMC that refuses the shared
	// monitoring password echoes it in its answer to the create.
	r.remember(cred)
	if !cred.Valid() {
		return "", IPMICredentialMissing.New("%s: vault item %q: missing or without username/password", r.t.Device, name)
	}
	var acct *Account
	for i := range accts {
		if accts[i].UserName == cred.Username {
			acct = &accts[i]
		}
	}
	if acct == nil {
		a := Account{UserName: cred.Username, Role: IPMIRole, Enabled: true}
		if err := r.write(ctx, "ipmi_user: create", func() error { _, err := r.cl.CreateAccount(ctx, a, cred.Password); return err }); err != nil {
			return "", err
		}
		return "created", nil
	}
	out := outOK
	if acct.Role != IPMIRole || !acct.Enabled {
		a := *acct
		a.Role, a.Enabled = IPMIRole, true
		if err := r.write(ctx, "ipmi_user: update", func() error { return r.cl.UpdateAccount(ctx, a) }); err != nil {
			return "", err
		}
		out = "updated"
	}
	// The password cannot be read back; logging in with it is a read.
	_, err = r.connect(ctx, cred)
	switch {
	case errors.Is(err, hostforge.ErrUnauthorized):
		if err := r.write(ctx, "ipmi_user: password", func() error { return r.cl.SetPassword(ctx, acct.ID, cred.Password) }); err != nil {
			return "", err
		}
		return "password_set", nil
	case err != nil:
		return "", err
	}
	return out, nil
}

// ---- BIOS -----------------------------------------------------------------

func (r *run) desiredBIOS() map[string]any {
	if m, ok := r.c.BIOS[r.vendor]; ok {
		return m
	}
	return DefaultBIOS[r.vendor]
}

func same(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// biosDiff returns the attributes to write and whether some desired values
// are staged but not yet applied.
func (r *run) biosDiff(ctx context.Context) (write map[string]any, staged bool, err error) {
	var cur, pend map[string]any
	if err := r.read(ctx, "read bios", func() (err error) { cur, pend, err = r.cl.BiosAttributes(ctx); return err }); err != nil {
		return nil, false, err
	}
	write = map[string]any{}
	for k, v := range r.desiredBIOS() {
		if same(cur[k], v) {
			continue
		}
		if p, ok := pend[k]; ok && same(p, v) {
			staged = true
			continue
		}
		write[k] = v
	}
	return write, staged, nil
}

// stagedBios converges BIOS on a BMC that stages settings for the next boot
// without a job queue (Lenovo XCC); the host reset comes in host_reset.
func (r *run) stagedBios(ctx context.Context) (string, error) {
	write, staged, err := r.biosDiff(ctx)
	if err != nil {
		return "", err
	}
	if len(write) == 0 && !staged {
		return outOK, nil
	}
	r.hostResetNeeded = true
	if len(write) == 0 {
		return "staged", nil
	}
	return outSet, r.write(ctx, "bios", func() error { _, err := r.cl.SetBiosAttributes(ctx, write); return err })
}

func (r *run) hostReset(ctx context.Context) (string, error) {
	if !r.hostResetNeeded {
		return "not_needed", nil
	}
	// An earlier attempt of this run already reset the host for these
	// settings: they apply as it boots, not on a second reboot.
	if at, ok := r.admin.time(FieldHostResetAt); ok && r.now().Sub(at) < JobRunBudget {
		return "done_earlier", nil
	}
	if err := r.write(ctx, "host_reset", func() error { return r.cl.ResetSystem(ctx) }); err != nil {
		return "", err
	}
	if err := r.save(ctx, map[string]string{FieldHostResetAt: stamp(r.now())}); err != nil {
		return "", err
	}
	return "done", nil
}
