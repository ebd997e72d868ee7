// Package extensions runs operator-defined tasks on lifecycle events:
// MetalSoft-compatible workflow extensions. A definition binds tasks to
// stages through onAssetChange; when a stage's event fires, every task
// bound to it in an active extension runs.
//
// # Definitions
//
// Definitions are MetalSoft's JSON as MetalSoft writes it: an
// ExtensionDefinition (kind "ExtensionDefinition", schemaVersion "1.1",
// name, label, vendor, icon, extensionType, extensionVersion,
// dependencies, inputs[], outputs[], assets[], optional configVars[],
// onCreate/onEdit/onDelete and onAssetChange[{stage, tasks[{label,
// taskType, options}]}]), bare or inside the create-API envelope {name,
// label, description, kind, definition, status}. [Parse] validates a file;
// [LoadDir] loads a directory into a [Registry]. Only active extensions
// fire (MetalSoft's statuses: draft, active, archived; a file without a
// status is active).
//
// # Task types
//
// The specification's list of task types was lost in its export; it is
// reconstructed from MetalSoft's SDK (ExtensionTaskType), with the option
// names kept exactly:
//
//	ExtensionTaskWebhook  endpoint (http/https URL), method (GET, POST, PUT,
//	                      PATCH, DELETE, HEAD), requestTemplate (Nunjucks),
//	                      headers, expectedResponseStatuses, timeout (s,
//	                      default 30), insecureSkipVerify
//	ExtensionTaskSsh      host, port, timeout (s), commandTemplate (Nunjucks),
//	                      username, password
//	ExtensionTaskAnsible  asset (an assets[].name), playbook,
//	                      executionTimeout, executionTimeoutTick, version,
//	                      ee (an OciImage asset)
//
// hostforge's additions are optional fields and rename nothing: a task's
// failurePolicy ("fail", the default, or "continue") and includeSecrets;
// webhook signingSecret and retries, SSH privateKeySecret (each naming a
// vault item); an asset's sha256 and allowHttp; a bare definition's
// status. An asset's url may also be a local path (a relative one is read
// from the definition file's directory). A bundle hostforge downloads (an
// http(s) url; an OciImage is the container runtime's to pull) must give
// its sha256, and an http:// url needs allowHttp: true (the digest still
// verifies it; every use is logged) — MetalSoft's published definitions
// give neither, so each such asset gets its digest before it loads.
//
// # Runners
//
// Each task type has a [Runner], an adapter: adapters/webhook (net/http
// and go-retryablehttp; Standard Webhooks webhook-id, webhook-timestamp and
// webhook-signature), the ExtensionRunner of adapters/ssh (host keys
// always verified against the site's known_hosts), adapters/ansible (the
// real ansible-playbook; outputs from context_json_file_path). The wiring
// (adapters/wiring, the config's extensions: section) builds all three
// for the CLI and the worker. What a runner reports is scrubbed of the
// payload's secrets before it is recorded; runners scrub their own
// (signing secrets, credential headers, SSH passwords) and never record a
// request body or command of a task that includes the payload's secrets.
// A runner's failure keeps its own code (EXTENSION_WEBHOOK_REJECTED,
// EXTENSION_SSH_HOST_KEY, EXTENSION_ANSIBLE_PLAYBOOK_FAILED, ...); the
// shared ones are here: EXTENSION_SECRET_UNAVAILABLE, EXTENSION_TASK_TIMEOUT,
// EXTENSION_RUNNER_CONFIG_INVALID.
//
// # Stages
//
// Exactly the twelve stages, case-sensitive, each with the payload key its
// tasks see: serverRegistered and serverDecommissioned (server);
// switchRegistered and switchDecommissioned (networkDevice);
// serverInstanceUpdate (serverInstanceRecordSet); serverInstanceGroupUpdateDNS
// (serverInstanceGroupDNSRecordSet); serverInstanceUpdateDNS
// (serverInstanceDNSRecordSet); clusterUpdateDNS (clusterDNSRecordSet);
// serverCreateDNS and serverDeleteDNS (serverDNSRecordSet); switchCreateDNS
// and switchDeleteDNS (switchDNSRecordSet). The removed stages
// serverInstanceGroupCreateDNS, serverInstanceGroupDeleteDNS and
// serverInstanceDeleteDNS are refused with the stage that replaced them.
//
// # Validation
//
// Validation reports every problem at once, each at its JSON path
// ($.onAssetChange[0].tasks[1].options.endpoint): unknown stages (with a
// "did you mean" hint for near misses such as "server Registered"),
// removed stages, unknown task types, each type's required options and
// their JSON types, asset references that do not resolve to assets[].name,
// templates that do not parse (with line and column), duplicate task labels
// within a stage, a downloaded bundle without its sha256 or over plain
// http without allowHttp. Repeated entries for one stage concatenate in order.
// Unknown fields are warnings, not errors: MetalSoft's own files carry
// some.
//
// # Payloads and secrets
//
// The payload of each stage has a Go type with the specification's JSON
// names ([ServerPayload], [NetworkDevicePayload], ...); the templates see
// the JSON itself, so fields a future MetalSoft adds reach them too.
// Secret fields (passwordEncrypted, mgmtSnmpPasswordEncrypted,
// vncPasswordEncrypted, managementPassword, secretsMaterializedForOSAssets
// and anything ending in Encrypted) are removed from the payload every
// task, log, record and workflow history sees ([NewEvent]); a task with
// "includeSecrets": true gets them from the dispatcher's [SecretSource],
// and what runners report back is scrubbed of them — and of the values of
// isPassword inputs and configVars — in every form (hostforge.Secrets:
// any case, dumped, echoed as JSON, HTML or URL text, however short)
// before it is recorded. A task that receives secrets (includeSecrets, or
// any isPassword input or configVar in its extension) keeps of its request
// and of the answer it got back only their SHA-256 and length ([Digest],
// [Recorded]), never the bodies. No log line carries a body: runners put
// bodies in a Failure's Detail, which the record keeps and Error() leaves
// out.
//
// # Templates
//
// requestTemplate and commandTemplate are Nunjucks templates, rendered by
// package nunjucks exactly as Nunjucks 3.2.4 renders them with autoescape
// off (gonja parses; the layer gives JavaScript's semantics). The template
// variables are the payload's keys, plus configVars (name → value) when
// the definition declares configVars and extensionInstanceVariables (name
// → value) when it declares inputs, as MetalSoft exposes them; an Ansible
// task's extra-vars are the same object. [Extension.Render] is the dry
// run.
//
// A payload must carry its stage's object ("server" for serverRegistered,
// and so on): [NewEvent] and [Extension.Render] refuse one without it
// (EXTENSION_PAYLOAD_INVALID naming the key and the stage), so a
// networkDevice payload fired as serverRegistered runs nothing. A webhook
// whose body is JSON — its Content-Type header says so (application/json,
// text/json, a +json type), or it sets none and the body starts with { or
// [ — must render to valid JSON: EXTENSION_TEMPLATE_INVALID_JSON names the
// task and the byte offset (line, column) where it breaks, in the dry run
// as at dispatch, and nothing is sent.
//
// # Site inputs
//
// A site gives each extension the values of its inputs and configVars
// ([Instances]: the config's extensions.instances, by extension and input
// name): inline, or {vault: ITEM.FIELD}, a vault item's field read when a
// task runs, never kept in the event, the plan or a record. An isPassword
// input takes only a vault reference ([Extension.CheckInstance] refuses an
// inline one, naming its key). A value the site does not give is the
// definition's defaultValue; an input with neither, in an extension that
// binds tasks, is a required input without a value: refused at load and
// reported by validation. isPassword values reach every task of their
// extension (the site configured them for it), mark the request
// secret-bearing (Request.IncludesSecrets: runners never record its body or
// command) and are scrubbed from what is recorded; the dry run renders
// them as [PasswordPlaceholder] and reads no vault.
//
// Each render has [RenderLimits]: the bytes of strings and arrays it may
// build (64 MiB; the config's extensions.render_budget) and how long it
// may take (2 s; extensions.render_timeout). A template past either fails
// its task with EXTENSION_TEMPLATE_BUDGET naming the template position,
// before anything is sent; a render whose caller is interrupted ends as
// CANCELLED.
//
// # Dispatch
//
// [Fire] is a workflow body on flow.Runtime. It asks the plan step which
// tasks the stage binds (active extensions by name, tasks in array order)
// and what the event's earlier firings left for each, then runs them one
// after the other: each task's delivery ID ([DeliveryID]) is stable per
// (event, extension, task) and reused on every retry; the delivery is
// recorded as running, the run step renders it and hands it to the
// [Runner] for its task type, and the outcome is recorded (message,
// timestamps, outputs) in the [Store]. A failed task with failurePolicy
// "fail" skips the rest of its extension's tasks for the event; a task
// that would start after the event's stage deadline is skipped; the
// deadline (Event.StageDeadline: the config's extensions.stage_deadline
// for hostforge's sources, --stage-deadline for 'extensions fire',
// DefaultStageDeadline otherwise) also bounds each task's run, and
// [Extension.DeadlineWarnings] tells validation which tasks' own timeouts
// it cuts short. The steps
// are extensions.plan, extensions.begin, extensions.run and
// extensions.record: under Temporal each delivery is an activity. Step
// inputs carry the extension's name and digest, never its options
// (webhook headers carry credentials).
//
// # At most once, at least once
//
// A webhook is delivered at least once: a lost call is retried, and every
// retry carries the same webhook-id, which receivers deduplicate by. An
// SSH command or a playbook is not idempotent, so it runs at most once
// per delivery: just before its runner is called, the run step records
// the delivery started ([Store.StartDelivery], a write-ahead only one
// attempt can win), and an attempt that finds its delivery started and
// not finished — Temporal's second attempt, a restarted worker firing the
// event again, a call whose answer was lost — does not run it: it ends
// EXTENSION_TASK_INTERRUPTED, and the operator checks the target and
// redelivers the task. Under Temporal, extensions.run declares its call
// policy beside the step (flow.PerCall): an SSH or Ansible call has one
// attempt, its timeout and its heartbeat timeout are the task's own run
// bound (so a worker cut off from Temporal has had its command killed by
// the task's timeout before the attempt is declared lost), and a lost
// call reaches Fire as flow.AttemptLost; a new call then asks the record.
//
// # Firing an event again
//
// An event's ID comes from its source: the enrollment run for
// serverRegistered, the source's own request ID, an operator's
// --event-id; an event without one gets a fresh random ID ([NewEvent]), so
// a later event with the same payload is a new event. Firing an event ID
// again against the same store runs only what has not succeeded: a task
// that succeeded is reported skipped (its message names the delivery that
// succeeded and when) and is not contacted; a failed webhook is delivered
// again under its delivery ID; a failed SSH or Ansible task runs under a
// new delivery ID ([RedeliveryID]); a delivery started and not finished
// is reported interrupted again and not run. [Event.Redeliver] names tasks
// to run again under a new delivery ID whatever they did before.
//
// # Invariants
//
// What dispatch promises under lost answers, crashed workers and
// restarts; the fault-schedule suite (internal/extsim: 500 schedules in
// the unit tests, 10,000 in its benchmark) checks each on every schedule:
//
//   - each SSH and Ansible task runs at most once per delivery ID;
//   - every webhook delivery, and each retry of it, carries the same
//     webhook-id: the task's delivery ID, which only a redelivery changes;
//   - a failed task whose failurePolicy is fail stops its extension's
//     later tasks for that firing: none of them runs;
//   - every failure is classified (a declared code, never UNCLASSIFIED),
//     and only SSH and Ansible tasks end EXTENSION_TASK_INTERRUPTED;
//   - once the faults are gone, firing the event again leaves every task
//     succeeded, interrupted (an SSH or Ansible delivery whose outcome is
//     unknown) or not run behind an interrupted one, and firing it once
//     more contacts nothing;
//   - a redelivery runs the named task once, under a new delivery ID, and
//     nothing that had succeeded;
//   - no execution record is left started or running.
//
// # Execution records
//
// Each delivery's record ([Execution]) keeps its event, stage, extension,
// task, status, start and end, message and attempts: the runs dispatch
// made of that delivery ID (a webhook delivered again under its
// webhook-id counts each; a run that was not made counts none). The store
// lists records by event, extension, stage and start time, oldest or
// newest first: 'hostforge extensions history' reads it, 'hostforge
// extensions outputs' the stored outputs.
//
// # Event sources
//
// Each source builds its stage's payload from what it knows; a field with
// no source is left out, never invented (MetalSoft's own IDs, rack units
// NetBox's brief objects lack, credentials). Each gives its events a
// stable ID, so an event delivered again fires only what has not
// succeeded. Sources that fire several stages fire them in order
// ([FireEvents]); a [Submitter] hands them to dispatch (Temporal under
// 'hostforge worker', an in-process queue under 'hostforge extensions
// listen').
//
// Enrollment. A successful enrollment fires serverRegistered:
// [ServerRegistered] maps the device's NetBox intent and the node's
// inspection inventory to the server object (the mapping is documented on
// [ServerFromIntent]). When the run's BMC phase set the BMC's hostname and
// the device has an out-of-band address, it then fires serverCreateDNS,
// the BMC's record set ([ServerCreateDNSEvent]):
//
//	serverId           NetBox device ID
//	serialNumber       NetBox serial
//	managementAddress  NetBox out-of-band IP (no prefix length)
//	hostname           the BMC's hostname (the device name, lower-cased)
//	ip                 {status: "allocated", ip: the out-of-band IP}
//	operation          "create"
//	netboxDevice       the device's name (hostforge's addition)
//	zone, fqdn         left out: NetBox has no zone (a DNS extension takes
//	                   it from its configVars)
//
// The events are the run's ("serverRegistered/<run>",
// "serverCreateDNS/<run>"): the same run's dispatch fired again delivers
// only what did not succeed, and every later run that enrolls the host is
// an event of its own. [FireServerRegistered] is the workflow body the
// orchestrators run once an enrollment succeeded: its step
// extensions.server_registered reads the intent and the inventory from the
// dispatcher's [ServerSource] (nothing when no active extension binds
// either stage; the inventory only for serverRegistered), then the events
// are dispatched. The CLI runs it inline after 'hostforge enroll
// --config'; the Temporal worker runs it as a child workflow the
// enrollment starts as it ends, which outlives it.
//
// NetBox event rules. [NetBoxEvents] maps the request NetBox's event rules
// send (a webhook without a body template: event, timestamp, model,
// username, request_id, data, snapshots; NetBox 4.4's object_type and
// request.id are read too) for a device: a server leaving service (status
// changed to decommissioning or offline, or deleted while in service)
// fires serverDecommissioned then serverDeleteDNS; a switch (its role slug
// in NetBoxRules.SwitchRoles) reaching active (created active, or changed
// to it) fires switchRegistered then switchCreateDNS, and leaving service
// switchDecommissioned then switchDeleteDNS. The DNS stage fires only for
// a device with a management address. Event IDs are
// "netbox/<request_id>/dcim.device/<device id>/<stage>" (a bulk edit's
// devices share NetBox's request ID). From data, the device as NetBox's
// REST API serialises it:
//
//	server (serverDecommissioned)
//	  serverId                id
//	  netboxDevice            name
//	  serverStatus            status.value
//	  serialNumber            serial
//	  vendor, model           device_type.manufacturer.name, device_type.model
//	  datacenterName, siteId  site.slug, site.id
//	  serverClass             role.slug
//	  rackName                rack.name
//	  rackPositionLowerUnit   position (whole units)
//	  managementAddress       oob_ip.address (no prefix length)
//	  serverCreatedTimestamp  created
//	  tags                    tags[].slug
//	  platformClass           custom_fields.platform_class
//	networkDevice (switchRegistered, switchDecommissioned)
//	  id                      id (as a string)
//	  identifierString, netboxDevice   name
//	  status                  status.value
//	  serialNumber            serial
//	  chassisIdentifier       asset_tag
//	  siteId, datacenterMeta  site.id, site.slug
//	  datacenterRoom          location.name
//	  datacenterRack          rack.name
//	  rackPositionLowerUnit   position
//	  managementAddress, managementAddressPrefixLength
//	                          oob_ip.address, else primary_ip4.address
//	  driver.name             platform.slug
//	  position.role           role.slug
//	  tags                    tags[].slug
//	serverDNSRecordSet (serverDeleteDNS), switchDNSRecordSet (switchCreateDNS,
//	switchDeleteDNS)
//	  serverId / switchId     id
//	  serialNumber            serial (servers)
//	  managementAddress, ip.ip   the management address
//	  ip.status               "allocated" for a create
//	  hostname                name, lower-cased
//	  operation               "create" or "delete"
//	  netboxDevice            name
//
// Left out: the networkDevice's country, city, credentials, bootstrap,
// loopback, VTEP, MLAG and ASN fields, the server's hardware inventory
// (NetBox does not hold it), the record sets' zone and fqdn.
//
// Ironic. [DeployWatcher] is shown every Ironic instance's nodes by each
// projection pass and fires serverInstanceUpdate for each deploy
// transition it sees (the phases are documented on it), with the ID
// "ironic/<Ironic instance>/<node UUID>/<instance UUID>/<type>/<status>"
// ([DeployEventID]). The serverInstanceRecordSet ([DeployEvent]):
//
//	deployType        "create" (deploying, wait call-back, active) or
//	                  "delete" (deleting, the cleaning after an instance)
//	deployStatus      "ongoing", or "finished" (active; available after
//	                  the instance)
//	instanceUuid      the node's instance_uuid (hostforge's addition)
//	ironicNode        the node's UUID (hostforge's addition)
//	ironicInstance    the Ironic service's name in the config
//	netboxDevice      the node's name
//	provisionState    the node's provision state
//
// MetalSoft's serverId, serverInstanceId, deploymentId, serviceStatus,
// IPs and logical networks have no source in Ironic and are left out.
package extensions
