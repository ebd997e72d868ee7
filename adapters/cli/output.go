package cli

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// Output formats of -o.
const (
	formatText = "text"
	formatJSON = "json"
)

// outputFlag adds -o/--output to cmd and returns where its value lands.
func outputFlag(cmd *cobra.Command) *string {
	o := new(string)
	cmd.Flags().StringVarP(o, "output", "o", formatText, "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{formatText, formatJSON}, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// checkOutput refuses an unknown -o value.
func checkOutput(o string) error {
	switch o {
	case formatText, formatJSON:
		return nil
	}
	return inputErr("--output %q: want text or json", o)
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// jsonList is s, or an empty list when s is nil: a list in a JSON
// document is [] when it is empty, never null.
func jsonList[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// writeJSONLine writes v as one line of JSON.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
