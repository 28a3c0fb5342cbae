package preview

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
)

// MaskingHandler wraps a slog.Handler so that no record carries a secret: the message, attribute keys and
// values (groups, errors, Stringers and structs included) are masked before the wrapped handler sees them.
// Attributes whose key names a secret ("password", "authorization") are masked by name.
type MaskingHandler struct {
	next slog.Handler
	// known holds secrets masked in attributes attached by WithAttrs, so a later message that repeats one is
	// scrubbed too. It lives only in memory and is never written.
	known []string
}

// NewMaskingHandler wraps next.
func NewMaskingHandler(next slog.Handler) *MaskingHandler { return &MaskingHandler{next: next} }

// Enabled defers to the wrapped handler.
func (h *MaskingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle masks the record and passes it on. Secrets found in one attribute are scrubbed from the message
// and the other attributes too ("login failed for hunter22" next to password=hunter22).
func (h *MaskingHandler) Handle(ctx context.Context, r slog.Record) error {
	m := newMasker()
	for _, k := range h.known {
		m.note(k)
	}
	msg := m.text(r.Message, true)
	var attrs []slog.Attr
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, m.attr(a))
		return true
	})
	if sr := m.scrubber(); sr != nil {
		msg = sr.Replace(msg)
		for i := range attrs {
			attrs[i] = scrubAttr(sr, attrs[i])
		}
	}
	out := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	out.AddAttrs(attrs...)
	return h.next.Handle(ctx, out)
}

// WithAttrs masks the attributes once, when they are attached.
func (h *MaskingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	m := newMasker()
	for _, k := range h.known {
		m.note(k)
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = m.attr(a)
	}
	if sr := m.scrubber(); sr != nil {
		for i := range out {
			out[i] = scrubAttr(sr, out[i])
		}
	}
	known := make([]string, 0, len(m.secrets))
	for k := range m.secrets {
		known = append(known, k)
	}
	return &MaskingHandler{next: h.next.WithAttrs(out), known: known}
}

// WithGroup masks the group name too: it is text that reaches the log.
func (h *MaskingHandler) WithGroup(name string) slog.Handler {
	m := newMasker()
	for _, k := range h.known {
		m.note(k)
	}
	out := m.text(name, true)
	return &MaskingHandler{next: h.next.WithGroup(scrub(m.scrubber(), out)), known: h.known}
}

func (m *masker) attr(a slog.Attr) slog.Attr {
	key := m.text(a.Key, false)
	v := a.Value.Resolve()
	secretName := classifyName(a.Key) != kindNone
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			if secretName {
				m.noteAttrLeaves(ga)
				out[i] = slog.String(m.text(ga.Key, false), Fixed)
				continue
			}
			out[i] = m.attr(ga)
		}
		return slog.Attr{Key: key, Value: slog.GroupValue(out...)}
	case slog.KindString:
		return slog.String(key, m.field(a.Key, v.String()))
	case slog.KindAny:
		return slog.String(key, m.anyText(a.Key, v.Any()))
	default:
		// Numbers, bools, times, durations: masked by name, or when their text has a secret's shape (a card
		// number logged as an int64).
		txt := v.String()
		if out := m.field(a.Key, txt); out != txt || secretName {
			return slog.String(key, out)
		}
		return slog.Attr{Key: key, Value: v}
	}
}

func (m *masker) noteAttrLeaves(a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		for _, ga := range v.Group() {
			m.noteAttrLeaves(ga)
		}
		return
	}
	m.note(v.String())
}

// anyText renders an arbitrary value as text and masks it: JSON-able values through the JSON masker so
// nested secret-named fields are caught by name.
func (m *masker) anyText(name string, x any) string {
	var txt string
	switch t := x.(type) {
	case nil:
		return "<nil>"
	case error:
		txt = t.Error()
	case fmt.Stringer:
		txt = t.String()
	case encoding.TextMarshaler:
		b, err := t.MarshalText()
		if err != nil {
			return Fixed
		}
		txt = string(b)
	case []byte:
		txt = string(t)
	default:
		b, err := json.Marshal(t)
		if err != nil {
			txt = fmt.Sprintf("%+v", t)
			break
		}
		if n, err := parseJSON(b); err == nil {
			if classifyName(name) != kindNone {
				m.noteLeaves(n)
				return Fixed
			}
			m.maskNode(n, "")
			var buf bytes.Buffer
			n.encode(&buf, "", 0)
			return buf.String()
		}
		txt = string(b)
	}
	return m.field(name, txt)
}

func scrubAttr(r interface{ Replace(string) string }, a slog.Attr) slog.Attr {
	a.Key = r.Replace(a.Key)
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(r.Replace(a.Value.String()))
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]slog.Attr, len(g))
		for i, ga := range g {
			out[i] = scrubAttr(r, ga)
		}
		a.Value = slog.GroupValue(out...)
	}
	return a
}
