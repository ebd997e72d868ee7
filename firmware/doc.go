// Package firmware keeps managed hosts at their firmware catalog's default
// versions: drift detection, the update manager's scheduling gates and the
// per-host update state machine. It is specified but not yet implemented.
package firmware
