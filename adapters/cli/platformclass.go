package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/platformclass"
)

func (a *app) platformClassCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "platform-class",
		Short: "Resolve and backfill platform classes (<GPUTYPE>_<DEVICETYPE>_<FABRICTYPE>_<NN>)",
		Example: `  hostforge platform-class resolve --manufacturer Dell --model "PowerEdge R7615" --device-class CPU_BAREMETAL
  hostforge platform-class backfill --config lab1.yaml --apply --device gpu-r1-u02`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: resolve or backfill"))
		},
	}
	cmd.AddCommand(a.resolveCmd(), a.backfillCmd())
	return cmd
}

// failureJSON is a failure in -o json output.
type failureJSON struct {
	Code      string `json:"code"`
	Phase     string `json:"phase"`
	Owner     string `json:"owner"`
	Retryable bool   `json:"retryable"`
	Message   string `json:"message"`
	Action    string `json:"action"`
}

func failureOut(f *hostforge.Failure) *failureJSON {
	if f == nil {
		return nil
	}
	msg := f.Message
	if f.Cause != nil {
		msg += ": " + f.Cause.Error()
	}
	return &failureJSON{Code: f.Code, Phase: f.Phase, Owner: string(f.Owner), Retryable: f.Retryable, Message: msg, Action: f.Action}
}

// printFailure writes a failure as one line and its action.
func printFailure(w io.Writer, f *hostforge.Failure) {
	fmt.Fprintf(w, "error: %s\n", oneLine(f.Error()))
	fmt.Fprintf(w, "action: %s\n", f.Action)
}

type resolveJSON struct {
	Inputs  inputsJSON   `json:"inputs"`
	Key     string       `json:"key,omitempty"`
	Failure *failureJSON `json:"failure,omitempty"`
}

// inputsJSON is platformclass.Inputs in -o json.
type inputsJSON struct {
	Device       string `json:"device"`
	DeviceClass  string `json:"device_class"`
	Manufacturer string `json:"manufacturer"`
	Model        string `json:"model"`
	GPUType      string `json:"gpu_type"`
	HasZTP       bool   `json:"has_ztp"`
	ZTP          any    `json:"ztp,omitempty"`
}

