package enrollment

// IronicRequests exposes the documented Ironic requests per attempt to the
// test that measures them.
const IronicRequests = ironicRequests

// CheckAddressOverride exposes the redfish_address_override rule to its
// fuzz target.
var CheckAddressOverride = checkAddressOverride
