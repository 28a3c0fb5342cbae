package natsqueue

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/task"
)

// The streams, bucket and subjects Vigil creates.
const (
	SubmitStream = "VIGIL_SUBMIT"
	// SubmitSubject carries the manifests that name no device: searches,
	// and anything an executor must reject because it cannot be read. One
	// executor serves it (the first to start; see ExecutorConsumerName).
	// It was the only submit subject before submissions were routed by
	// device, so an earlier release's agents still reach an executor.
	SubmitSubject = "vigil.submit"
	// DeviceSubjects are the per-device subjects, vigil.submit.<token>
	// (DeviceSubject).
	DeviceSubjects = "vigil.submit.>"
	TasksBucket    = "vigil_tasks"
	AuditStream    = "VIGIL_AUDIT"
	// AuditSubject held the one executor's log before there could be
	// several; each executor now publishes to its own AuditSubjectFor.
	AuditSubject = "vigil.audit"
	// AuditSubjects are the executors' audit subjects.
	AuditSubjects = "vigil.audit.>"
	// ExecutorConsumer is the earlier release's one consumer, which took
	// the whole stream; an executor of this release removes it
	// (MigrateSubmitStream).
	ExecutorConsumer = "vigil-executor"
	// ExecutorConsumerPrefix starts every executor's consumer name.
	ExecutorConsumerPrefix = "vigil-executor-"
)

// Retention. A submission waits in the work queue until the executor takes
// it (at most a week if none does); the dedupe window covers the longest
// lease Vigil issues (24 h) so a resend while its lease lives is dropped;
// a task's view outlives its deadline (the longest lease) by weeks; the
// audit stream keeps everything, like the log it copies, so a pulled copy
// verifies from its first entry.
const (
	SubmitMaxAge = 7 * 24 * time.Hour
	DedupeWindow = 25 * time.Hour
	TaskMaxAge   = 30 * 24 * time.Hour
	TaskHistory  = 5
)

// Bounds of VIGIL_SUBMIT. An agent may publish to any submit subject,
// including a device no executor serves, where a submission waits up to
// SubmitMaxAge: unbounded, that is a way to fill the server's storage. The
// stream refuses what is past a bound (discard new, per subject too) rather
// than dropping submissions already waiting, so the agent is told
// (ErrSubmitRefused) and nothing it sent earlier is lost.
const (
	// SubmitMaxMsgSize is a manifest at its largest and room for the
	// headers (the message id, the source).
	SubmitMaxMsgSize = task.MaxManifestBytes + 4<<10
	// SubmitMaxPerSubject is how many submissions may wait for one device
	// (or, on SubmitSubject, for the executor of searches).
	SubmitMaxPerSubject = 1000
	// SubmitMaxBytes is what all waiting submissions may hold together.
	SubmitMaxBytes = 64 << 20
)

// TaskKey is a task's key in the bucket. Task ids may hold ':' and empty
// dot-separated tokens, which bucket keys cannot, so the id is encoded.
func TaskKey(id string) string { return "task." + base64.RawURLEncoding.EncodeToString([]byte(id)) }

// DeviceSubject is where manifests for one device go. Device ids are the
// config's free text and may hold what a subject token cannot ('.', '*',
// '>', spaces, an empty string), so the token is the id base64url-encoded
// without padding: only A-Z a-z 0-9 - _, one token whatever the id, and
// two ids never share one (config refuses an empty id, so it is never
// empty either).
func DeviceSubject(device string) string {
	return "vigil.submit." + base64.RawURLEncoding.EncodeToString([]byte(device))
}

// AgentSubjectInfix joins a device's subject and an agent's name token:
// vigil.submit.<device>.agent.<agent> (AgentSubjectFor).
const AgentSubjectInfix = ".agent."

// AgentSubjectFor is where the named agent's manifests for one device go:
// the device's subject, AgentSubjectInfix and the [[agents]] name
// base64url-encoded as DeviceSubject encodes the device. The server's
// permissions let only that agent's NATS user publish there, so the
// executor knows who sent what arrives on it and mints its lease under
// its grants when it brings none.
func AgentSubjectFor(device, agent string) string {
	return DeviceSubject(device) + AgentSubjectInfix + base64.RawURLEncoding.EncodeToString([]byte(agent))
}

// agentOfSubject is the agent an agent subject names (ok=false for any
// other subject, or a name token that does not decode).
func agentOfSubject(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, "vigil.submit.")
	if !ok {
		return "", false
	}
	_, tok, ok := strings.Cut(rest, AgentSubjectInfix)
	if !ok || tok == "" || strings.Contains(tok, ".") {
		return "", false
	}
	name, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(name) == 0 {
		return "", false
	}
	return string(name), true
}

