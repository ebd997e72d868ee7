// Package extensionsfake holds in-memory implementations of the extensions
// package's interfaces: Store, which passes the same contract suite
// (extensionstest) as the SQL store, and Runner, a recording task runner
// with scriptable outcomes.
package extensionsfake
