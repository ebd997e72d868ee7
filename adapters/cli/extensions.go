package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// extensionRunners returns the task runners `extensions fire` uses, by task
// type. A type without a runner fails its tasks with
// EXTENSION_RUNNER_MISSING.
var extensionRunners = func(a *app) map[extensions.TaskType]extensions.Runner {
	return map[extensions.TaskType]extensions.Runner{}
}

func (a *app) extensionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "extensions",
		Short: "Validate, dry-run and fire MetalSoft-compatible workflow extensions",
		Long: `Workflow extensions bind tasks (webhook, SSH, Ansible) to lifecycle stages
through onAssetChange, as MetalSoft's ExtensionDefinition does. The twelve
stages: ` + strings.Join(stageList(), ", ") + `.

Templates (requestTemplate, commandTemplate) render exactly as Nunjucks 3.2.4
renders them with autoescape off, plus the shellquote filter.`,
		Example: `  hostforge extensions validate defs/*.json
  hostforge extensions render --definition notify.json --stage serverRegistered --payload server.json -o json
  hostforge extensions fire --definition notify.json --stage serverRegistered --payload server.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: validate, render or fire"))
		},
	}
	cmd.AddCommand(a.extValidateCmd(), a.extRenderCmd(), a.extFireCmd())
	return cmd
}

func stageList() []string {
	var out []string
	for _, s := range extensions.Stages() {
		out = append(out, string(s))
	}
	return out
}

type validateJSON struct {
	File     string               `json:"file"`
	Valid    bool                 `json:"valid"`
	Name     string               `json:"name,omitempty"`
	Problems []extensions.Problem `json:"problems"`
}

func (a *app) extValidateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate extension definitions and print every problem with its JSON path",
		Long: `Validate each definition file (a MetalSoft ExtensionDefinition, bare or in the
create-API envelope) and print every problem at once, each with its JSON
path: stages (exactly the twelve, case-sensitive; removed stages name their
replacement; near misses get a hint), task types, each type's required
options, asset references, template syntax (with line and column) and
duplicate task labels. Warnings (unknown fields, fields MetalSoft requires
but hostforge does not need) do not make a definition invalid.

Exit code 0 when every definition is valid, 2 when any is not.

