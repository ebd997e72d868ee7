package bmc

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"time"

	"github.com/hostforge/hostforge"
)

// The password setup and cold reset, one action per call. The package
// documentation walks through the states and the crash points.

func credOf(fields map[string]string, passwordField string) Credential {
	return Credential{Username: fields[FieldUsername], Password: fields[passwordField]}
}

// item reads a vault item: nil when it does not exist.
func (r *run) item(ctx context.Context, name string) (map[string]string, error) {
	f, err := r.c.Vault.Item(ctx, name)
	if errors.Is(err, hostforge.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, r.vaultErr(name, err)
	}
	if f == nil {
		f = map[string]string{}
	}
	return f, nil
}

// connect opens a client with cred: one authenticated read. A refusal is
// returned as the bare hostforge.ErrUnauthorized so the caller can try the
// next credential; anything else is classified (a wait or a failure).
func (r *run) connect(ctx context.Context, cred Credential) (Client, error) {
	r.remember(cred)
	cl, err := r.c.Connector.Connect(ctx, r.t.Address, cred)
	if err == nil {
		return cl, nil
	}
	if errors.Is(err, hostforge.ErrUnauthorized) && !isFailure(err) {
		return nil, hostforge.ErrUnauthorized
	}
	return nil, r.classify(ctx, "connect", err)
}

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

// credentials leaves the attempt logged in with a working credential and
// no cold reset owed, or returns the wait or failure that stops it: it
// polls a requested reset, else logs in (rotating from the factory
// credential where needed) and requests an owed reset.
func (r *run) credentials(ctx context.Context) error {
	if at, ok := r.admin.time(FieldResetRequestedAt); ok {
		done, err := r.pollReset(ctx, at)
		if done || err != nil {
			return err
		}
		// The BMC answers on its old credential long after the reset was
		// requested: the reset did not take. Log in and request it again.
		r.admin.fields[FieldResetRequestedAt] = ""
	}
	if err := r.login(ctx); err != nil {
		if w, ok := hostforge.AsWait(err); ok && !isFailure(err) && w.Reason == WaitUnreachable && r.admin.get(FieldResetPending) != "" {
			// A reset is owed and the BMC does not answer: it may be
			// resetting already (an attempt stopped between sending the
			// reset and recording it). Wait on the reset's budget.
			return r.wait(WaitReset, ResetPoll, "a cold reset is owed and the BMC does not answer; it may be resetting: %s", w.Detail)
		}
		return err
	}
	if r.resetOwed() {
		return r.requestReset(ctx)
	}
	r.step("cold_reset", "not_needed")
	return nil
}

// resetOwed: a rotation's reset, a forced one of an earlier attempt, or a
// forced one this run has not done yet.
func (r *run) resetOwed() bool {
	if r.admin.get(FieldResetPending) != "" {
		return true
	}
	return r.t.ForceRestart && r.admin.get(FieldForcedResetRun) != r.t.RunID
}

// login implements the password plan written down in the package
// documentation: per-host credential, then a pending one left by an
// interrupted rotation, then the factory credential and a rotation.
func (r *run) login(ctx context.Context) error {
	adminItem := r.t.AdminItem
	admin := r.admin.fields
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
			// An earlier attempt changed the BMC and stopped before the
			// vault promote: finish it.
			r.cl, r.cred = cl, pend
			if err := r.identify(ctx); err != nil {
				return err
			}
			if err := r.promote(ctx, pend); err != nil {
				return err
			}
			r.step("password", "recovered")
			return nil
		}
		if !errors.Is(err, hostforge.ErrUnauthorized) {
			return err
		}
	}
	if done, err := r.loginArchived(ctx); done || err != nil {
		return err
	}
	factoryItem := r.t.FactoryItem
	factory, err := r.item(ctx, factoryItem)
	if err != nil {
		return err
	}
	fcred := credOf(factory, FieldPassword)
	if !fcred.Valid() {
		if !r.admin.exists() {
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
		if !r.admin.exists() {
			return CredentialMissing.New("%s: vault item %q: missing; Supermicro BMCs have no password setup, the per-host credential must exist", r.t.Device, adminItem)
		}
		return CredentialInvalid.New("%s: the BMC refused the per-host credential %q; Supermicro BMCs have no password setup", r.t.Device, adminItem)
	}
	if r.admin.get(FieldResetPending) == resetForRotation && credOf(admin, FieldPassword).Valid() {
		// The rotation is promoted but the BMC still takes its factory
		// password: it applies the new one on the cold reset a crash kept
		// from happening. Reset with the factory credential; no second
		// rotation.
		r.step("password", "applies_on_reset")
		return nil
	}
	return r.rotate(ctx, fcred)
}

