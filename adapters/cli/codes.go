package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
)

// codeJSON is one failure code in -o json.
type codeJSON struct {
	Code      string `json:"code"`
	Phase     string `json:"phase"`
	Owner     string `json:"owner"`
	Retryable bool   `json:"retryable"`
	Action    string `json:"action"`
	ExitCode  int    `json:"exit_code"`
}

func (a *app) failureCodesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "failure-codes [CODE...]",
		Short: "List the failure codes: phase, owner, retryable, operator action",
		Long: `List every failure code this binary can report, with the phase that raises
it, the owner who acts on it, whether a rerun can succeed, the operator's next
action and the exit code it gives. With CODE arguments, only those codes.`,
		Example: `  hostforge failure-codes
  hostforge failure-codes INSPECTION_CABLING_MISMATCH
  hostforge failure-codes -o json`,
	}
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		specs := hostforge.Codes()
		if len(args) > 0 {
			specs = specs[:0:0]
			for _, code := range args {
				s, ok := hostforge.Lookup(code)
				if !ok {
					return inputErr("failure code %q is not declared by any package of this binary", code)
				}
				specs = append(specs, s)
			}
		}
		rows := make([]codeJSON, 0, len(specs))
		for _, s := range specs {
			rows = append(rows, codeJSON{Code: s.Code, Phase: s.Phase, Owner: string(s.Owner), Retryable: s.Retryable, Action: s.Action,
				ExitCode: exitCodeOf(&hostforge.Failure{Spec: s})})
		}
		w := cmd.OutOrStdout()
		if *out == formatJSON {
			return writeJSON(w, rows)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CODE\tPHASE\tOWNER\tRETRYABLE\tEXIT")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.Code, r.Phase, r.Owner, yesNo(r.Retryable), r.ExitCode)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(args) > 0 {
			for _, r := range rows {
				fmt.Fprintf(w, "\n%s\n  action: %s\n", r.Code, r.Action)
			}
		}
		return nil
	}
	return cmd
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
