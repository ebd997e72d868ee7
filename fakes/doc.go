// Package fakes is a coherent, in-memory fake world for hostforge: a Site
// with NetBox (devices, device types, roles, interfaces, cables, switches,
// config contexts, custom fields, tags), a fleet manager and a vault — and,
// as the phases land, BMCs, Ironic and a DHCP server — that agree with one
// another, so a correctly cabled host verifies and a miscabled one fails.
//
// Every fake:
//   - is safe for concurrent use;
//   - counts its calls per system, split into reads and writes
//     ([Site.Calls]), so tests and benchmarks can assert that a rerun on a
//     converged host performs no writes;
//   - fails the way real systems do, in three kinds: the next N calls of an
//     operation fail before any effect ([Site.Inject]); take effect and then
//     fail, the answer lost ([Site.InjectLost]); or belong to a step attempt
//     whose worker dies after N of its writes took effect ([WithCrash]);
//   - runs on the Site's fake clock.
//
// Fakes import only the vocabulary and layer-1 packages, never the workflow,
// and pass the same contract suites as the real adapters.
package fakes
