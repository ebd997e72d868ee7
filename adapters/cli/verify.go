package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/verify"
)

// readInput reads a named file, or standard input for "-".
func (a *app) readInput(flag, name string) ([]byte, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(a.streams.In)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, inputFileErr("--%s %s: %v", flag, name, err)
	}
	return b, nil
}

// readInventory reads and parses an inventory file; an unreadable inventory
// is bad input here, not a failed inspection.
func (a *app) readInventory(name string) (verify.Inventory, error) {
	b, err := a.readInput("inventory", name)
	if err != nil {
		return verify.Inventory{}, err
	}
	inv, err := verify.ParseInventory(b)
	if err != nil {
		return verify.Inventory{}, fileErr("--inventory "+name, err)
	}
	return inv, nil
}

// fileErr is bad input from a file: INPUT_INVALID naming the flag and the
// file, with what the parser said. The parser's own code is not kept: its
// action is written for the system the data would have come from (an
// inventory "rerun with force_inspection=true"), not for a file an
// operator handed over.
func fileErr(what string, err error) error {
	if f, ok := hostforge.AsFailure(err); ok {
		msg := f.Message
		if f.Cause != nil {
			msg += ": " + f.Cause.Error()
		}
		return inputFileErr("%s: %s", what, msg)
	}
	return inputFileErr("%s: %v", what, err)
}

type verifyJSON struct {
	Device     string            `json:"device"`
	OK         bool              `json:"ok"`
	Mismatches []verify.Mismatch `json:"mismatches"`
	Failure    *failureJSON      `json:"failure,omitempty"`
}

func (a *app) verifyCmd() *cobra.Command {
	var inventory, expect string
	cmd := &cobra.Command{
		Use:   "verify --inventory FILE --expect FILE",
		Short: "Verify a saved inspection inventory against NetBox's expectations, offline",
		Long: `Check a saved Ironic node inventory (GET /v1/nodes/{node}/inventory) or
ironic-inspector introspection data against an expectations file, exactly as
the inspection half does (carrier, CPU, NICs, disks, memory, BIOS, GPUs, then
LLDP against the cables). Every mismatch is printed with the operator action.
Nothing is contacted.

The expectations file (JSON or YAML) is what NetBox's inspection_validation
config context and the frontend cables produce; the validation block's schema
is in the verify package documentation:

  device: cpu-r1-u10
  skip_cable_verification: false
  cables:                      # one per frontend interface, cabled or not
    - {interface: eth0, mac: "d4:04:e6:4f:71:28", switch: leaf-3, port: swp12}
    - {interface: eth1, mac: "d4:04:e6:4f:71:29"}      # uncabled in NetBox
  validation:                  # config_context.inspection_validation
    cpu: {architecture: x86_64, count: 32}
    memory: {physical_mb: 98304}
    bios: {allow: ["1.6.*"]}

Exit code 0 when every check passes; 3 (on site) on a cabling or hardware
mismatch; 2 when a file cannot be read.

` + exitCodes(ExitOK, ExitUsage, ExitOnSite, ExitInfra, ExitBug),
		Example: `  hostforge verify --inventory node-inventory.json --expect cpu-r1-u10.yaml
  openstack baremetal node inventory save cpu-r1-u10 | hostforge verify --inventory - --expect cpu-r1-u10.yaml -o json`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&inventory, "inventory", "", "inventory file (Ironic or ironic-inspector JSON), - for standard input")
	cmd.Flags().StringVar(&expect, "expect", "", "expectations file (JSON or YAML)")
	_ = cmd.MarkFlagRequired("inventory")
	_ = cmd.MarkFlagRequired("expect")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		if inventory == "-" && expect == "-" {
			return inputErr("--inventory and --expect cannot both read standard input")
		}
		inv, err := a.readInventory(inventory)
		if err != nil {
			return err
		}
		eb, err := a.readInput("expect", expect)
		if err != nil {
			return err
		}
		exp, err := verify.LoadExpectations(eb)
		if err != nil {
			return fileErr("--expect "+expect, err)
		}
		rep := verify.Check(inv, exp)
		_, fl, _ := hostforge.Classify(rep.Err())
		w := cmd.OutOrStdout()
		if *out == formatJSON {
			ms := jsonList(rep.Mismatches)
			if err := writeJSON(w, verifyJSON{Device: exp.Device, OK: rep.OK(), Mismatches: ms, Failure: failureOut(fl)}); err != nil {
				return err
			}
			return exitWith(exitCodeOf(fl))
		}
		name := exp.Device
		if name == "" {
			name = "the host"
		}
		if rep.OK() {
			fmt.Fprintf(w, "PASS: %s matches its expectations (%s)\n", name, checkedSummary(exp))
			return nil
		}
		fmt.Fprintf(w, "FAIL: %s: %d mismatch(es), %s (owner %s)\n\n", name, len(rep.Mismatches), fl.Code, fl.Owner)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CHECK\tSUBJECT\tEXPECTED\tOBSERVED")
		for _, m := range rep.Mismatches {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Check, m.Subject, dash(m.Expected), dash(m.Observed))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "\nOperator actions:")
		for _, m := range rep.Mismatches {
			fmt.Fprintf(w, "  %s %s: %s\n", m.Check, m.Subject, m.Action)
		}
		return exitWith(exitCodeOf(fl))
	}
	return cmd
}

// checkedSummary lists the checks the expectations ask for.
func checkedSummary(e verify.Expectations) string {
	parts := []string{"carrier"}
	if e.CPU != nil {
		parts = append(parts, "cpu")
	}
	if e.NICs != nil {
		parts = append(parts, "nics")
	}
	if e.Disks != nil {
		parts = append(parts, "disks")
	}
	if e.Memory != nil {
		parts = append(parts, "memory")
	}
	if e.BIOS != nil {
		parts = append(parts, "bios")
	}
	if e.CheckGPUs {
		parts = append(parts, "gpus")
	}
	if !e.SkipCableVerification {
		parts = append(parts, "lldp")
	}
	return "checked: " + strings.Join(parts, ", ")
}
