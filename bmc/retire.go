package bmc

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// A host's retirement, on its BMC and in the vault: the shared monitoring
// user is removed from the BMC, and the per-host admin credential — the only
// way into a BMC whose password enrollment rotated — moves to an archived
// item, kept for a retention period so a host returned from RMA can still be
// reached (and re-enrolled: the BMC phase logs in with it and rotates to a
// fresh credential), then deleted by a later retirement run.
//
//	bmc-admin-<device>.retired   the archived credential: username, password
//	                             (and pending_password when a rotation was in
//	                             flight), retired_run, retired_at, purge_after

// PhaseRetire is the phase the BMC's retirement failures are recorded against.
const PhaseRetire = "retire_bmc"

// Fields of an archived credential.
const (
	FieldRetiredRun = "retired_run"
	FieldRetiredAt  = "retired_at"
	FieldPurgeAfter = "purge_after"
)

// DefaultRetention is how long an archived credential is kept by default.
const DefaultRetention = 90 * 24 * time.Hour

// AdminItem names the vault item of a device's per-host admin credential:
// the one rule enrollment (which creates and rotates it) and retirement
// (which archives it) share.
func AdminItem(device string) string { return "bmc-admin-" + device }

// ArchivedItem names the item a retired host's admin credential is kept in.
func ArchivedItem(adminItem string) string { return adminItem + ".retired" }

// ArchiveVault is the vault as retirement needs it: items read, written and
// deleted. A deletion of an item that does not exist is not an error.
type ArchiveVault interface {
	Vault
	DeleteItem(ctx context.Context, name string) error
}

// RetireTarget is the BMC of a host being retired.
type RetireTarget struct {
	Device  string `json:"device"`
	Address string `json:"address"`
	// AdminItem names the per-host admin credential; MonitoringItem the
	// shared monitoring user whose account is removed.
	AdminItem      string `json:"admin_item"`
	MonitoringItem string `json:"monitoring_item"`
	// Retention is how long the archived credential is kept
	// (DefaultRetention when 0).
	Retention time.Duration `json:"retention,omitempty"`
	// Run names the retirement; the archive records it.
	Run string `json:"run,omitempty"`
}

// RetireResult says what one attempt found and did.
type RetireResult struct {
	// MonitoringUser is "removed", "absent", "no_account_endpoint" or
	// "not_checked" (no credential reaches the BMC any more).
	MonitoringUser string `json:"monitoring_user"`
	// Archived is the archive item; ArchivedUntil when it may be deleted.
	Archived      string    `json:"archived,omitempty"`
	ArchivedUntil time.Time `json:"archived_until,omitzero"`
	// Purged is true when this attempt deleted an archive past its retention.
	Purged bool `json:"purged,omitempty"`
	// Writes counts the writes to the BMC and the vault.
	Writes int `json:"writes"`
}

// Retirer retires hosts' BMCs; safe for concurrent use.
type Retirer struct {
	Connector Connector
	Vault     ArchiveVault
	// Clock stamps and judges the retention; it never sleeps.
	Clock   clock.Clock
	Log     *slog.Logger
	Secrets *hostforge.Secrets
}

// Retire is one attempt of a host's BMC retirement. It reads first and
// writes only what is left to do, so an attempt on a retired host writes
// nothing:
//
//  1. An archive past its retention, with no admin item beside it, is
//     deleted; nothing else is done (the retirement is long over).
//  2. The attempt logs in with the per-host credential (the admin item, or
//     the archive once it moved), and removes the monitoring user's account
//     when the BMC has it. With neither item there is no way in: the step
//     reports "not_checked" and writes nothing.
//  3. The admin item is copied to the archive (write-ahead: the copy is in
//     the vault before the original goes), then deleted.
//
// A BMC that is busy or does not answer is a wait (bmc_busy,
// bmc_unreachable), as in the BMC phase; the failures are the phase's codes,
// recorded against retire_bmc.
func (c *Retirer) Retire(ctx context.Context, t RetireTarget) (RetireResult, error) {
	res, err := c.retire(hostforge.WithDevice(ctx, t.Device), t)
	if err == nil {
		return res, nil
	}
	if f, ok := hostforge.AsFailure(err); ok && f.Phase == Phase {
		nf := *f
		nf.Phase = PhaseRetire
		err = &nf
	}
	return res, hostforge.Classified(err)
}

