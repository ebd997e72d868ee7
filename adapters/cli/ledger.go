package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
)

// LedgerDeviceUnknown is raised when the ledger has no record of a device.
var LedgerDeviceUnknown = hostforge.Declare(hostforge.Spec{
	Code:      "LEDGER_DEVICE_UNKNOWN",
	Phase:     "cli",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "The ledger has no record of this device: a device is recorded when it is enrolled, projected from Ironic or given a platform class. Check the name, or run 'hostforge ledger project --config FILE' to project Ironic's nodes.",
})

// Proof settlement of local runs: the CLI's proof agent retries for this
// window after a run, projecting Ironic before each attempt.
const (
	cliProofWindow   = 2 * time.Minute
	cliProofInterval = 5 * time.Second
)

// ledgerWiring settles local runs' completion proof in the ledger a
// --config names.
type ledgerWiring struct {
	ledger deviceLedger
	// projector refreshes the ledger's projection of Ironic before each
	// compare-and-set; nil when the runs claim no Ironic reference.
	projector *enrollment.Projector
	clock     clock.Clock
	log       *slog.Logger
}

// deviceLedger is what a local run's settlement needs from the ledger:
// the proof store, and recording a device it enrolls.
type deviceLedger interface {
	enrollment.ProofStore
	Register(ctx context.Context, device string) (string, error)
}

// newLedgerWiring is the settlement of local runs on the wired systems;
// nil without a ledger.
func newLedgerWiring(ws *wiring.Systems, log *slog.Logger) *ledgerWiring {
	if ws.Ledger == nil {
		return nil
	}
	w := &ledgerWiring{ledger: ws.Ledger, clock: clock.Real{}, log: log}
	// Without the Ironic phases a run claims no reference: nothing to
	// project before settling.
	if ws.Config.Gates.IronicEnrol {
		w.projector = ws.Projector
	}
	return w
}

// openLedger opens the config's ledger for a command that reads or
// projects it alone. A config it refuses is a usage error.
func openLedger(ctx context.Context, cfg *wiring.Config) (*sqlstore.Ledger, func(), error) {
	l, db, err := wiring.OpenLedger(ctx, cfg)
	if err != nil {
		return nil, nil, configRefused(err)
	}
	return l, func() { _ = db.Close() }, nil
}

// setProof records the run's settlement: a failed settlement becomes the
// run's failure when the run itself succeeded, so the exit code says that
// proof was not established.
func (r *hostResult) setProof(out enrollment.ProofOutcome, err error) {
	r.Proof = &proofJSON{Kind: string(out.Kind), Action: out.Action, Reference: out.Reference, Holder: out.Holder}
	if err != nil {
		_, f, _ := hostforge.Classify(err)
		r.Proof.Failure = failureOut(f)
		if r.Failure == nil {
			r.Failure = f
		}
	}
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
		Run: inlineRun(res.Device, pr.start), Status: enrollment.CompletionCompleted, ClosedAt: w.clock.Now()}
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
		Long: `The fleet manager's ledger (the config's ledger: section, docs/config.md)
records each device's identity, its Ironic reference projected from Ironic
(and the revision of that reference), its platform_class and its completion
proof.`,
		Example: `  hostforge ledger show --config lab1.yaml cpu-r1-u10
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

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitFleetManager, ExitBug, ExitCancelled),
		Example: `  hostforge ledger show --config lab1.yaml cpu-r1-u10
  hostforge ledger show --config lab1.yaml cpu-r1-u10 -o json`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&config, "config", "", "config file with the ledger: section")
	_ = cmd.MarkFlagRequired("config")
	logLevelFlag(cmd)
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

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitFleetManager, ExitBug, ExitCancelled),
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
		log, cfg, err := a.loggerAndConfig(cmd, config)
		if err != nil {
			return err
		}
		if len(cfg.Ironic) == 0 {
			return usageErr(ConfigInvalid.New("%s: ironic: missing: the projection lists the nodes of the Ironic instances", config))
		}
		listers, err := wiring.NodeListers(cfg, log)
		if err != nil {
			return usageErr(err)
		}
		l, closeDB, err := openLedger(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		defer closeDB()
		rep, perr := (&enrollment.Projector{Instances: listers, Ledger: l, Log: log}).Project(cmd.Context())
		return printProjection(cmd.OutOrStdout(), *out, rep, perr)
	}
	return cmd
}

// projectionJSON is 'ledger project -o json': the pass's report and its
// failure.
type projectionJSON struct {
	enrollment.ProjectionReport
	Failure *failureJSON `json:"failure,omitempty"`
}

func printProjection(w io.Writer, format string, rep enrollment.ProjectionReport, perr error) error {
	var f *hostforge.Failure
	if perr != nil {
		_, f, _ = hostforge.Classify(perr)
	}
	if format == formatJSON {
		rep.Changes = jsonList(rep.Changes)
		if err := writeJSON(w, projectionJSON{rep, failureOut(f)}); err != nil {
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
