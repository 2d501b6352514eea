// Package nowframe owns the frame: what the person at this desktop is doing
// now, assembled best-effort and concurrently from ActivityWatch and the
// sidecar under their own deadlines, with the privacy defaults applied once,
// here, and rendered to JSON once per frame version; the latest frame and
// its change feed (Builder.Changed), and the poller that keeps it warm.
package nowframe
