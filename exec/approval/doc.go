// Package approval is the pending-action queue: agents submit leased tasks,
// a person decides once (first decision wins across processes), approved
// media tasks run exactly once, and every step lands in the audit log.
//
// # On disk
//
// Under the state folder: tasks/<id>/manifest.json (as submitted, 0600),
// tasks/<id>/record.json (the state machine, rewritten atomically under
// tasks/<id>/lock), tasks/<id>/search.json (which request a search task_id
// belongs to), results/<id>.json (the signed result, written once by
// task.Store), inbox/new, inbox/rejected, and tasks/.index/ — the index of
// open tasks (open/<id> markers, the finished list, the built stamp; see
// index.go) so that opening the queue and listing what is pending cost what
// the open tasks cost, whatever the history holds. The index only says where
// to look: every decision and repair reads the task's own record.
//
// # States
//
//	submitted ──► pending ──► approved ──► executing ──► done | failed
//	                 │
//	                 ├──► denied            (a person said no)
//	                 ├──► expired           (APPROVAL_TIMEOUT, or LEASE_EXPIRED when the lease's exp came first)
//	                 ├──► tampered          (manifest/plan/record no longer hash to what was submitted,
//	                 │                       or the record's agent/deadline differ from the submitted entry)
//	                 └──► failed            (lease revoked or otherwise invalid at decision time)
//	approved ──► tampered                   (the stored request changed before it ran)
//
// "damaged" is never written: a record that cannot be read is listed in that
// state with the reason, cannot be decided, and affects no other task.
// Final states: done, failed, denied, expired, tampered.
//
// # Deadline
//
// A pending task's deadline (Record.Deadline) is the earlier of the approval
// timeout and the lease's exp, without the verifier's clock-skew leeway: the
// countdown a person sees is the one that applies. Past it the task is
// expired — APPROVAL_TIMEOUT, or LEASE_EXPIRED when the lease ran out first
// (state expired either way, never a denial). An approval that finds the
// lease expired expires the task the same way; a lease revoked or otherwise
// invalid at decision time fails it (state failed). A submission whose lease
// is already past its exp (let through by the verifier's leeway) is rejected
// with LEASE_EXPIRED: no task is made that no one could approve. An
// approval checks the lease's exp itself with no leeway too.
//
// The deadline, the agent, the lease's jti, the capability and the device
// a person is shown are record.json's only while they are what the audit
// log's submitted entry recorded (its actor, token_jti, capability, target,
// approval_deadline and lease_expires): a pending record that differs is
// tampered at its next repair or decision (so an edited expires_at never
// extends the deadline `vigil serve` expires by), and any record that
// differs is shown with the entry's values and Damage naming the edit.
//
// # One task_id, one request
//
// A task_id names one request forever: capability, inputs (device included)
// and lease subject. Resubmitting the same request returns the stored
// answer (a lease re-issued with a new jti counts as the same request; the
// new lease is not used). Anything else under that id — another
// capability, media or search, other inputs, another subject — is rejected
// and the rejection is logged without the task's id (in details.reused_task_id),
// so the existing task's state and audit trail stay untouched.
//
// # Order of durable writes
//
// Every write is durable before the next starts (atomicfile: temp, fsync,
// rename, dir fsync; audit.Append: write, fsync). The record always moves
// first and carries log_from — the offset of the audit log's end before the
// transition's entry — until that entry is written; recovery then looks for
// the entry from log_from on (a short scan of what was appended since)
// before writing it, so no entry is ever written twice and the log never
// holds a decision the record lacks. (The search starts at the task's
// submitted entry when that is earlier than log_from: each transition has
// one entry, so a log_from edited past its entry cannot get it written twice.)
//
//	submit:  S1 manifest.json   S1i open marker   S2 record pending+log_from   S3 log "submitted"   S4 record (submitted seq/offset, no log_from)
//	approve: A1 record approved+log_from   A2 log "approved"
//	execute: E1 record executing+log_from   E2 device acts   E3 result stored   E4 log "executed"|"failed"   E5 record done|failed
//	finish (deny, expire, tamper, fail without a device result):
//	         F1 record final state+error+log_from   F2 signed failure result   F3 log the event   F4 record without log_from
//	retire (after E5, F4, or a result adopted): the id appended to the finished list, then its open marker removed
//
// Crash points (internal/crashpoint) sit after each write: submit.manifest,
// submit.index, submit.record, submit.audit, submit.done, approve.record, approve.audit,
// execute.record, result.ran (device acted, nothing stored), result.stored,
// execute.audit, execute.done, and <op>.record/.result/.audit/.done for op
// deny, expire, tamper, fail.
//
// # Crash table (what the next open, or the next decision on that task, does)
//
//	after S1  manifest alone, no record: not a task; a resubmission overwrites it
//	after S1i a marker with no record: the next open drops it (under the task's lock, the record still absent)
//	after S2  pending+log_from: find "submitted" from log_from, else append it (reconciled); record its place
//	after S3  same; the entry is found, not written again. A submitted entry of the task before log_from
//	          is no crash's doing (the record was edited to have it logged again): tampered
//	after S4  nothing to do
//	after A1  approved+log_from, no "approved" in the log: the decision never reached it — the record goes
//	          back to pending (nothing ran; the person decides again). Recovery never writes an approval.
//	after A2  the "approved" entry is found (from the submitted entry on) and no outcome is: run it (E1…)
//	after E1  executing, no result: the device may have acted — never re-run; finish as failed
//	          (EXECUTION_FAILED "interrupted"), F1…F4
//	after E2  same as E1 (result.ran)
//	after E3  executing with a result: find "executed"/"failed" from log_from, else append (reconciled); E5
//	after E4  same; the entry is found, so there is one executed entry
//	after F1  final+log_from: store the result if missing, find the event from log_from else append, clear log_from
//	after F2  same; the stored result is kept
//	after F3  same; the entry is found
//	after E5/F4, before the marker goes: the record is final without log_from; the next open retires it
//	          (a repeated line in the finished list is harmless: readers keep one)
//
// The log is the authority on approvals: an approved record whose approval
// is not in the log and that has no log_from (no crash leaves that), or whose
// task already has a denial, expiry, tampering or outcome in the log (a
// finished record rolled back by hand), is tampered and never run.
//
// A decision takes the task's lock and first runs this repair, so a second
// decision after a crashed first one finds the first (the record holds it)
// and gets a *DecidedError. Open (only the tasks the index lists as open),
// Pending, Tasks, List and Get repair tasks whose lock is free. A record from before log_from (a non-final record with a stored
// result) is settled from the result, looking for its entry from the
// submitted entry on. A stored result is adopted only if the operator key
// signed it and it answers this task's request (its task_id and
// request_hash are the record's): one that does not is moved aside
// (results/<id>.json.untrusted-<n>) and the task is tampered (finished as
// interrupted when it was executing). Result, and every answer a decision
// returns, refuse such a result the same way (task.ErrNotThisTask).
//
// Everything audited checks the log's end before its first write: a
// submission, a search task (before it runs), and every transition
// (saveFrom). On a cut or altered log nothing is written.
//
// # Integrity
//
// At every decision and before every execution (recovery included) the
// manifest's bytes are re-hashed and the plan re-made from them, and both
// are compared with the record and with the audit log's submitted entry
// (read at the offset the record keeps, its hash recomputed and the next
// entry's link to it checked: appends check only the log's end, so an entry
// edited in place in the middle would otherwise vouch for an edited
// request). A mismatch, a missing manifest or
// a missing submitted entry moves the task to tampered: nothing runs, a
// signed EXECUTION_FAILED result names both hashes, and a "tampered" entry
// is logged. A decision also reads the log from the submitted entry on,
// through the chain (every entry's hash and link checked: a break there
// fails the decision closed, as a damaged end does): a
// pending record whose task already has a decision or outcome there was
// rolled back by hand (no crash can leave that, the record moves first), and
// is tampered too. An approval carries the preview hash the person saw; if the
// stored request no longer previews to it, the decision is refused with
// ErrPreviewChanged and nothing changes.
package approval
