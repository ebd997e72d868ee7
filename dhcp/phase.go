package dhcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/hostforge/hostforge"
)

// Phase configures one DHCP server for any number of concurrent
// enrollments. It implements enrollment.DHCPPhase.
type Phase struct {
	dialer Dialer
	cfg    Config
	cfgErr error
	log    *slog.Logger
	// lock serialises change sequences on this server; a channel so that
	// waiting for it honours the caller's context.
	lock chan struct{}
}

// MaxRemoteOperations is the most remote operations one Configure call
// makes, each bounded by one of the Remote's deadlines: connect, login, the
// hash, mkdir, lock, the hash under the lock, the read and upload of the
// backup, the upload, config test, restart and status, and on a failed
// restart a rollback (read the backup, restore, config test, restart,
// status, remove the backup), then the unlock. A step's attempt bound is
// this many times the longest deadline.
const MaxRemoteOperations = 19

// New returns the phase for the DHCP server dialer reaches, configured by
// the site's cfg (zero fields take the flavour's defaults). An invalid cfg
// makes every Configure call fail with DHCP_SETTINGS_INVALID; call
// cfg.Resolved first to catch it at start-up. log may be nil.
func New(dialer Dialer, cfg Config, log *slog.Logger) *Phase {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rc, err := cfg.Resolved()
	return &Phase{dialer: dialer, cfg: rc, cfgErr: err, log: log, lock: make(chan struct{}, 1)}
}

// Config returns the resolved configuration.
func (p *Phase) Config() Config { return p.cfg }

// Configure makes the server hold e's reservation: it uploads and restarts
// only when the remote file's content differs. Errors are *hostforge.Failure.
func (p *Phase) Configure(ctx context.Context, e Entry) (Result, error) {
	log := p.log.With("device", e.Hostname, "phase", PhaseName)
	if p.cfgErr != nil {
		return Result{}, p.fail(log, SettingsInvalid.Wrap(p.cfgErr, "device %s: site DHCP settings", e.Hostname))
	}
	if p.dialer == nil {
		return Result{}, p.fail(log, SettingsInvalid.New("device %s: no DHCP server connection configured", e.Hostname))
	}
	data, file, err := Render(p.cfg.Flavour, p.cfg.Dir, e)
	if err != nil {
		return Result{}, p.fail(log, EntryInvalid.Wrap(err, "device %s: DHCP reservation", e.Hostname))
	}
	res := Result{Path: file, SHA256: SHA256(data)}

	r, err := p.dialer.Dial(ctx)
	if err != nil {
		return res, p.fail(log, p.remoteFailure(ctx, e.Hostname, "dial", "the DHCP server", err))
	}
	defer func() {
		if cerr := r.Close(); cerr != nil {
			log.Debug("closing the DHCP server session", "error", cerr)
		}
	}()

	backup := BackupPath(file)
	remoteSum, pending, err := p.state(ctx, r, file, backup)
	if err != nil {
		return res, p.fail(log, p.remoteFailure(ctx, e.Hostname, "hash", file, err))
	}
	switch {
	case remoteSum == res.SHA256 && !pending:
		log.Info("DHCP reservation unchanged; no upload, no restart", "step", "hash", "path", file, "sha256", res.SHA256)
		return res, nil
	case pending:
		log.Warn("an earlier change of this host's DHCP file did not finish; completing it", "step", "hash", "path", file, "backup", backup)
	case remoteSum == "":
		log.Info("remote DHCP host file absent or unreadable; uploading", "step", "hash", "path", file)
	default:
		log.Info("DHCP reservation changed; uploading", "step", "hash", "path", file, "remote_sha256", remoteSum, "sha256", res.SHA256)
	}

	select {
	case p.lock <- struct{}{}:
	case <-ctx.Done():
		return res, p.fail(log, hostforge.Cancelled.Wrap(ctx.Err(), "device %s: waiting for this DHCP server's restart lock", e.Hostname))
	}
	defer func() { <-p.lock }()

	changed, err := p.change(ctx, log, r, e.Hostname, file, data, res.SHA256, false)
	if err != nil {
		return res, p.fail(log, err)
	}
	res.Changed = changed
	if changed {
		log.Info("DHCP reservation uploaded and service restarted", "step", "status", "path", file, "sha256", res.SHA256)
	}
	return res, nil
}

