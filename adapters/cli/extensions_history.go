package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/extensions"
)

// historyJSON is one delivery of `extensions history -o json`: exactly
// these fields; finishedAt is null while the delivery has not ended.
type historyJSON struct {
	EventID    string     `json:"eventId"`
	DeliveryID string     `json:"deliveryId"`
	Extension  string     `json:"extension"`
	Stage      string     `json:"stage"`
	Task       string     `json:"task"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	Attempts   int        `json:"attempts"`
	Message    string     `json:"message"`
}

// historyLimit caps the deliveries one history lists.
const historyLimit = 10000

// storeFlags are the flags of the commands that read the execution
// records: --config (its ledger: database) or --state.
type storeFlags struct {
	config, state string
}

func (f *storeFlags) add(cmd *cobra.Command) {
	configFlag(cmd, &f.config, "read the records from the state database of this config file's ledger: section")
	cmd.Flags().StringVar(&f.state, "state", "", "read the records from this SQLite database (what 'extensions fire --state' wrote)")
}

func (f *storeFlags) open(ctx context.Context) (extensions.Store, *wiring.Config, func(), error) {
	var cfg *wiring.Config
	if f.config != "" {
		var err error
		if cfg, err = loadConfigFile(f.config); err != nil {
			return nil, nil, nil, err
		}
	}
	st, closeStore, err := openExtensionStore(ctx, cfg, f.state)
	return st, cfg, closeStore, err
}

func (a *app) extHistoryCmd() *cobra.Command {
	var sf storeFlags
	var extension, stage, eventID string
	var since time.Duration
	cmd := &cobra.Command{
		Use:   "history (--config FILE | --state DB) [--extension NAME] [--stage STAGE] [--since DURATION] [--event-id ID]",
		Short: "List the extension deliveries recorded in the state store, newest first",
		Long: `List what extension dispatch recorded — by 'hostforge worker', 'hostforge
extensions listen', 'hostforge enroll --config' and 'hostforge extensions
fire' — newest first: one delivery per line, with its event, task, status,
times, attempts (the runs of the delivery: a webhook delivered again under
its webhook-id counts each) and message. The records are in the state
database of --config's ledger: section, or the SQLite database --state.

With -o json the output is a JSON array, newest first, of
{"eventId", "deliveryId", "extension", "stage", "task", "status",
"startedAt", "finishedAt", "attempts", "message"}: status is running,
started (an SSH command or playbook whose outcome is not recorded yet),
succeeded, failed or skipped; finishedAt is null until the delivery ends.

Filters: --extension, --stage, --event-id, and --since (deliveries that
started within that long before now). At most ` + fmt.Sprint(historyLimit) + ` deliveries are listed.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge extensions history --config /etc/hostforge/lab1.yaml -o json
  hostforge extensions history --config /etc/hostforge/lab1.yaml --extension powerdns --since 24h
  hostforge extensions history --state state.db --event-id dns-4711`,
		Args: cobra.NoArgs,
	}
	sf.add(cmd)
	cmd.Flags().StringVar(&extension, "extension", "", "only this extension's deliveries")
	cmd.Flags().StringVar(&stage, "stage", "", "only this stage's deliveries")
	cmd.Flags().DurationVar(&since, "since", 0, "only deliveries that started within this long before now (e.g. 24h)")
	cmd.Flags().StringVar(&eventID, "event-id", "", "only this event's deliveries")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		if cmd.Flags().Changed("since") && since <= 0 {
			return inputErr("--since %s: want a positive duration, e.g. 24h", since)
		}
		st := extensions.Stage(stage)
		if stage != "" && !st.Known() {
			_, _, err := extensions.NewEvent("x", st, []byte(`{}`))
			return usageErr(err)
		}
		ctx := cmdContext(cmd)
		store, _, closeStore, err := sf.open(ctx)
		if err != nil {
			return err
		}
		defer closeStore()
		q := extensions.Query{EventID: eventID, Extension: extension, Stage: st, NewestFirst: true, Limit: historyLimit}
		if since > 0 {
			q.Since = time.Now().Add(-since)
		}
		recs, err := store.Executions(ctx, q)
		if err != nil {
			return err
		}
		rows := make([]historyJSON, 0, len(recs))
		for _, r := range recs {
			h := historyJSON{EventID: r.EventID, DeliveryID: r.DeliveryID, Extension: r.Extension, Stage: string(r.Stage), Task: r.Task,
				Status: string(r.Status), StartedAt: r.StartedAt.UTC(), Attempts: r.Attempts, Message: r.Message}
			if !r.FinishedAt.IsZero() {
				f := r.FinishedAt.UTC()
				h.FinishedAt = &f
			}
			rows = append(rows, h)
		}
		if *out == formatJSON {
			return writeJSON(a.streams.Out, rows)
		}
		if len(rows) == 0 {
			fmt.Fprintln(a.streams.Out, "no delivery recorded")
			return nil
		}
		tw := tabwriter.NewWriter(a.streams.Out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STARTED\tEXTENSION\tSTAGE\tTASK\tSTATUS\tATTEMPTS\tEVENT\tMESSAGE")
		for _, h := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", h.StartedAt.Format(time.RFC3339), h.Extension, h.Stage, h.Task, h.Status, h.Attempts, h.EventID, oneLine(h.Message))
		}
		return tw.Flush()
	}
	return cmd
}

// outputsJSON is `extensions outputs -o json`: the extension's stored
// outputs (values null when none are stored).
type outputsJSON struct {
	Extension  string          `json:"extension"`
	Values     json.RawMessage `json:"values"`
	DeliveryID string          `json:"deliveryId,omitempty"`
	UpdatedAt  *time.Time      `json:"updatedAt"`
}

func (a *app) extOutputsCmd() *cobra.Command {
	var sf storeFlags
	var extension string
	cmd := &cobra.Command{
		Use:   "outputs (--config FILE | --state DB) --extension NAME",
		Short: "Print an extension's stored outputs",
		Long: `Print the outputs an extension's runs stored (the JSON an Ansible playbook
wrote at context_json_file_path): each run that produces outputs replaces
them whole, as MetalSoft does. With -o json: {"extension", "values",
"deliveryId", "updatedAt"}, values null when none are stored.

