package enrollment

// IronicRequests exposes the documented Ironic requests per attempt to the
// test that measures them.
const IronicRequests = ironicRequests
