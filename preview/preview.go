package preview

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Request is the request a driver plans to send, unmasked. It never leaves the engine; Build turns it into
// the masked HTTPPreview that people, logs and the audit trail see.
type Request struct {
	Method      string
	URL         string
	Headers     map[string]string
	Body        []byte
	ContentType string // decides how Body is read: JSON, form, or text
}

// Body is seed 003's body: every masked field with its masked value, and every safe field as it is.
type Body struct {
	Masked  map[string]string `json:"masked"`
	Preview map[string]string `json:"preview"`
}

// HTTPPreview is seed 003's preview of a mutating request, already masked. Raw is the whole masked body,
// pretty-printed, so the person can read it in context; ContentType is kept for display.
type HTTPPreview struct {
	Method          string            `json:"method"`
	URL             string            `json:"url"`
	Headers         map[string]string `json:"headers"`
	Body            Body              `json:"body"`
	EstimatedEffect string            `json:"estimatedEffect"`
	ContentType     string            `json:"contentType,omitempty"`
	Raw             string            `json:"raw"`
}

// Build masks req into a preview. Every string of the result is masked: the URL, header names and values,
// body keys and values, the raw body and the effect text (which may quote a media URI with a token in it).
// A secret masked in one place is also scrubbed wherever else it appears in the same preview.
func Build(req Request, effect string) HTTPPreview {
	m := newMasker()
	p := HTTPPreview{
		Method:  strings.ToUpper(strings.TrimSpace(m.text(req.Method, false))),
		URL:     m.url(req.URL),
		Headers: make(map[string]string, len(req.Headers)),
		Body:    Body{Masked: map[string]string{}, Preview: map[string]string{}},
	}
	for k, v := range req.Headers {
		p.Headers[m.text(k, false)] = m.field(k, v)
	}
	ct := req.ContentType
	if ct == "" {
		for k, v := range req.Headers {
			if strings.EqualFold(k, "Content-Type") {
				ct = v
			}
		}
	}
	p.ContentType = m.text(ct, false)
	var tree *jnode
	switch {
	case len(req.Body) == 0:
	case !utf8.Valid(req.Body):
		// Binary bodies are not shown byte by byte; their size and digest identify them.
		sum := sha256.Sum256(req.Body)
		p.Raw = fmt.Sprintf("<binary body: %d bytes, sha256 %s>", len(req.Body), hex.EncodeToString(sum[:]))
		p.Body.Preview["$"] = p.Raw
	case mediaType(ct) == "application/x-www-form-urlencoded":
		var pairs []formPair
		p.Raw = m.form(string(req.Body), &pairs)
		seen := map[string]int{}
		for _, fp := range pairs {
			key := fp.name
			if n := seen[fp.name]; n > 0 {
				key = fmt.Sprintf("%s.%d", fp.name, n)
			}
			seen[fp.name]++
			if fp.masked {
				p.Body.Masked[key] = fp.value
			} else {
				p.Body.Preview[key] = fp.value
			}
		}
	default:
		// JSON by content type or by sniffing; anything else is text.
		if n, err := parseJSON(req.Body); err == nil {
			m.maskNode(n, "")
			tree = n
		} else {
			txt := string(req.Body)
			p.Raw = m.text(txt, true)
			if p.Raw != txt {
				p.Body.Masked["$"] = p.Raw
			} else {
				p.Body.Preview["$"] = p.Raw
			}
		}
	}
	p.EstimatedEffect = m.text(effect, true)

	// Second pass: scrub copies of every secret found anywhere above.
	r := m.scrubber()
	if tree != nil {
		if r != nil {
			scrubNode(tree, r)
		}
		var b bytes.Buffer
		tree.encode(&b, "  ", 0)
		p.Raw = b.String()
		tree.flatten("", p.Body.Masked, p.Body.Preview)
	}
	if r == nil {
		return p
	}
	p.Method = scrub(r, p.Method)
	p.URL = scrub(r, p.URL)
	p.ContentType = scrub(r, p.ContentType)
	p.EstimatedEffect = scrub(r, p.EstimatedEffect)
	p.Raw = scrub(r, p.Raw)
	p.Headers = scrubMap(r, p.Headers)
	if tree == nil {
		p.Body.Masked = scrubMap(r, p.Body.Masked)
		p.Body.Preview = scrubMap(r, p.Body.Preview)
	}
	return p
}

func scrubMap(r interface{ Replace(string) string }, in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[r.Replace(k)] = r.Replace(v)
	}
	return out
}

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

// Canonical returns the RFC 8785 canonical JSON of the preview: the bytes Hash digests.
func (p HTTPPreview) Canonical() []byte {
	if p.Headers == nil {
		p.Headers = map[string]string{}
	}
	if p.Body.Masked == nil {
		p.Body.Masked = map[string]string{}
	}
	if p.Body.Preview == nil {
		p.Body.Preview = map[string]string{}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil // a struct of strings and string maps always marshals
	}
	c, err := jcs.Transform(b)
	if err != nil {
		return b
	}
	return c
}

// Hash is the hex SHA-256 of the canonical JSON of the masked preview. An approval records it, and execution
// is refused when the preview rebuilt from the planned request hashes differently.
func (p HTTPPreview) Hash() string {
	sum := sha256.Sum256(p.Canonical())
	return hex.EncodeToString(sum[:])
}