// SubjectFor routes a manifest: to its inputs.target_device's subject when
// it names one, else to SubmitSubject. Nothing here validates the
// manifest (the executor's local queue does, and rejects what is wrong);
// reading it only picks the executor that will answer.
func SubjectFor(raw []byte) string {
	var m struct {
		Inputs struct {
			TargetDevice any `json:"target_device"`
		} `json:"inputs"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return SubmitSubject
	}
	if d, ok := m.Inputs.TargetDevice.(string); ok && d != "" {
		return DeviceSubject(d)
	}
	return SubmitSubject
}

// ExecutorConsumerName names the durable consumer of the executor serving
// these devices: the prefix and the first 12 hex digits of the sha256 of
// the sorted ids, one per line. The name follows from the config alone, so
// a restart finds its consumer again with no state of its own, and two
// executors with the same set get the same name (ExecutorOptions.ID tells
// them apart).
func ExecutorConsumerName(devices []string) string {
	ids := slices.Clone(devices)
	slices.Sort(ids)
	s := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	return ExecutorConsumerPrefix + hex.EncodeToString(s[:6])
}

// AuditSubjectFor is where the executor with this id (ExecutorOptions.ID:
// its result-signing key's id, stable across restarts and device changes)
// publishes its audit log: one subject per executor, so that each log's
// lines stay in order and resume from their own last offset. The id is
// base64url-encoded for the reason DeviceSubject gives.
func AuditSubjectFor(executorID string) string {
	return "vigil.audit." + base64.RawURLEncoding.EncodeToString([]byte(executorID))
}

// VerdictKey is where the executor answers the manifest with this digest.
func VerdictKey(digest string) string { return "verdict." + digest }

// Digest names one submitted manifest: its bytes' sha256.
func Digest(raw []byte) string {
	s := sha256.Sum256(raw)
	return hex.EncodeToString(s[:])
}

// ErrOldSubmitStream is a VIGIL_SUBMIT made by an earlier release (its one
// subject vigil.submit): only an executor may upgrade it.
var ErrOldSubmitStream = errors.New("the stream " + SubmitStream + " is from an earlier Vigil (subject " + SubmitSubject +
	" only): start this release's `vigil serve` on the devices' host once and it upgrades the stream")

// Setup creates (or finds) the streams and the bucket. Every role calls it,
// so whichever starts first makes them; the configuration is the same. A
// user whose permissions do not allow creating them (an agent's or an
// operator's, docs/queue.md) is told to start the executor first.
func Setup(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	return Layout{}.setup(ctx, js, false, nil)
}

// Layout says how the streams and the bucket are made when they are
// missing ([queue] replicas).
type Layout struct {
	// Replicas is how many servers of a cluster keep each stream and the
	// bucket (0: one; JetStream allows 1 to 5). A stream that exists is
	// used as it is: an executor only warns when it has fewer.
	Replicas int
}

func (l Layout) replicas() int { return max(l.Replicas, 1) }

// Setup is the package's Setup, making what is missing with l.
func (l Layout) Setup(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	return l.setup(ctx, js, false, nil)
}

func submitStreamConfig() jetstream.StreamConfig {
	return boundSubmit(jetstream.StreamConfig{Name: SubmitStream, Subjects: []string{SubmitSubject, DeviceSubjects},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, MaxAge: SubmitMaxAge,
		Duplicates: DedupeWindow, Description: "Vigil: manifests waiting for the executor of their device"})
}

// boundSubmit sets the submit stream's bounds on cfg.
func boundSubmit(cfg jetstream.StreamConfig) jetstream.StreamConfig {
	cfg.MaxMsgSize, cfg.MaxMsgsPerSubject, cfg.MaxBytes = SubmitMaxMsgSize, SubmitMaxPerSubject, SubmitMaxBytes
	cfg.Discard, cfg.DiscardNewPerSubject = jetstream.DiscardNew, true
	return cfg
}

// submitUnbounded says whether cfg has none of the bounds (an earlier
// release made it). Bounds an administrator chose are left as they are.
func submitUnbounded(cfg jetstream.StreamConfig) bool {
	return cfg.MaxMsgSize <= 0 && cfg.MaxMsgsPerSubject <= 0 && cfg.MaxBytes <= 0
}

// setup is Setup; an executor (migrate) also upgrades an earlier release's
// submit stream, and warns on log of a stream with fewer replicas than l.
func (l Layout) setup(ctx context.Context, js jetstream.JetStream, migrate bool, log *slog.Logger) (jetstream.KeyValue, error) {
	cfg := submitStreamConfig()
	cfg.Replicas = l.replicas()
	sub, err := ensureStream(ctx, js, cfg)
	if err != nil {
		return nil, l.explain(err)
	}
	if !slices.Contains(sub.CachedInfo().Config.Subjects, DeviceSubjects) {
		if !migrate {
			return nil, ErrOldSubmitStream
		}
		if err := migrateSubmitStream(ctx, js, sub); err != nil {
			return nil, err
		}
	} else if cfg := sub.CachedInfo().Config; migrate && submitUnbounded(cfg) {
		// made by an earlier release, unbounded: what waits in it stays
		if _, err := js.UpdateStream(ctx, boundSubmit(cfg)); err != nil {
			return nil, fmt.Errorf("nats stream %s: bounding it: %w", SubmitStream, shown(err))
		}
	}
	aud, err := ensureStream(ctx, js, jetstream.StreamConfig{Name: AuditStream, Subjects: []string{AuditSubject, AuditSubjects},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Duplicates: 10 * time.Minute,
		Replicas: l.replicas(), Description: "Vigil: the executors' audit logs, line by line"})
	if err != nil {
		return nil, l.explain(err)
	}
	if cfg := aud.CachedInfo().Config; migrate && !slices.Contains(cfg.Subjects, AuditSubjects) {
		// an earlier release's: its one executor's lines stay under
		// vigil.audit; this executor publishes its log again, whole, to its own subject
		cfg.Subjects = []string{AuditSubject, AuditSubjects}
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			return nil, fmt.Errorf("nats stream %s: upgrading it to one subject per executor: %w", AuditStream, shown(err))
		}
	}
	kv, err := js.KeyValue(ctx, TasksBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: TasksBucket, History: TaskHistory,
			TTL: TaskMaxAge, Storage: jetstream.FileStorage, Replicas: l.replicas(),
			Description: "Vigil: task views and decisions"})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, TasksBucket)
		}
		err = mayNotCreate(js, "bucket "+TasksBucket, err)
	}
	if err != nil {
		return nil, l.explain(fmt.Errorf("nats bucket %s: %w", TasksBucket, shown(err)))
	}
	if migrate && log != nil {
		l.warnFewerReplicas(ctx, js, log)
	}
	return kv, nil
}

// explain adds to an error making a stream what replicas need.
func (l Layout) explain(err error) error {
	if l.Replicas > 1 && strings.Contains(err.Error(), "replicas") {
		return fmt.Errorf("%w ([queue] replicas = %d needs a JetStream cluster of at least %d servers)", err,
			l.Replicas, l.Replicas)
	}
	return err
}

// warnFewerReplicas logs each stream kept on fewer servers than l says:
// made before [queue] replicas was raised, or by an administrator. Vigil
// does not change them (its permissions do not allow it; docs/queue.md).
func (l Layout) warnFewerReplicas(ctx context.Context, js jetstream.JetStream, log *slog.Logger) {
	if l.Replicas <= 1 {
		return
	}
	for _, name := range []string{SubmitStream, AuditStream, "KV_" + TasksBucket} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			continue
		}
		if n := s.CachedInfo().Config.Replicas; n < l.Replicas {
			log.Warn("queue: a stream has fewer replicas than [queue] replicas", "stream", name, "replicas", n,
				"want", l.Replicas, "fix", fmt.Sprintf("nats stream edit %s --replicas %d", name, l.Replicas))
		}
	}
}

// migrateSubmitStream upgrades an earlier release's VIGIL_SUBMIT: the
// per-device subjects and the bounds are added (vigil.submit stays, so what waits there
// and what an earlier agent still sends is served), and the earlier
// executor's consumer, which took the whole stream, is removed: on a
// work-queue stream it would overlap every executor's. Removing a consumer
// leaves its unacknowledged messages in the stream for the next one.
func migrateSubmitStream(ctx context.Context, js jetstream.JetStream, s jetstream.Stream) error {
	cfg := boundSubmit(s.CachedInfo().Config)
	cfg.Subjects = []string{SubmitSubject, DeviceSubjects}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("nats stream %s: upgrading it to per-device subjects: %w", SubmitStream, shown(err))
	}
	if err := js.DeleteConsumer(ctx, SubmitStream, ExecutorConsumer); err != nil &&
		!errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("nats stream %s: removing the earlier executor's consumer %s: %w", SubmitStream,
			ExecutorConsumer, shown(err))
	}
	return nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, cfg.Name)
		}
		err = mayNotCreate(js, "stream "+cfg.Name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("nats stream %s: %w", cfg.Name, shown(refused(js, err)))
	}
	return s, nil
}

// refused explains an error that followed a permissions refusal: the
// request was dropped, so the error itself is only a timeout.
func refused(js jetstream.JetStream, err error) error {
	if last := js.Conn().LastError(); errors.Is(last, nats.ErrPermissionViolation) && !errors.Is(err, last) {
		return fmt.Errorf("%w (the server refused this NATS user: %v; each role's permissions are in docs/queue.md)", err, shown(last))
	}
	return err
}

// mayNotCreate explains a creation the server refused for permissions:
// the server drops a request the user may not publish and says so only
// asynchronously, so the request itself just times out.
func mayNotCreate(js jetstream.JetStream, what string, err error) error {
	if err == nil {
		return nil
	}
	if last := js.Conn().LastError(); errors.Is(last, nats.ErrPermissionViolation) {
		return fmt.Errorf("%s does not exist and this NATS user may not create it (%v): start the executor "+
			"(`vigil serve` on the devices' host) first, or create it as an administrator (docs/queue.md)", what, shown(last))
	}
	return err
}
