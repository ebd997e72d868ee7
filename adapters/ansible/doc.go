// Package ansible runs extension tasks of type ExtensionTaskAnsible with
// the real ansible-playbook, as MetalSoft's site controller does: the
// extensions.Runner of Ansible tasks.
//
// # Bundles
//
// The task's asset (a Bundle or AnsibleBundle among the definition's
// assets, by name) is a zip or tar.gz archive, or a directory, at its
// url: an http(s) URL, a file:// URL, or a local path (a relative one is
// read from the definition file's directory). An archive is unpacked once
// into the bundle cache (the config's extensions.asset_cache), under its
// SHA-256; when the asset gives its sha256, the archive must have that
// digest, and a cached bundle is used without fetching the URL again.
//
// A bundle fetched by URL proves what it is: an http(s) url needs the
// asset's sha256 (definitions that lack it are refused by validation, and
// the runner refuses them again before downloading anything). Plain http
// is refused unless the asset opts in with allowHttp: true — the digest
// still verifies the bytes, and every use of such an asset is logged as a
// warning. A download, and the files an archive unpacks to, are bounded
// by Config.MaxBundle (extensions.asset_max_bytes, default 512 MiB):
// past it the task fails with EXTENSION_ANSIBLE_ASSET_TOO_LARGE while the
// bytes stream in, and nothing is left in the cache.
//
// The cache and the unpacking go through os.Root: no entry's name leaves
// the bundle (absolute paths, "..", names below a link an earlier entry
// made are refused), and once every entry is written each symbolic link is
// resolved through the root, so a chain of links that leads out (x/l ->
// .., esc -> x/l/../..; each looks harmless alone) or a link that leads
// nowhere fails the bundle. Devices, hard links, more than MaxBundleFiles
// entries are refused; setuid and setgid bits are dropped. The copy into
// a run's working directory resolves every link the same way, local
// bundle directories included. A bundle whose one top-level directory
// holds the playbook (an archive of a folder) runs from that directory.
//
// # A run
//
// Each run gets a fresh working directory: a copy of the bundle, with
//
//	inventory.yml   localhost, connection local (the playbook runs on the
//	                worker and reaches the server through the variables)
//	variables.json  the extra-vars, mode 0600: the payload's keys at top
//	                level, configVars, extensionInstanceVariables (the
//	                inputs' defaults), and context_json_file_path,
//	                hostforge_delivery_id, hostforge_event_id,
//	                hostforge_stage, hostforge_extension, hostforge_task
//
// and runs, in it, `ansible-playbook -i inventory.yml PLAYBOOK -e
// @variables.json` (ANSIBLE_NOCOLOR, no retry files, its local temporary
// files inside the run's directory), in its own process group, killed
// with its children when executionTimeout (seconds, default 1 h) or the
// event's stage deadline passes. executionTimeoutTick (default 30 s) is
// the interval of the progress lines logged while it runs. The working
// directory, with variables.json, is removed when the run ends.
//
// A playbook is code from outside, so it runs with a minimal environment,
// as a firmware catalog's local script does (package internal/childenv):
// the worker's PATH, HOME and LANG, the site's ANSIBLE_* settings
// (Config.Env, the config's extensions.ansible_env; other names are
// refused) and the run's own, and nothing else of the worker's — not its
// database DSN, PGPASSWORD or API tokens. In an execution environment the
// playbook gets the same settings (podman/docker -e); the runtime's client
// gets PATH, HOME, LANG and its own variables (DOCKER_HOST,
// XDG_RUNTIME_DIR, REGISTRY_AUTH_FILE, ...).
//
// # Outputs
//
// A playbook reports outputs by writing a JSON object to the path in the
// variable context_json_file_path (ansible.builtin.copy with content "{{
// outputs | to_json }}"). When ansible-playbook exits 0 that object becomes
// the extension's stored outputs, replacing the previous ones, as MetalSoft
// replaces them: a run that writes none stores {}. A file that is not a
// JSON object fails the task with EXTENSION_ANSIBLE_OUTPUTS_INVALID and
// leaves the stored outputs alone. A non-zero exit fails with
// EXTENSION_ANSIBLE_PLAYBOOK_FAILED; the record keeps the end of the
// output (MaxTaskOutput bytes), scrubbed of the payload's secrets by the
// dispatcher, as the failure's Detail (log lines carry only its headline).
// A task that receives secrets keeps its output only by SHA-256 and length.
//
// # Execution environments
//
// A task whose ee names an OciImage asset runs ansible-playbook inside that
// image with the configured container runtime (podman or docker: `run
// --rm --network host -v DIR:/runner -w /runner IMAGE ansible-playbook
// ...`; the image is the asset's url without docker:// or oci://, else
// repositoryRegistry/namespaceRegistry:tagRegistry). Without a container
// runtime configured (extensions.container_runtime) such a task is refused
// with EXTENSION_RUNNER_CONFIG_INVALID saying so, rather than run on the
// worker in an environment it was not written for.
//
// # Testing
//
// [Playbooks] is the seam: [Exec] runs the real program; ansibletest.Fake
// interprets the handful of modules the project's tests use, and
// ansibletest.Run is the contract both pass (the real one under
// `make integration`, with Debian's ansible-core).
package ansible
