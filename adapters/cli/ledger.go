package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/ironic"
)

// ledgerHelp documents the ledger section of the config file.
const ledgerHelp = `The fleet manager's ledger (the ledger: section) records each device's
identity, its Ironic reference projected from Ironic (and the revision of
that reference), its platform_class and its completion proof:

  ledger:
    driver: sqlite                       # embedded: a file, nothing to start
    path: /var/lib/hostforge/ledger.db
    projection_interval: 1m              # optional: hostforge worker's Ironic projection
  # or
  ledger:
    driver: postgres                     # shared by several workers
    dsn_file: /etc/hostforge/ledger.dsn  # one line, e.g. postgres://user:pw@host/db;
                                         # must be readable by its owner only (chmod 600)

The DSN is never logged nor printed. With a ledger, the platform_class gate
(gates.platform_class_activity_ready) records the platform class in NetBox
and in the ledger, and each local enrollment settles its completion proof
against the ledger's projection of Ironic.`

// LedgerDeviceUnknown is raised when the ledger has no record of a device.
var LedgerDeviceUnknown = hostforge.Declare(hostforge.Spec{
	Code:      "LEDGER_DEVICE_UNKNOWN",
	Phase:     "cli",
	Owner:     hostforge.OwnerFleetManager,
	Retryable: false,
	Action:    "The ledger has no record of this device: a device is recorded when it is enrolled, projected from Ironic or given a platform class. Check the name, or run 'hostforge ledger project --config FILE' to project Ironic's nodes.",
})

// Proof settlement of local runs: the CLI's proof agent retries for this
// window after a run, projecting Ironic before each attempt.
const (
	cliProofWindow   = 2 * time.Minute
	cliProofInterval = 5 * time.Second
)

// ledgerWiring is the ledger a --config names, with what settles a local
// run's completion proof against it.
type ledgerWiring struct {
	ledger    *sqlstore.Ledger
	projector *enrollment.Projector
	clock     clock.Clock
	log       *slog.Logger
}

// openLedger opens the config's ledger. A bad section is a
// CLI_CONFIG_INVALID usage error naming the key; a database that does not
// answer is STATE_STORE_UNAVAILABLE.
func openLedger(ctx context.Context, cfg *Config) (*sqlstore.Ledger, func(), error) {
	if cfg.Ledger == nil {
		return nil, nil, usageErr(ConfigInvalid.New("%s", cfg.keyError("ledger", "missing: this command needs the fleet manager's ledger (driver: sqlite with path, or driver: postgres with dsn_file)")))
	}
	l, db, err := sqlstore.OpenLedger(ctx, *cfg.Ledger)
	var ce *sqlstore.ConfigError
	switch {
	case errors.As(err, &ce):
		return nil, nil, usageErr(ConfigInvalid.New("%s", cfg.keyError("ledger."+ce.Key, "%s", ce.Reason)))
	case err != nil:
		return nil, nil, hostforge.Classified(err)
	}
	return l, func() { _ = db.Close() }, nil
}

// validateLedger checks the ledger section while the config is read.
func (c *Config) validateLedger() error {
	if c.Ledger == nil {
		return nil
	}
	var ce *sqlstore.ConfigError
	if err := c.Ledger.Validate(); errors.As(err, &ce) {
		return c.keyError("ledger."+ce.Key, "%s", ce.Reason)
	}
	return nil
}

