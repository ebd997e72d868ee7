// Package script runs a firmware catalog entry's local script (the
// entry's script field) on the worker, as firmware.ScriptRunner: the
// script gets the machine's BMC address and credentials in its
// environment — never in its arguments, never in a log — under hostforge's
// names (HOSTFORGE_BMC_ADDRESS, _USERNAME, _PASSWORD) and NICo's (BMC_IP,
// BMC_PORT, BMC_USERNAME, BMC_PASSWORD), so NICo's scripts run unchanged;
// it runs under its
// timeout in a process group of its own (a timeout kills every process
// it started), and its output comes back capped, with the credentials
// masked should the script echo them.
package script

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/childenv"
)

// The environment a script gets, besides PATH, HOME, LANG and TZ.
const (
	EnvMachine     = "HOSTFORGE_MACHINE_ID"
	EnvComponent   = "HOSTFORGE_FIRMWARE_COMPONENT"
	EnvVersion     = "HOSTFORGE_FIRMWARE_VERSION"
	EnvJob         = "HOSTFORGE_FIRMWARE_JOB"
	EnvBMCAddress  = "HOSTFORGE_BMC_ADDRESS"
	EnvBMCUsername = "HOSTFORGE_BMC_USERNAME"
	EnvBMCPassword = "HOSTFORGE_BMC_PASSWORD"
)

// NICo's names for the BMC, which its legacy scripts read: the address
// without its port (BMC_IP), the port when the address names one
// (BMC_PORT), and the credential. A script written for NICo runs
// unchanged.
const (
	EnvNICoBMCIP       = "BMC_IP"
	EnvNICoBMCPort     = "BMC_PORT"
	EnvNICoBMCUsername = "BMC_USERNAME"
	EnvNICoBMCPassword = "BMC_PASSWORD"
)

// splitAddress splits host[:port] (an IPv6 host in brackets) into the
// host and the port ("" when it names none).
func splitAddress(addr string) (host, port string) {
	if h, p, err := net.SplitHostPort(addr); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), ""
}

// Runner runs entries' scripts.
type Runner struct {
	// Locate returns the machine's BMC address and credential.
	Locate func(ctx context.Context, machine string) (address string, cred bmc.Credential, err error)
	// KillGrace is how long a script has to exit after SIGTERM once its
	// timeout passed, before SIGKILL (default 10 s).
	KillGrace time.Duration
	Log       *slog.Logger
}

var _ firmware.ScriptRunner = (*Runner)(nil)

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// keep bounds the output held in memory; the outcome keeps
// firmware.MaxOutput of it.
const keep = 64 << 10

// capped keeps the first keep bytes written.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := keep - c.buf.Len(); room < len(p) {
		c.buf.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

// Run runs the job's script to its end or its timeout. The error is for
// a script that could not be started for want of its BMC's address or
// credential; a script that fails, is missing or times out is an
// outcome that is not OK.
func (r *Runner) Run(ctx context.Context, job firmware.ScriptJob) (firmware.ScriptOutcome, error) {
	if r.Locate == nil {
		return firmware.ScriptOutcome{}, firmware.ScriptFailed.New("machine %s: no BMC locator is configured for scripts", job.MachineID)
	}
	addr, cred, err := r.Locate(ctx, job.MachineID)
	if err != nil {
		return firmware.ScriptOutcome{}, err
	}
	if st, err := os.Stat(job.Script); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		what := "is not an executable file"
		if errors.Is(err, fs.ErrNotExist) {
			what = "does not exist"
		}
		return firmware.ScriptOutcome{ExitCode: 127, Output: fmt.Sprintf("%s %s on this worker", job.Script, what)}, nil
	}
	timeout := job.Timeout
	if timeout <= 0 {
		timeout = time.Hour
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, job.Script) // no arguments: nothing secret can show in ps
	host, port := splitAddress(addr)
	cmd.Env = append(childenv.Minimal("TZ"),
		EnvMachine+"="+job.MachineID, EnvComponent+"="+string(job.Component), EnvVersion+"="+job.Version, EnvJob+"="+job.ID,
		EnvBMCAddress+"="+addr, EnvBMCUsername+"="+cred.Username, EnvBMCPassword+"="+cred.Password,
		EnvNICoBMCIP+"="+host, EnvNICoBMCUsername+"="+cred.Username, EnvNICoBMCPassword+"="+cred.Password)
	if port != "" {
		cmd.Env = append(cmd.Env, EnvNICoBMCPort+"="+port)
	}
	cmd.Dir = os.TempDir()
	out := &capped{}
	cmd.Stdout, cmd.Stderr = out, out
	grace := r.KillGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	ownGroup(cmd, grace)
	start := time.Now()
	r.log().Info("running the firmware script", "machine", job.MachineID, "script", job.Script, "component", job.Component, "version", job.Version, "timeout", timeout)
	runErr := cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	text := mask(out.buf.String(), cred)
	if out.cut {
		text += "\n[output cut]"
	}
	o := firmware.ScriptOutcome{Output: text}
	var ee *exec.ExitError
	switch {
	case runErr == nil:
		o.OK = true
	case runCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		o.ExitCode = -1
		o.Output = fmt.Sprintf("killed after its timeout of %s\n%s", timeout, text)
	case ctx.Err() != nil:
		return firmware.ScriptOutcome{}, ctx.Err()
	case errors.As(runErr, &ee):
		o.ExitCode = ee.ExitCode()
	default:
		o.ExitCode = 126
		o.Output = fmt.Sprintf("could not run %s: %v", job.Script, runErr)
	}
	r.log().Info("the firmware script ended", "machine", job.MachineID, "script", job.Script, "ok", o.OK, "exit_code", o.ExitCode, "took", took)
	return o, nil
}

// mask replaces the credential's password wherever the script echoed it.
func mask(s string, cred bmc.Credential) string {
	if cred.Password != "" {
		s = strings.ReplaceAll(s, cred.Password, "********")
	}
	return s
}
