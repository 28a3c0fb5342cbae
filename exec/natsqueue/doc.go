// Package natsqueue is the approval queue shared across hosts on NATS
// JetStream (issue 24; docs/queue.md): agents publish manifests to a work
// queue stream, routed by the device they target; one executor per device
// set (`vigil serve` on the host with those devices) takes its devices'
// submissions, runs them through its local approval.Queue and publishes
// masked task views to a key-value bucket, and operators decide with a
// compare-and-set on a view's revision. The local queue stays the
// authority: every lease check, preview hash, deadline, tamper check and
// the exactly-once execution are its own; this package only carries
// requests and views.
//
// # What lives where
//
//	stream VIGIL_SUBMIT                  work queue; message id = sha256 of the manifest (a resend is dropped)
//	  vigil.submit.<b64url(device)>      manifests for one device (DeviceSubject, SubjectFor)
//	  vigil.submit                       manifests naming no device (searches; an earlier release's)
//	consumer vigil-executor-<hash>       one per executor, filtered on its devices (claim.go: a device
//	                                     another executor serves is a *ClaimError)
//	bucket vigil_tasks
//	  task.<b64url(task_id)>             TaskView: the record, the masked preview, its preview_hash, the
//	                                     signed result, the owning executor; Decision while an operator's
//	                                     decision waits
//	  verdict.<sha256>                   the executor's answer to one submitted manifest
//	stream VIGIL_AUDIT
//	  vigil.audit.<b64url(key id)>       every line of one executor's audit log, in order
//
// Each role connects with its own inbox prefix (InboxPrefix), so that the
// server's permissions (docs/queue.md, testdata/permissions.conf) can keep
// the executor's deliveries — raw manifests — from everyone else.
//
// Raw manifests (leases, secrets in inputs) are only ever in VIGIL_SUBMIT,
// which the executor consumes and acknowledges (work-queue retention then
// deletes them); the bucket and the audit stream hold what the local queue
// already masked.
//
// # Crashes
//
// The executor acknowledges a submission only after its verdict is in the
// bucket, and clears a decision only after the local queue recorded it, so
// a crash anywhere means a redelivery or a decision seen again: the local
// queue answers a resent request with its stored outcome and a second
// decision with *approval.DecidedError (the view then shows the first).
// Crash points (internal/crashpoint), besides the local queue's own:
// queue.submitted (the task made, its verdict not published) and
// queue.decided (the decision applied, its view not published).
package natsqueue