func (a *app) resolveCmd() *cobra.Command {
	var in platformclass.Inputs
	var ztp string
	cmd := &cobra.Command{
		Use:   "resolve",
		Short: "Resolve a platform class key from explicit inputs",
		Long: `Resolve a platform class key from the inputs NetBox would give the
enrollment (phase 0b), without reading or writing any system. Prints the key,
or the failure code and the operator action.

--ztp names a file holding the device's config_context.ztp block (JSON or
YAML; - reads standard input). Leave it out when the device has no ztp block:
a GPU device without one resolves NORDMA. The ztp block of a CPU baremetal or
hypervisor device is never read.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug),
		Example: `  hostforge platform-class resolve --manufacturer Lenovo --model "HG635N V2" \
      --gpu-type GB300 --device-class GPU_COMPUTE --ztp ztp.json
  echo '{"infiniband": {"rails": 8}}' | hostforge platform-class resolve \
      --manufacturer Lenovo --model "HG635N V2" --gpu-type GB300 --device-class GPU_COMPUTE --ztp -
  hostforge platform-class resolve --manufacturer Dell --model "PowerEdge R7615" --device-class CPU_BAREMETAL -o json`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&in.Manufacturer, "manufacturer", "", "device type manufacturer name (NetBox)")
	f.StringVar(&in.Model, "model", "", "device type model (NetBox)")
	f.StringVar(&in.GPUType, "gpu-type", "", "device type custom field gpu_type (empty for no GPU)")
	f.StringVar(&in.DeviceClass, "device-class", "", "the role's device_class: GPU_COMPUTE, CPU_BAREMETAL or HYPERVISOR")
	f.StringVar(&ztp, "ztp", "", "file with the config_context.ztp block (JSON or YAML), - for standard input")
	f.StringVar(&in.Device, "device", "", "device name for messages (optional)")
	_ = cmd.MarkFlagRequired("manufacturer")
	_ = cmd.MarkFlagRequired("model")
	_ = cmd.MarkFlagRequired("device-class")
	_ = cmd.RegisterFlagCompletionFunc("device-class", cobra.FixedCompletions(
		[]string{platformclass.ClassGPUCompute, platformclass.ClassCPUBaremetal, platformclass.ClassHypervisor}, cobra.ShellCompDirectiveNoFileComp))
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		switch in.DeviceClass {
		case platformclass.ClassGPUCompute, platformclass.ClassCPUBaremetal, platformclass.ClassHypervisor:
		default:
			return inputErr("--device-class %q: want %s, %s or %s", in.DeviceClass, platformclass.ClassGPUCompute, platformclass.ClassCPUBaremetal, platformclass.ClassHypervisor)
		}
		if cmd.Flags().Changed("ztp") {
			v, err := readZTP(a.streams.In, ztp)
			if err != nil {
				return err
			}
			in.HasZTP, in.ZTP = true, v
		}
		if in.Device == "" {
			in.Device = "(cli)"
		}
		key, err := platformclass.Resolve(in)
		var fl *hostforge.Failure
		if err != nil {
			_, fl, _ = hostforge.Classify(err)
		}
		w := cmd.OutOrStdout()
		if *out == formatJSON {
			if err := writeJSON(w, resolveJSON{Inputs: inputsJSON(in), Key: key, Failure: failureOut(fl)}); err != nil {
				return err
			}
		} else if fl == nil {
			fmt.Fprintln(w, key)
		} else {
			printFailure(cmd.ErrOrStderr(), fl)
		}
		return exitWith(exitCodeOf(fl))
	}
	return cmd
}

// readZTP reads a ztp block from a file or standard input. JSON is YAML, so
// one decoder reads both.
func readZTP(stdin io.Reader, name string) (any, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, inputFileErr("--ztp %s: %v", name, err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, inputFileErr("--ztp %s: not JSON or YAML: %v", name, err)
	}
	return v, nil
}

type backfillJSON struct {
	Device    string       `json:"device"`
	Computed  string       `json:"computed,omitempty"`
	Effective string       `json:"effective,omitempty"`
	Divergent bool         `json:"divergent,omitempty"`
	NetBox    string       `json:"netbox_write"`
	Fleet     string       `json:"fleet_write"`
	Skipped   string       `json:"skipped,omitempty"`
	Failure   *failureJSON `json:"failure,omitempty"`
}

// backfillReportJSON is 'platform-class backfill -o json': one document
// for the whole run.
type backfillReportJSON struct {
	// Applied says the writes were made (--apply); without it each row
	// says what would be written.
	Applied bool           `json:"applied"`
	Devices []backfillJSON `json:"devices"`
}

func (a *app) backfillCmd() *cobra.Command {
	var dryRun, apply, demo bool
	var config string
	var devices []string
	cmd := &cobra.Command{
		Use:   "backfill [DEVICE...]",
		Short: "Record the platform class of devices in NetBox and the fleet manager",
		Long: `Run the platform-class resolver and write policy over the named devices
(--device NAME, repeatable, or as arguments), or over every device NetBox
lists when none is named. It is the correction path for hosts enrolled before
phase 0b existed, and after a wrong key was cleared in NetBox: it writes
custom_fields.platform_class only when it is empty, never overwrites a
populated value (a divergent one is kept and reported), and then sets the
fleet manager's value (the ledger: section) to the effective one if it
differs. A rerun on unchanged devices writes nothing.

It is a dry run unless --apply is given: it reads everything and writes
nothing, and each row says what would be written. One device's failure does
not stop the others.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitFleetManager, ExitBug, ExitCancelled, exitSeveralHosts),
		Example: `  hostforge platform-class backfill --config lab1.yaml
  hostforge platform-class backfill --config lab1.yaml --apply --device gpu-r1-u02
  hostforge platform-class backfill --demo --apply -o json`,
	}
	cmd.Flags().BoolVar(&apply, "apply", false, "write to NetBox and the fleet manager (without it, a dry run)")
	// --dry-run was the default's own flag: it goes in the next release.
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "deprecated: without --apply nothing is written")
	_ = cmd.Flags().MarkHidden("dry-run")
	cmd.Flags().StringArrayVar(&devices, "device", nil, "a device to backfill (repeatable); every device NetBox lists when none is named")
	cmd.Flags().BoolVar(&demo, "demo", false, "run against the built-in fake demo rack instead of real systems")
	cmd.Flags().StringVar(&config, "config", "", "config file naming the real systems (docs/config.md)")
	exclusive(cmd, "--apply writes to NetBox and the fleet manager, --dry-run (deprecated: the default) writes nothing; give --apply to write, neither to read only", "apply", "dry-run")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		if cmd.Flags().Changed("dry-run") {
			fmt.Fprintln(a.streams.Err, "warning: --dry-run is deprecated and goes in the next release; leave it out (without --apply nothing is written)")
		}
		names := append(append([]string(nil), devices...), args...)
		if dup := duplicate(names); dup != "" {
			return inputErr("device %s is named twice", dup)
		}
		sys, err := a.systems(cmd, demo, config)
		if err != nil {
			return err
		}
		defer sys.close()
		entries, err := backfill(cmd.Context(), sys, names, !apply)
		if err != nil {
			return err
		}
		return printBackfill(cmd, *out, !apply, entries)
	}
	return cmd
}

