package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// One flag vocabulary across the commands: a machine is --machine
// (repeatable), definitions are --definition (repeatable) or arguments,
// writes need --apply, and every command that runs something takes
// --log-level, --log-file and -o. Old spellings stay one release as
// hidden aliases that say, on the error stream, what replaces them.

// machineFlag adds --machine, repeatable, to a command that names
// machines.
func machineFlag(cmd *cobra.Command, machines *[]string, usage string) {
	cmd.Flags().StringArrayVar(machines, "machine", nil, usage)
}

// configFlag adds --config, a config file whose completion offers the
// YAML files.
func configFlag(cmd *cobra.Command, p *string, usage string) {
	cmd.Flags().StringVar(p, "config", "", usage)
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
}

// oneMachine is the one machine of a command that acts on exactly one:
// --machine given twice is refused, since the command's answer is about
// one machine.
func oneMachine(cmd *cobra.Command, machines []string) (string, error) {
	switch {
	case len(machines) == 0 || len(machines) == 1 && strings.TrimSpace(machines[0]) == "":
		return "", inputErr("--machine is required: the machine ID")
	case len(machines) > 1:
		return "", inputErr("--machine is given %d times (%s): '%s' acts on one machine; run it once per machine", len(machines), strings.Join(machines, ", "), cmd.CommandPath())
	}
	return machines[0], nil
}

// deprecatedAlias keeps old, a former spelling of the flag now, working
// for one more release: hidden from the help, it sets now and prints one
// line on the error stream naming the replacement. split, when not nil,
// turns one value of old into several of now (a comma-separated list of a
// former slice flag).
func (a *app) deprecatedAlias(cmd *cobra.Command, old, now string, split func(string) []string) {
	target := cmd.Flags().Lookup(now)
	if target == nil {
		panic(fmt.Sprintf("deprecatedAlias: %s has no flag --%s", cmd.CommandPath(), now))
	}
	v := &aliasValue{flags: cmd.Flags(), old: old, now: now, target: target, split: split, warn: a.streams.Err}
	f := cmd.Flags().VarPF(v, old, "", "deprecated: use --"+now)
	f.NoOptDefVal = target.NoOptDefVal
	f.Hidden = true
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[annotationAlias+old] = now
}

// annotationAlias marks a command's deprecated flag spelling (the value is
// the flag that replaces it).
const annotationAlias = "hostforge_alias_"

// aliasValue is a deprecated spelling of another flag.
type aliasValue struct {
	flags    *pflag.FlagSet
	old, now string
	target   *pflag.Flag
	split    func(string) []string
	warn     io.Writer
	once     sync.Once
}

func (v *aliasValue) String() string { return "" }
func (v *aliasValue) Type() string   { return v.target.Value.Type() }

// IsBoolFlag lets a deprecated boolean flag be given without a value.
func (v *aliasValue) IsBoolFlag() bool { return v.target.NoOptDefVal == "true" }

func (v *aliasValue) Set(s string) error {
	v.once.Do(func() {
		fmt.Fprintf(v.warn, "warning: --%s is deprecated and goes in the next release; use --%s\n", v.old, v.now)
	})
	vals := []string{s}
	if v.split != nil {
		vals = v.split(s)
	}
	for _, val := range vals {
		if err := v.flags.Set(v.now, val); err != nil {
			return err
		}
	}
	return nil
}

// splitComma reads a former comma-separated slice flag's value.
func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

// exclusive says which flags of cmd cannot be given together, and why in
// an operator's words: the refusal (exit 2, before anything runs) names
// the flags given and the reason.
func exclusive(cmd *cobra.Command, why string, flags ...string) {
	for _, f := range flags {
		if cmd.Flags().Lookup(f) == nil {
			panic(fmt.Sprintf("exclusive: %s has no flag --%s", cmd.CommandPath(), f))
		}
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[fmt.Sprintf("%s%d", annotationExclusive, len(cmd.Annotations))] = strings.Join(flags, " ") + "|" + why
}

// annotationExclusive marks a group of flags that exclude each other.
const annotationExclusive = "hostforge_exclusive_"

// checkExclusive refuses a command line that gives two flags of one
// exclusive group.
func checkExclusive(cmd *cobra.Command) error {
	keys := make([]string, 0, len(cmd.Annotations))
	for k := range cmd.Annotations {
		if strings.HasPrefix(k, annotationExclusive) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		flags, why, _ := strings.Cut(cmd.Annotations[k], "|")
		var given []string
		for _, f := range strings.Fields(flags) {
			if cmd.Flags().Changed(f) {
				given = append(given, "--"+f)
			}
		}
		if len(given) > 1 {
			return inputErr("%s cannot be given together: %s", joinAnd(given), why)
		}
	}
	return nil
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// runsSomething says a command does work of its own, so it takes
// --log-level, --log-file and -o: every runnable command except help,
// shell completion and the ones that print what is built into the binary.
func runsSomething(c *cobra.Command) bool {
	if !c.Runnable() || c.HasAvailableSubCommands() || c.Hidden {
		return false
	}
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == "completion" || p.Name() == "help" {
			return false
		}
	}
	return !builtinOnly[c.CommandPath()]
}

// builtinOnly are the commands that print only what is built into the
// binary (its version, its failure codes, a sample config): nothing to
// log. version and failure-codes still take -o.
var builtinOnly = map[string]bool{
	"hostforge version":        true,
	"hostforge failure-codes":  true,
	"hostforge config example": true,
}

// checkCommon checks what every command shares before it runs: the flag
// groups that exclude each other, --log-level and -o.
func checkCommon(cmd *cobra.Command, _ []string) error {
	if err := checkExclusive(cmd); err != nil {
		return err
	}
	if cmd.Flags().Lookup("log-level") != nil {
		if _, _, err := logLevel(cmd); err != nil {
			return err
		}
	}
	if f := cmd.Flags().Lookup("output"); f != nil {
		if err := checkOutput(f.Value.String()); err != nil {
			return err
		}
	}
	return nil
}

// installChecks gives every command of the tree the shared checks, run
// after its flags are parsed and before it does anything.
func installChecks(c *cobra.Command) {
	if c.Runnable() && c.PreRunE == nil && c.PreRun == nil {
		c.PreRunE = checkCommon
	}
	for _, sub := range c.Commands() {
		installChecks(sub)
	}
}