// wireLedger connects the ledger for the enrollment: it is the fleet
// manager of the platform-class phase and the store completion proof is
// settled in. A ledger that does not answer at start is wired as down: every
// call fails as unavailable, so the platform-class phase fails
// PLATFORM_CLASS_RECORD_FAILED and proof fails with its codes, as they would
// if it went down mid-run.
func (a *app) wireLedger(cfg *Config, exec *enrollment.Executor, log *slog.Logger) (*ledgerWiring, func(), error) {
	if cfg.Ledger == nil {
		return nil, func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, closeDB, err := openLedger(ctx, cfg)
	if err != nil {
		if _, ok := hostforge.AsFailure(err); !ok || hostforge.CodeOf(err) != sqlstore.Unavailable.Code {
			return nil, nil, err
		}
		log.Error("the fleet manager's ledger does not answer; platform classes and completion proof will fail until it does", "phase", "cli", "driver", cfg.Ledger.Driver, "error", err.Error())
		exec.FleetManager = downLedger{err: err}
		return nil, func() {}, nil
	}
	exec.FleetManager = l
	w := &ledgerWiring{ledger: l, clock: clock.Real{}, log: log}
	if !cfg.Gates.IronicEnrol {
		// Without the Ironic phases a run claims no reference: nothing to
		// project before settling.
		return w, closeDB, nil
	}
	if listers, err := ironicListers(cfg, log); err == nil && len(listers) > 0 {
		w.projector = &enrollment.Projector{Instances: listers, Ledger: l, Log: log}
	} else if err != nil {
		closeDB()
		return nil, nil, err
	}
	return w, closeDB, nil
}

// downLedger is a ledger that did not answer when the command started.
type downLedger struct{ err error }

func (d downLedger) unavailable() error {
	return fmt.Errorf("ledger: %v: %w", d.err, hostforge.ErrUnavailable)
}

func (d downLedger) PlatformClass(context.Context, string) (string, error) {
	return "", d.unavailable()
}

func (d downLedger) SetPlatformClass(context.Context, string, string) error { return d.unavailable() }

// ironicListers returns a node lister per configured Ironic instance. Each
// connects on its first listing, so an instance that is down fails only
// its own part of a projection pass (its devices keep their references).
func ironicListers(cfg *Config, log *slog.Logger) (map[string]enrollment.NodeLister, error) {
	out := map[string]enrollment.NodeLister{}
	for i, ic := range cfg.Ironic {
		at := fmt.Sprintf("ironic[%d]", i)
		icfg := ironicapi.Config{Endpoint: ic.URL, InsecureSkipVerify: ic.InsecureSkipVerify, Log: log}
		if ic.CAFile != "" {
			pem, err := os.ReadFile(ic.CAFile)
			if err != nil {
				return nil, usageErr(ConfigInvalid.New("%s", cfg.keyError(at+".ca_file", "%v", err)))
			}
			icfg.CACertPEM = pem
		}
		out[ic.Name] = &lazyIronic{cfg: icfg}
	}
	return out, nil
}

// lazyIronic is an Ironic API client that connects when first used.
type lazyIronic struct {
	cfg ironicapi.Config
	mu  sync.Mutex
	c   *ironicapi.Client
}

// ListNodes connects if needed and lists the instance's nodes.
func (l *lazyIronic) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	l.mu.Lock()
	if l.c == nil {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		c, err := ironicapi.New(cctx, l.cfg)
		cancel()
		if err != nil {
			l.mu.Unlock()
			return nil, err
		}
		l.c = c
	}
	c := l.c
	l.mu.Unlock()
	return c.ListNodes(ctx)
}

// proofRun is what a local run's settlement needs from before the run.
type proofRun struct {
	identity string
	since    int64
	start    time.Time
}

// before records the device in the ledger (a device it enrolls is one the
// fleet manager knows) and snapshots its identity and reference revision.
func (w *ledgerWiring) before(ctx context.Context, device string) (proofRun, error) {
	if _, err := w.ledger.Register(ctx, device); err != nil {
		return proofRun{}, enrollment.FleetManagerUnavailable.At("submit").Wrap(err, "recording %s in the ledger", device)
	}
	id, rev, err := w.ledger.Snapshot(ctx, device)
	if err != nil {
		return proofRun{}, enrollment.FleetManagerUnavailable.At("submit").Wrap(err, "reading the ledger identity of %s", device)
	}
	return proofRun{identity: id, since: rev, start: w.clock.Now()}, nil
}

