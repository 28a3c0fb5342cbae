package preview

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// maxDepth bounds JSON nesting so a hostile body cannot exhaust the stack; deeper bodies are masked as text.
const maxDepth = 256

// jnode is a JSON value that keeps key order and number literals, so a masked body reads like the original.
type jnode struct {
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	text   string
	keys   []string
	vals   []*jnode
	masked bool // replaced by masking (secret name or a detector fired)
}

var errDepth = errors.New("json nested too deeply")

func parseJSON(b []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := readNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return n, nil
}

func readNode(dec *json.Decoder, depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, errDepth
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &jnode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &jnode{kind: 'a'}
			for dec.More() {
				v, err := readNode(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, errors.New("unexpected delimiter")
	case string:
		return &jnode{kind: 's', text: t}, nil
	case json.Number:
		return &jnode{kind: 'n', text: t.String()}, nil
	case bool:
		return &jnode{kind: 'b', text: strconv.FormatBool(t)}, nil
	case nil:
		return &jnode{kind: 'z', text: "null"}, nil
	}
	return nil, errors.New("unexpected token")
}

// mask walks the tree: a secret-named member is masked whole (an object under "credentials" hides all of
// it), keys and scalar values are masked by value shape. Numbers are checked too: a card can be a number.
func (m *masker) maskNode(n *jnode, name string) {
	if name != "" && classifyName(name) != kindNone {
		if n.kind == 'o' || n.kind == 'a' {
			m.noteLeaves(n)
			*n = jnode{kind: 's', text: Fixed, masked: true}
			return
		}
		out := m.field(name, n.text)
		*n = jnode{kind: 's', text: out, masked: true}
		return
	}
	switch n.kind {
	case 'o':
		for i, k := range n.keys {
			n.keys[i] = m.text(k, true)
			m.maskNode(n.vals[i], k)
		}
	case 'a':
		for _, v := range n.vals {
			m.maskNode(v, "")
		}
	case 's', 'n':
		if out := m.text(n.text, true); out != n.text {
			*n = jnode{kind: 's', text: out, masked: true}
		}
	}
}

func (m *masker) noteLeaves(n *jnode) {
	switch n.kind {
	case 'o', 'a':
		for _, v := range n.vals {
			m.noteLeaves(v)
		}
	default:
		m.note(n.text)
	}
}

// scrubNode applies the scrubber to every key and string in the tree.
func scrubNode(n *jnode, r interface{ Replace(string) string }) {
	switch n.kind {
	case 'o':
		for i := range n.keys {
			n.keys[i] = r.Replace(n.keys[i])
		}
		fallthrough
	case 'a':
		for _, v := range n.vals {
			scrubNode(v, r)
		}
	case 's':
		if s := r.Replace(n.text); s != n.text {
			n.text, n.masked = s, true
		}
	case 'n':
		if s := r.Replace(n.text); s != n.text {
			n.kind, n.text, n.masked = 's', s, true
		}
	}
}

func writeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail; invalid UTF-8 becomes U+FFFD
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
}

// encode writes the tree as JSON; indent "" is compact.
func (n *jnode) encode(b *bytes.Buffer, indent string, depth int) {
	nl := func(d int) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(indent, d))
		}
	}
	switch n.kind {
	case 'o':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			writeString(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			n.vals[i].encode(b, indent, depth+1)
		}
		nl(depth)
		b.WriteByte('}')
	case 'a':
		if len(n.vals) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			nl(depth + 1)
			v.encode(b, indent, depth+1)
		}
		nl(depth)
		b.WriteByte(']')
	case 's':
		writeString(b, n.text)
	default:
		b.WriteString(n.text)
	}
}

// flatten lists leaves under dotted paths (items.0.name); the root of a scalar body is "$".
func (n *jnode) flatten(path string, masked, safe map[string]string) {
	key := path
	if key == "" {
		key = "$"
	}
	switch n.kind {
	case 'o':
		if len(n.keys) == 0 {
			safe[key] = "{}"
			return
		}
		for i, k := range n.keys {
			n.vals[i].flatten(join(path, k), masked, safe)
		}
		return
	case 'a':
		if len(n.vals) == 0 {
			safe[key] = "[]"
			return
		}
		for i, v := range n.vals {
			v.flatten(join(path, strconv.Itoa(i)), masked, safe)
		}
		return
	}
	if n.masked {
		masked[key] = n.text
	} else {
		safe[key] = n.text
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// MaskJSON masks a JSON document: members by key name at any depth (objects inside arrays included), keys
// and string or number values by value shape. Key order and number literals are kept; the output is compact.
// Input that is not valid JSON (or nested deeper than 256) is masked as text, so it never passes unmasked.
func MaskJSON(b []byte) []byte {
	m := newMasker()
	n, err := parseJSON(b)
	if err != nil {
		out := m.text(string(b), true)
		return []byte(scrub(m.scrubber(), out))
	}
	m.maskNode(n, "")
	if r := m.scrubber(); r != nil {
		scrubNode(n, r)
	}
	var out bytes.Buffer
	n.encode(&out, "", 0)
	return out.Bytes()
}