// loginArchived logs in with the credential a retirement archived
// (Target.ArchivedItem), for a host enrolled again after it was retired:
// it is rotated away from, as the factory credential is, so the host comes
// back with a fresh per-host credential. A Supermicro BMC has no password
// setup: the archived credential becomes the per-host one again. done is
// false when there is no archive or the BMC refuses it (the factory
// credential is tried next).
func (r *run) loginArchived(ctx context.Context) (done bool, err error) {
	if r.t.ArchivedItem == "" {
		return false, nil
	}
	arch, err := r.item(ctx, r.t.ArchivedItem)
	if err != nil {
		return false, err
	}
	acred := credOf(arch, FieldPassword)
	if !acred.Valid() {
		return false, nil
	}
	cl, err := r.connect(ctx, acred)
	if errors.Is(err, hostforge.ErrUnauthorized) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	r.cl, r.cred = cl, acred
	if err := r.identify(ctx); err != nil {
		return true, err
	}
	if r.vendor == VendorSupermicro {
		if err := r.save(ctx, map[string]string{FieldUsername: acred.Username, FieldPassword: acred.Password}); err != nil {
			return true, err
		}
		r.step("password", "restored_from_archive")
		return true, nil
	}
	if r.admin.get(FieldResetPending) == resetForRotation && credOf(r.admin.fields, FieldPassword).Valid() {
		// Rotated already; the BMC applies the new password on the reset
		// that follows: no second rotation.
		r.step("password", "applies_on_reset")
		return true, nil
	}
	r.log.Info("the host's archived credential works: rotating to a fresh one", "step", "password", "archived_item", r.t.ArchivedItem)
	return true, r.rotate(ctx, acred)
}

