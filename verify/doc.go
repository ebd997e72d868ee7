// Package verify checks a host's inspection data against its NetBox intent:
// carrier, hardware, and LLDP against the cables. It is pure: no I/O.
package verify
