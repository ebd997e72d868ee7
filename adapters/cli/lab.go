package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/enrollment"
)

// LabNotRunning is a config file a lab wrote whose lab has stopped: its
// ports are closed, so nothing it names would answer.
var LabNotRunning = hostforge.Declare(hostforge.Spec{
	Code:      "LAB_NOT_RUNNING",
	Phase:     "cli",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "The config file is a lab's, and that lab is not running: start it again ('hostforge lab --dir DIR', which writes a fresh lab.yaml with its new ports), then run the command again. Nothing was contacted.",
})

// checkLab refuses a config file written by a lab that has stopped, before
// anything it names is contacted.
func checkLab(config string) error {
	if filepath.Base(config) != lab.ConfigFile {
		return nil
	}
	dir := filepath.Dir(config)
	if st := lab.Status(dir); st.Lab && !st.Running {
		return usageErr(LabNotRunning.New("%s was written by the lab in %s, which is not running", config, dir))
	}
	return nil
}

// Ironic's and ironic-inspector's loopback defaults, as
// scripts/ironic/ironic-up starts them.
const (
	defaultIronicURL    = "http://127.0.0.1:6385"
	defaultInspectorURL = "http://127.0.0.1:5050"
)

func (a *app) labCmd() *cobra.Command {
	var dir, ironicURL, inspectorURL string
	var linkBudget time.Duration
	var noIronic bool
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Serve the demo rack on loopback (NetBox, BMCs, DHCP server) and write lab.yaml for it",
		Long: `Serve a rack on 127.0.0.1, so hostforge runs end to end without a data
centre, until interrupted:

  - a NetBox emulator holding the demo rack (the hosts of 'enroll --demo');
  - one Redfish BMC emulator per host, in its vendor's flavour (Dell iDRAC,
    Lenovo XCC, AMI MegaRAC, Supermicro), reporting the host's NICs and link
    states (bad-optics-u32 has every frontend link down);
  - an SSH server standing in for the DHCP server: reservations land in
    DIR/dhcp/hostforge.d;
  - with a real Ironic running (scripts/ironic/ironic-up starts one with its
    inspector on 127.0.0.1:6385 and :5050), enrolment into it on Ironic's
    fake-hardware driver, the lab playing the inspection agent.

It writes DIR/lab.yaml (the config every command and the worker read),
the vault file it names (mode 0600), the NetBox token, the CA that signed
every server's certificate, and DIR/hosts listing the rack. lab.yaml names
the fleet manager's ledger, DIR/ledger.db (SQLite), with the platform-class
gate on: enrolments record each host's platform class in NetBox and in the
ledger and settle their completion proof against the ledger's projection of
Ironic ('hostforge ledger show --config DIR/lab.yaml HOST'). Each run
starts fresh: BMCs at factory settings, a new vault, an empty ledger. One
lab runs per directory: it holds DIR/lab.lock, and a second lab there is
refused (exit 2, naming the running one's PID). Once it stops, commands
given its lab.yaml say the lab is not running (LAB_NOT_RUNNING).

Ironic is detected (--ironic, then $IRONIC_URL, then 127.0.0.1:6385), never
installed from here; without one, lab.yaml turns the Ironic gate off and the
rack enrols as far as NetBox activation. With -o json, one document says
where everything listens once the rack is served (docs/json.md).

` + exitCodes(ExitOK, ExitUsage, ExitBug, ExitCancelled),
		Example: `  hostforge lab &
  hostforge enroll --config lab/lab.yaml $(cat lab/hosts)

  hostforge worker --config lab/lab.yaml --temporal 127.0.0.1:7233 &
  hostforge enroll --config lab/lab.yaml --temporal 127.0.0.1:7233 $(cat lab/hosts)`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "lab", "directory for lab.yaml, the vault, the token, the CA and the DHCP server's files")
	f.StringVar(&ironicURL, "ironic", "", "Ironic API to enrol into (default: $IRONIC_URL, else "+defaultIronicURL+" when it answers)")
	f.StringVar(&inspectorURL, "inspector", "", "its ironic-inspector (default: $IRONIC_INSPECTOR_URL, else "+defaultInspectorURL+" when it answers)")
	f.BoolVar(&noIronic, "no-ironic", false, "run without Ironic even when one answers")
	f.DurationVar(&linkBudget, "link-budget", 30*time.Second, "how long the link guard waits for a frontend link to come up (lab.yaml's timing.link_budget)")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		log, err := a.logger(cmd)
		if err != nil {
			return err
		}
		if linkBudget <= 0 {
			return inputErr("--link-budget %s: want a positive duration", linkBudget)
		}
		ctx := cmd.Context()
		w := cmd.OutOrStdout()
		if noIronic && (ironicURL != "" || inspectorURL != "") {
			return inputErr("--no-ironic excludes --ironic and --inspector")
		}
		if !noIronic {
			ironicURL = a.detect(ctx, ironicURL, "IRONIC_URL", defaultIronicURL)
		}
		if ironicURL != "" {
			inspectorURL = a.detect(ctx, inspectorURL, "IRONIC_INSPECTOR_URL", defaultInspectorURL)
		}
		timing := lab.FastTiming()
		timing.LinkBudget = enrollment.Duration(linkBudget)
		l, err := lab.Start(ctx, lab.Options{Dir: dir, IronicURL: ironicURL, InspectorURL: inspectorURL, Timing: &timing, Log: log})
		var busy *lab.BusyError
		if errors.As(err, &busy) {
			return inputErr("--dir %s: a lab is already running there (PID %d); stop it (kill %d) or give another --dir", dir, busy.PID, busy.PID)
		}
		if err != nil {
			return inputErr("starting the lab in %s: %v", dir, err)
		}
		defer l.Close()
		if *out == formatJSON {
			if err := writeJSON(w, labDocument(l, ironicURL, inspectorURL)); err != nil {
				return err
			}
			<-ctx.Done()
			return nil
		}
		fmt.Fprint(w, l.Summary())
		switch {
		case noIronic:
			fmt.Fprintln(w, "Ironic            off (--no-ironic): lab.yaml turns enrollment_ironic_enrol off.")
		case ironicURL == "":
			fmt.Fprintf(w, "Ironic            none answers at %s: lab.yaml turns enrollment_ironic_enrol off.\n"+
				"                  For the whole workflow start one (root or sudo on Debian/Ubuntu, once):\n"+
				"                    eval \"$(IRONIC_INSPECTOR=1 scripts/ironic/ironic-up)\"\n"+
				"                  then restart the lab.\n", defaultIronicURL)
		case inspectorURL == "":
			fmt.Fprintf(w, "Ironic            %s, without ironic-inspector: inspection is Ironic's fake one, which\n"+
				"                  stores no inventory; enrol with --no-inspection, or start the inspector\n"+
				"                  (IRONIC_INSPECTOR=1 scripts/ironic/ironic-up).\n", ironicURL)
		default:
			fmt.Fprintf(w, "Ironic            %s, inspector %s (fake-hardware; the lab plays the agent)\n", ironicURL, inspectorURL)
		}
		cfg := filepath.Join(relOrAbs(l.Dir), lab.ConfigFile)
		hosts := filepath.Join(relOrAbs(l.Dir), lab.HostsFile)
		fmt.Fprintf(w, "\nWrote %s. Enrol the rack (in another terminal):\n\n"+
			"  hostforge enroll --config %s $(cat %s)\n\n"+
			"or through Temporal (a dev server on 127.0.0.1:7233):\n\n"+
			"  hostforge worker --config %s --temporal 127.0.0.1:7233 &\n"+
			"  hostforge enroll --config %s --temporal 127.0.0.1:7233 $(cat %s)\n\n"+
			"and read what the fleet manager's ledger holds for a host:\n\n"+
			"  hostforge ledger show --config %s cpu-r1-u10\n\n"+
			"The lab runs until interrupted (Ctrl-C).\n", cfg, cfg, hosts, cfg, cfg, hosts, cfg)
		<-ctx.Done()
		fmt.Fprintln(w, "lab stopped")
		return nil
	}
	return cmd
}

// relOrAbs is dir relative to the working directory when it is below it.
func relOrAbs(dir string) string {
	if abs, err := filepath.Abs("."); err == nil {
		if rel, err := filepath.Rel(abs, dir); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return dir
}

// detect picks a service URL: the flag, then the environment variable (as
// scripts/ironic/ironic-up prints it), then def when something answers
// there like an OpenStack API root. "" when none answers.
func (a *app) detect(ctx context.Context, flag, env, def string) string {
	if flag != "" {
		return strings.TrimSuffix(flag, "/")
	}
	if v := strings.TrimSpace(a.getenv(env)); v != "" {
		return strings.TrimSuffix(v, "/")
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, def+"/", nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var root map[string]any
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&root) != nil {
		return ""
	}
	if _, ok := root["versions"]; !ok {
		if _, ok := root["default_version"]; !ok {
			return ""
		}
	}
	return def
}
