package dhcp

import (
	"context"
	"errors"
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

	remoteSum, err := r.Hash(ctx, file)
	if err != nil {
		return res, p.fail(log, p.remoteFailure(ctx, e.Hostname, "hash", file, err))
	}
	if remoteSum == res.SHA256 {
		log.Info("DHCP reservation unchanged; no upload, no restart", "step", "hash", "path", file, "sha256", res.SHA256)
		return res, nil
	}
	if remoteSum == "" {
		log.Info("remote DHCP host file absent or unreadable; uploading", "step", "hash", "path", file)
	} else {
		log.Info("DHCP reservation changed; uploading", "step", "hash", "path", file, "remote_sha256", remoteSum, "sha256", res.SHA256)
	}

	select {
	case p.lock <- struct{}{}:
	case <-ctx.Done():
		return res, p.fail(log, hostforge.Cancelled.Wrap(ctx.Err(), "device %s: waiting for this DHCP server's restart lock", e.Hostname))
	}
	defer func() { <-p.lock }()

	if err := p.apply(ctx, log, r, e.Hostname, file, data); err != nil {
		return res, p.fail(log, err)
	}
	res.Changed = true
	log.Info("DHCP reservation uploaded and service restarted", "step", "status", "path", file, "sha256", res.SHA256)
	return res, nil
}

// apply runs the change sequence; the caller holds the lock.
func (p *Phase) apply(ctx context.Context, log *slog.Logger, r Remote, device, file string, data []byte) error {
	dir := path.Dir(file)
	prep := "mkdir -p -- " + ShellQuote(dir)
	out, err := r.Run(ctx, prep)
	if err != nil {
		return p.remoteFailure(ctx, device, "run", prep, err)
	}
	if out.Exit != 0 {
		// Best effort, as before: the upload reports a missing or unwritable
		// directory with the transfer failure's own message.
		log.Warn("preparing the DHCP host directory failed; uploading anyway", "step", "prepare", "dir", dir, "exit", out.Exit, "output", tail(out.Output))
	}
	if err := r.Upload(ctx, file, data); err != nil {
		return p.remoteFailure(ctx, device, "upload", file, err)
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
		out, err := r.Run(ctx, s.cmd)
		if err != nil {
			return p.remoteFailure(ctx, device, "run", s.cmd, err)
		}
		if out.Exit == 0 {
			log.Debug("DHCP service command succeeded", "step", s.name, "command", s.cmd)
			continue
		}
		p.quarantine(ctx, log, r, file)
		return s.spec.New("device %s: %s command %q exited %d: %s", device, strings.ReplaceAll(s.name, "_", " "), s.cmd, out.Exit, tail(out.Output))
	}
	return nil
}

// quarantine moves a file the service did not accept out of the way, so the
// next run uploads it again instead of finding a matching hash.
func (p *Phase) quarantine(ctx context.Context, log *slog.Logger, r Remote, file string) {
	cmd := "mv -f -- " + ShellQuote(file) + " " + ShellQuote(file+".rejected")
	out, err := r.Run(ctx, cmd)
	if err != nil || out.Exit != 0 {
		log.Error("could not move the rejected DHCP host file aside; a rerun may skip it — delete it by hand", "step", "quarantine", "path", file, "error", err, "output", tail(out.Output))
		return
	}
	log.Warn("moved the DHCP host file the service did not accept aside", "step", "quarantine", "path", file+".rejected")
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
		var re *RemoteError
		if errors.As(err, &re) && re.Deadline != "" {
			return Timeout.Wrap(err, "device %s: the DHCP adapter's %s deadline (%s) expired during %s %s", device, re.Deadline, re.Limit, op, target)
		}
		return Timeout.Wrap(err, "device %s: a DHCP adapter deadline expired during %s %s", device, op, target)
	case KindTransport:
		spec = Transport
	case KindTransfer:
		spec = TransferFailed
	default:
		// Unclassified by the Remote: classify by what was being done.
		switch op {
		case "dial":
			spec = Unreachable
		case "upload":
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
