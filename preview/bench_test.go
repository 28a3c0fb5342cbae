package preview

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

func BenchmarkMaskStringPlain(b *testing.B) {
	s := strings.Repeat("now playing movie.mkv from the start on media_player.tv; ", 20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MaskString(s)
	}
}

func BenchmarkMaskStringSecrets(b *testing.B) {
	s := "charging 4111 1111 1111 1111 for jane@example.com with password=hunter22 via " +
		cat("sk_", "live_", "abcdefghijklmnop") + " at https://bob:pw@h/x?api_key=abc ssn 078-05-1120"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MaskString(s)
	}
}

func BenchmarkBuild(b *testing.B) {
	t := &testing.T{}
	req := haRequest(t)
	for b.Loop() {
		Build(req, "plays token_ring.mp3").Hash()
	}
}

func BenchmarkMaskJSON64KB(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"items":[`)
	for i := 0; sb.Len() < 64<<10; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":12345,"title":"Some track name","path":"/media/music/track.mp3","email":"jane@example.com","password":"pw"}`)
	}
	sb.WriteString(`]}`)
	in := []byte(sb.String())
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		MaskJSON(in)
	}
}

func BenchmarkMaskingHandler(b *testing.B) {
	log := slog.New(NewMaskingHandler(slog.NewJSONHandler(io.Discard, nil)))
	for b.Loop() {
		log.Info("sending request", "url", "https://ha.local/api/services/media_player/play_media", "password", "x", "entity", "media_player.tv")
	}
}

// Hostile input costs time in proportion to its length: a URL nested in a
// URL's query 20,000 deep was masked level by level, each level the rest of
// the text again, and a long secret was scrubbed with a strings.Replacer
// whose setup is quadratic in the secret's length. Both took minutes before.
func BenchmarkMaskStringNestedURLs(b *testing.B) {
	s := strings.Repeat("https://a.b/?x=", 20000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MaskString(s)
	}
}

func BenchmarkMaskFieldLongPassword(b *testing.B) {
	s := strings.Repeat("a", 1<<20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MaskField("password", s)
	}
}

func BenchmarkMaskStringDigitGroups(b *testing.B) {
	s := strings.Repeat("078-05-1120 4111 ", 10000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MaskString(s)
	}
}

func BenchmarkMaskStringNestedPercent(b *testing.B) {
	s := "%" + strings.Repeat("25", 1<<17) + "41"
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		MaskString(s)
	}
}