// backfill runs the platform-class backfill over the systems.
func backfill(ctx context.Context, sys *systems, names []string, dryRun bool) ([]enrollment.BackfillEntry, error) {
	if sys.lister == nil || sys.fleet == nil {
		return nil, inputErr("platform-class backfill needs a NetBox that lists devices and a fleet manager: add the ledger: section to the config")
	}
	return enrollment.Backfill(ctx, sys.netbox, sys.lister, sys.fleet, names, dryRun, sys.log)
}

func printBackfill(cmd *cobra.Command, format string, dryRun bool, entries []enrollment.BackfillEntry) error {
	w := cmd.OutOrStdout()
	verb := func(write bool) string {
		switch {
		case !write:
			return "-"
		case dryRun:
			return "would write"
		}
		return "written"
	}
	var failures []*hostforge.Failure
	rows := make([]backfillJSON, 0, len(entries))
	for _, e := range entries {
		r := backfillJSON{Device: e.Device, Computed: e.Result.Computed, Effective: e.Result.Effective, Divergent: e.Result.Divergent,
			NetBox: verb(e.Result.NetBoxWrite), Fleet: verb(e.Result.FleetWrite), Skipped: e.Skipped, Failure: failureOut(e.Failure)}
		if e.Failure != nil || e.Skipped != "" {
			r.NetBox, r.Fleet = "-", "-"
			failures = append(failures, e.Failure)
		}
		rows = append(rows, r)
	}
	if format == formatJSON {
		if err := writeJSON(w, backfillReportJSON{Applied: !dryRun, Devices: rows}); err != nil {
			return err
		}
		return exitWith(worst(failures))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tPLATFORM CLASS\tNETBOX\tFLEET MANAGER\tNOTE")
	for _, r := range rows {
		key, note := r.Effective, ""
		switch {
		case r.Failure != nil:
			key, note = "-", r.Failure.Code
		case r.Skipped != "":
			note = "skipped: " + r.Skipped
		case r.Divergent:
			note = "NetBox value kept; computed " + r.Computed
		}
		if key == "" {
			key = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Device, key, r.NetBox, r.Fleet, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printActions(w, rows)
	return exitWith(worst(failures))
}

func printActions(w io.Writer, rows []backfillJSON) {
	first := true
	for _, r := range rows {
		if r.Failure == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nOperator actions:")
			first = false
		}
		fmt.Fprintf(w, "  %s — %s: %s\n      next: %s\n", r.Device, r.Failure.Code, oneLine(r.Failure.Message), r.Failure.Action)
	}
}