` + exitCodeHelp,
		Example: `  hostforge extensions validate notify.json dns.json
  hostforge extensions validate defs/*.json -o json`,
		Args: cobra.MinimumNArgs(1),
	}
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, files []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		invalid := false
		var results []validateJSON
		for _, f := range files {
			b, err := a.readInput("definition", f)
			if err != nil {
				results = append(results, validateJSON{File: f, Problems: []extensions.Problem{{Path: "$", Message: "cannot read the file: " + err.Error()}}})
				invalid = true
				continue
			}
			x, ps := extensions.Parse(b, f)
			r := validateJSON{File: f, Valid: x != nil, Problems: ps}
			if r.Problems == nil {
				r.Problems = []extensions.Problem{}
			}
			if x != nil {
				r.Name = x.Name
			} else {
				invalid = true
			}
			results = append(results, r)
		}
		w := a.streams.Out
		if *out == formatJSON {
			if err := writeJSON(w, results); err != nil {
				return err
			}
		} else {
			for _, r := range results {
				state := "invalid"
				if r.Valid {
					state = "valid (" + r.Name + ")"
				}
				nerr := 0
				for _, p := range r.Problems {
					if !p.Warning {
						nerr++
					}
				}
				fmt.Fprintf(w, "%s: %s", r.File, state)
				if nerr > 0 {
					fmt.Fprintf(w, ", %d error(s)", nerr)
				}
				fmt.Fprintln(w)
				for _, p := range r.Problems {
					fmt.Fprintf(w, "  %s\n", p)
				}
			}
		}
		if invalid {
			return exitWith(ExitUsage)
		}
		return nil
	}
	return cmd
}

// loadDefinitions parses definition files, refusing any that does not
// validate (its problems go to the error stream).
func (a *app) loadDefinitions(files []string) (*extensions.Registry, error) {
	var exts []*extensions.Extension
	for _, f := range files {
		b, err := a.readInput("definition", f)
		if err != nil {
			return nil, err
		}
		x, ps := extensions.Parse(b, f)
		for _, p := range ps {
			fmt.Fprintf(a.streams.Err, "%s: %s\n", f, p)
		}
		if x == nil {
			return nil, usageErr(ps.Err(f))
		}
		exts = append(exts, x)
	}
	reg, err := extensions.NewRegistry(exts...)
	if err != nil {
		return nil, usageErr(err)
	}
	return reg, nil
}

// readPayload reads the event payload and checks it carries the stage's object.
func (a *app) readPayload(stage extensions.Stage, file string) ([]byte, error) {
	if !stage.Known() {
		_, _, err := extensions.NewEvent("x", stage, []byte(`{}`))
		return nil, usageErr(err)
	}
	b, err := a.readInput("payload", file)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fileErr("--payload "+file, extensions.PayloadInvalid.Wrap(err, "the payload must be a JSON object"))
	}
	if _, ok := top[stage.PayloadKey()]; !ok {
		fmt.Fprintf(a.streams.Err, "warning: --payload %s has no %q key, the object %s payloads carry; templates see only its own keys\n", file, stage.PayloadKey(), stage)
	}
	return b, nil
}

func (a *app) extRenderCmd() *cobra.Command {
	var defs []string
	var stage, payload string
	var strict bool
	cmd := &cobra.Command{
		Use:   "render --definition FILE --stage STAGE --payload FILE",
		Short: "Render every task of a stage against a payload, without running anything",
		Long: `Render every task the definition binds to the stage, in execution order,
without running anything: a webhook's requestTemplate, an SSH task's
commandTemplate, an Ansible task's extra-vars (the payload's keys at top
level, plus configVars and inputs when the definition declares them).

The payload is the stage's object as MetalSoft sends it, e.g.
{"server": {...}} for serverRegistered. Secret fields (passwordEncrypted,
managementPassword, anything ending in Encrypted, ...) are removed, except
for tasks with "includeSecrets": true.

With -o json the output is a JSON array, one object per task:
{"extension", "stage", "task", "taskType", "rendered"}, where rendered is a
string, or the extra-vars object for Ansible.

Exit code 0 when every task renders; 2 for an invalid definition, stage or
payload; 4 when a template fails on the payload.

` + exitCodeHelp,
		Example: `  hostforge extensions render --definition notify.json --stage serverRegistered --payload server.json
  hostforge extensions render --definition notify.json --stage serverRegistered --payload server.json --strict -o json`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringArrayVar(&defs, "definition", nil, "definition file (repeatable)")
	cmd.Flags().StringVar(&stage, "stage", "", "stage to render, e.g. serverRegistered")
	cmd.Flags().StringVar(&payload, "payload", "", "payload file (JSON), - for standard input")
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse undefined values in templates")
	_ = cmd.MarkFlagRequired("definition")
	_ = cmd.MarkFlagRequired("stage")
	_ = cmd.MarkFlagRequired("payload")
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		reg, err := a.loadDefinitions(defs)
		if err != nil {
			return err
		}
		st := extensions.Stage(stage)
		b, err := a.readPayload(st, payload)
		if err != nil {
			return err
		}
		rendered := []extensions.Rendered{}
		for _, x := range reg.Extensions() {
			rs, err := x.Render(st, b, extensions.RenderOptions{Strict: strict})
			if err != nil {
				if extensions.PayloadInvalid.Is(err) {
					return fileErr("--payload "+payload, err)
				}
				return err
			}
			rendered = append(rendered, rs...)
		}
		if *out == formatJSON {
			return writeJSON(a.streams.Out, rendered)
		}
		w := a.streams.Out
		if len(rendered) == 0 {
			fmt.Fprintf(w, "no task is bound to %s\n", st)
		}
		for i, r := range rendered {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "== %s / %s / %s (%s)\n", r.Extension, r.Stage, r.Task, r.TaskType)
			var s string
			if json.Unmarshal(r.Rendered, &s) == nil {
				fmt.Fprint(w, s)
				if !strings.HasSuffix(s, "\n") {
					fmt.Fprintln(w)
				}
				continue
			}
			if err := writeJSON(w, json.RawMessage(r.Rendered)); err != nil {
				return err
			}
		}
		return nil
	}
	return cmd
}

type fireJSON struct {
	Task       string `json:"task"`
	Status     string `json:"status"`
	DeliveryID string `json:"deliveryId"`
	Message    string `json:"message"`
}

func (a *app) extFireCmd() *cobra.Command {
	var defs []string
	var dir, stage, payload, eventID, state string
	var deadline time.Duration
	var strict bool
	cmd := &cobra.Command{
		Use:   "fire (--definition FILE... | --dir DIR) --stage STAGE --payload FILE",
		Short: "Fire an event by hand: run every task bound to the stage",
		Long: `Fire an external event: every task the active definitions bind to the stage
runs through extension dispatch, extensions by name and tasks in order, each
with a delivery ID stable per (event, extension, task). A failed task with
failurePolicy "fail" (the default) skips its extension's remaining tasks;
"continue" goes on. Each execution is recorded in the --state database
(SQLite; in memory when not given).

The event ID is --event-id, or derived from the stage and the payload, so
firing the same payload again re-delivers the same delivery IDs.

With -o json the output is a JSON array {task, status, deliveryId, message},
status succeeded, failed or skipped. A task type whose runner this build does
not configure fails with EXTENSION_RUNNER_MISSING.

Exit code 0 when every task succeeded; 2 for invalid input; otherwise the
code of the most urgent failed task (4 for most extension failures).

` + exitCodeHelp,
		Example: `  hostforge extensions fire --definition notify.json --stage serverRegistered --payload server.json -o json
  hostforge extensions fire --dir /etc/hostforge/extensions --stage switchCreateDNS --payload dns.json --state /var/lib/hostforge/state.db`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringArrayVar(&defs, "definition", nil, "definition file (repeatable)")
	cmd.Flags().StringVar(&dir, "dir", "", "directory of definitions (*.json); invalid ones are reported and left out")
	cmd.Flags().StringVar(&stage, "stage", "", "stage to fire, e.g. serverRegistered")
	cmd.Flags().StringVar(&payload, "payload", "", "payload file (JSON), - for standard input")
	cmd.Flags().StringVar(&eventID, "event-id", "", "event ID (default: derived from the stage and payload)")
	cmd.Flags().StringVar(&state, "state", "", "SQLite database recording executions (default: in memory)")
	cmd.Flags().DurationVar(&deadline, "stage-deadline", extensions.DefaultStageDeadline, "no task starts later than this after the event")
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse undefined values in templates")
	_ = cmd.MarkFlagRequired("stage")
	_ = cmd.MarkFlagRequired("payload")
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		if (len(defs) == 0) == (dir == "") {
			return inputErr("give --definition FILE (one or more) or --dir DIR")
		}
		var reg *extensions.Registry
		var err error
		if dir != "" {
			var bad []extensions.FileProblems
			reg, bad, err = extensions.LoadDir(dir)
			if err != nil {
				return usageErr(err)
			}
			for _, fp := range bad {
				for _, p := range fp.Problems {
					fmt.Fprintf(a.streams.Err, "%s: %s\n", fp.File, p)
				}
			}
		} else if reg, err = a.loadDefinitions(defs); err != nil {
			return err
		}
		st := extensions.Stage(stage)
		b, err := a.readPayload(st, payload)
		if err != nil {
			return err
		}
		ev, original, err := extensions.NewEvent(eventID, st, b)
		if err != nil {
			return fileErr("--payload "+payload, err)
		}
		ev.StageDeadline = deadline
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		var store extensions.Store = extensionsfake.NewStore()
		if state != "" {
			db, err := sqlstore.Open(ctx, sqlstore.SQLite, state)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := db.Migrate(ctx, sqlstore.ComponentExtensions); err != nil {
				return err
			}
			store = db.Extensions()
		}
		secrets := &extensions.MemorySecrets{}
		if original != nil {
			secrets.Put(ev.ID, original)
		}
		d := extensions.NewDispatcher(reg, extensionRunners(a), store)
		d.Secrets, d.Strict = secrets, strict
		rep, err := extensions.Fire(ctx, d.Local(clock.Real{}), ev)
		if err != nil {
			return err
		}
		return a.printFire(*out, rep)
	}
	return cmd
}

func (a *app) printFire(format string, rep extensions.Report) error {
	var fails []*hostforge.Failure
	rows := make([]fireJSON, 0, len(rep.Deliveries))
	for _, d := range rep.Deliveries {
		rows = append(rows, fireJSON{Task: d.Task, Status: string(d.Status), DeliveryID: d.DeliveryID, Message: d.Message})
		if d.Status == extensions.StatusFailed {
			spec, ok := hostforge.Lookup(d.Code)
			if !ok {
				spec = *extensions.TaskFailed
			}
			fails = append(fails, &hostforge.Failure{Spec: spec, Message: d.Message})
		}
	}
	w := a.streams.Out
	if format == formatJSON {
		if err := writeJSON(w, rows); err != nil {
			return err
		}
	} else {
		printFireText(w, rep)
	}
	return exitWith(worst(fails))
}

func printFireText(w io.Writer, rep extensions.Report) {
	fmt.Fprintf(w, "event %s (%s): %d task(s)\n", rep.EventID, rep.Stage, len(rep.Deliveries))
	for _, d := range rep.Deliveries {
		fmt.Fprintf(w, "  %-9s %s / %s  delivery %s\n", d.Status, d.Extension, d.Task, d.DeliveryID)
		if d.Message != "" {
			fmt.Fprintf(w, "            %s\n", oneLine(d.Message))
		}
	}
}
