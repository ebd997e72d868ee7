package extevents

import "github.com/hostforge/hostforge"

// Busy: the in-process dispatch queue is full, or closing.
var Busy = hostforge.Declare(hostforge.Spec{
	Code:      "EXTENSION_EVENTS_BUSY",
	Phase:     "extensions",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "'hostforge extensions listen' has more events waiting than it queues, or is stopping: the source was answered 503 and nothing was fired. Let the queue drain (see 'hostforge extensions history'), then have the source send the event again (requeue NetBox's failed webhook job); its event IDs are the same.",
})
