package wiring

// Reference documents every key of the config file. The sample config
// ('hostforge config example', examples/config/site.yaml) and the
// reference docs/config.md are generated from it (go generate .), and a
// test holds it to the yaml keys of Config: a key added to the structs
// without a line here fails the test, and so does a line here for a key
// that does not exist.
var Reference = []Key{
	{Name: "site", Value: "lab1", Required: true,
		Doc: "The site slug: requests are submitted for it, and 'hostforge worker' names its schedules after it (hostforge/lab1/ironic-projection, ...).",
		Prose: `The site this config is for. Several workers of one site share its schedules; every
command run with the config acts for it.`},
	{Name: "netbox", Required: true, Doc: "Where NetBox is and how hostforge authenticates to it.",
		Prose: `NetBox holds each device's intent: its role, device type, interfaces, cables, addresses
and config context. Its token is read from the environment variable or the file named
here, never from the config itself.`,
		Keys: []Key{
			{Name: "url", Value: "https://netbox.example.net", Required: true, Doc: "NetBox's base URL (http or https, no credentials in it)."},
			{Name: "token_env", Value: "HOSTFORGE_NETBOX_TOKEN", Doc: "The environment variable holding NetBox's API token."},
			{Name: "token_file", Value: "/etc/hostforge/netbox-token", Alt: true, Doc: "Instead of token_env: a file holding the token (mode 0600)."},
			{Name: "ca_file", Value: "/etc/hostforge/ca.pem", Doc: "Optional: a CA bundle trusted for NetBox, besides the system roots."},
			{Name: "insecure_skip_verify", Value: "false", Default: "false", Doc: "Opt-in for a lab NetBox only: TLS is not verified (logged)."},
		}},
	{Name: "ironic", Doc: "The Ironic instances, each with the device classes it manages (noauth API).",
		Prose: `Each device class (the device role's device_class) is routed to one Ironic instance.
The timing block tunes the Ironic phases' polls and budgets; its defaults are for real
hardware.`,
		Items: [][]Key{{
			{Name: "name", Value: "ironic-gpu", Required: true, Doc: "The instance's name (Ironic references are NAME/node-uuid)."},
			{Name: "url", Value: "https://ironic-gpu.example.net:6385", Required: true, Doc: "The Ironic API endpoint."},
			{Name: "device_classes", Value: "[GPU_COMPUTE]", Required: true, Doc: "The device classes routed here: GPU_COMPUTE, CPU_BAREMETAL, HYPERVISOR (each to one instance)."},
			{Name: "ca_file", Value: "/etc/hostforge/ironic-ca.pem", Doc: "Optional: a CA bundle trusted for this instance."},
			{Name: "insecure_skip_verify", Value: "false", Default: "false", Doc: "Opt-in: TLS to this instance is not verified (logged)."},
			{Name: "learned_pace", Value: "true", Default: "true", Doc: "A wait on a verification, inspection or cleaning also looks when nine in ten of the same transitions on this instance's nodes of the same driver and resource class were over (ironic.Pace, kept in memory; the poll policy's own looks stay); false: the poll policy alone."},
		}, {
			{Name: "name", Value: "ironic-cpu"},
			{Name: "url", Value: "https://ironic-cpu.example.net:6385"},
			{Name: "device_classes", Value: "[CPU_BAREMETAL, HYPERVISOR]"},
			{Name: "timing", Doc: "Optional: the Ironic phases' polls and budgets.", Keys: []Key{
				{Name: "link_budget", Value: "5m", Default: "5m", Doc: "Frontend-link guard: every link DOWN this long fails the host."},
				{Name: "state_poll", Value: "10s", Default: "10s", Doc: "The first look after manage or power on (and at a node in someone else's transition); looks then back off while the node stays unmoved."},
				{Name: "state_poll_max", Value: "30s", Default: "30s", Doc: "The longest pause between looks while the conductor works (verifying, a power change, the start of cleaning or inspection)."},
				{Name: "lock_retry", Value: "10s", Default: "10s", Doc: "The wait after a node found locked."},
				{Name: "inspection_poll", Value: "20s", Default: "20s", Doc: "The first look after inspect, and the pause between the link guard's samples."},
				{Name: "inspection_poll_max", Value: "30s", Default: "30s", Doc: "The longest pause between looks in inspect wait."},
				{Name: "inspection_timeout", Value: "1h", Default: "1h", Doc: "How long an inspection may take."},
				{Name: "power_on_timeout", Value: "10m", Default: "10m", Doc: "How long a power-on may take."},
				{Name: "clean_poll_min", Value: "15s", Default: "15s", Doc: "The first wait while cleaning."},
				{Name: "clean_poll_max", Value: "2m", Default: "2m", Doc: "The longest pause between looks in clean wait (not shorter than clean_poll_min)."},
				{Name: "inventory_grace", Value: "1m", Default: "1m", Doc: "How long an inventory may lag the inspection's end."},
			}},
		}}},
	{Name: "gates", Doc: "The site's gates and settings.",
		Prose: `Each phase of the enrollment runs only with its gate on; a gate left out is off. The
gates are snapshotted into each request when it is submitted, so a change never alters a
running enrollment. platform_class_activity_ready needs the ledger: section.`,
		Keys: []Key{
			{Name: "enrollment_configure_dhcp", Value: "true", Default: "false", Doc: "Phase 1: the host's DHCP reservation (needs dhcp: and vault:)."},
			{Name: "enrollment_configure_bmc", Value: "true", Default: "false", Doc: "Phase 2: the BMC's configuration over Redfish (needs vault:)."},
			{Name: "enrollment_ironic_enrol", Value: "true", Default: "false", Doc: "The Ironic phases: enrolment, inspection, cleaning (needs ironic: and vault:)."},
			{Name: "switch_to_ipmi_after_inspection", Value: "false", Default: "false", Doc: "Switch the node's driver to IPMI after inspection."},
			{Name: "restrict_boot", Value: "true", Default: "true", Doc: "Restrict the BMC's boot order to the provisioning NIC."},
			{Name: "platform_class_activity_ready", Value: "true", Default: "false", Doc: "Record the platform class in NetBox and the ledger (needs ledger:)."},
			{Name: "ironic_tag", Value: "ironic", Default: "ironic", Doc: "The NetBox tag of devices Ironic manages."},
			{Name: "node_lock_max_wait", Value: "15m", Default: "15m", Doc: "How long a locked node is waited for before failing."},
			{Name: "cleaning_deadline", Value: "3h", Default: "3h", Doc: "How long cleaning may take."},
			{Name: "max_attempts", Value: "3", Default: "3", Doc: "Attempt budget of retryable failures ('enroll --max-attempts' replaces it)."},
			{Name: "enrol_project", Value: "baremetal-enrol", Doc: "The Ironic project (owner) nodes are enrolled under."},
		}},
	{Name: "dhcp", Doc: "The DHCP server (phase 1), reached over SSH.",
		Prose: `The DHCP phase logs in with the private_key and known_hosts fields of the vault item
ssh-config-dhcp (optional: passphrase, user); the server's host key is always verified
against known_hosts. Empty keys take the flavour's defaults: for isc, dir
/etc/dhcp/hostforge.d, config_test "dhcpd -t -q -cf /etc/dhcp/dhcpd.conf", restart and
status of isc-dhcp-server; for kea, dir /etc/kea/hostforge.d, config_test
"kea-dhcp4 -t /etc/kea/kea-dhcp4.conf", restart and status of kea-dhcp4-server.`,
		Keys: []Key{
			{Name: "host", Value: "dhcp1.example.net:22", Required: true, Doc: "host[:port] of the DHCP server's SSH; port 22 when absent."},
			{Name: "user", Value: "deploy", Doc: "The SSH user; the vault item's user field overrides it."},
			{Name: "flavour", Value: "isc", Default: "isc", Doc: "isc or kea."},
			{Name: "dir", Value: "/etc/dhcp/hostforge.d", Doc: "Where the host files go (default per flavour)."},
			{Name: "config_test", Value: "dhcpd -t -q -cf /etc/dhcp/dhcpd.conf", Doc: "The command that checks the server's config (default per flavour)."},
			{Name: "restart", Value: "systemctl restart isc-dhcp-server", Doc: "The command that restarts the server; prefix sudo if needed (default per flavour)."},
			{Name: "status", Value: "systemctl is-active --quiet isc-dhcp-server", Doc: "The command that says the server runs (default per flavour)."},
			{Name: "timeouts", Doc: "Optional: the SSH deadlines.", Keys: []Key{
				{Name: "connect", Value: "2m", Default: "2m", Doc: "Connecting."},
				{Name: "login", Value: "2m", Default: "2m", Doc: "Logging in."},
				{Name: "command", Value: "2m", Default: "2m", Doc: "One command."},
				{Name: "transfer", Value: "2m", Default: "2m", Doc: "One file transfer."},
			}},
		}},
	{Name: "bmc", Doc: "How BMCs' Redfish service is reached and their certificates verified.",
		Prose: `The BMC phase and the Ironic phases' frontend-link guard log in to a host's BMC with the
per-host admin credential in the vault item bmc-admin-DEVICE, which the BMC phase creates
from bmc-factory and rotates.

BMCs ship self-signed certificates, so each may be trusted by a CA bundle or pinned by
the SHA-256 fingerprint of its certificate, keyed by device name or address range
(bmc.tls). A rule names devices, cidrs or both, and exactly one of ca_file,
fingerprint_sha256 or insecure_skip_verify; a device named by a rule wins over any range,
and among ranges the narrowest holding the BMC's out-of-band address (as NetBox records
it, not a bmc.endpoints endpoint) wins. A BMC no rule matches is verified against
bmc.ca_file, or not at all with bmc.insecure_skip_verify (logged at every connection), or
against the system roots.`,
		Keys: []Key{
			{Name: "ca_file", Value: "/etc/hostforge/bmc-ca.pem", Doc: "The CA that signed the BMCs: the default for BMCs no rule matches."},
			{Name: "insecure_skip_verify", Value: "true", Alt: true, Default: "false", Doc: "Instead of ca_file, for self-signed lab BMCs: not verified (logged)."},
			{Name: "tls", Doc: "Optional: per-BMC trust, by device or address range.", Items: [][]Key{{
				{Name: "devices", Value: "[rack1-node7]", Doc: "NetBox device names the rule is for."},
				{Name: "fingerprint_sha256", Value: "3fa2d0c8e1b47a5596c3f0e2d81a7b4c6e9f05a3d2c1b0e9f8a7c6d5e4b3a29c", Doc: "The SHA-256 of the BMC's certificate: 64 hex digits, colons optional."},
			}, {
				{Name: "cidrs", Value: "[10.10.0.0/24]", Doc: "Address ranges the rule is for."},
				{Name: "ca_file", Value: "/etc/hostforge/rack1-ca.pem", Doc: "A CA bundle the BMCs' certificates are verified against."},
			}, {
				{Name: "cidrs", Value: "[10.99.0.0/24]"},
				{Name: "insecure_skip_verify", Value: "true", Doc: "Explicit opt-in: the BMCs' certificates are not verified (logged at every connection)."},
			}}},
			{Name: "endpoints", Doc: "Optional: reach these BMCs elsewhere than their out-of-band IP on 443 (a jump host's forwarded port, a lab's emulator); TLS is still verified.", Items: [][]Key{{
				{Name: "address", Value: "10.10.0.12", Doc: "The BMC's out-of-band IP, as NetBox records it."},
				{Name: "endpoint", Value: "127.0.0.1:40443", Doc: "host:port where it is reached."},
			}}},
			{Name: "networks", Value: "[10.10.0.0/16]", Doc: "Optional: a redfish_address_override must be an IP in one of these ranges."},
			{Name: "redfish_verify_ca_paths", Value: "[/etc/ironic/bmc-ca.pem]", Doc: "CA bundles (paths on the Ironic conductors) NetBox's ironic_driver_info.redfish_verify_ca may name."},
		}},
	{Name: "vault", Doc: "The secrets vault.",
		Prose: `Credentials (BMC accounts, the DHCP server's SSH key, extension secrets, the scout site
secret, the NetBox webhook secret) are items of named fields in the vault. The file vault
is safe to share between a worker and CLI runs on one host: writes lock the file
(PATH.lock) and never drop another writer's item.`,
		Keys: []Key{
			{Name: "kind", Value: "file", Required: true, Doc: "file: items of named fields in a YAML file."},
			{Name: "path", Value: "/etc/hostforge/vault.yaml", Required: true, Doc: "The vault file; it must not be readable by group or others."},
		}},
	{Name: "ledger", Doc: "The fleet manager's ledger, and the state database of firmware and extensions.",
		Prose: `The ledger records each device's identity, its Ironic reference projected from Ironic
(and the revision of that reference), its platform_class and its completion proof. With
it, the platform_class gate records the platform class in NetBox and in the ledger, and
each enrollment settles its completion proof against the ledger's projection of Ironic. A
ledger that does not answer fails platform classes with PLATFORM_CLASS_RECORD_FAILED and
proof with FLEET_MANAGER_UNAVAILABLE until it answers again. Its database also holds the
firmware store and the extensions' execution records.

SQLite (a file, nothing to start) is the embedded default; PostgreSQL is shared by
several workers: driver postgres with dsn_file, a file of one line such as
postgres://user:pw@host/db, readable by its owner only. The DSN is never logged nor
printed.`,
		Keys: []Key{
			{Name: "driver", Value: "sqlite", Required: true, Doc: "sqlite, or postgres (shared by several workers)."},
			{Name: "path", Value: "/var/lib/hostforge/ledger.db", Doc: "sqlite: the database file (created if absent)."},
			{Name: "dsn_file", Value: "/etc/hostforge/ledger.dsn", Alt: true, Doc: "postgres, instead of path: a file holding the DSN (mode 0600)."},
			{Name: "projection_interval", Value: "1m", Default: "1m", Doc: "The site's Ironic projection schedule."},
		}},
	{Name: "extensions", Doc: "Optional: workflow extensions (MetalSoft-compatible).",
		Prose: `Extension definitions bind webhook, SSH and Ansible tasks to lifecycle stages;
serverRegistered fires after each successful enrollment. Tasks name vault items for their
secrets: a webhook's signingSecret (the item's password field; whsec_ base64 or raw), an
SSH task's privateKeySecret (private_key, optional passphrase and user). Their execution
records and outputs are kept in the ledger's database.

extensions.instances gives each extension's inputs and configVars by name; a required one
(no defaultValue) must be given, and an isPassword one only as a vault reference
{vault: ITEM.FIELD}. extensions.netbox_events serves NetBox's event rules (POST
/netbox/events over TLS, in 'hostforge worker' and 'hostforge extensions listen'); each
request is checked by its X-Hook-Signature against the secret field (8 characters or
more) of the vault item secret_item.`,
		Keys: []Key{
			{Name: "definitions", Value: "/etc/hostforge/extensions", Required: true, Doc: "The directory of definitions (*.json)."},
			{Name: "known_hosts", Value: "/etc/hostforge/extensions_known_hosts", Doc: "SSH tasks' host keys (always verified)."},
			{Name: "ca_file", Value: "/etc/hostforge/webhook-ca.pem", Doc: "Optional: CAs trusted for webhooks and bundle URLs, besides the system roots."},
			{Name: "container_runtime", Value: "podman", Doc: "Optional: podman or docker, runs Ansible tasks that name an ee image."},
			{Name: "asset_cache", Value: "/var/cache/hostforge/ansible", Doc: "Optional: the unpacked Ansible bundles, by SHA-256."},
			{Name: "asset_max_bytes", Value: "512MiB", Default: "512MiB", Doc: "Cap of a bundle's download and of what it unpacks to."},
			{Name: "ansible_playbook", Value: "/usr/bin/ansible-playbook", Doc: "Optional: the ansible-playbook program (default: the one in PATH)."},
			{Name: "ansible_env", Value: "[ANSIBLE_CONFIG=/etc/hostforge/ansible.cfg]", Doc: "Optional: ANSIBLE_* settings; a playbook gets these, PATH, HOME and LANG, nothing else of the worker's."},
			{Name: "render_budget", Value: "64MiB", Default: "64MiB", Doc: "Strings and arrays one template render may build (at most 1GiB); past it, EXTENSION_TEMPLATE_BUDGET."},
			{Name: "render_timeout", Value: "2s", Default: "2s", Doc: "How long one render may take (at most 1m)."},
			{Name: "stage_deadline", Value: "1h", Default: "1h", Doc: "No task of an event starts or runs past this; validation warns of a task whose own timeout is longer."},
			{Name: "instances", Free: true, Doc: "Optional: each extension's inputs and configVars, by extension name.", Keys: []Key{
				{Name: "powerdns", Doc: "An extension's values, by input or configVar name.", Keys: []Key{
					{Name: "zone", Value: "dc1.example.com", Doc: "An inline value."},
					{Name: "apiKey", Value: "{vault: powerdns-api.password}", Doc: "An isPassword value: a vault reference ITEM.FIELD only."},
				}},
			}},
			{Name: "switch_roles", Value: "[leaf, spine]", Doc: "Optional: NetBox role slugs of switches (their events fire the switch stages)."},
			{Name: "netbox_events", Doc: "Optional: the endpoint of NetBox's event rules (TLS only).", Keys: []Key{
				{Name: "listen", Value: "0.0.0.0:8644", Required: true, Doc: "host:port the endpoint listens on ('extensions listen --listen' overrides it)."},
				{Name: "cert_file", Value: "/etc/hostforge/events.crt", Required: true, Doc: "The endpoint's TLS certificate."},
				{Name: "key_file", Value: "/etc/hostforge/events.key", Required: true, Doc: "Its private key."},
				{Name: "secret_item", Value: "netbox-webhook", Required: true, Doc: "The vault item whose secret field is the NetBox webhook's secret."},
			}},
		}},
	{Name: "retire", Doc: "Optional: how 'hostforge retire' takes hosts out.",
		Prose: `A retirement erases the host as a manual clean, takes its node out of Ironic (or keeps it
manageable in maintenance, reason retired), removes its DHCP reservation and its BMC
monitoring user, archives its BMC admin credential for the retention, clears its ledger
records, sets the NetBox device offline with a journal entry and fires serverDecommissioned
and serverDeleteDNS. Left out, every key takes its default.`,
		Keys: []Key{
			{Name: "erase", Value: "metadata", Default: "metadata", Doc: "metadata (Ironic's erase_devices_metadata) or full (erase_devices: hours on large disks)."},
			{Name: "keep_node", Value: "false", Default: "false", Doc: "true: leave the node manageable in maintenance (reason retired) instead of deleting it."},
			{Name: "archive_retention", Value: "2160h", Default: "2160h", Doc: "How long the archived BMC admin credential is kept (90 days); a later run deletes it."},
			{Name: "dns_zone", Doc: "Optional: the zone of the BMCs' DNS records, for serverDeleteDNS.", Keys: []Key{
				{Name: "name", Value: "lab1.example.net", Doc: "The zone's name."},
				{Name: "soa_email", Value: "admin.lab1.example.net", Doc: "The zone's SOA e-mail."},
				{Name: "name_servers", Value: "[ns1.example.net]", Doc: "The zone's name servers."},
				{Name: "ttl", Value: "3600", Doc: "The records' TTL in seconds."},
			}},
		}},
	{Name: "firmware", Doc: "Optional: managed-host firmware updates.",
		Prose: `The managed hosts are the nodes of every Ironic instance (available is Ready, active
with an instance is Assigned); the update health report is Ironic maintenance with the
reason "host-fw-update: ...". A host's BMC is its node's driver_info redfish_address
(bmc.endpoints and bmc.ca_file apply), its credential the vault item bmc-admin-MACHINE.
The firmware store (requests, update records, results, policies, windows, upload slots)
lives in the ledger's database: the ledger: section is required with firmware:. On
PostgreSQL every worker shares it, the upload slots counted across workers.

'hostforge worker' runs the update manager's pass and the reading of the inventories
(each a schedule of the site, once per machine_update_run_interval however many workers
there are), the update workflows, the agent server and /metrics; 'hostforge firmware run'
does the same without Temporal, and the other 'hostforge firmware' commands read and
change the same store.

Every agent request is authenticated as one machine: the host presents its own token,
HMAC-SHA256 of its machine ID under the site secret (the secret field, 8 characters or
more, of the vault item site_secret_item), and a request for another machine is refused
(403) with nothing read or stored. 'hostforge scout token --config F --machine ID'
prints a host's token; the host passes it to 'hostforge scout --token-file'.`,
		Keys: []Key{
			{Name: "catalog", Value: "[/etc/hostforge/firmware.toml, /opt/hostforge/firmware]", Required: true, Doc: "Catalog files or firmware directories (NICo's TOML), merged in order."},
			{Name: "scout_scripts", Value: "/opt/hostforge/scout-firmware-scripts", Doc: "Optional: packaged VENDOR/MODEL/COMPONENT/upgrade.sh (needs the scout: server)."},
			{Name: "artifact_cache", Value: "/var/cache/hostforge/firmware", Doc: "Downloads of URL artifacts, each verified by its sha256 from the catalog; default firmware-artifacts beside a SQLite state database, required on PostgreSQL when the catalog has URL artifacts."},
			{Name: "artifact_max_bytes", Value: "16GiB", Default: "16GiB", Doc: "Cap of one download."},
			{Name: "script_timeout", Value: "1h", Default: "1h", Doc: "An entry's local script (at most 5h)."},
			{Name: "explore_interval", Value: "30m", Default: "30m", Doc: "How old a host's inventory reading may get before it is read again."},
			{Name: "settings", Doc: "NICo's firmware_global and machine_updater settings.", Keys: []Key{
				{Name: "autoupdate", Value: "true", Default: "false", Doc: "Hosts whose firmware drifted are updated automatically."},
				{Name: "instance_updates_manual_tagging", Value: "false", Default: "false", Doc: "Assigned hosts are updated only when tagged by hand."},
				{Name: "host_disable_autoupdate", Value: "[]", Doc: "Legacy: machine IDs never selected automatically."},
				{Name: "max_concurrent_machine_updates_absolute", Value: "4", Doc: "Ceiling: updates under way at once."},
				{Name: "max_concurrent_machine_updates_percent", Value: "10", Doc: "Optional ceiling: percent of the healthy hosts."},
				{Name: "instance_autoreboot_period", Doc: "Optional: when assigned hosts may be rebooted into an update without approval.", Keys: []Key{
					{Name: "start", Value: "2026-07-01T02:00:00Z", Doc: "Its start (RFC 3339)."},
					{Name: "end", Value: "2026-07-01T04:00:00Z", Doc: "Its end (RFC 3339), after the start."},
				}},
				{Name: "requires_manual_upgrade", Value: "false", Default: "false", Doc: "MNNVL hosts wait for 'reprovision mark-manual-upgrade-complete'."},
				{Name: "max_uploads", Value: "4", Default: "4", Doc: "Uploads in flight, site-wide."},
				{Name: "host_firmware_upgrade_retry_interval", Value: "60m", Default: "60m", Doc: "The wait before a failed update is retried."},
				{Name: "max_retries", Value: "5", Default: "5", Doc: "Retries of a failed update."},
				{Name: "machine_update_run_interval", Value: "300s", Default: "300s", Doc: "The update manager's cycle."},
				{Name: "new_firmware_wait", Value: "30m", Default: "30m", Alt: true, Doc: "How long new firmware may take to be reported."},
				{Name: "max_reset_retries", Value: "5", Default: "5", Alt: true, Doc: "Resets tried for new firmware."},
				{Name: "no_reset_retries", Value: "true", Default: "false", Alt: true, Doc: "Never retry a reset."},
				{Name: "initial_reset_wait", Value: "20m", Default: "20m", Alt: true, Doc: "The wait after the first reset."},
				{Name: "hgx_bmc_gpu_reboot_delay", Value: "30s", Default: "30s", Alt: true, Doc: "The wait between an HGX BMC's and its GPUs' reboots."},
				{Name: "task_poll", Value: "30s", Default: "30s", Alt: true, Doc: "How often a BMC task is read."},
				{Name: "task_timeout", Value: "2h", Default: "2h", Alt: true, Doc: "How long a BMC task may take."},
				{Name: "task_gone_grace", Value: "15m", Default: "15m", Alt: true, Doc: "How long a vanished BMC task is waited for."},
				{Name: "inventory_poll", Value: "2m", Default: "2m", Alt: true, Doc: "How often the inventory is read while waiting for new firmware."},
				{Name: "recheck", Value: "5m", Default: "5m", Alt: true, Doc: "The wait before firmware is checked again."},
				{Name: "max_transient_errors", Value: "10", Default: "10", Alt: true, Doc: "Transient errors tolerated in a row."},
				{Name: "max_upload_retries", Value: "5", Default: "5", Alt: true, Doc: "Retries of a failed upload."},
				{Name: "upload_lease", Value: "2h", Default: "2h", Alt: true, Doc: "How long an upload slot is held."},
				{Name: "power_drain_wait", Value: "90s", Default: "90s", Alt: true, Doc: "A drain on a BMC without an AC power cycle holds the host off this long."},
				{Name: "history_retention", Value: "2160h", Default: "2160h", Alt: true, Doc: "Finished updates kept for 'hostforge firmware history' (90 days)."},
			}},
			{Name: "scout", Doc: "The on-host agent's server ('hostforge worker', 'hostforge firmware run'); TLS only.", Keys: []Key{
				{Name: "listen", Value: "0.0.0.0:8643", Required: true, Doc: "host:port the agent server listens on."},
				{Name: "cert_file", Value: "/etc/hostforge/scout.crt", Required: true, Doc: "The server's TLS certificate."},
				{Name: "key_file", Value: "/etc/hostforge/scout.key", Required: true, Doc: "Its private key."},
				{Name: "site_secret_item", Value: "scout-site-secret", Required: true, Doc: "The vault item whose secret field every host's own token derives from."},
				{Name: "token_file", DocOnly: true, Doc: "No longer accepted: a fleet-wide token let any host speak for every machine; use site_secret_item."},
			}},
		}},
}

// Key documents one key of the config file.
type Key struct {
	// Name is the YAML key.
	Name string
	// Value is the sample's value in YAML flow style; empty for a
	// mapping (Keys) or a list of mappings (Items).
	Value string
	// Doc says what the key is: the sample's comment, the reference's
	// description.
	Doc string
	// Default is the value when the key is left out; Required says it may
	// not be (when its section is given).
	Default  string
	Required bool
	// Alt shows the key commented out in the sample: an alternative to
	// a key shown, or a tuning most sites leave at its default.
	Alt bool
	// DocOnly keeps the key out of the sample: a former key that is
	// refused, with what replaces it.
	DocOnly bool
	// Keys are a mapping's keys. With Free, their names are examples of
	// names the operator chooses (extension names, input names).
	Keys []Key
	Free bool
	// Items are a list of mappings' sample items; a key's Doc is given
	// where it first appears.
	Items [][]Key
	// Prose introduces a top-level section in docs/config.md.
	Prose string
}
