// Package hostforge holds the vocabulary every other hostforge package shares:
// classified failures, the owners who act on them, and waits.
//
// A step of the enrollment workflow has exactly three outcomes, never mixed:
//
//   - done: it returns nil;
//   - wait: it returns a *Wait ("run this same idempotent attempt again after
//     D"), because a node is locked, a BMC is busy or a state is not yet
//     stable. The step never sleeps; the orchestrator does (durably under
//     Temporal, on an injected clock in tests);
//   - failed: it returns a *Failure with a code, the phase it was raised in,
//     the owner who acts on it, whether a rerun can succeed, and the operator's
//     next action.
//
// Any other error leaving a step is a bug in hostforge or in an adapter.
// [Classify] reports such an error as an UNCLASSIFIED failure owned by the SDK
// so that it is never silently retried forever: under Temporal an unclassified
// error would leave the job RUNNING with nothing for an operator to act on.
//
// Codes are declared once, with [Declare], next to the code that raises them.
// The catalogue in docs/failure-codes.md is generated from those declarations
// (go generate ./...), and a test fails when it is stale.
package hostforge

//go:generate go run ./internal/cmd/failuredocs -root . -out docs/failure-codes.md
//go:generate go run ./internal/cmd/configdocs -doc docs/config.md -example examples/config/site.yaml
