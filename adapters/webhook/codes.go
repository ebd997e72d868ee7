package webhook

import "github.com/hostforge/hostforge"

// Failures of webhook deliveries. A task whose signing secret cannot be
// read fails with extensions.SecretUnavailable, and one that runs out of
// time with extensions.TaskTimeout.
var (
	// Rejected: the receiver answered with a status outside the task's
	// expected statuses that is not worth retrying (4xx, 3xx, 501, or a
	// 2xx the task does not expect).
	Rejected = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_WEBHOOK_REJECTED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The webhook receiver answered with a status outside the task's expectedResponseStatuses (the message gives the status and the start of the response body). Fix the request (the requestTemplate, headers, endpoint) or the receiver, or widen expectedResponseStatuses, then fire the event again: the delivery ID stays the same, so the receiver can deduplicate.",
	})
	// Unavailable: the receiver could not be reached, or still answered
	// 429 or 5xx when the task's retries or time ran out.
	Unavailable = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_WEBHOOK_UNAVAILABLE",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The webhook receiver could not be reached, or was still overloaded or failing (429 or 5xx) after the task's retries (the message gives the last error or status and the attempts made). Check the receiver and the network path to it, then fire the event again; the delivery ID stays the same. Consider the task's retries option.",
	})
	// TLSUnverified: the receiver's certificate did not verify.
	TLSUnverified = hostforge.Declare(hostforge.Spec{
		Code:      "EXTENSION_WEBHOOK_TLS_UNVERIFIED",
		Phase:     "extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The webhook receiver's TLS certificate did not verify (the message says why: unknown authority, wrong host name, expired). Trust the CA that signed it with extensions.ca_file in the config (or --ca-file of 'extensions fire'), or fix the receiver's certificate. Nothing was sent.",
	})
)