// rotate changes the admin password away from the factory credential. The
// new password is in the vault (as pending_password) before the BMC
// changes, so a crash at any point leaves a credential a rerun can use.
func (r *run) rotate(ctx context.Context, factory Credential) error {
	newPass := r.admin.get(FieldPendingPassword)
	if newPass == "" {
		gen := r.c.NewPassword
		if gen == nil {
			gen = randomPassword
		}
		p, err := gen()
		if err != nil || p == "" {
			return InputInvalid.New("%s: the password generator failed: %v", r.t.Device, err)
		}
		// The site's generator chose it: at least hostforge.MinSecretLen
		// characters, refused before the vault or the BMC sees it.
		if err := hostforge.CheckChosenSecret(r.t.Device+": the generated BMC admin password", p); err != nil {
			f, _ := hostforge.AsFailure(err)
			return hostforge.SecretTooShort.At("configure_bmc").New("%s", f.Message)
		}
		newPass = p
	}
	r.remember(Credential{Username: factory.Username, Password: newPass})
	// A. Write-ahead: the vault learns the new password first.
	if r.admin.get(FieldPendingPassword) != newPass || r.admin.get(FieldUsername) != factory.Username || r.admin.get(FieldPassword) != "" {
		if err := r.save(ctx, map[string]string{FieldUsername: factory.Username, FieldPassword: "", FieldPendingPassword: newPass}); err != nil {
			return err
		}
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
	// B. The BMC changes.
	cred := Credential{Username: factory.Username, Password: newPass}
	err := r.cl.SetPassword(ctx, id, newPass)
	if err == nil {
		r.res.Writes++
	} else if err := r.setPasswordUnanswered(ctx, cred, err); err != nil {
		return err
	}
	// Crash point: the BMC has the new password (or has it staged until a
	// reset), the vault has it only as pending_password. A rerun logs in
	// with it (or, on a BMC that applies it on reset, with the factory
	// credential) and sends it again: the same password, no new rotation.
	// C. Promote, owing the cold reset in the same write.
	if err := r.promote(ctx, cred); err != nil {
		return err
	}
	r.step("password", "rotated")
	// The client that sent the reset must authenticate: on a BMC that
	// applied the password at once the factory credential no longer does.
	cl, err := r.connect(ctx, cred)
	switch {
	case err == nil:
		r.cl, r.cred = cl, cred
	case errors.Is(err, hostforge.ErrUnauthorized):
		r.log.Info("the BMC applies the new password on its cold reset", "step", "password")
	default:
		return err
	}
	return nil
}

// setPasswordUnanswered handles a SetPassword that did not plainly
// succeed. A refusal (4xx but 401/403) is what it says. Anything else may
// have changed the password: first the pending password is tried — it
// works on a BMC that applied the change and lost or garbled the answer.
// If it does not, a 5xx is the BMC being busy (a wait; the next attempt
// sends the same password again), and no answer or a 401/403 — from a BMC
// that applied the change before answering, or that stages it until a
// reset — is BMC_PASSWORD_UNCONFIRMED: retryable and not for DC_OPS, since
// the rerun logs in with the pending password or sends it again.
func (r *run) setPasswordUnanswered(ctx context.Context, cred Credential, err error) error {
	if isFailure(err) || ctx.Err() != nil {
		return r.classify(ctx, "password: set", err)
	}
	var he *Error
	busy := errors.As(err, &he) && he.Status >= 500
	refused := errors.Is(err, hostforge.ErrInvalid) || errors.Is(err, hostforge.ErrConflict) ||
		errors.Is(err, hostforge.ErrNotFound) || errors.Is(err, ErrUnsupported)
	if refused && !busy {
		return r.classify(ctx, "password: set", err)
	}
	cl, cerr := r.connect(ctx, cred)
	if cerr == nil {
		r.log.Warn("the BMC's answer to the password change did not confirm it; the new password works", "step", "password")
		r.cl, r.cred = cl, cred
		r.res.Writes++
		return nil
	}
	if busy {
		return r.classify(ctx, "password: set", err)
	}
	return PasswordUnconfirmed.Wrap(r.redact(err), "%s: password: set: the BMC's answer did not confirm the change (%s) and it does not take the new password yet; it stays pending in %q",
		r.t.Device, r.scrub(bmcMessage(err)), r.t.AdminItem)
}

// promote makes cred the per-host credential and owes the cold reset, in
// one vault write.
func (r *run) promote(ctx context.Context, cred Credential) error {
	if err := r.save(ctx, map[string]string{FieldUsername: cred.Username, FieldPassword: cred.Password, FieldPendingPassword: "",
		FieldResetPending: resetForRotation, FieldResetRequestedAt: ""}); err != nil {
		return err
	}
	r.res.Rotated = true
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

// requestReset sends the cold reset and records when the BMC accepted it;
// the attempt then waits for Redfish to come back. A reset whose answer was
// lost (the BMC often drops the connection as it goes down) counts as
// requested: polling tells whether it happened.
func (r *run) requestReset(ctx context.Context) error {
	reason := r.admin.get(FieldResetPending)
	if reason == "" {
		reason = resetForced
	}
	err := r.write(ctx, "cold_reset", func() error { return r.cl.ResetManager(ctx) })
	if w, ok := hostforge.AsWait(err); ok && !isFailure(err) && w.Reason == WaitUnreachable {
		r.log.Warn("no answer to the cold reset; polling to see whether it happened", "step", "cold_reset", "detail", w.Detail)
		r.res.Writes++
		err = nil
	}
	if err != nil {
		return err
	}
	r.res.Reset = true
	if err := r.save(ctx, map[string]string{FieldResetPending: reason, FieldResetRequestedAt: stamp(r.now())}); err != nil {
		return err
	}
	r.step("cold_reset", "requested")
	return r.wait(WaitReset, ResetPoll, "cold reset (%s) requested; waiting for Redfish to come back", reason)
}

// pollReset checks, with the per-host credential, whether Redfish is back
// after the cold reset requested at at. done is true when it is and the
// reset is finished (recorded in the vault); false with a nil error when
// the BMC answers on its old credential past the budget, so the reset must
// be requested again.
func (r *run) pollReset(ctx context.Context, at time.Time) (done bool, err error) {
	since := r.now().Sub(at)
	cred := credOf(r.admin.fields, FieldPassword)
	if !cred.Valid() {
		return false, nil
	}
	r.remember(cred)
	cl, err := r.c.Connector.Connect(ctx, r.t.Address, cred)
	if err == nil {
		r.cl, r.cred = cl, cred
		err = r.identify(ctx)
	}
	switch {
	case err == nil:
	case errors.Is(err, hostforge.ErrUnauthorized) && !isFailure(err):
		if since < ResetBudget {
			r.step("cold_reset", "waiting")
			return false, r.wait(WaitReset, quietPause(since, ResetPoll, ResetPollMax, ResetBudget-since), "the BMC answers %s after the cold reset but does not take the per-host credential yet", since.Round(time.Second))
		}
		r.log.Warn("the BMC answers on its old credential long after the cold reset; requesting it again", "step", "cold_reset", "since", since.String())
		return false, nil
	default:
		c := r.classify(ctx, "poll after the cold reset", err)
		w, ok := hostforge.AsWait(c)
		if !ok || isFailure(c) {
			return false, c
		}
		if since >= ResetBudget {
			return false, ResetTimeout.New("%s: Redfish has not come back %s after the cold reset requested at %s: %s", r.t.Device, since.Round(time.Second), stamp(at), w.Detail)
		}
		r.step("cold_reset", "waiting")
		return false, r.wait(WaitReset, quietPause(since, ResetPoll, ResetPollMax, ResetBudget-since), "Redfish not back %s after the cold reset: %s", since.Round(time.Second), w.Detail)
	}
	set := map[string]string{FieldResetPending: "", FieldResetRequestedAt: ""}
	if r.t.ForceRestart {
		set[FieldForcedResetRun] = r.t.RunID
	}
	reason := r.admin.get(FieldResetPending)
	if err := r.save(ctx, set); err != nil {
		return false, err
	}
	if r.vendor != VendorSupermicro {
		out := "ok"
		if reason == resetForRotation {
			out = "verified_after_reset"
		}
		r.step("password", out)
	}
	r.step("cold_reset", "done")
	return true, nil
}
