package enrollment

// Done reports whether the run recorded phase as done: the BMC phase done
// means the BMC's hostname is set, which the serverCreateDNS event needs.
func (r Result) Done(phase string) bool {
	for _, p := range r.Phases {
		if p.Phase == phase && p.Status == "done" {
			return true
		}
	}
	return false
}
