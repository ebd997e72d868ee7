// Package lab serves a rack without a data centre, on loopback, for
// 'hostforge lab', the integration tests and anyone trying hostforge:
//
//   - the NetBox emulator (fakes/netboxhttp) loaded with the demo rack
//     (enrolltest.DemoRack), over TLS behind a token;
//   - one Redfish emulator (fakes/redfishemu) per host, in its vendor's
//     flavour (Dell iDRAC, Lenovo XCC, AMI MegaRAC, Supermicro), over TLS,
//     reporting the host's frontend NICs and their link states — the host
//     with dead optics reports every link DOWN;
//   - an SSH server standing in for the DHCP server (adapters/ssh/sshtest;
//     its commands run on this machine, its files land in the lab
//     directory);
//   - with a real Ironic and ironic-inspector (scripts/ironic/ironic-up
//     starts them), the agent's side of inspection ([Ramdisk]): the hosts
//     enrol on Ironic's fake-hardware driver, their inspection data says
//     where their cables really go, so the miscabled host fails
//     verification, and the host with dead optics hits the link guard;
//   - with Options.Agent, the agent's side of in-band cleaning ([Agent]):
//     the nodes get the direct deploy interface, so Ironic runs cleaning
//     (automated on provide, manual on a retirement's erase) through the
//     agent's lookup, heartbeat and command API, which the lab answers —
//     erase_devices_metadata runs as a real clean step, and a step scripted
//     to fail lands in the node's history.
//
// [Start] writes lab.yaml (the config every hostforge command and the
// worker read), the vault file it names (mode 0600: the factory and
// monitoring BMC credentials and the SSH key; the BMC phase adds each
// host's rotated admin credential), the NetBox token, the lab CA that
// signed every server's certificate (TLS is verified as in production), and
// a file listing the rack's hosts. lab.yaml names the fleet manager's
// ledger, a SQLite file in the lab directory ([LedgerFile]), and turns the
// platform-class gate on, so enrolments record platform classes there and
// settle completion proof against its projection of Ironic. Everything is
// on 127.0.0.1; nothing is installed. Ironic is used when it runs, never
// installed from here.
package lab
