// Package extensionsfake holds in-memory implementations of the extensions
// package's interfaces: Store, which passes the same contract suite
// (extensionstest) as the SQL store; Runner, a recording task runner with
// scriptable outcomes; and Servers, the source of the serverRegistered
// event (device intents and node inventories).
package extensionsfake