With --config, an extension its definitions directory does not hold is
refused (exit 2).

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge extensions outputs --config /etc/hostforge/lab1.yaml --extension powerdns -o json
  hostforge extensions outputs --state state.db --extension inventory-ansible`,
		Args: cobra.NoArgs,
	}
	sf.add(cmd)
	cmd.Flags().StringVar(&extension, "extension", "", "the extension's name")
	_ = cmd.MarkFlagRequired("extension")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		ctx := cmdContext(cmd)
		store, cfg, closeStore, err := sf.open(ctx)
		if err != nil {
			return err
		}
		defer closeStore()
		if cfg != nil && cfg.Extensions != nil {
			reg, _, err := extensions.LoadDir(cfg.Extensions.Definitions)
			if err != nil {
				return usageErr(err)
			}
			if _, ok := reg.Extension(extension); !ok {
				return inputErr("--extension %s: no extension of that name is loaded from %s", extension, cfg.Extensions.Definitions)
			}
		}
		o, ok, err := store.Outputs(ctx, extension)
		if err != nil {
			return err
		}
		res := outputsJSON{Extension: extension, Values: json.RawMessage("null")}
		if ok {
			at := o.UpdatedAt.UTC()
			res.Values, res.DeliveryID, res.UpdatedAt = o.Values, o.DeliveryID, &at
		}
		if *out == formatJSON {
			return writeJSON(a.streams.Out, res)
		}
		if !ok {
			fmt.Fprintf(a.streams.Out, "no outputs stored for %s\n", extension)
			return nil
		}
		fmt.Fprintf(a.streams.Out, "%s: outputs of delivery %s at %s\n", extension, res.DeliveryID, res.UpdatedAt.Format(time.RFC3339))
		return writeJSON(a.streams.Out, res.Values)
	}
	return cmd
}

// cmdContext is the command's context, or the background one.
func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