// settle settles a local run's completion: the projection of Ironic runs
// before every compare-and-set attempt, so proof compares against Ironic as
// the fleet manager sees it, never against the result it checks.
func (w *ledgerWiring) settle(ctx context.Context, pr proofRun, res enrollment.Result, failure *hostforge.Failure) (enrollment.ProofOutcome, error) {
	c := enrollment.Completion{Device: res.Device, Identity: pr.identity, Since: pr.since,
		Run: fmt.Sprintf("cli/%s/%d", res.Device, pr.start.UnixNano()), Status: enrollment.CompletionCompleted, ClosedAt: w.clock.Now()}
	if failure != nil {
		c.Status = enrollment.CompletionFailed
		if failure.Code == hostforge.Cancelled.Code {
			c.Status = enrollment.CompletionCanceled
		}
	} else if b, err := json.Marshal(res); err == nil {
		c.Output = b
	}
	var store enrollment.ProofStore = w.ledger
	if w.projector != nil {
		store = projectingStore{ProofStore: w.ledger, projector: w.projector}
	}
	agent := &enrollment.ProofAgent{Store: store, Clock: w.clock, Window: cliProofWindow, Interval: cliProofInterval, Log: w.log}
	return agent.Settle(ctx, c)
}

// projectingStore runs a projection pass before each compare-and-set.
type projectingStore struct {
	enrollment.ProofStore
	projector *enrollment.Projector
}

func (p projectingStore) ProveEnrollment(ctx context.Context, device, identity, reference string, since int64, run string, deadline time.Time) (string, error) {
	if _, err := p.projector.Project(ctx); err != nil && hostforge.CodeOf(err) != enrollment.ProjectionListFailed.Code {
		return "", err
	}
	return p.ProofStore.ProveEnrollment(ctx, device, identity, reference, since, run, deadline)
}

func (a *app) ledgerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ledger",
		Short: "Read the fleet manager's ledger and project Ironic into it",
		Long:  "The ledger holds each device's identity, Ironic reference, platform_class and completion proof.\n\n" + ledgerHelp,
		Example: `  hostforge ledger show --config lab1.yaml cpu-r1-u10
  hostforge ledger show --config lab1.yaml -o json cpu-r1-u10
  hostforge ledger project --config lab1.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: show or project"))
		},
	}
	cmd.AddCommand(a.ledgerShowCmd(), a.ledgerProjectCmd())
	return cmd
}

// ledgerShowJSON is `ledger show -o json`.
type ledgerShowJSON struct {
	Device        string                `json:"device"`
	Identity      string                `json:"identity"`
	PlatformClass string                `json:"platform_class"`
	Reference     string                `json:"reference"`
	Revision      int64                 `json:"revision"`
	ProjectedAt   *time.Time            `json:"projected_at,omitempty"`
	ProofState    string                `json:"proof_state"`
	Proof         *sqlstore.LedgerProof `json:"proof,omitempty"`
	Version       int64                 `json:"version"`
	UpdatedAt     time.Time             `json:"updated_at"`
}

func (a *app) ledgerShowCmd() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "show DEVICE",
		Short: "Print a device's platform class, projected Ironic reference, its revision and proof state",
		Long: `Print what the ledger records for the device: its identity, platform_class,
the Ironic reference projected from Ironic and that reference's revision (it
counts changes), and its completion proof: none, valid (it holds for the
current identity, reference and revision) or stale (left by an identity the
device no longer has).