// state hashes the host file and its backup with one remote command: the
// file's hash ("" when absent or unreadable) and whether a backup says an
// earlier change did not finish.
func (p *Phase) state(ctx context.Context, r Remote, file, backup string) (sum string, pending bool, err error) {
	sums, err := r.Hash(ctx, file, backup)
	if err != nil {
		return "", false, err
	}
	if len(sums) != 2 {
		// A Remote that breaks its contract: treat the file as changed.
		p.log.Warn("the DHCP server answered a hash request with the wrong number of hashes; treating the file as changed", "path", file, "hashes", len(sums))
		return "", false, nil
	}
	return sums[0], sums[1] != "", nil
}

// change makes file hold data (or, with remove, makes it absent) as one
// transaction on the server, under the server-wide lock: back up the
// host's current file, replace or remove it, test, restart and check the
// service, and drop the backup. A step that fails rolls back: the backup is
// restored and, when the service may have loaded the new configuration, the
// service is restarted on the restored one. The caller holds the in-process
// lock. It returns false when, by the time the lock was taken, another
// worker had already made the same change.
func (p *Phase) change(ctx context.Context, log *slog.Logger, r Remote, device, file string, data []byte, sum string, remove bool) (bool, error) {
	dir := path.Dir(file)
	prep := "mkdir -p -- " + ShellQuote(dir)
	out, err := r.Run(ctx, prep)
	if err != nil {
		return false, p.remoteFailure(ctx, device, "run", prep, err)
	}
	if out.Exit != 0 {
		// Best effort, as before: the lock or the upload reports a missing
		// or unwritable directory with its own message.
		log.Warn("preparing the DHCP host directory failed; continuing", "step", "prepare", "dir", dir, "exit", out.Exit, "output", tail(out.Output))
	}

	unlock, err := r.Lock(ctx, p.cfg.Lock)
	if err != nil {
		return false, p.remoteFailure(ctx, device, "lock", p.cfg.Lock, err)
	}
	defer func() {
		if err := unlock(); err != nil {
			log.Warn("releasing the DHCP server's configuration lock failed; the server releases it when the session ends", "step", "unlock", "lock", p.cfg.Lock, "error", err)
		}
	}()
	log.Debug("holding the DHCP server's configuration lock", "step", "lock", "lock", p.cfg.Lock)

	// Read the state again under the lock: another worker may have changed
	// this file while we waited.
	backup := BackupPath(file)
	remoteSum, pending, err := p.state(ctx, r, file, backup)
	if err != nil {
		return false, p.remoteFailure(ctx, device, "hash", file, err)
	}
	if !remove && remoteSum == sum && !pending {
		log.Info("another worker made this DHCP change while we waited for the lock; no upload, no restart", "step", "hash", "path", file)
		return false, nil
	}
	tx := &txn{p: p, log: log, r: r, device: device, file: file, backup: backup, restart: pending}
	if pending {
		// The backup holds the file the service last accepted: keep it.
		log.Warn("keeping the backup of an earlier, unfinished change; it is restored if this change fails", "step", "backup", "backup", backup)
	} else {
		prev, existed, err := r.Read(ctx, file)
		if err != nil {
			return false, p.remoteFailure(ctx, device, "read", file, err)
		}
		if remove && !existed {
			log.Info("another worker removed this DHCP reservation while we waited for the lock; no restart", "step", "hash", "path", file)
			return false, nil
		}
		if err := r.Upload(ctx, backup, encodeBackup(prev, existed)); err != nil {
			// The host file is untouched; an upload never leaves part of a
			// backup behind.
			return false, p.remoteFailure(ctx, device, "upload", backup, err)
		}
	}

	if remove {
		if err := r.Remove(ctx, file); err != nil {
			return false, tx.abort(ctx, p.remoteFailure(ctx, device, "remove", file, err))
		}
	} else if err := r.Upload(ctx, file, data); err != nil {
		return false, tx.abort(ctx, p.remoteFailure(ctx, device, "upload", file, err))
	}
	steps := []struct {
		name string
		cmd  string
		spec *hostforge.Spec
	}{
		{"config_test", p.cfg.ConfigTest, ConfigRejected},
		{"restart", p.cfg.Restart, RestartFailed},
		{"status", p.cfg.Status, ServiceInactive},
	}
	for _, s := range steps {
		if s.name == "restart" {
			// From here on the service may have loaded the new file.
			tx.restart = true
		}
		out, err := r.Run(ctx, s.cmd)
		if err != nil {
			return false, tx.abort(ctx, p.remoteFailure(ctx, device, "run", s.cmd, err))
		}
		if out.Exit == 0 {
			log.Debug("DHCP service command succeeded", "step", s.name, "command", s.cmd)
			continue
		}
		return false, tx.abort(ctx, s.spec.New("device %s: %s command %q exited %d: %s", device, strings.ReplaceAll(s.name, "_", " "), s.cmd, out.Exit, tail(out.Output)))
	}
	// Commit: the service accepted and runs the new file.
	if err := r.Remove(ctx, backup); err != nil {
		// The service runs the new file, but the backup says otherwise: fail
		// so that the rerun completes the change and removes it.
		return false, p.remoteFailure(ctx, device, "remove", backup, err)
	}
	return true, nil
}

