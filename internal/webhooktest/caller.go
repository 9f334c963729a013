package webhooktest

import "runtime"

// callerFile is where this package's source is, to find receiver.mjs.
func callerFile() (uintptr, string, int, bool) { return runtime.Caller(0) }