func (c *Retirer) retire(ctx context.Context, t RetireTarget) (RetireResult, error) {
	var res RetireResult
	switch {
	case t.Device == "" || t.AdminItem == "" || t.MonitoringItem == "":
		return res, InputInvalid.New("%s: retirement needs the device, its admin item and the monitoring item", t.Device)
	case t.AdminItem == t.MonitoringItem:
		return res, InputInvalid.New("%s: admin_item %q is the shared monitoring item", t.Device, t.AdminItem)
	case c.Connector == nil || c.Vault == nil:
		return res, hostforge.Unclassified.New("%s: the BMC retirer has no connector or vault", t.Device)
	}
	retention := t.Retention
	if retention <= 0 {
		retention = DefaultRetention
	}
	cfg := &Configurator{Connector: c.Connector, Vault: c.Vault, Clock: c.Clock, Log: c.Log, Secrets: c.Secrets}
	r := cfg.newRun(Target{Device: t.Device, Address: t.Address, AdminItem: t.AdminItem, MonitoringItem: t.MonitoringItem})
	archiveName := ArchivedItem(t.AdminItem)
	adminItem, err := r.item(ctx, t.AdminItem)
	if err != nil {
		return res, err
	}
	archive, err := r.item(ctx, archiveName)
	if err != nil {
		return res, err
	}
	now := r.now()
	if archive != nil {
		res.Archived = archiveName
		if until, ok := (&admin{fields: archive}).time(FieldPurgeAfter); ok {
			res.ArchivedUntil = until
			if adminItem == nil && !now.Before(until) {
				if err := c.Vault.DeleteItem(ctx, archiveName); err != nil {
					return res, r.vaultErr(archiveName, err)
				}
				res.Writes++
				res.Purged, res.MonitoringUser = true, "not_checked"
				r.log.Info("archived BMC credential past its retention deleted", "step", "retire_bmc", "item", archiveName)
				return res, nil
			}
		}
	}

	// Log in with whatever per-host credential there is.
	var creds []Credential
	for _, f := range []map[string]string{adminItem, archive} {
		for _, field := range []string{FieldPassword, FieldPendingPassword} {
			if cr := credOf(f, field); cr.Valid() {
				creds = append(creds, cr)
			}
		}
	}
	r.remember(creds...)
	switch {
	case t.Address == "" && len(creds) > 0:
		return res, InputInvalid.New("%s: address: no out-of-band address to reach the BMC", t.Device)
	case len(creds) == 0:
		res.MonitoringUser = "not_checked"
		r.log.Warn("no per-host BMC credential in the vault: the monitoring user cannot be checked", "step", "retire_bmc", "admin_item", t.AdminItem)
	default:
		out, err := r.removeMonitoringUser(ctx, creds, &res)
		if err != nil {
			return res, err
		}
		res.MonitoringUser = out
	}

	if adminItem == nil {
		return res, nil
	}
	// Archive (write-ahead), then drop the admin item.
	want := maps.Clone(adminItem)
	want[FieldRetiredRun] = t.Run
	if archive != nil && archive[FieldRetiredRun] == t.Run && archive[FieldRetiredAt] != "" {
		// An earlier attempt of this run archived it: keep its stamps.
		want[FieldRetiredAt], want[FieldPurgeAfter] = archive[FieldRetiredAt], archive[FieldPurgeAfter]
	} else {
		want[FieldRetiredAt], want[FieldPurgeAfter] = stamp(now), stamp(now.Add(retention))
	}
	if !maps.Equal(archive, want) {
		if err := c.Vault.PutItem(ctx, archiveName, want); err != nil {
			return res, r.vaultErr(archiveName, err)
		}
		res.Writes++
	}
	if err := c.Vault.DeleteItem(ctx, t.AdminItem); err != nil {
		return res, r.vaultErr(t.AdminItem, err)
	}
	res.Writes++
	res.Archived = archiveName
	res.ArchivedUntil, _ = (&admin{fields: want}).time(FieldPurgeAfter)
	r.log.Info("per-host BMC credential archived", "step", "retire_bmc", "item", archiveName, "until", want[FieldPurgeAfter])
	return res, nil
}

// removeMonitoringUser logs in with the first credential the BMC accepts
// and deletes the monitoring user's account when it exists.
func (r *run) removeMonitoringUser(ctx context.Context, creds []Credential, res *RetireResult) (string, error) {
	var cl Client
	for _, cr := range creds {
		c, err := r.connect(ctx, cr)
		if err == nil {
			cl, r.cred = c, cr
			break
		}
		if !errors.Is(err, hostforge.ErrUnauthorized) {
			return "", err
		}
	}
	if cl == nil {
		return "", CredentialInvalid.New("%s: the BMC refused the per-host credential (%q and its archive)", r.t.Device, r.t.AdminItem)
	}
	r.cl = cl
	var accts []Account
	err := r.read(ctx, "retire: list accounts", func() (err error) { accts, err = cl.ListAccounts(ctx); return err })
	if errors.Is(err, ErrUnsupported) {
		return "no_account_endpoint", nil
	}
	if err != nil {
		return "", err
	}
	mon, err := r.item(ctx, r.t.MonitoringItem)
	if err != nil {
		return "", err
	}
	user := mon[FieldUsername]
	if user == "" {
		return "", IPMICredentialMissing.New("%s: vault item %q: missing or without a username; the monitoring user to remove is not known", r.t.Device, r.t.MonitoringItem)
	}
	if user == r.cred.Username {
		return "", InputInvalid.New("%s: the monitoring user %q is the per-host admin account; it is not removed", r.t.Device, user)
	}
	for _, a := range accts {
		if a.UserName != user {
			continue
		}
		err := r.write(ctx, "retire: delete the monitoring user", func() error { return cl.DeleteAccount(ctx, a.ID) })
		if errors.Is(err, hostforge.ErrNotFound) {
			return "absent", nil // gone since the listing
		}
		if err != nil {
			return "", err
		}
		res.Writes++
		r.log.Info("monitoring user removed", "step", "retire_bmc", "user", user)
		return "removed", nil
	}
	return "absent", nil
}
