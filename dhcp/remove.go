package dhcp

import (
	"context"
	"path"

	"github.com/hostforge/hostforge"
)

// RemovePhaseName is the phase a removal's failures are recorded against:
// the retirement of a host. Its codes are the DHCP_* codes of Configure.
const RemovePhaseName = "retire_dhcp"

// HostFile is the remote path of a host's reservation under the site's
// directory: what Configure writes and Remove removes.
func HostFile(cfg Config, hostname string) (string, error) {
	if err := validHostname(hostname); err != nil {
		return "", err
	}
	rc, err := cfg.Resolved()
	if err != nil {
		return "", err
	}
	return path.Join(rc.Dir, hostname+rc.Flavour.Extension()), nil
}

// Remove makes the server hold no reservation for the host: the other end
// of Configure, with its guarantees. It is content-idempotent: a host file
// that is absent (and no backup of an unfinished change) is left alone —
// no lock, no restart, no write. Otherwise the removal is one transaction
// under the server's lock, as a change is: the host's file is backed up,
// removed, the service's config test, restart and status run, and the
// backup is dropped; a step that fails puts the file back (and restarts
// the service on it when it may have loaded the removal), and a removal
// cut off midway is completed by the next call, never mistaken for done.
// Result.Changed is true when the file was removed and the service
// restarted; Result.Path names the file. Errors are *hostforge.Failure,
// recorded against RemovePhaseName.
func (p *Phase) Remove(ctx context.Context, hostname string) (Result, error) {
	res, err := p.remove(ctx, hostname)
	if f, ok := hostforge.AsFailure(err); ok && f.Phase == PhaseName {
		nf := *f
		nf.Phase = RemovePhaseName
		err = &nf
	}
	return res, err
}

func (p *Phase) remove(ctx context.Context, hostname string) (Result, error) {
	log := p.log.With("device", hostname, "phase", RemovePhaseName)
	if p.cfgErr != nil {
		return Result{}, p.fail(log, SettingsInvalid.Wrap(p.cfgErr, "device %s: site DHCP settings", hostname))
	}
	if p.dialer == nil {
		return Result{}, p.fail(log, SettingsInvalid.New("device %s: no DHCP server connection configured", hostname))
	}
	if err := validHostname(hostname); err != nil {
		return Result{}, p.fail(log, EntryInvalid.Wrap(err, "device %s: DHCP reservation to remove", hostname))
	}
	file := path.Join(p.cfg.Dir, hostname+p.cfg.Flavour.Extension())
	res := Result{Path: file}

	r, err := p.dialer.Dial(ctx)
	if err != nil {
		return res, p.fail(log, p.remoteFailure(ctx, hostname, "dial", "the DHCP server", err))
	}
	defer func() {
		if cerr := r.Close(); cerr != nil {
			log.Debug("closing the DHCP server session", "error", cerr)
		}
	}()
	backup := BackupPath(file)
	remoteSum, pending, err := p.state(ctx, r, file, backup)
	if err != nil {
		return res, p.fail(log, p.remoteFailure(ctx, hostname, "hash", file, err))
	}
	if remoteSum == "" && !pending {
		// No hash: absent, or unreadable. Only a read tells them apart,
		// and an unreadable reservation is not a removed one.
		_, exists, err := r.Read(ctx, file)
		if err != nil {
			return res, p.fail(log, p.remoteFailure(ctx, hostname, "read", file, err))
		}
		if !exists {
			log.Info("no DHCP reservation for the host; nothing to remove", "step", "hash", "path", file)
			return res, nil
		}
	}
	if pending {
		log.Warn("an earlier change of this host's DHCP file did not finish; the removal completes it", "step", "hash", "path", file, "backup", backup)
	} else {
		log.Info("removing the host's DHCP reservation", "step", "hash", "path", file, "remote_sha256", remoteSum)
	}

	select {
	case p.lock <- struct{}{}:
	case <-ctx.Done():
		return res, p.fail(log, hostforge.Cancelled.Wrap(ctx.Err(), "device %s: waiting for this DHCP server's restart lock", hostname))
	}
	defer func() { <-p.lock }()
	changed, err := p.change(ctx, log, r, hostname, file, nil, "", true)
	if err != nil {
		return res, p.fail(log, err)
	}
	res.Changed = changed
	if changed {
		log.Info("DHCP reservation removed and service restarted", "step", "status", "path", file)
	}
	return res, nil
}
