package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// extensionRunners builds the task runners `extensions fire` uses, by task
// type: the real webhook, SSH and Ansible runners (tests replace it).
var extensionRunners = wiring.ExtensionRunners

func (a *app) extensionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "extensions",
		Short: "Validate, dry-run and fire MetalSoft-compatible workflow extensions",
		Long: `Workflow extensions bind tasks (webhook, SSH, Ansible) to lifecycle stages
through onAssetChange, as MetalSoft's ExtensionDefinition does. The twelve
stages: ` + strings.Join(stageList(), ", ") + `.

Templates (requestTemplate, commandTemplate) render exactly as Nunjucks 3.2.4
renders them with autoescape off, plus the shellquote filter.

Events come from enrollment (serverRegistered, serverCreateDNS), NetBox's
event rules (the server and switch stages; 'hostforge worker' or
'hostforge extensions listen'), the Ironic projection
(serverInstanceUpdate), or an operator ('extensions fire'). 'history' and
'outputs' read what dispatch recorded. Examples of each task type, and a
payload per stage, are in the repository's examples/extensions.`,
		Example: `  hostforge extensions validate --config /etc/hostforge/lab1.yaml
  hostforge extensions render --definition dns-records.json --stage serverCreateDNS --payload payloads/serverCreateDNS.json -o json
  hostforge extensions fire --definition inventory-ansible.json --stage serverRegistered --payload payloads/serverRegistered.json
  hostforge extensions history --config /etc/hostforge/lab1.yaml --since 24h -o json
  hostforge extensions listen --config /etc/hostforge/lab1.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: validate, render, fire, history, outputs or listen"))
		},
	}
	cmd.AddCommand(a.extValidateCmd(), a.extRenderCmd(), a.extFireCmd(), a.extHistoryCmd(), a.extOutputsCmd(), a.extListenCmd())
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
	var config string
	cmd := &cobra.Command{
		Use:   "validate [FILE...] [--config FILE]",
		Short: "Validate extension definitions and print every problem with its JSON path",
		Long: `Validate each definition file (a MetalSoft ExtensionDefinition, bare or in the
create-API envelope) and print every problem at once, each with its JSON
path: stages (exactly the twelve, case-sensitive; removed stages name their
replacement; near misses get a hint), task types, each type's required
options, asset references, template syntax (with line and column) and
duplicate task labels. Warnings (unknown fields, fields MetalSoft requires
but hostforge does not need, a task whose own timeout is longer than the
stage deadline, which then stops it first) do not make a definition
invalid.

With --config, the definitions are the config's extensions.definitions
directory (and any FILE given), and the site's values are checked too,
each problem at its config key and line (reported under the config file):
a required input (no defaultValue) of an active extension without a value
in extensions.instances, an isPassword value written inline instead of
{vault: ITEM.FIELD}, a key no definition declares, an instance of an
extension that is not loaded. The stage deadline is the config's
extensions.stage_deadline (1h without it).