// txn is one change in flight, for its rollback.
type txn struct {
	p            *Phase
	log          *slog.Logger
	r            Remote
	device       string
	file, backup string
	// restart: the service may run a configuration other than the backup's
	// (a restart was attempted, or an earlier change did not finish), so a
	// rollback restarts it on the restored file.
	restart bool
}

// abort rolls the change back and returns cause with what the rollback did
// appended to its message. The rollback runs even when ctx has ended:
// leaving an untested file live is worse than finishing, and every remote
// call is bounded by the Remote's own deadline.
func (t *txn) abort(ctx context.Context, cause error) error {
	summary := t.rollback(context.WithoutCancel(ctx))
	f, ok := hostforge.AsFailure(cause)
	if !ok {
		return cause
	}
	nf := *f
	nf.Message += "; " + summary
	return &nf
}

// rollback restores the backup and says what it did. When the service may
// no longer run the configuration it had (a restart was attempted), it is
// tested and restarted on whatever is live — the restored file, or the new
// one when the restore failed — and the summary says whether DHCP runs.
func (t *txn) rollback(ctx context.Context) string {
	log := t.log.With("step", "rollback", "path", t.file, "backup", t.backup)
	summary, restored := t.restore(ctx, log)
	switch {
	case t.restart:
		summary += t.restartOnLive(ctx, log, restored)
	case restored:
		summary += "; the service was not restarted and still runs on the configuration it had"
	}
	if restored {
		if err := t.r.Remove(ctx, t.backup); err != nil {
			// Harmless: the backup now equals the live file.
			log.Warn("could not remove the backup after restoring it", "error", err)
		}
	}
	return summary
}

// restore puts the backup's content back, and says what it did.
func (t *txn) restore(ctx context.Context, log *slog.Logger) (string, bool) {
	b, ok, err := t.r.Read(ctx, t.backup)
	if err == nil && !ok {
		err = errors.New("it does not exist")
	}
	if err != nil {
		log.Error("could not read the backup of the host's last accepted DHCP file; the new file stays in place", "error", err)
		return fmt.Sprintf("rollback: could not read the backup %s (%v): the new file stays in place and the rerun restores or completes the change", t.backup, err), false
	}
	prev, existed, err := decodeBackup(b)
	if err != nil {
		log.Error("the backup of the host's last accepted DHCP file is unreadable; restore it by hand", "error", err)
		return fmt.Sprintf("rollback: the backup %s is unreadable (%v): the new file stays in place; restore the host's file by hand and delete the backup", t.backup, err), false
	}
	what := "restored the host's previous file"
	if existed {
		err = t.r.Upload(ctx, t.file, prev)
	} else {
		what = "removed the new file (the host had none before)"
		err = t.r.Remove(ctx, t.file)
	}
	if err != nil {
		log.Error("could not restore the host's last accepted DHCP file; the new file stays in place", "error", err)
		return fmt.Sprintf("rollback: could not restore the previous file (%v): the new file stays in place with its backup at %s, and the rerun restores or completes the change", err, t.backup), false
	}
	log.Warn("rolled the DHCP change back", "action", what)
	return "rollback: " + what, true
}