` + exitCodeHelp,
		Example: `  hostforge ledger show --config lab1.yaml cpu-r1-u10 -o json`,
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&config, "config", "", "config file with the ledger: section")
	_ = cmd.MarkFlagRequired("config")
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		cfg, err := loadConfigFile(config)
		if err != nil {
			return err
		}
		l, closeDB, err := openLedger(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		defer closeDB()
		r, err := l.Record(cmd.Context(), args[0])
		switch {
		case errors.Is(err, hostforge.ErrNotFound):
			return LedgerDeviceUnknown.New("device %s is not in the ledger", args[0])
		case err != nil:
			return enrollment.FleetManagerUnavailable.At("cli").Wrap(err, "reading %s from the ledger", args[0])
		}
		return printLedgerRecord(cmd.OutOrStdout(), *out, r)
	}
	return cmd
}

func printLedgerRecord(w io.Writer, format string, r sqlstore.LedgerRecord) error {
	j := ledgerShowJSON{Device: r.Device, Identity: r.Identity, PlatformClass: r.PlatformClass, Reference: r.Reference, Revision: r.Revision,
		ProofState: r.ProofState(), Proof: r.Proof, Version: r.Version, UpdatedAt: r.UpdatedAt}
	if !r.ProjectedAt.IsZero() {
		j.ProjectedAt = &r.ProjectedAt
	}
	if format == formatJSON {
		return writeJSON(w, j)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "DEVICE\t%s\n", r.Device)
	fmt.Fprintf(tw, "IDENTITY\t%s\n", r.Identity)
	fmt.Fprintf(tw, "PLATFORM CLASS\t%s\n", dash(r.PlatformClass))
	fmt.Fprintf(tw, "REFERENCE\t%s\n", dash(r.Reference))
	fmt.Fprintf(tw, "REVISION\t%d\n", r.Revision)
	if !r.ProjectedAt.IsZero() {
		fmt.Fprintf(tw, "PROJECTED AT\t%s\n", r.ProjectedAt.Format(time.RFC3339))
	}
	proof := r.ProofState()
	if p := r.Proof; p != nil {
		proof += fmt.Sprintf(" (run %s, %s at revision %d, identity %s, %s)", p.Run, p.Reference, p.Revision, p.Identity, p.At.Format(time.RFC3339))
	}
	fmt.Fprintf(tw, "PROOF\t%s\n", proof)
	return tw.Flush()
}

func (a *app) ledgerProjectCmd() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Project every Ironic instance's nodes into the ledger once",
		Long: `List the nodes of every Ironic instance of the config, map each node to its
device by name, and record every difference in the ledger: a changed
reference bumps its revision and clears the device's completion proof. A
device whose instance cannot be listed keeps its reference. hostforge worker
runs the same pass on an interval.

` + exitCodeHelp,
		Example: `  hostforge ledger project --config lab1.yaml
  hostforge ledger project --config lab1.yaml -o json`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&config, "config", "", "config file with the ironic: and ledger: sections")
	_ = cmd.MarkFlagRequired("config")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		log, err := a.logger(cmd)
		if err != nil {
			return err
		}
		cfg, err := loadConfigFile(config)
		if err != nil {
			return err
		}
		if len(cfg.Ironic) == 0 {
			return usageErr(ConfigInvalid.New("%s", cfg.keyError("ironic", "missing: the projection lists the nodes of the Ironic instances")))
		}
		l, closeDB, err := openLedger(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		defer closeDB()
		listers, err := ironicListers(cfg, log)
		if err != nil {
			return err
		}
		rep, perr := (&enrollment.Projector{Instances: listers, Ledger: l, Log: log}).Project(cmd.Context())
		return printProjection(cmd.OutOrStdout(), *out, rep, perr)
	}
	return cmd
}

func printProjection(w io.Writer, format string, rep enrollment.ProjectionReport, perr error) error {
	var f *hostforge.Failure
	if perr != nil {
		_, f, _ = hostforge.Classify(perr)
	}
	if format == formatJSON {
		if rep.Changes == nil {
			rep.Changes = []enrollment.ReferenceChange{}
		}
		if err := writeJSON(w, struct {
			enrollment.ProjectionReport
			Failure *failureJSON `json:"failure,omitempty"`
		}{rep, failureOut(f)}); err != nil {
			return err
		}
		return exitWith(exitCodeOf(f))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tNODES\tNOTE")
	for _, ir := range rep.Instances {
		note := "listed"
		if ir.Failure != nil {
			note = ir.Failure.Code
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", ir.Name, ir.Nodes, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Changes) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "DEVICE\tFROM\tTO")
		for _, c := range rep.Changes {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Device, dash(c.From), dash(c.To))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\n%d changed (proof cleared), %d unchanged, %d unnamed nodes", len(rep.Changes), rep.Unchanged, rep.Unnamed)
	if len(rep.Ambiguous) > 0 {
		fmt.Fprintf(w, ", ambiguous (left alone): %v", rep.Ambiguous)
	}
	fmt.Fprintln(w, ".")
	if f != nil {
		printFailure(w, f)
	}
	return exitWith(exitCodeOf(f))
}
