package artifact

import "github.com/hostforge/hostforge"

// TooLarge: a download passed the cache's size cap. It is not retried:
// the same URL would serve the same bytes.
var TooLarge = hostforge.Declare(hostforge.Spec{
	Code:   "FIRMWARE_ARTIFACT_TOO_LARGE",
	Phase:  "firmware_update",
	Owner:  hostforge.OwnerInfraEng,
	Action: "The artifact's download is larger than firmware.artifact_max_bytes (the message gives the URL without its query and the cap; default 16 GiB). Check that the catalog's url names the image you mean; if the image really is that large, raise firmware.artifact_max_bytes. Nothing was kept in the artifact cache. Then reset the host's update.",
})
