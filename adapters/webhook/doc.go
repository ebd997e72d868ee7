// Package webhook delivers extension tasks of type ExtensionTaskWebhook
// (MetalSoft's HTTP task) over net/http with go-retryablehttp: the
// extensions.Runner of webhooks.
//
// # A delivery
//
// The rendered requestTemplate is sent as the body with the task's method
// to its endpoint, with its headers (Content-Type is application/json when
// the task sets none and the body is JSON). Redirects are not followed: a
// 3xx is an answer like any other. Success is a status in
// expectedResponseStatuses, or any 2xx when the task lists none.
//
// Every attempt carries the Standard Webhooks headers:
//
//	webhook-id         the delivery ID: stable per (event, extension, task),
//	                   the same on every retry and re-fire, for deduplication
//	webhook-timestamp  the attempt's Unix time in seconds
//	webhook-signature  "v1," + base64(HMAC-SHA256(key, id "." timestamp "." body)),
//	                   when the task's signingSecret names a vault item
//
// The key is the item's password field: after a "whsec_" prefix it is
// base64-decoded, as Standard Webhooks writes secrets, otherwise its bytes
// are used as they are. A key shorter than 8 characters is refused with
// SECRET_TOO_SHORT before anything is sent. Each attempt is signed with its
// own timestamp, so a receiver's replay window holds for retries too.
//
// # Time and retries
//
// timeout (seconds, default 30) bounds the whole delivery, every attempt
// and the pauses between them; the event's stage deadline bounds it too,
// whichever ends first. retries (default 0) adds attempts after a
// connection error, a 429 or a 5xx other than 501, pausing 1 s doubling to
// 30 s, or as long as the receiver's Retry-After says; a pause that would
// end past the deadline is not started, and the delivery fails at once
// saying so. Any other status outside the expected ones (4xx, 3xx, 501, a
// 2xx the task does not expect) is never retried: it fails with
// EXTENSION_WEBHOOK_REJECTED. A receiver still failing when retries or time
// run out fails with EXTENSION_WEBHOOK_UNAVAILABLE; one that does not
// answer in time, with EXTENSION_TASK_TIMEOUT.
//
// # TLS
//
// Certificates are verified against the system's roots plus an optional CA
// bundle (the config's extensions.ca_file); one that does not verify fails
// with EXTENSION_WEBHOOK_TLS_UNVERIFIED and is not retried. A task's
// insecureSkipVerify, which MetalSoft has, is honoured, and every such
// delivery logs a warning naming the extension and the task.
//
// # What is recorded
//
// The record of a delivery holds the method, the endpoint without its user
// information and query (which may carry tokens), the last status and the
// attempts made — the headline, which a failure's Error() is — and then
// its exchange: the request body and the response body, each capped at
// MaxRecorded bytes. The response is scrubbed of the signing secret and of
// the values of the task's credential headers (names containing auth,
// token, key, secret, password, cookie, signature or credential), which a
// receiver may echo. A task that receives secrets (extensions.Request's
// IncludesSecrets) keeps of both bodies only their SHA-256 and length. A
// failure carries the exchange in its Detail, which the record keeps and
// log lines leave out: header values, the signing secret and bodies are
// never logged.
package webhook
