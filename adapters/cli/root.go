package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
)

// Streams are the command's standard streams.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Terminal says Out is an interactive terminal: progress is then a
	// live area redrawn in place instead of a line per event.
	Terminal bool
	// Size reports the terminal's columns and rows (0, 0 when unknown:
	// 80×24 is assumed). Read when the view starts and on every Resized.
	Size func() (cols, rows int)
	// Resized receives a value whenever the terminal's size changes
	// (SIGWINCH); nil when it never does.
	Resized <-chan struct{}
}

// Env looks up an environment variable. Secrets (NetBox token, BMC password)
// are read through it and never from flags.
type Env func(key string) (string, bool)

// app is what every command shares.
type app struct {
	streams Streams
	env     Env
	// secrets is the process's set of secret values: the systems a command
	// wires register what they read and send, and every byte the command
	// writes to its streams — text, -o json, logs — is scrubbed of them.
	secrets *hostforge.Secrets
	// stopGrace is how long the running command has, once interrupted, to
	// stop on its own (nanoseconds; 0: DefaultStopGrace). A command that
	// promises more (the worker's --stop-timeout) raises it.
	stopGrace atomic.Int64
	// live is the progress area on the terminal while one is shown: log
	// lines go above it.
	live atomic.Pointer[liveArea]
	// logFile is --log-file, opened once.
	logMu   sync.Mutex
	logFile *os.File
}

// DefaultStopGrace is how long an interrupted command has to stop on its
// own before Run gives up on it and returns ExitCancelled: every command
// watches its context, so this only ends one stuck in something that does
// not (a library call, a runaway computation).
const DefaultStopGrace = 750 * time.Millisecond

// grace is the interrupted command's time to stop.
func (a *app) grace() time.Duration {
	if g := time.Duration(a.stopGrace.Load()); g > 0 {
		return g
	}
	return DefaultStopGrace
}

func (a *app) getenv(key string) string {
	if a.env == nil {
		return ""
	}
	v, _ := a.env(key)
	return v
}

// NewRoot builds the hostforge command tree on the given streams and
// environment. Run it with Run to get the process exit code.
func NewRoot(s Streams, env Env) *cobra.Command {
	root, _ := newRoot(s, env)
	return root
}

func newRoot(s Streams, env Env) (*cobra.Command, *app) {
	if s.In == nil {
		s.In = strings.NewReader("")
	}
	if s.Out == nil {
		s.Out = io.Discard
	}
	if s.Err == nil {
		s.Err = io.Discard
	}
	secrets := hostforge.NewSecrets()
	s.Out, s.Err = secrets.Writer(s.Out), secrets.Writer(s.Err)
	a := &app{streams: s, env: env, secrets: secrets}
	root := &cobra.Command{
		Use:   "hostforge",
		Short: "Enrol NetBox-registered servers into OpenStack Ironic, and the offline tools around it",
		Long: `hostforge turns a racked, NetBox-registered server into a schedulable Ironic
node: DHCP, BMC over Redfish, Ironic enrolment, inspection verified against
NetBox, cleaning. Its offline tools resolve platform classes, verify saved
inspection inventories, decode LLDP and detect BMC vendors.

` + exitCodeHelp,
		Example: `  hostforge enroll --demo gpu-r1-u02 cpu-r1-u10
  hostforge platform-class resolve --manufacturer Lenovo --model "HG635N V2" --gpu-type GB300 --device-class GPU_COMPUTE --ztp ztp.json
  hostforge failure-codes -o json`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })
	// One command per line, so commands added side by side merge cleanly.
	root.AddCommand(a.enrollCmd())
	root.AddCommand(a.retireCmd())
	root.AddCommand(a.workerCmd())
	root.AddCommand(a.labCmd())
	root.AddCommand(a.platformClassCmd())
	root.AddCommand(a.ledgerCmd())
	root.AddCommand(a.verifyCmd())
	root.AddCommand(a.lldpCmd())
	root.AddCommand(a.bmcCmd())
	root.AddCommand(a.firmwareCmd())
	root.AddCommand(a.scoutCmd())
	root.AddCommand(a.extensionsCmd())
	root.AddCommand(a.failureCodesCmd())
	root.AddCommand(a.versionCmd())
	root.AddCommand(a.configCmd())
	builtinCommands(root)
	installChecks(root)
	return root, a
}

