package natsqueue

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The streams, bucket and subjects Vigil creates.
const (
	SubmitStream     = "VIGIL_SUBMIT"
	SubmitSubject    = "vigil.submit"
	TasksBucket      = "vigil_tasks"
	AuditStream      = "VIGIL_AUDIT"
	AuditSubject     = "vigil.audit"
	ExecutorConsumer = "vigil-executor"
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

// TaskKey is a task's key in the bucket. Task ids may hold ':' and empty
// dot-separated tokens, which bucket keys cannot, so the id is encoded.
func TaskKey(id string) string { return "task." + base64.RawURLEncoding.EncodeToString([]byte(id)) }

// VerdictKey is where the executor answers the manifest with this digest.
func VerdictKey(digest string) string { return "verdict." + digest }

// Digest names one submitted manifest: its bytes' sha256.
func Digest(raw []byte) string {
	s := sha256.Sum256(raw)
	return hex.EncodeToString(s[:])
}

// Setup creates (or finds) the streams and the bucket. Every role calls it,
// so whichever starts first makes them; the configuration is the same.
func Setup(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	if _, err := ensureStream(ctx, js, jetstream.StreamConfig{Name: SubmitStream, Subjects: []string{SubmitSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, MaxAge: SubmitMaxAge,
		Duplicates: DedupeWindow, Description: "Vigil: manifests waiting for the executor"}); err != nil {
		return nil, err
	}
	if _, err := ensureStream(ctx, js, jetstream.StreamConfig{Name: AuditStream, Subjects: []string{AuditSubject},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Duplicates: 10 * time.Minute,
		Description: "Vigil: the executor's audit log, line by line"}); err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, TasksBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: TasksBucket, History: TaskHistory,
			TTL: TaskMaxAge, Storage: jetstream.FileStorage, Description: "Vigil: task views and decisions"})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, TasksBucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nats bucket %s: %w", TasksBucket, err)
	}
	return kv, nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = js.Stream(ctx, cfg.Name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("nats stream %s: %w", cfg.Name, err)
	}
	return s, nil
}