// restartOnLive tests the configuration now on the server (the restored
// one, or the new one when it could not be restored) and restarts the
// service on it; it never restarts onto a configuration its test refuses.
// Every outcome but a running service says that DHCP may be down.
func (t *txn) restartOnLive(ctx context.Context, log *slog.Logger, restored bool) string {
	cfg := t.p.cfg
	which, done := "the restored configuration", " and restarted the service on it: the service is running"
	if !restored {
		which, done = "the configuration on the server (the new file)", "; restarted the service on the configuration on the server (the new file, which its test accepts): the service is running"
	}
	out, err := t.r.Run(ctx, cfg.ConfigTest)
	switch {
	case err != nil:
		log.Error("could not test the DHCP configuration left after the rollback; the service was not restarted", "restored", restored, "error", err)
		return fmt.Sprintf("; could not run the config test on %s (%v), so the service was not restarted: DHCP may be down on this server", which, err)
	case out.Exit != 0:
		log.Error("the config test refuses the DHCP configuration left after the rollback; the service was not restarted", "restored", restored, "exit", out.Exit, "output", tail(out.Output))
		return fmt.Sprintf("; the config test refuses %s too (exit %d: %s), so the service was not restarted: DHCP may be down on this server", which, out.Exit, tail(out.Output))
	}
	for _, step := range []struct{ what, cmd string }{
		{"restarting the service on it", cfg.Restart},
		{"the status check after that restart", cfg.Status},
	} {
		out, err = t.r.Run(ctx, step.cmd)
		if err != nil {
			log.Error("the DHCP service after the rollback: command failed: DHCP may be down", "command", step.cmd, "restored", restored, "error", err)
			return fmt.Sprintf("; %s failed too (%v): DHCP may be down on this server", step.what, err)
		}
		if out.Exit != 0 {
			log.Error("the DHCP service after the rollback: command failed: DHCP is down", "command", step.cmd, "restored", restored, "exit", out.Exit, "output", tail(out.Output))
			return fmt.Sprintf("; %s failed too (exit %d: %s): DHCP is down on this server", step.what, out.Exit, tail(out.Output))
		}
	}
	log.Warn("restarted the DHCP service after the rollback; it is running", "restored", restored)
	return done
}

// remoteFailure classifies an error from the Remote. target names the file
// or command (never a secret).
func (p *Phase) remoteFailure(ctx context.Context, device, op, target string, err error) error {
	if _, ok := hostforge.AsFailure(err); ok {
		return err
	}
	if ctx.Err() != nil {
		return hostforge.Cancelled.Wrap(err, "device %s: DHCP %s %s", device, op, target)
	}
	var spec *hostforge.Spec
	switch KindOf(err) {
	case KindAuth:
		spec = AuthFailed
	case KindHostKey:
		spec = HostKeyRejected
	case KindConnect:
		spec = Unreachable
	case KindTimeout:
		during := op + " " + target
		if op == "lock" {
			during = "lock " + target + " (waiting for the DHCP server's configuration lock, which another worker may hold)"
		}
		var re *RemoteError
		if errors.As(err, &re) && re.Deadline != "" {
			return Timeout.Wrap(err, "device %s: the DHCP adapter's %s deadline (%s) expired during %s", device, re.Deadline, re.Limit, during)
		}
		return Timeout.Wrap(err, "device %s: a DHCP adapter deadline expired during %s", device, during)
	case KindTransport:
		spec = Transport
	case KindTransfer:
		spec = TransferFailed
	case KindLock:
		spec = LockFailed
	default:
		// Unclassified by the Remote: classify by what was being done.
		switch op {
		case "dial":
			spec = Unreachable
		case "upload", "read", "remove":
			spec = TransferFailed
		default:
			spec = Transport
		}
	}
	return spec.Wrap(err, "device %s: DHCP %s %s", device, op, target)
}

func (p *Phase) fail(log *slog.Logger, err error) error {
	if f, ok := hostforge.AsFailure(err); ok {
		log.Error("DHCP configuration failed", "step", PhaseName, "code", f.Code, "error", err)
	}
	return err
}

// tail returns the last KiB of a command's output, for messages and logs.
func tail(b []byte) string {
	const max = 1024
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}
