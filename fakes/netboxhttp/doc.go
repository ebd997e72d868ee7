// Package netboxhttp is a NetBox 4.x REST emulator: an http.Handler, usable
// with net/http/httptest, that serves a fakes.NetBox's state over the wire
// with NetBox's own shapes. The in-memory fake and the emulator share one
// state, so a fake Site can be enrolled through the real NetBox adapter and
// both paths see — and change — the same devices.
//
// Shapes follow the NetBox 4.2.2 OpenAPI schema (DeviceWithConfigContext,
// DeviceType, DeviceRole, Interface, Cable, Tag and their Brief*/Nested*
// forms):
//
//   - lists are {"count", "next", "previous", "results"}; limit defaults to
//     50 and is capped at MaxPageSize (NetBox's MAX_PAGE_SIZE, 1000 by
//     default; limit=0 asks for the cap); next/previous are absolute URLs;
//   - ?brief=true returns the Brief* form of each object;
//   - ?exclude=config_context drops the rendered config context from devices;
//   - choice fields are {"value", "label"}; related objects are nested brief
//     objects; custom_fields is an object; tags are NestedTag objects;
//   - interfaces carry lag, cable, cable_end, link_peers and link_peers_type;
//     cables carry a_terminations/b_terminations as
//     {object_type, object_id, object};
//   - errors are NetBox's bodies: 404 {"detail": "No Device matches the given
//     query."}, 400 {"<field>": ["<reason>"]}, 403 {"detail": "Invalid token"}.
//
// Endpoints served (everything else is 404, as NetBox answers an unknown path):
//
//	GET   /api/dcim/devices/           filters: id, name (repeatable), brief, exclude, limit, offset
//	GET   /api/dcim/devices/{id}/
//	PATCH /api/dcim/devices/{id}/      status, tags, custom_fields (merged, as NetBox does)
//	DELETE /api/dcim/devices/{id}/     204; its interfaces and the cables on them go too
//	GET   /api/dcim/device-types/{id}/
//	GET   /api/dcim/device-roles/{id}/
//	GET   /api/dcim/interfaces/        filters: id, device_id (repeatable), brief, limit, offset
//	GET   /api/dcim/cables/            filters: id, device_id (repeatable), limit, offset
//	GET   /api/extras/tags/            filters: slug (repeatable), limit, offset
//	POST  /api/extras/tags/
//	GET   /api/extras/journal-entries/ filters: assigned_object_type, assigned_object_id (repeatable), limit, offset
//	POST  /api/extras/journal-entries/ a device's journal entry (kind, comments); a new entry every time
//	GET   /api/status/
//	POST  /graphql/                    NetBox's GraphQL API: single objects by id (see graphql.go)
//
// /graphql/ answers as NetBox's Strawberry schema does for the types and
// fields graphql.go lists: unknown fields refused before anything runs, ids
// as strings, "<Model> matching query does not exist." for a missing id,
// NetBox's default limit of ten aliases; Options.NoGraphQL makes it the 404
// of a NetBox with GRAPHQL_ENABLED off. Variables, directives and named
// fragments are not modelled and are refused as syntax errors, list
// queries (device_list, …) as unknown fields.
//
// Every request is checked for "Authorization: Token <token>" (or "Bearer
// <token>") when Options.Token is set, then counted through fakes.NetBox.Enter,
// so Site.Calls counts HTTP requests and Site.Inject fails them: an injected
// hostforge.ErrUnavailable answers 503, ErrUnauthorized 403, ErrNotFound 404,
// ErrInvalid 400, ErrConflict 409, anything else 500. FailNext injects raw
// HTTP statuses (with an optional Retry-After) for retry tests.
//
// Event rules (AddEventRule) send their webhooks as NetBox's background
// worker does, after the change and in order: the body is the event
// context ({"event", "timestamp", "model", "username", "request_id",
// "data", "snapshots"}; data the device as GET renders it without its
// config context, snapshots its stored fields before and after), with
// Content-Type application/json and, when the rule has a secret,
// X-Hook-Signature, the hex HMAC-SHA512 of the body. A device's PATCH is
// object_updated, its DELETE object_deleted; each request has its own
// request_id. WaitEvents waits for the queue to drain; EventDeliveries
// lists what was sent and how the receiver answered.
//
// What the emulator does not model: IP address, MAC address and front-port
// objects have no state of their own (their ids are synthesised from the
// owning device or interface), config contexts are stored already rendered,
// and PATCH accepts only the three fields hostforge writes — any other field
// is refused with 400 rather than silently ignored.
package netboxhttp
