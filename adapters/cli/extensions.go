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
  hostforge extensions render dns-records.json --stage serverCreateDNS --payload payloads/serverCreateDNS.json -o json
  hostforge extensions fire inventory-ansible.json --stage serverRegistered --payload payloads/serverRegistered.json
  hostforge extensions history --config /etc/hostforge/lab1.yaml --since 24h -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: validate, render, fire, history, outputs or listen"))
		},
	}
	cmd.AddCommand(a.extValidateCmd(), a.extRenderCmd(), a.extFireCmd(), a.extHistoryCmd(), a.extOutputsCmd(), a.extListenCmd())
	return cmd
}

// definitionFlag adds --definition; the commands that take it take
// definition files as arguments too.
func definitionFlag(cmd *cobra.Command, defs *[]string) {
	cmd.Flags().StringArrayVar(defs, "definition", nil, "definition file (repeatable; files may also be given as arguments)")
	_ = cmd.MarkFlagFilename("definition", "json")
}

// definitionFiles are the --definition files, then the arguments.
func definitionFiles(flags, args []string) []string {
	return append(append([]string(nil), flags...), args...)
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
	var defs []string
	cmd := &cobra.Command{
		Use:   "validate [FILE... | --definition FILE...] [--config FILE]",
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
	definitionFlag(cmd, &defs)
	configFlag(cmd, &config, "also validate the config's extensions.definitions and extensions.instances")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		files := definitionFiles(defs, args)
		var cfg *wiring.Config
		if config != "" {
			var err error
			if cfg, err = loadExtensionsConfig(config); err != nil {
				return err
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
		r.Problems = jsonList(r.Problems)
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
		Use:   "render (FILE... | --definition FILE... | --config FILE) --stage STAGE --payload FILE",
		Short: "Render every task of a stage against a payload, without running anything",
		Long: `Render every task the definitions bind to the stage, in execution order,
without running anything: a webhook's requestTemplate, an SSH task's
commandTemplate, an Ansible task's extra-vars. The payload is the stage's
object as MetalSoft sends it ({"server": {...}} for serverRegistered); one
without it is refused. Secret fields are removed, except for tasks with
"includeSecrets": true. A webhook whose body is JSON must render to valid
JSON (EXTENSION_TEMPLATE_INVALID_JSON names the task and the offset).

Each render has a budget of bytes built (64 MiB) and a deadline (2 s), or
the config's extensions.render_budget and render_timeout: a template past
either fails with EXTENSION_TEMPLATE_BUDGET. With --config, the definitions
are its extensions.definitions (unless files are given), and templates see
the site's extensions.instances values; an isPassword one renders as
"[secret extensions.instances.NAME.KEY]" and the vault is not read.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge extensions render notify.json --stage serverRegistered --payload server.json
  hostforge extensions render --definition notify.json --stage serverRegistered --payload server.json --strict -o json
  hostforge extensions render --config /etc/hostforge/lab1.yaml --stage serverCreateDNS --payload dns.json`,
		Args: cobra.ArbitraryArgs,
	}
	definitionFlag(cmd, &defs)
	cmd.Flags().StringVar(&stage, "stage", "", "stage to render, e.g. serverRegistered")
	cmd.Flags().StringVar(&payload, "payload", "", "payload file (JSON), - for standard input")
	cmd.Flags().BoolVar(&strict, "strict", false, "refuse undefined values in templates")
	configFlag(cmd, &config, "take the definitions directory (without --definition), the site's input values and the render budget and deadline from this config file's extensions: section")
	_ = cmd.MarkFlagRequired("stage")
	_ = cmd.MarkFlagRequired("payload")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		defs := definitionFiles(defs, args)
		var cfg *wiring.Config
		var xc *wiring.ExtensionsConfig
		var instances extensions.Instances
		if config != "" {
			var err error
			if cfg, err = loadExtensionsConfig(config); err != nil {
				return err
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
			err = inputErr("give definition files (as arguments or --definition FILE), or --config FILE with an extensions: section")
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

// loadExtensionsConfig loads --config for a command that reads its
// extensions: section; a config without one is refused.
func loadExtensionsConfig(config string) (*wiring.Config, error) {
	cfg, err := loadConfigFile(config)
	if err != nil {
		return nil, err
	}
	if cfg.Extensions == nil {
		return nil, inputErr("--config %s has no extensions: section", config)
	}
	return cfg, nil
}

// fireFlags are the runner settings of `extensions fire`: the flags, or
// the extensions: and vault: sections of --config.
type fireFlags struct {
	config, vault, knownHosts, caFile, runtime, assetCache, playbook string
}

func (f *fireFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	configFlag(cmd, &f.config, "take the definitions directory, the runners' settings and the vault from this config file's extensions: and vault: sections (flags override)")
	fl.StringVar(&f.vault, "vault", "", "YAML file vault holding the items tasks name (signingSecret, privateKeySecret); mode 0600")
	fl.StringVar(&f.knownHosts, "known-hosts", "", "known_hosts file SSH tasks' host keys are verified against")
	fl.StringVar(&f.caFile, "ca-file", "", "PEM certificates trusted besides the system's for webhooks and bundle URLs")
	fl.StringVar(&f.runtime, "container-runtime", "", "podman or docker: runs Ansible tasks that name an ee image")
	fl.StringVar(&f.assetCache, "asset-cache", "", "directory of unpacked Ansible bundles (default: the user's cache directory)")
	fl.StringVar(&f.playbook, "ansible-playbook", "", "the ansible-playbook program (default: the one in PATH)")
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
		Use:   "fire (FILE... | --definition FILE... | --dir DIR | --config FILE) --stage STAGE --payload FILE [--vault FILE]",
		Short: "Fire an event by hand: run every task bound to the stage, for real",
		Long: `Fire an event by hand: every task the definitions bind to the stage runs
for real — webhooks delivered, SSH commands run, playbooks played —
extensions by name and tasks in order, each under a delivery ID stable per
(event, extension, task). A failed task with failurePolicy "fail" stops its
extension's remaining tasks. Executions are recorded in --state, or the
ledger's database of --config; in memory without either.

--event-id is the ID the event's source gave it (without it, a new random
ID, printed). Firing an event ID again runs only what has not succeeded;
an SSH command or playbook whose run was interrupted is not run again
until --redeliver names it. The payload must carry the stage's object, or
nothing is contacted (exit 2). Secrets come from --vault; SSH host keys are
always verified against --known-hosts. --config supplies the definitions,
the runners' settings, the vault and extensions.instances. The README's
"Workflow extensions" says more; -o json rows are in docs/json.md.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled),
		Example: `  hostforge extensions fire notify.json --stage serverRegistered --payload server.json --vault vault.yaml -o json
  hostforge extensions fire --dir /etc/hostforge/extensions --stage switchCreateDNS --payload dns.json --known-hosts /etc/hostforge/known_hosts
  hostforge extensions fire --config /etc/hostforge/lab1.yaml --stage serverCreateDNS --payload dns.json --event-id dns-4711 --redeliver register-dns`,
		Args: cobra.ArbitraryArgs,
	}
	definitionFlag(cmd, &defs)
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
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		defs := definitionFiles(defs, args)
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
			return inputErr("give definition files (as arguments or --definition FILE), --dir DIR, or --config FILE with an extensions: section")
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
			return nil, nil, configRefused(err)
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
