package redfishemu

import (
	"net/http"
)

// deleteAccount serves DELETE of an account: BMCs that create accounts by
// POST (Supermicro, a generic service) remove it; the fixed-slot ones
// refuse (405) — their slots are emptied with a PATCH.
func (e *Emulator) deleteAccount(p string) (int, map[string]string, any) {
	if e.vendor != "supermicro" && e.vendor != "generic" {
		return redfishError(http.StatusMethodNotAllowed, "Base.1.8.OperationNotAllowed", "Accounts are fixed slots on this BMC: PATCH the slot empty.")
	}
	if e.docs[p] == nil {
		return redfishError(http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
	}
	coll := "/redfish/v1/AccountService/Accounts"
	var keep []string
	for _, m := range e.memberPaths(coll) {
		if m != p {
			keep = append(keep, m)
		}
	}
	e.setMembers(coll, keep)
	delete(e.docs, p)
	delete(e.pw, p)
	for tok, acct := range e.tokens {
		if acct == p {
			delete(e.tokens, tok)
		}
	}
	return http.StatusNoContent, nil, nil
}