Exit code 0 when every definition (and the config's instances) is valid, 2
when any is not.

` + exitCodes(ExitOK, ExitUsage, ExitBug),
		Example: `  hostforge extensions validate notify.json dns.json
  hostforge extensions validate defs/*.json -o json
  hostforge extensions validate --config /etc/hostforge/lab1.yaml`,
		Args: cobra.ArbitraryArgs,
	}
	cmd.Flags().StringVar(&config, "config", "", "also validate the config's extensions.definitions and extensions.instances")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, files []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		var cfg *wiring.Config
		if config != "" {
			var err error
			if cfg, err = loadConfigFile(config); err != nil {
				return err
			}
			if cfg.Extensions == nil {
				return inputErr("--config %s has no extensions: section", config)
			}
			dirFiles, err := filepath.Glob(filepath.Join(cfg.Extensions.Definitions, "*.json"))
			if err != nil {
				return inputErr("extensions.definitions %s: %v", cfg.Extensions.Definitions, err)
			}
			sort.Strings(dirFiles)
			files = append(dirFiles, files...)
		} else if len(files) == 0 {
			return inputErr("give definition files, or --config FILE with an extensions: section")
		}
		results, invalid := a.validateFiles(files, cfg)
		w := a.streams.Out
		if *out == formatJSON {
			if err := writeJSON(w, results); err != nil {
				return err
			}
		} else {
			printValidate(w, results)
		}
		if invalid {
			return exitWith(ExitUsage)
		}
		return nil
	}
	return cmd
}

// validateFiles validates definition files, and with cfg the site's
// instances against those that load, as one more result for the config.
func (a *app) validateFiles(files []string, cfg *wiring.Config) ([]validateJSON, bool) {
	invalid := false
	var results []validateJSON
	var exts []*extensions.Extension
	for _, f := range files {
		b, err := a.readInput("definition", f)
		if err != nil {
			results = append(results, validateJSON{File: f, Problems: []extensions.Problem{{Path: "$", Message: "cannot read the file: " + err.Error()}}})
			invalid = true
			continue
		}
		x, ps := extensions.Parse(b, f)
		r := validateJSON{File: f, Valid: x != nil, Problems: ps}
		if x != nil {
			r.Name = x.Name
			r.Problems = append(r.Problems, x.DeadlineWarnings(configDeadline(cfg))...)
			exts = append(exts, x)
		} else {
			invalid = true
		}
		if r.Problems == nil {
			r.Problems = []extensions.Problem{}
		}
		results = append(results, r)
	}
	if cfg == nil {
		return results, invalid
	}
	r := validateJSON{File: cfg.Path(), Valid: true, Name: "extensions.instances", Problems: []extensions.Problem{}}
	reg, err := extensions.NewRegistry(exts...)
	if err != nil {
		r.Valid, r.Problems = false, append(r.Problems, extensions.Problem{Path: "extensions.definitions", Message: err.Error()})
	} else {
		r.Problems = append(r.Problems, cfg.InstanceProblems(reg)...)
		r.Valid = !extensions.Problems(r.Problems).HasErrors()
	}
	return append(results, r), invalid || !r.Valid
}

func printValidate(w io.Writer, results []validateJSON) {
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

// loadDefinitionsDir loads a directory of definitions; the ones that do
// not validate are reported on the error stream and left out.
func (a *app) loadDefinitionsDir(dir string) (*extensions.Registry, error) {
	reg, bad, err := extensions.LoadDir(dir)
	if err != nil {
		return nil, usageErr(err)
	}
	for _, fp := range bad {
		for _, p := range fp.Problems {
			fmt.Fprintf(a.streams.Err, "%s: %s\n", fp.File, p)
		}
	}
	return reg, nil
}

// readPayload reads the event payload and refuses one without the stage's
// object (exit 2, naming the key and the stage): nothing is contacted.
func (a *app) readPayload(stage extensions.Stage, file string) ([]byte, error) {
	if !stage.Known() {
		_, _, err := extensions.NewEvent("x", stage, []byte(`{}`))
		return nil, usageErr(err)
	}
	b, err := a.readInput("payload", file)
	if err != nil {
		return nil, err
	}
	if _, _, err := extensions.NewEvent("check", stage, b); err != nil {
		return nil, fileErr("--payload "+file, err)
	}
	return b, nil
}

func (a *app) extRenderCmd() *cobra.Command {
	var defs []string
	var stage, payload, config string
	var strict bool
	cmd := &cobra.Command{
		Use:   "render (--definition FILE... | --config FILE) --stage STAGE --payload FILE",
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

Each render has a budget: the bytes of strings and arrays it may build
(64 MiB) and a deadline (2 s), or the config's extensions.render_budget
and extensions.render_timeout with --config (which also names the
definitions directory when no --definition is given). A template past
either fails with EXTENSION_TEMPLATE_BUDGET, naming the line and column.

A payload without the stage's object (the "server" key for serverRegistered,
"networkDevice" for switchRegistered, ...) is refused. A webhook whose body
is JSON (its Content-Type says so, or, unset, the body starts with { or [)
must render to valid JSON: EXTENSION_TEMPLATE_INVALID_JSON names the task
and the offset where it breaks.

With --config, the definitions are the config's extensions.definitions
directory unless --definition is given, and templates see the site's
values of the extensions' inputs and configVars (extensions.instances) in
configVars and extensionInstanceVariables, as MetalSoft exposes them; an
isPassword value renders as "[secret extensions.instances.NAME.KEY]" (the
vault is not read, and no secret is printed). A required input without a
value is a warning here; fire refuses it.

Exit code 0 when every task renders; 2 for an invalid definition, stage or
payload; 4 when a template fails on the payload or exceeds its budget; 7
when interrupted.

` + exitCodes(ExitOK, ExitUsage, ExitBug, ExitCancelled),
		Example: `  hostforge extensions render --definition notify.json --stage serverRegistered --payload server.json
  hostforge extensions render --definition notify.json --stage serverRegistered --payload server.json --strict -o json`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringArrayVar(&defs, "definition", nil, "definition file (repeatable)")
	cmd.Flags().StringVar(&stage, "stage", "", "stage to render, e.g. serverRegistered")
	cmd.Flags().StringVar(&payload, "payload", "", "payload file (JSON), - for standard input")
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse undefined values in templates")
	cmd.Flags().StringVar(&config, "config", "", "take the definitions directory (without --definition), the site's input values and the render budget and deadline from this config file's extensions: section")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	_ = cmd.MarkFlagRequired("stage")
	_ = cmd.MarkFlagRequired("payload")
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		var cfg *wiring.Config
		var xc *wiring.ExtensionsConfig
		var instances extensions.Instances
		if config != "" {
			var err error
			if cfg, err = loadConfigFile(config); err != nil {
				return err
			}
			if cfg.Extensions == nil {
				return inputErr("--config %s has no extensions: section", config)
			}
			xc = cfg.Extensions
			instances = xc.Instances.Instances()
		}
		var reg *extensions.Registry
		var err error
		switch {
		case len(defs) > 0:
			reg, err = a.loadDefinitions(defs)
		case cfg != nil:
			reg, err = a.loadDefinitionsDir(cfg.Extensions.Definitions)
		default:
			err = inputErr("give --definition FILE (one or more), or --config FILE with an extensions: section")
		}
		if err != nil {
			return err
		}
		st := extensions.Stage(stage)
		b, err := a.readPayload(st, payload)
		if err != nil {
			return err
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		opts := extensions.RenderOptions{Strict: strict, Limits: xc.RenderLimits()}
		rendered := []extensions.Rendered{}
		for _, x := range reg.Extensions() {
			if len(x.Tasks(st)) > 0 {
				for _, p := range x.CheckInstance(instances[x.Name]) {
					fmt.Fprintf(a.streams.Err, "warning: %s: %s\n", p.Path, p.Message)
				}
			}
			xo := opts
			xo.Instance = instances[x.Name]
			rs, err := x.Render(ctx, st, b, xo)
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
	Extension  string `json:"extension"`
	Stage      string `json:"stage"`
	Task       string `json:"task"`
	Status     string `json:"status"`
	DeliveryID string `json:"deliveryId"`
	Message    string `json:"message"`
	EventID    string `json:"eventId"`
}

// fireFlags are the runner settings of `extensions fire`: the flags, or
// the extensions: and vault: sections of --config.
type fireFlags struct {
	config, vault, knownHosts, caFile, runtime, assetCache, playbook string
}

func (f *fireFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "take the definitions directory, the runners' settings and the vault from this config file's extensions: and vault: sections (flags override)")
	fl.StringVar(&f.vault, "vault", "", "YAML file vault holding the items tasks name (signingSecret, privateKeySecret); mode 0600")
	fl.StringVar(&f.knownHosts, "known-hosts", "", "known_hosts file SSH tasks' host keys are verified against")
	fl.StringVar(&f.caFile, "ca-file", "", "PEM certificates trusted besides the system's for webhooks and bundle URLs")
	fl.StringVar(&f.runtime, "container-runtime", "", "podman or docker: runs Ansible tasks that name an ee image")
	fl.StringVar(&f.assetCache, "asset-cache", "", "directory of unpacked Ansible bundles (default: the user's cache directory)")
	fl.StringVar(&f.playbook, "ansible-playbook", "", "the ansible-playbook program (default: the one in PATH)")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	_ = cmd.MarkFlagFilename("vault", "yaml", "yml")
}

// settings merges --config's sections under the flags. dir is the
// config's definitions directory, when it names one; cfg the config.
func (f *fireFlags) settings(log *slog.Logger) (o wiring.RunnerOptions, dir string, cfg *wiring.Config, err error) {
	o = wiring.RunnerOptions{KnownHosts: f.knownHosts, CAFile: f.caFile, ContainerRuntime: f.runtime, AssetCache: f.assetCache, AnsiblePlaybook: f.playbook, Log: log}
	vaultPath := f.vault
	if f.config != "" {
		if cfg, err = loadConfigFile(f.config); err != nil {
			return o, "", nil, err
		}
		if x := cfg.Extensions; x != nil {
			dir = x.Definitions
			o.AssetMaxBytes, o.AnsibleEnv = int64(x.AssetMaxBytes), x.AnsibleEnv
			for _, kv := range []struct {
				dst *string
				v   string
			}{{&o.KnownHosts, x.KnownHosts}, {&o.CAFile, x.CAFile}, {&o.ContainerRuntime, x.ContainerRuntime}, {&o.AssetCache, x.AssetCache}, {&o.AnsiblePlaybook, x.AnsiblePlaybook}} {
				if *kv.dst == "" {
					*kv.dst = kv.v
				}
			}
		}
		if vaultPath == "" && cfg.Vault != nil {
			vaultPath = cfg.Vault.Path
		}
	}
	if vaultPath != "" {
		v, err := vault.Open(vaultPath)
		if err != nil {
			return o, "", nil, fileErr("--vault "+vaultPath, usageErr(err))
		}
		o.Vault = v
	}
	return o, dir, cfg, nil
}

func (a *app) extFireCmd() *cobra.Command {
	var defs []string
	var dir, stage, payload, eventID, state string
	var redeliver []string
	var deadline time.Duration
	var strict bool
	var ff fireFlags
	cmd := &cobra.Command{
		Use:   "fire (--definition FILE... | --dir DIR | --config FILE) --stage STAGE --payload FILE [--vault FILE]",
		Short: "Fire an event by hand: run every task bound to the stage, for real",
		Long: `Fire an external event: every task the active definitions bind to the stage
runs for real through extension dispatch — webhooks delivered, SSH commands
run, Ansible playbooks played — extensions by name and tasks in order, each
with a delivery ID stable per (event, extension, task): a webhook's
webhook-id, an Ansible task's hostforge_delivery_id. A failed task with
failurePolicy "fail" (the default) stops its extension's remaining tasks;
"continue" goes on. Each execution is recorded in the --state database
(SQLite), or in the ledger's database of --config's ledger: section; in
memory when neither is given.

The event ID is --event-id: the ID the event's source gave it (a DNS
change's request ID, say). Without it every firing is a new event with a
fresh random ID, printed on the error stream (and in every -o json row),
so a later event with the same payload is never mistaken for this one.
Firing an event ID again against the same state runs only the tasks that
have not succeeded: a task that succeeded is reported skipped, with the
delivery that succeeded and when, and is not contacted; a failed webhook
is delivered again with the same webhook-id. An SSH command or a playbook
runs at most once per delivery: one that failed runs again under a new
delivery ID, and one whose run was interrupted (the process died while it
ran; EXTENSION_TASK_INTERRUPTED) is not run again until --redeliver names
it. --redeliver TASK (a task label, or extension/label; repeatable) runs
that task again under a new delivery ID, whatever it did before.

The payload must carry the stage's object ("server" for serverRegistered,
...): one without it is refused (exit 2) and nothing is contacted; so is a
--stage-deadline of zero or less. The stage deadline bounds every task
(default: --config's extensions.stage_deadline, else 1h); a task whose own
timeout is longer is named on the error stream. With --config, the tasks
get the site's values of their extensions' inputs and configVars
(extensions.instances; isPassword values read from the vault), and an
extension whose required input has no value is refused (exit 2).

Tasks read the secrets they name from the file vault (--vault, the same
YAML vault as the rest of hostforge): a webhook's signingSecret is an item
whose password signs deliveries (Standard Webhooks; whsec_ base64 or raw
bytes), an SSH task's privateKeySecret an item with private_key. SSH host
keys are verified against --known-hosts; there is no way to skip that.
Ansible tasks run the ansible-playbook in PATH; a task naming an ee image
needs --container-runtime. --config takes these settings, the vault, the
definitions directory and the render budget (render_budget, render_timeout:
a template past either fails with EXTENSION_TEMPLATE_BUDGET) from a config
file's extensions: and vault: sections.

With -o json the output is a JSON array, one object per task in order:
{"extension", "stage", "task", "status", "deliveryId", "message",
"eventId"}, where status is
succeeded, failed or skipped. skipped is a task that succeeded in an
earlier firing of the event (its message starts "succeeded earlier:").
A task that was not run, because an earlier task of its extension failed
with failurePolicy "fail" or the stage deadline had passed, is failed,
with a message that starts "not run:".

Exit code 0 when every task succeeded (now or earlier); 2 for invalid
input; otherwise the code of the most urgent failed task (4 for most
extension failures).

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge extensions fire --definition notify.json --stage serverRegistered --payload server.json --vault vault.yaml -o json
  hostforge extensions fire --dir /etc/hostforge/extensions --stage switchCreateDNS --payload dns.json --known-hosts /etc/hostforge/known_hosts
  hostforge extensions fire --config /etc/hostforge/lab1.yaml --stage serverRegistered --payload server.json --state /var/lib/hostforge/state.db
  hostforge extensions fire --config /etc/hostforge/lab1.yaml --stage serverCreateDNS --payload dns.json --event-id dns-4711 --state /var/lib/hostforge/state.db --redeliver register-dns`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringArrayVar(&defs, "definition", nil, "definition file (repeatable)")
	cmd.Flags().StringVar(&dir, "dir", "", "directory of definitions (*.json); invalid ones are reported and left out")
	cmd.Flags().StringVar(&stage, "stage", "", "stage to fire, e.g. serverRegistered")
	cmd.Flags().StringVar(&payload, "payload", "", "payload file (JSON), - for standard input")
	cmd.Flags().StringVar(&eventID, "event-id", "", "the event's ID from its source; firing it again runs only what has not succeeded (default: a new random ID, printed)")
	cmd.Flags().StringArrayVar(&redeliver, "redeliver", nil, "run this task (label, or extension/label) again under a new delivery ID (repeatable)")
	cmd.Flags().StringVar(&state, "state", "", "SQLite database recording executions (default: in memory)")
	cmd.Flags().DurationVar(&deadline, "stage-deadline", extensions.DefaultStageDeadline, "no task starts or runs later than this after the event (default: --config's extensions.stage_deadline, else 1h)")
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse undefined values in templates")
	ff.add(cmd)
	_ = cmd.MarkFlagRequired("stage")
	_ = cmd.MarkFlagRequired("payload")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	metricsListen := metricsListenFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		if cmd.Flags().Changed("stage-deadline") && deadline <= 0 {
			return inputErr("--stage-deadline %s: want a positive duration; no task could run", deadline)
		}
		log, err := a.logger(cmd)
		if err != nil {
			return err
		}
		opts, cfgDir, cfg, err := ff.settings(log)
		if err != nil {
			return err
		}
		if dir == "" && len(defs) == 0 {
			dir = cfgDir
		}
		if (len(defs) == 0) == (dir == "") {
			return inputErr("give --definition FILE (one or more), --dir DIR, or --config FILE with an extensions: section")
		}
		var reg *extensions.Registry
		if dir != "" {
			reg, err = a.loadDefinitionsDir(dir)
		} else {
			reg, err = a.loadDefinitions(defs)
		}
		if err != nil {
			return err
		}
		st := extensions.Stage(stage)
		b, err := a.readPayload(st, payload)
		if err != nil {
			return err
		}
		if !cmd.Flags().Changed("stage-deadline") {
			deadline = configDeadline(cfg)
		}
		instances, err := a.checkInstances(cfg, reg, st, deadline)
		if err != nil {
			return err
		}
		if err := extensions.CheckRedeliver(reg, st, redeliver); err != nil {
			return usageErr(fmt.Errorf("--redeliver: %w", err))
		}
		ev, original, err := extensions.NewEvent(eventID, st, b)
		if err != nil {
			return fileErr("--payload "+payload, err)
		}
		ev.StageDeadline, ev.Redeliver = deadline, redeliver
		if eventID == "" && *out != formatJSON {
			fmt.Fprintf(a.streams.Err, "event ID %s (fire it again with --event-id %s to deliver only what has not succeeded)\n", ev.ID, ev.ID)
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		var store extensions.Store = extensionsfake.NewStore()
		if state != "" || (cfg != nil && cfg.Ledger != nil) {
			st, closeStore, err := openExtensionStore(ctx, cfg, state)
			if err != nil {
				return err
			}
			defer closeStore()
			store = st
		}
		runners, closeRunners, err := extensionRunners(opts)
		if err != nil {
			return usageErr(err)
		}
		defer closeRunners()
		secrets := &extensions.MemorySecrets{}
		if original != nil {
			secrets.Put(ev.ID, original)
		}
		d := extensions.NewDispatcher(reg, runners, store)
		d.Secrets, d.Strict, d.Log, d.Instances, d.StageDeadline = secrets, strict, log, instances, deadline
		if opts.Vault != nil {
			d.Vault = opts.Vault
		}
		if cfg != nil {
			d.Limits = cfg.Extensions.RenderLimits()
		}
		obs, stopMetrics, err := a.serveLocalMetrics(*metricsListen)
		if err != nil {
			return err
		}
		defer stopMetrics()
		rt := d.Local(clock.Real{})
		rt.Observer = obs
		rep, err := extensions.Fire(ctx, rt, ev)
		if err != nil {
			return err
		}
		return a.printFire(*out, rep)
	}
	return cmd
}

// configDeadline is the config's extensions.stage_deadline, else the
// default.
func configDeadline(cfg *wiring.Config) time.Duration {
	if cfg != nil && cfg.Extensions != nil && cfg.Extensions.StageDeadline > 0 {
		return cfg.Extensions.StageDeadline.D()
	}
	return extensions.DefaultStageDeadline
}

// checkInstances refuses (exit 2) to fire a stage whose extensions lack
// what the site must give them — a required input without a value, an
// inline password, a key no definition declares (--config's
// extensions.instances; without --config no input has a site value) — and
// warns of tasks whose own timeout the stage deadline cuts.
func (a *app) checkInstances(cfg *wiring.Config, reg *extensions.Registry, stage extensions.Stage, deadline time.Duration) (extensions.Instances, error) {
	var instances extensions.Instances
	if cfg != nil && cfg.Extensions != nil {
		instances = cfg.Extensions.Instances.Instances()
	}
	var errs []string
	seen := map[string]bool{}
	for _, b := range reg.Tasks(stage) {
		x := b.Extension
		if seen[x.Name] {
			continue
		}
		seen[x.Name] = true
		for _, p := range x.CheckInstance(instances[x.Name]) {
			if cfg != nil {
				p.Path = cfg.KeyLine(p.Path)
			}
			errs = append(errs, p.Path+": "+p.Message)
		}
		for _, p := range x.DeadlineWarnings(deadline) {
			fmt.Fprintf(a.streams.Err, "%s: %s\n", x.Source, p)
		}
	}
	if len(errs) > 0 {
		where := "without --config, no input has a site value"
		if cfg != nil {
			where = "in " + cfg.Path()
		}
		return nil, usageErr(wiring.ConfigInvalid.New("extensions.instances (%s): %s", where, strings.Join(errs, "; ")))
	}
	return instances, nil
}

// openExtensionStore opens the store of execution records: the SQLite
// database state when given, else the ledger's database of the config's
// ledger: section; the extensions schema is migrated on first use.
func openExtensionStore(ctx context.Context, cfg *wiring.Config, state string) (extensions.Store, func(), error) {
	var db *sqlstore.DB
	var err error
	switch {
	case state != "":
		if db, err = sqlstore.Open(ctx, sqlstore.SQLite, state); err != nil {
			return nil, nil, err
		}
	case cfg != nil && cfg.Ledger != nil:
		// The records are where the config keeps state: the ledger's database.
		if _, db, err = wiring.OpenLedger(ctx, cfg); err != nil {
			if ConfigInvalid.Is(err) {
				return nil, nil, usageErr(err)
			}
			return nil, nil, err
		}
	default:
		return nil, nil, inputErr("give --state DB, or --config FILE with a ledger: section: the execution records are in that database")
	}
	if err := db.Migrate(ctx, sqlstore.ComponentExtensions); err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return db.Extensions(), func() { _ = db.Close() }, nil
}

// fireRows are the deliveries as `extensions fire` reports them: status
// succeeded, failed or skipped (succeeded in an earlier firing); a task
// that was not run is failed, its message starting "not run:".
func fireRows(rep extensions.Report) ([]fireJSON, []*hostforge.Failure) {
	var fails []*hostforge.Failure
	rows := make([]fireJSON, 0, len(rep.Deliveries))
	for _, d := range rep.Deliveries {
		status := fireStatus(d)
		ev, stage := d.EventID, d.Stage
		if ev == "" {
			ev, stage = rep.EventID, rep.Stage
		}
		rows = append(rows, fireJSON{Extension: d.Extension, Stage: string(stage), Task: d.Task, Status: status, DeliveryID: d.DeliveryID, Message: d.Message, EventID: ev})
		if status == string(extensions.StatusFailed) {
			spec, ok := hostforge.Lookup(d.Code)
			if !ok {
				spec = *extensions.TaskFailed
			}
			fails = append(fails, &hostforge.Failure{Spec: spec, Message: d.Message})
		}
	}
	return rows, fails
}

func (a *app) printFire(format string, rep extensions.Report) error {
	rows, fails := fireRows(rep)
	w := a.streams.Out
	if format == formatJSON {
		if err := writeJSON(w, rows); err != nil {
			return err
		}
	} else {
		printFireText(w, rep)
	}
	code := worst(fails)
	if len(fails) > 0 && code == ExitOK {
		code = ExitInfra // a failed task never exits 0
	}
	return exitWith(code)
}

// fireStatus is a delivery's status as `extensions fire` reports it: a
// skip that carries a failure code (failurePolicy fail, the stage
// deadline) is a task that failed to run; a skip without one succeeded
// in an earlier firing.
func fireStatus(d extensions.Delivery) string {
	if d.Status == extensions.StatusSkipped && d.Code != "" {
		return string(extensions.StatusFailed)
	}
	return string(d.Status)
}

func printFireText(w io.Writer, rep extensions.Report) {
	fmt.Fprintf(w, "event %s (%s): %d task(s)\n", rep.EventID, rep.Stage, len(rep.Deliveries))
	for _, d := range rep.Deliveries {
		status := fireStatus(d)
		fmt.Fprintf(w, "  %-9s %s / %s  delivery %s\n", status, d.Extension, d.Task, d.DeliveryID)
		if d.Message != "" {
			fmt.Fprintf(w, "            %s\n", oneLine(d.Message))
		}
	}
}
