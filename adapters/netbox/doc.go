// Package netbox is the NetBox adapter: enrollment.NetBox and
// enrollment.DeviceLister over NetBox's REST API (NetBox 4.x; shapes per the
// 4.2 OpenAPI schema, and what go-netbox v4.3 generates for 4.3).
//
// # Where hostforge's intent lives in NetBox
//
//	intent.Device field          NetBox
//	Status                       device status (value)
//	Role.DeviceClass             the device role's custom field device_class
//	DeviceType.Manufacturer/Model device type → manufacturer name, model
//	DeviceType.GPUType           the device type's custom field gpu_type
//	PlatformClass                the device's custom field platform_class
//	OOBIP, PrimaryIP4            oob_ip.address, primary_ip4.address (prefix length dropped)
//	Tags                         tag slugs
//	ConfigContext                the rendered config_context: ironic_settings,
//	                             inspection_validation, ztp, and the site's NTP and
//	                             syslog targets as the keys "ntp-servers" and
//	                             "syslog-servers" (NetBox's own config-context
//	                             example), so they arrive with the device at no
//	                             extra request; a site-wide config context assigned
//	                             to the site (or region) sets them for every device.
//	Interfaces                   interfaces: name, type, MAC (mac_address, else
//	                             primary_mac_address), mgmt_only, enabled, lag
//	Interfaces[].Peer            link_peers[0] and link_peers_type; for an
//	                             interface peer, its LAG parent and its device's role
//
// Custom fields hold text; null or absent reads as "". A custom field of any
// other JSON type is NETBOX_DATA_INVALID naming the field rather than "" — a
// number read as an empty platform_class would let enrollment overwrite a
// populated value.
//
// # Requests per host
//
// Device reads one host in three requests, whatever its number of
// interfaces and cables (asserted by TestDeviceRequestCount for 2 and 32
// interfaces, whose goal is at most four):
//
//  1. GET /api/dcim/devices/?name=<name> — the device with its rendered
//     config context, tags, custom fields, brief role, device type and site;
//  2. GET /api/dcim/interfaces/?device_id=<id> — every interface, with lag
//     and link_peers (the cable's far end as brief objects);
//  3. POST /graphql/ — what the two answers point at without carrying it,
//     since NetBox's brief nested objects have no custom fields, no LAG
//     parent and no role: the role's and the device type's custom fields
//     (device_class, gpu_type) and, when something is cabled, each link
//     peer's LAG parent and its device's role, in one query.
//
// The query of request 3:
//
//	query { device(id: <id>) { role { custom_fields } device_type { custom_fields }
//	  interfaces { link_peers { __typename
//	    ... on InterfaceType { id lag { name } device { id role { slug } } }
//	    ... on FrontPortType { device { id role { slug } } } } } } }
//
// The query keeps to what every NetBox 4.x schema serves the same way: a
// single object by id (no list filters, whose syntax changed in 4.3; no
// paginated lists, which changed in 4.5's API v2) and no aliases (NetBox
// allows GRAPHQL_MAX_ALIASES, ten by default). The interfaces stay on REST:
// their MAC moved from mac_address to primary_mac_address in 4.2, which REST
// tolerates and GraphQL refuses as an unknown field.
//
// A NetBox without GraphQL (GRAPHQL_ENABLED off: 404), or whose schema
// refuses the query, is read over REST instead, and the client remembers it:
// request 3 becomes four — the device type and the role by id
// (/api/dcim/device-types/<id>/, /api/dcim/device-roles/<id>/), the peer
// interfaces and the peer devices by id lists (skipped when nothing is
// cabled) — six requests in all. An error in answering the query (not the
// query's shape) falls back for that read only; a device deleted between
// the requests is ErrNotFound. The count grows only past NetBox's page size
// (1000 interfaces on request 2), or on REST past 100 distinct peers (ids
// are sent 100 per request to keep URLs short).
//
// # Writes, and concurrent writers
//
//   - SetStatus PATCHes {"status": ...} alone.
//   - SetPlatformClass PATCHes {"custom_fields": {"platform_class": ...}}
//     alone; NetBox merges a PATCHed custom_fields object into the stored
//     data, so other custom fields are kept.
//   - AddTags reads the device's tags, creates missing tag objects
//     (POST /api/extras/tags/, name = slug; a duplicate-slug refusal from a
//     concurrent creator is resolved by reading the tag back), re-reads the
//     device's tags and PATCHes the union. Nothing is written when every tag
//     is present.
//
// Writers of different fields never clobber each other: each PATCH names one
// field. Tags are the exception NetBox imposes: a device's tags are replaced
// as a whole and NetBox has no ETags or If-Match, so a tag another writer
// adds between our re-read and our PATCH (one round trip) is lost. The
// workflow re-reads and re-tags on every rerun, so its own tags converge;
// a third party's tag lost in that window is not restored. Serialise tag
// writers outside NetBox if that matters.
//
// # Transport
//
// Token authentication ("Authorization: Token <token>"); TLS verified against
// the system roots plus Config.CACertPEM; turning verification off is an
// explicit, logged opt-in. Every call runs under the caller's context.
// go-retryablehttp retries connection errors and 429/502/503/504 up to
// Config.RetryMax times with exponential backoff, honouring Retry-After
// (capped by Config.MaxRetryAfter). Status mapping: 401/403 →
// hostforge.ErrUnauthorized, 404 → ErrNotFound, 409 → ErrConflict, other 4xx
// → ErrInvalid (with NetBox's field errors in the message), 429/5xx and
// exhausted retries → ErrUnavailable; an untrusted certificate is the
// NETBOX_TLS_UNTRUSTED failure; a 2xx answer that does not have NetBox's
// shape is NETBOX_DATA_INVALID naming the device and the field.
//
// # go-netbox
//
// Write bodies are go-netbox's generated request models
// (PatchedWritableDeviceWithConfigContextRequest, NestedTagRequest,
// TagRequest), which serialise only the fields that are set, and statuses are
// checked against its DeviceStatusValue choices. Reads decode into small
// structs of the fields hostforge uses instead of go-netbox's models: those
// reject any payload missing a field the 4.3 schema marks required and any
// choice value the 4.3 schema does not list (a newer interface type, a
// site-defined status), which would turn a NetBox upgrade into an enrollment
// outage; the small structs also keep one HTTP path — retries, error mapping,
// pagination through a proxy — for every request.
package netbox
