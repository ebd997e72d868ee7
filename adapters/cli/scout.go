package cli

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/firmware"
)

func (a *app) scoutCmd() *cobra.Command {
	var server, caFile, tokenFile, workDir string
	var machines []string
	var wait, poll time.Duration
	cmd := &cobra.Command{
		Use:   "scout --server URL --machine ID --token-file F",
		Short: "On a host: fetch this machine's firmware upgrade task, run it and report the result",
		Long: `The on-host agent of firmware updates. It asks the hostforge worker's agent
server (--server, https:// only: plain http:// is refused with exit 2; the
certificate is always verified, against the system roots and --ca-file) for
this machine's upgrade task, proving which machine it is with the host's own
token (--token-file, mode 0600, made by 'hostforge scout token'; a token
proves one machine and the server refuses it for any other), downloads the
packaged upgrade.sh and the artifacts, verifies each against its sha256 (a
file without a digest is refused), runs the script under the package's
execution timeout — each artifact's path an argument, in order;
HOSTFORGE_TASK_ID, HOSTFORGE_MACHINE_ID, HOSTFORGE_FIRMWARE_COMPONENT,
HOSTFORGE_FIRMWARE_VERSION and HOSTFORGE_ARTIFACT_DIR in its environment —
and reports the result (the last 1,500 characters of its output). The
update workflow then activates the firmware and verifies the inventory.

Without a task it exits 0 at once, or with --wait polls every --poll until
one comes or the wait ends. A task is run once: after its report the server
no longer offers it.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge scout --server https://worker1.example.net:8643 --machine gpu-r1-u02 --token-file /etc/hostforge/scout.token --ca-file /etc/hostforge/ca.pem
  hostforge scout --server https://worker1.example.net:8643 --machine gpu-r1-u02 --token-file /run/hostforge/scout.token --wait 30m -o json`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.scoutTokenCmd())
	f := cmd.Flags()
	f.StringVar(&server, "server", "", "the agent server's base URL, https://host:port (required)")
	machineFlag(cmd, &machines, "this host's machine ID (required)")
	f.StringVar(&caFile, "ca-file", "", "PEM CA bundle to trust besides the system roots")
	f.StringVar(&tokenFile, "token-file", "", "file holding this machine's own token, from 'hostforge scout token' (mode 0600; required)")
	f.StringVar(&workDir, "work-dir", "", "where a task's files are downloaded (default the temp directory)")
	f.DurationVar(&wait, "wait", 0, "poll for a task this long when there is none (0: do not wait)")
	f.DurationVar(&poll, "poll", 30*time.Second, "how often --wait asks for a task")
	out := outputFlag(cmd)
	logLevelFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		if server == "" {
			return inputErr("--server is required: the worker's agent server, https://host:port")
		}
		machine, err := oneMachine(cmd, machines)
		if err != nil {
			return err
		}
		switch {
		case tokenFile == "":
			return inputErr("--token-file is required: the file holding this machine's own token ('hostforge scout token --config F --machine %s' prints it)", machine)
		case wait < 0 || poll <= 0:
			return inputErr("--wait must be 0 or more and --poll above 0")
		}
		if _, err := scout.CheckServerURL(server); err != nil {
			return usageErr(err)
		}
		if err := scout.CheckMachineID(machine); err != nil {
			return usageErr(err)
		}
		token, err := vault.ReadSecretFile(tokenFile)
		if err != nil {
			return inputErr("--token-file: %v", err)
		}
		a.secrets.Add(token)
		if m, ok := scout.TokenMachine(token); !ok {
			return inputErr("--token-file %s holds no machine token: make one with 'hostforge scout token --config F --machine %s'", tokenFile, machine)
		} else if m != machine {
			return inputErr("--token-file %s holds machine %q's token, not --machine %q's", tokenFile, m, machine)
		}
		log, err := a.logger(cmd)
		if err != nil {
			return err
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if caFile != "" {
			pem, err := os.ReadFile(caFile)
			if err != nil {
				return inputErr("--ca-file: %v", err)
			}
			if !pool.AppendCertsFromPEM(pem) {
				return inputErr("--ca-file %s holds no PEM certificate", caFile)
			}
		}
		tr := &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, Proxy: http.ProxyFromEnvironment,
			TLSHandshakeTimeout: 30 * time.Second, ResponseHeaderTimeout: 2 * time.Minute}
		defer tr.CloseIdleConnections()
		agent := &scout.Agent{Server: server, Machine: machine, Client: &http.Client{Transport: tr}, Token: token, WorkDir: workDir, Log: log}
		ctx := cmd.Context()
		deadline := time.Now().Add(wait)
		var res scout.Result
		for {
			if res, err = agent.Run(ctx); err != nil || res.Task != nil || !time.Now().Add(poll).Before(deadline.Add(time.Nanosecond)) {
				break
			}
			select {
			case <-ctx.Done():
				return hostforge.Cancelled.Wrap(ctx.Err(), "waiting for a task")
			case <-time.After(poll):
			}
		}
		if res.Task != nil || err == nil {
			if perr := printScout(cmd.OutOrStdout(), *out, res); perr != nil {
				return perr
			}
		}
		if err != nil {
			return err
		}
		if res.Report != nil && !res.Report.OK {
			return firmware.ScoutFailed.At("scout").New("task %s of %s failed (exit code %d); reported to the server", res.Task.ID, machine, res.Report.ExitCode)
		}
		return nil
	}
	return cmd
}

func printScout(w io.Writer, format string, res scout.Result) error {
	if format == formatJSON {
		return writeJSON(w, res)
	}
	switch {
	case res.Task == nil:
		fmt.Fprintln(w, "no task for this machine")
	case res.Report == nil:
		fmt.Fprintf(w, "task %s: %s %s (not reported)\n", res.Task.ID, res.Task.Component, res.Task.Version)
	case res.Report.OK:
		fmt.Fprintf(w, "task %s: %s %s: the script succeeded; reported\n", res.Task.ID, res.Task.Component, res.Task.Version)
	default:
		fmt.Fprintf(w, "task %s: %s %s: the script failed (exit code %d); reported\n%s\n", res.Task.ID, res.Task.Component, res.Task.Version, res.Report.ExitCode, res.Report.Output)
	}
	return nil
}
