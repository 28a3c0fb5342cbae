package preview

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type loginEvent struct {
	User     string `json:"user"`
	Password string `json:"password"`
	Email    string `json:"email"`
}

type secretValuer struct{ v string }

func (s secretValuer) LogValue() slog.Value { return slog.StringValue("token=" + s.v) }

func TestMaskingHandler(t *testing.T) {
	var buf bytes.Buffer
	h := NewMaskingHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // no time: the output is compared whole
			}
			return a
		},
	}))
	log := slog.New(h)
	stripe := cat("sk_", "live_", "abcdefghijklmnopwxyz")
	log.Info("charging card 4111 1111 1111 1111 for jane@example.com",
		"password", "hunter22",
		"authorization", "Bearer "+stripe,
		"pan_number", int64(4111111111111111),
		"primary_key", 42,
		"event", loginEvent{User: "jane", Password: "pw123456", Email: "jane@example.com"},
		"err", errors.New("auth failed: password=pw123456"),
		slog.Group("req", "url", "https://bob:pw@h/x?api_key=abc", "cookie", "sid=xyz"),
		slog.Group("credentials", "user", "bob", "pass", "topsecret1"),
		"lazy", secretValuer{"opaque-token-value"},
		"elapsed", 2*time.Second,
		"note", "the password was hunter22",
	)
	log.With("api_key", "k-1234567890").WithGroup("media").Info("retry with k-1234567890", "path", "/media/token_ring.mp3")
	got := buf.String()
	want := `level=INFO msg="charging card ****-****-****-1111 for j***@example.com" password=******** authorization="Bearer sk_...wxyz" pan_number=****-****-****-1111 primary_key=42 event="{\"user\":\"jane\",\"password\":\"********\",\"email\":\"j***@example.com\"}" err="auth failed: password=********" req.url="https://bob:********@h/x?api_key=********" req.cookie="sid=********" credentials.user=******** credentials.pass=******** lazy="token=********" elapsed=2s note="the password was ********"
level=INFO msg="retry with ********" api_key=******** media.path=/media/token_ring.mp3
`
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{"hunter22", "pw123456", "topsecret1", "opaque-token-value", "k-1234567890", "4111111111111111", stripe} {
		if strings.Contains(got, s) {
			t.Errorf("log leaks %q", s)
		}
	}
	if !h.Enabled(context.Background(), slog.LevelInfo) || h.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("Enabled does not defer to the wrapped handler")
	}
}
