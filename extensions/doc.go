// Package extensions fires operator-defined tasks on lifecycle events
// (workflow extensions). It is specified but not yet implemented.
package extensions
