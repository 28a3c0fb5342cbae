package natsqueue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigil-dev/vigil/exec/approval/approvaltest"
	"github.com/vigil-dev/vigil/exec/natsqueue"
)

// manifestOf is a manifest for device of about size bytes, distinct by n
// (a resend of the same bytes would be deduplicated, not stored).
func manifestOf(device string, n, size int) []byte {
	head := fmt.Sprintf(`{"task_id":"fill-%d","capability_id":"MEDIA_PLAY","inputs":{"target_device":%q,"media_uri":"/m/`, n, device)
	pad := max(size-len(head)-4, 0)
	return []byte(head + strings.Repeat("x", pad) + `"}}`)
}

// TestSubmitStreamIsBounded: an agent publishing to a device no executor
// serves cannot fill the server's storage. A manifest over the size
// bound, the submission past SubmitMaxPerSubject for one device, and what
// would take the stream past SubmitMaxBytes are refused with
// ErrSubmitRefused (and the reason); what was accepted before stays.
func TestSubmitStreamIsBounded(t *testing.T) {
	s := startServer(t, nil)
	js := connectJS(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := natsqueue.NewClient(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, natsqueue.SubmitStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := stream.CachedInfo().Config
	if cfg.MaxMsgSize != natsqueue.SubmitMaxMsgSize || cfg.MaxMsgsPerSubject != natsqueue.SubmitMaxPerSubject ||
		cfg.MaxBytes != natsqueue.SubmitMaxBytes || cfg.Discard != jetstream.DiscardNew || !cfg.DiscardNewPerSubject {
		t.Fatalf("submit stream config: %+v", cfg)
	}

	// one manifest over the size bound
	if _, err := c.Publish(ctx, manifestOf("nobody", 0, natsqueue.SubmitMaxMsgSize+1)); !errors.Is(err, natsqueue.ErrSubmitRefused) ||
		!strings.Contains(err.Error(), "too large") {
		t.Fatalf("an oversized manifest: %v", err)
	}

	// one device's subject fills at SubmitMaxPerSubject
	for n := range natsqueue.SubmitMaxPerSubject {
		if _, err := c.Publish(ctx, manifestOf("nobody", n, 200)); err != nil {
			t.Fatalf("submission %d for an unserved device: %v", n, err)
		}
	}
	_, err = c.Publish(ctx, manifestOf("nobody", natsqueue.SubmitMaxPerSubject, 200))
	if !errors.Is(err, natsqueue.ErrSubmitRefused) || !strings.Contains(err.Error(), "1000 submissions already wait for this device") {
		t.Fatalf("submission %d for one device: %v", natsqueue.SubmitMaxPerSubject+1, err)
	}
	// another device is not held up by it
	if _, err := c.Publish(ctx, manifestOf("kitchen", 0, 200)); err != nil {
		t.Fatalf("another device's submission: %v", err)
	}

	// 100 KB manifests to ever new devices until the stream is full
	start, accepted := time.Now(), 0
	for n := 0; ; n++ {
		if n > 2*natsqueue.SubmitMaxBytes/(100<<10) {
			t.Fatalf("%d submissions of 100 KB accepted: the stream is not bounded", n)
		}
		_, err := c.Publish(ctx, manifestOf(fmt.Sprintf("dev-%d", n), n, 100<<10))
		if err != nil {
			if !errors.Is(err, natsqueue.ErrSubmitRefused) || !strings.Contains(err.Error(), "is full") {
				t.Fatalf("submission of 100 KB %d: %v", n, err)
			}
			break
		}
		accepted++
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Bytes > natsqueue.SubmitMaxBytes || info.State.Msgs != uint64(natsqueue.SubmitMaxPerSubject+1+accepted) {
		t.Fatalf("stream holds %d messages, %d bytes; want %d messages, at most %d bytes", info.State.Msgs, info.State.Bytes,
			natsqueue.SubmitMaxPerSubject+1+accepted, natsqueue.SubmitMaxBytes)
	}
	t.Logf("%d submissions of 100 KB accepted before the stream was full (%d bytes, %d messages) in %s",
		accepted, info.State.Bytes, info.State.Msgs, time.Since(start).Round(time.Millisecond))
}

// TestEarlierUnboundedSubmitStreamIsBounded: an executor bounds the submit
// stream an earlier release made without bounds, keeping what waits in
// it; bounds an administrator chose are left alone.
func TestEarlierUnboundedSubmitStreamIsBounded(t *testing.T) {
	s := startServer(t, nil)
	js := connectJS(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: natsqueue.SubmitStream,
		Subjects: []string{natsqueue.SubmitSubject, natsqueue.DeviceSubjects}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, MaxAge: natsqueue.SubmitMaxAge, Duplicates: natsqueue.DedupeWindow}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, natsqueue.DeviceSubject("living-room"), manifestOf("living-room", 0, 200)); err != nil {
		t.Fatal(err)
	}
	env := approvaltest.New(t)
	if _, err := natsqueue.NewExecutor(ctx, natsqueue.ExecutorOptions{JS: js, Queue: env.Queue, AuditPath: env.AuditPath(),
		Host: "h", Devices: []string{"living-room"}, ID: "e"}); err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, natsqueue.SubmitStream)
	if err != nil {
		t.Fatal(err)
	}
	info := stream.CachedInfo()
	if info.Config.MaxBytes != natsqueue.SubmitMaxBytes || info.Config.MaxMsgsPerSubject != natsqueue.SubmitMaxPerSubject ||
		info.Config.Discard != jetstream.DiscardNew || info.State.Msgs != 1 {
		t.Fatalf("after an executor started: %+v, %d messages", info.Config, info.State.Msgs)
	}

	chosen := info.Config
	chosen.MaxBytes = 1 << 30
	if _, err := js.UpdateStream(ctx, chosen); err != nil {
		t.Fatal(err)
	}
	if _, err := natsqueue.NewExecutor(ctx, natsqueue.ExecutorOptions{JS: js, Queue: env.Queue, AuditPath: env.AuditPath(),
		Host: "h", Devices: []string{"living-room"}, ID: "e"}); err != nil {
		t.Fatal(err)
	}
	if info, err := stream.Info(ctx); err != nil || info.Config.MaxBytes != 1<<30 {
		t.Fatalf("an administrator's bound was changed: %+v, %v", info.Config, err)
	}
}
