package cli

import (
	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/wiring"
)

// Exit codes. A run over several hosts exits with the code of the most
// urgent failure, in the order ExitBug, ExitInfra, ExitFleetManager,
// ExitOnSite, ExitTenant, ExitCancelled.
const (
	// ExitOK: every host enrolled, every check passed.
	ExitOK = 0
	// ExitUsage: bad command line, config file or input file; nothing ran.
	ExitUsage = 2
	// ExitOnSite: a failure the on-site team acts on (owner DC_OPS):
	// cabling, optics, hardware, a BMC that does not answer.
	ExitOnSite = 3
	// ExitInfra: a failure the infrastructure or network engineers act on
	// (owner INFRA_ENG or NETWORK): NetBox data, routing, site settings,
	// DHCP server, vault.
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

// exitCodeHelp documents the exit codes in every command's help.
const exitCodeHelp = `Exit codes:
  0  success: every host enrolled, every check passed
  2  bad usage: command line, config file or input file (nothing was run)
  3  on-site failure (owner DC_OPS): cabling, optics, hardware, BMC on site
  4  infrastructure failure (owner INFRA_ENG or NETWORK): NetBox data,
     routing, site settings, DHCP server, vault, Ironic
  5  fleet manager failure (owner FLEET_MANAGER)
  6  hostforge bug (UNCLASSIFIED or owner SDK): file a bug with the logs
  7  cancelled: interrupted or past its deadline; rerun when ready
  8  tenant failure (owner TENANT): the host still runs a tenant's workload
With several hosts, the code is the first of 6, 4, 5, 3, 8, 7 that applies.`

// Failure codes of the command line itself: bad input never reaches a phase.
var (
	// InputInvalid is a flag value or input file the command cannot use.
	InputInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "CLI_INPUT_INVALID",
		Phase:     "cli",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the flag or input file the message names (see the command's --help), then run the command again. Nothing was changed.",
	})
	// ConfigInvalid is a config file that cannot be used; the message names
	// the key and its line. It is the wiring's code: the worker and every
	// command read the same file.
	ConfigInvalid = wiring.ConfigInvalid
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
	case InputInvalid.Code, ConfigInvalid.Code:
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

// inputErr is a CLI_INPUT_INVALID failure for a flag or file.
func inputErr(format string, args ...any) error {
	return usageErr(InputInvalid.New(format, args...))
}
