package cli

import (
	"fmt"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/wiring"
)

// Exit codes. A run over several hosts exits with the code of the most
// urgent failure, in the order ExitBug, ExitInfra, ExitFleetManager,
// ExitOnSite, ExitTenant, ExitCancelled. docs/exit-codes.md lists them (a
// test keeps it in step with exitCodeTable).
const (
	// ExitOK: every host enrolled, every check passed.
	ExitOK = 0
	// ExitUsage: a bad flag, flag value, argument, config file or input
	// file, found before anything was contacted; nothing ran.
	ExitUsage = 2
	// ExitOnSite: a host's failure the on-site team acts on (owner
	// DC_OPS): cabling, optics, hardware, a BMC that does not answer.
	ExitOnSite = 3
	// ExitInfra: a host's failure the infrastructure or network engineers
	// act on (owner INFRA_ENG or NETWORK): NetBox data, routing, site
	// settings, DHCP server, vault, Ironic, a BMC the site does not trust;
	// or a system the command needs that does not answer.
	ExitInfra = 4
	// ExitFleetManager: a failure of the fleet inventory service (owner
	// FLEET_MANAGER).
	ExitFleetManager = 5
	// ExitBug: a defect in hostforge or an adapter (UNCLASSIFIED, or any
	// failure owned by SDK such as NOT_IMPLEMENTED): file a bug.
	ExitBug = 6
	// ExitCancelled: the run was interrupted or hit its deadline (CANCELLED).
	ExitCancelled = 7
	// ExitTenant: a failure the tenant team acts on (owner TENANT): a host
	// still holding its workload is not retired.
	ExitTenant = 8
)

// exitCodeTable describes each exit code: text for docs/exit-codes.md,
// short for a command's help (one line each).
var exitCodeTable = []struct {
	code        int
	text, short string
}{
	{ExitOK, "success: every host enrolled, every check passed", "success"},
	{ExitUsage, "bad usage: a flag, flag value, argument, config file or input file; found before anything was contacted, nothing ran",
		"bad flag, argument, config or input file; nothing ran"},
	{ExitOnSite, "a host's on-site failure (owner DC_OPS): cabling, optics, hardware, a BMC that does not answer",
		"on-site failure (DC_OPS): cabling, optics, hardware, BMC"},
	{ExitInfra, "a host's infrastructure failure (owner INFRA_ENG or NETWORK): NetBox data, routing, site settings, DHCP server, vault, Ironic, BMC trust; or a system the command needs does not answer",
		"infrastructure failure (INFRA_ENG, NETWORK), or a system is down"},
	{ExitFleetManager, "fleet manager failure (owner FLEET_MANAGER)", "fleet manager failure (FLEET_MANAGER)"},
	{ExitBug, "hostforge bug (UNCLASSIFIED or owner SDK): file a bug with the logs", "hostforge bug: file it with the logs"},
	{ExitCancelled, "cancelled: interrupted or past its deadline; rerun when ready", "cancelled: interrupted or past its deadline"},
	{ExitTenant, "a host's tenant failure (owner TENANT): the host still runs a tenant's workload; the tenant team releases it",
		"tenant failure (TENANT): the host still runs a workload"},
}

// severalHosts is the rule of a command that runs over several hosts.
const severalHosts = "With several hosts, the code is the first of 6, 4, 5, 3, 8, 7 that applies."

// exitCodes documents the exit codes a command can return, for its help:
// one line each (docs/exit-codes.md says more).
func exitCodes(codes ...int) string {
	var b strings.Builder
	b.WriteString("Exit codes:")
	several := false
	for _, c := range codes {
		if c == exitSeveralHosts {
			several = true
			continue
		}
		for _, e := range exitCodeTable {
			if e.code == c {
				fmt.Fprintf(&b, "\n  %d  %s", e.code, e.short)
			}
		}
	}
	if several {
		b.WriteString("\n" + severalHosts)
	}
	return b.String()
}

// exitSeveralHosts, among exitCodes' codes, adds the several-hosts rule.
const exitSeveralHosts = -1

// exitCodeHelp documents every exit code (the root command's help).
var exitCodeHelp = exitCodes(ExitOK, ExitUsage, ExitOnSite, ExitInfra, ExitFleetManager, ExitBug, ExitCancelled, ExitTenant, exitSeveralHosts)

// Failure codes of the command line itself: bad input never reaches a phase.
var (
	// InputInvalid is a flag value or argument the command cannot use.
	InputInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "CLI_INPUT_INVALID",
		Phase:     "cli",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the flag, flag value or argument the message names (see the command's --help), then run the command again. Nothing was contacted or changed.",
	})
	// InputFileInvalid is an input file of an offline command (an
	// inventory, an expectations file, a ztp block, a catalog, a payload, a
	// CA bundle) that cannot be read or is not what the command reads.
	InputFileInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "INPUT_INVALID",
		Phase:     "cli",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The input file the message names cannot be read or is not what the command reads (the message says which and why): fix the file or name the right one (its format is in the command's --help), then run the command again. Nothing was contacted or changed.",
	})
	// ConfigInvalid is a config file that cannot be used; the message names
	// the key and its line. It is the wiring's code: the worker and every
	// command read the same file.
	ConfigInvalid = wiring.ConfigInvalid
	// ConfigUnreadable is a --config file that cannot be read at all.
	ConfigUnreadable = wiring.ConfigUnreadable
)

// exitCodeOf maps a failure to its exit code.
func exitCodeOf(f *hostforge.Failure) int {
	if f == nil {
		return ExitOK
	}
	switch f.Code {
	case hostforge.Unclassified.Code:
		return ExitBug
	case hostforge.Cancelled.Code:
		return ExitCancelled
	case InputInvalid.Code, InputFileInvalid.Code, ConfigInvalid.Code, ConfigUnreadable.Code, LabNotRunning.Code:
		return ExitUsage
	}
	switch f.Owner {
	case hostforge.OwnerDCOps:
		return ExitOnSite
	case hostforge.OwnerFleetManager:
		return ExitFleetManager
	case hostforge.OwnerSDK:
		return ExitBug
	case hostforge.OwnerTenant:
		return ExitTenant
	default:
		return ExitInfra
	}
}

// urgency orders exit codes for a run over several hosts.
var urgency = map[int]int{ExitBug: 7, ExitInfra: 6, ExitFleetManager: 5, ExitOnSite: 4, ExitTenant: 3, ExitCancelled: 2}

// worst returns the most urgent of the failures' exit codes, ExitOK when
// there are none.
func worst(fs []*hostforge.Failure) int {
	code := ExitOK
	for _, f := range fs {
		c := exitCodeOf(f)
		if urgency[c] > urgency[code] {
			code = c
		}
	}
	return code
}

// exitStatus ends a command that already printed its outcome with code.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return "exit status" }

// exitWith returns nil for ExitOK and an exitStatus otherwise.
func exitWith(code int) error {
	if code == ExitOK {
		return nil
	}
	return &exitStatus{code: code}
}

// usageError is a bad command line or input: exit code ExitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErr(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

// inputErr is a CLI_INPUT_INVALID failure for a flag or argument.
func inputErr(format string, args ...any) error {
	return usageErr(InputInvalid.New(format, args...))
}

// inputFileErr is an INPUT_INVALID failure for an input file.
func inputFileErr(format string, args ...any) error {
	return usageErr(InputFileInvalid.New(format, args...))
}