// builtinCommands adds cobra's help and completion commands now, rather
// than when the tree first runs, so they carry examples like every other
// command.
func builtinCommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  hostforge help enroll\n  hostforge help firmware drift"
		case "completion":
			c.Example = "  hostforge completion bash > /etc/bash_completion.d/hostforge\n  hostforge completion zsh > \"${fpath[1]}/_hostforge\""
			for _, sh := range c.Commands() {
				sh.Example = fmt.Sprintf("  hostforge completion %[1]s > hostforge.%[1]s\n  hostforge completion %[1]s --no-descriptions > hostforge.%[1]s", sh.Name())
			}
		}
	}
}

// Run executes the command tree with args (without the program name) and
// returns the process exit code. Errors are written to the error stream as
// one line, followed by the operator's next action.
//
// ctx ending is an interrupt (cmd/hostforge cancels it on SIGINT and
// SIGTERM): the command stops and reports, and the code is ExitCancelled.
// A command that has not returned DefaultStopGrace after the interrupt
// (the worker: its --stop-timeout and a second) is left behind: Run
// reports the interrupt and returns ExitCancelled, for the process to
// exit with, so no command outlives an operator's interrupt.
func Run(ctx context.Context, args []string, s Streams, env Env) int {
	root, a := newRoot(s, env)
	root.SetArgs(args)
	done := make(chan int, 1)
	go func() {
		cmd, err := root.ExecuteContextC(ctx)
		code := ExitOK
		if err != nil {
			if cmd == nil {
				cmd = root
			}
			code = report(root.ErrOrStderr(), cmd, err)
		}
		a.closeLog()
		done <- code
	}()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	grace := time.NewTimer(a.grace())
	defer grace.Stop()
	select {
	case code := <-done:
		return code
	case <-grace.C:
		return report(root.ErrOrStderr(), root, hostforge.Cancelled.New("interrupted: the command did not stop within %s, so it was abandoned", a.grace()))
	}
}

// report prints err and returns its exit code.
func report(w io.Writer, cmd *cobra.Command, err error) int {
	var done *exitStatus
	if errors.As(err, &done) {
		// The command already printed its outcome.
		return done.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "error: %s\n", oneLine(ue.err.Error()))
		if f, ok := hostforge.AsFailure(ue.err); ok {
			fmt.Fprintf(w, "action: %s\n", f.Action)
		} else {
			fmt.Fprintf(w, "action: see '%s --help'\n", cmd.CommandPath())
		}
		return ExitUsage
	}
	if isCobraUsage(err) {
		if msg, ok := flagGroupMessage(err.Error()); ok {
			err = errors.New(msg)
		}
		fmt.Fprintf(w, "error: %s\n", oneLine(err.Error()))
		fmt.Fprintf(w, "action: see '%s --help'\n", cmd.CommandPath())
		return ExitUsage
	}
	_, f, _ := hostforge.Classify(err)
	fmt.Fprintf(w, "error: %s\n", oneLine(f.Error()))
	fmt.Fprintf(w, "action: %s\n", f.Action)
	return exitCodeOf(f)
}

// isCobraUsage recognises the errors cobra itself returns for a command
// line it cannot parse (unknown command, wrong number of arguments).
func isCobraUsage(err error) bool {
	if _, ok := hostforge.AsFailure(err); ok {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "required flag", "if any flags in the group", "at least one of the flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// cobraGroup matches cobra's refusals of a flag group's rule (a command
// marked with cobra's MarkFlags* instead of exclusive).
var cobraGroup = regexp.MustCompile(`^(?:if any flags in the group \[([^\]]*)\] are set (none of the others can be|they must all be set)|at least one of the flags in the group \[([^\]]*)\] is required)`)

// flagGroupMessage says cobra's flag-group refusal in hostforge's words.
func flagGroupMessage(msg string) (string, bool) {
	m := cobraGroup.FindStringSubmatch(msg)
	if m == nil {
		return "", false
	}
	flags := func(list string) string {
		var fs []string
		for _, f := range strings.Fields(list) {
			fs = append(fs, "--"+f)
		}
		return joinAnd(fs)
	}
	switch {
	case m[3] != "":
		return "give one of " + strings.Replace(flags(m[3]), " and ", " or ", 1), true
	case m[2] == "none of the others can be":
		return flags(m[1]) + " cannot be given together: give one", true
	default:
		return flags(m[1]) + " go together: give all of them or none", true
	}
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
