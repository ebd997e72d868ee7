// Package extevents runs the sources of extension events that need a
// long-lived process — 'hostforge worker' (dispatch on Temporal) and
// 'hostforge extensions listen' (dispatch in process, on the state store):
//
//   - the endpoint of NetBox's event rules, POST /netbox/events ([Handler]):
//     a request proves itself by X-Hook-Signature, the hex HMAC-SHA512 of
//     the body under the webhook's secret (from the vault); an unsigned or
//     wrongly signed request is answered 401 and fires nothing. A signed
//     one is mapped by extensions.NetBoxEvents and its events handed to
//     the process's extensions.Submitter; 202 says they were accepted, 200
//     that nothing fires (with the reason), 400 a body that is not
//     NetBox's, 413 one over MaxBody, 503 a dispatch that did not take
//     them (NetBox's job then fails, visibly, and can be requeued);
//   - the Ironic projection's deploy watcher (extensions.DeployWatcher),
//     given the same Submitter.
//
// [Start] serves the endpoint over TLS only (the agent server's settings:
// a certificate and key, TLS 1.2 or later) and hands the watcher its
// submitter; [Local] is the in-process Submitter: one dispatch at a time,
// in order, on the dispatcher's local runtime, and an occurrence already
// queued or running is not queued twice.
package extevents
