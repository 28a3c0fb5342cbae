package scope

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

// Document is one item of a scope in full, for a viewer: a file's text, a
// message's headers and decoded body, or a record's fields.
type Document struct {
	Scope string
	Kind  string // files | emails | dataset
	ID    string
	// Title is a one-line label: the path, the subject, or the record id.
	Title string
	// Fields are a message's header fields (decoded, in order, plus
	// received_timestamp) or a record's columns; nil for a file.
	Fields []Field
	// Text is a file's content or a message's body; "" for a record.
	Text string
	// Truncated says Text was cut at OpenMaxBytes.
	Truncated bool
}

// Field is one name and value of a Document.
type Field struct {
	Name  string
	Value string
}

// OpenMaxBytes bounds what Open reads of one item, so opening a huge file
// from the pane cannot exhaust memory.
const OpenMaxBytes = 4 << 20

// Open returns one item of a scope by the id a search gave it.
func Open(sc config.ScopeConfig, id string) (Document, error) {
	doc := Document{Scope: sc.Name, Kind: sc.Kind, ID: id}
	switch sc.Kind {
	case KindFiles:
		return openFile(sc, doc)
	case KindEmails:
		return openEmail(sc, doc)
	case KindDataset:
		return openRecord(sc, doc)
	}
	return doc, task.Errorf(task.ScopeUnavailable, "scope %q: kind %q is not files, emails or dataset", sc.Name, sc.Kind)
}

func notFound(sc config.ScopeConfig, id string) error {
	return task.Errorf(task.ExecutionFailed, "scope %q: no item with id %q", sc.Name, id)
}

// openFile reads a file under the scope root. The id must be a clean
// relative path, and no component may be a symlink, the same rule as the
// search.
func openFile(sc config.ScopeConfig, doc Document) (Document, error) {
	id := doc.ID
	if id == "" || !fs.ValidPath(id) || id == "." {
		return doc, task.Errorf(task.InvalidQuery, "id: %q is not a clean relative path inside the scope", id)
	}
	if _, err := statScope(sc); err != nil {
		return doc, err
	}
	root, err := os.OpenRoot(sc.Path)
	if err != nil {
		return doc, task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(err))
	}
	defer root.Close()
	parts := strings.Split(id, "/")
	for i := range parts {
		fi, err := root.Lstat(strings.Join(parts[:i+1], "/"))
		if errors.Is(err, fs.ErrNotExist) {
			return doc, notFound(sc, id)
		}
		if err != nil {
			return doc, task.Errorf(task.ExecutionFailed, "scope %q: %v", sc.Name, unwrapPath(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return doc, task.Errorf(task.ScopeNotAllowed, "id: %s is a symlink, which scopes reject", path.Join(parts[:i+1]...))
		}
		if i == len(parts)-1 && !fi.Mode().IsRegular() {
			return doc, notFound(sc, id)
		}
	}
	f, err := root.Open(id)
	if err != nil {
		return doc, task.Errorf(task.ExecutionFailed, "scope %q: %v", sc.Name, unwrapPath(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, OpenMaxBytes+1))
	if err != nil {
		return doc, task.Errorf(task.ExecutionFailed, "scope %q: %v", sc.Name, unwrapPath(err))
	}
	if len(b) > OpenMaxBytes {
		b, doc.Truncated = b[:OpenMaxBytes], true
	}
	doc.Title = id
	doc.Text = strings.ToValidUTF8(string(b), "\uFFFD")
	return doc, nil
}

func openEmail(sc config.ScopeConfig, doc Document) (Document, error) {
	fi, err := statScope(sc)
	if err != nil {
		return doc, err
	}
	mem := budget{limit: DefaultMemoryBytes}
	var raw []byte
	var fallback time.Time
	if fi.IsDir() {
		ents, err := maildirList(sc)
		if err != nil {
			return doc, err
		}
		for _, e := range ents {
			if e.id == doc.ID {
				if raw, err = readCharged(&mem, e.path); err != nil {
					return doc, asTaskError(err)
				}
				fallback, _ = maildirTime(e.id)
				break
			}
		}
	} else {
		n, err := strconv.ParseInt(doc.ID, 10, 64)
		if err != nil || n < 1 {
			return doc, task.Errorf(task.InvalidQuery, "id: an mbox message id is its ordinal (1, 2, …), got %q", doc.ID)
		}
		f, err := os.Open(sc.Path)
		if err != nil {
			return doc, task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(err))
		}
		defer f.Close()
		mr := newMboxReader(f)
		for seq := int64(1); seq <= n; seq++ {
			from, m, tooBig, err := mr.Next(mem.room())
			if err == io.EOF {
				break
			}
			if err != nil || tooBig {
				return doc, task.Errorf(task.ExecutionFailed, "scope %q: reading message %d: %v", sc.Name, seq, err)
			}
			if seq == n {
				raw = append([]byte(nil), m...)
				fallback, _ = fromLineDate(from)
			}
		}
	}
	if raw == nil {
		return doc, notFound(sc, doc.ID)
	}
	m, _, err := parseEmail(raw, &mem, true)
	if err != nil {
		return doc, err
	}
	date := m.Date
	if date.IsZero() {
		date = fallback
	}
	ts := ""
	if !date.IsZero() {
		ts = date.UTC().Format(time.RFC3339)
	}
	doc.Title = m.Subject
	doc.Fields = append(m.Headers, Field{Name: "received_timestamp", Value: ts})
	doc.Text = m.Body
	if len(doc.Text) > OpenMaxBytes {
		cut := OpenMaxBytes
		for cut > 0 && !utf8.RuneStart(doc.Text[cut]) {
			cut--
		}
		doc.Text, doc.Truncated = doc.Text[:cut], true
	}
	return doc, nil
}

// errFound stops a dataset walk at the wanted record.
var errFound = errors.New("found")

func openRecord(sc config.ScopeConfig, doc Document) (Document, error) {
	r := newRun(context.Background(), Query{MaxResults: 1}, Limits{}.withDefaults())
	err := walkDataset(r, sc, func(rec *record) error {
		if rec.id != doc.ID {
			return nil
		}
		for i, n := range rec.names {
			doc.Fields = append(doc.Fields, Field{Name: n, Value: rec.values[i]})
		}
		return errFound
	})
	if errors.Is(err, errFound) {
		doc.Title = doc.ID
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	return doc, notFound(sc, doc.ID)
}
