package scope

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	netmail "net/mail"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // registers the charsets message bodies and headers name
	"github.com/emersion/go-message/mail"

	"github.com/vigil-dev/vigil/config"
	"github.com/vigil-dev/vigil/exec/task"
)

// Email fields, in the order they are matched; match_field is the first that
// contains the query.
var emailFields = []string{"from", "to", "subject", "body"}

// email is one message decoded for matching and viewing.
type email struct {
	From, To, Subject, Body string
	MessageID               string
	Date                    time.Time // zero when the message has no usable date
	Headers                 []Field   // every header field, decoded, in order
}

// searchEmails searches a Maildir folder (a directory with cur/ and/or new/)
// or an mbox file.
//
// Ids: in a Maildir, the message file's unique name (the part before ":2,",
// so it survives flag changes and the move from new/ to cur/); in an mbox,
// the message's 1-based ordinal in the file. Message-ID is not used because
// it is optional and not unique in practice.
//
// received_timestamp is the Date header; when that is missing or
// unparseable, the mbox From_ line's date or the Maildir delivery time (the
// leading seconds of the unique name). A message with none of these has no
// usable date: it still matches, and sorts after every dated message in
// source order (Maildir name order, mbox file order), with Hit.Timestamp "".
// Dated messages sort ascending by timestamp, ties in source order.
func searchEmails(r *run, sc config.ScopeConfig) error {
	fi, err := statScope(sc)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return searchMaildir(r, sc)
	}
	if !fi.Mode().IsRegular() {
		return task.Errorf(task.ScopeUnavailable, "scope %q: path %s is neither a Maildir folder nor an mbox file", sc.Name, sc.Path)
	}
	return searchMbox(r, sc)
}

// maildirEntry is one message file of a Maildir.
type maildirEntry struct {
	id, path string
}

// maildirList lists cur/ and new/ sorted by unique name (cur before new for
// the same name). Dot files, symlinks and non-regular files are skipped.
func maildirList(sc config.ScopeConfig) ([]maildirEntry, error) {
	var out []maildirEntry
	found := false
	for _, sub := range []string{"cur", "new"} {
		dir := filepath.Join(sc.Path, sub)
		ents, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(err))
		}
		found = true
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() || !utf8.ValidString(e.Name()) {
				continue
			}
			out = append(out, maildirEntry{id: maildirID(e.Name()), path: filepath.Join(dir, e.Name())})
		}
	}
	if !found {
		return nil, task.Errorf(task.ScopeUnavailable, "scope %q: %s is not a Maildir folder (no cur/ or new/)", sc.Name, sc.Path)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// maildirID is a message file's unique name: everything before the info
// part (":2,FLAGS").
func maildirID(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return name[:i]
	}
	return name
}

// maildirTime reads the delivery time from a unique name ("1704103200.M1P2.host").
func maildirTime(id string) (time.Time, bool) {
	i := strings.IndexByte(id, '.')
	if i <= 0 {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(id[:i], 10, 64)
	if err != nil || sec < 0 || sec > 253402300799 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

func searchMaildir(r *run, sc config.ScopeConfig) error {
	ents, err := maildirList(sc)
	if err != nil {
		return err
	}
	return r.decodeInParallel(func(emit func(emailJob) error) error {
		for seq, e := range ents {
			if err := r.tick(); err != nil {
				return err
			}
			raw, err := readCharged(&r.mem, e.path)
			if errors.Is(err, os.ErrNotExist) {
				continue // moved or deleted by a mail client while we searched
			}
			if err != nil {
				return err
			}
			fallback, _ := maildirTime(e.id)
			if err := emit(emailJob{raw: raw, id: e.id, seq: int64(seq), fallback: fallback}); err != nil {
				return err
			}
		}
		return nil
	})
}

// emailJob is one message read from a mailbox, charged to the budget,
// waiting to be decoded.
type emailJob struct {
	raw      []byte
	id       string
	seq      int64
	fallback time.Time
}

// decodeInParallel reads messages on this goroutine and decodes them on
// GOMAXPROCS workers: MIME and date parsing dominate the cost, and the
// result order does not depend on which worker finishes first (offer keeps
// a total order). Each job's raw bytes are charged by the producer and
// released by the worker. The first error stops everything.
func (r *run) decodeInParallel(produce func(emit func(emailJob) error) error) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan emailJob, workers)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		failed   atomic.Bool
	)
	fail := func(err error) {
		once.Do(func() { firstErr = err; failed.Store(true) })
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if !failed.Load() {
					if err := r.matchEmail(j.raw, j.id, j.seq, j.fallback); err != nil {
						fail(err)
					}
				}
				r.mem.release(int64(len(j.raw)))
			}
		}()
	}
	err := produce(func(j emailJob) error {
		if failed.Load() {
			r.mem.release(int64(len(j.raw)))
			return errStopped
		}
		jobs <- j
		return nil
	})
	close(jobs)
	wg.Wait()
	if err != nil && err != errStopped {
		fail(err)
	}
	return firstErr
}

var errStopped = errors.New("stopped after a worker failed")

// readCharged reads a whole file after charging its size to the budget.
func readCharged(b *budget, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := b.grow(fi.Size()); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, fi.Size()))
	if err != nil {
		b.release(fi.Size())
		return nil, err
	}
	// The file may have shrunk between Stat and read; charge what we hold.
	b.release(fi.Size() - int64(len(raw)))
	return raw, nil
}

func searchMbox(r *run, sc config.ScopeConfig) error {
	f, err := os.Open(sc.Path)
	if err != nil {
		return task.Errorf(task.ScopeUnavailable, "scope %q: %v", sc.Name, unwrapPath(err))
	}
	defer f.Close()
	// The reader's own buffer is charged once for the whole search.
	const bufCharge = 64 << 10
	if err := r.mem.grow(bufCharge); err != nil {
		return err
	}
	defer r.mem.release(bufCharge)
	mr := newMboxReader(f)
	return r.decodeInParallel(func(emit func(emailJob) error) error {
		return readMbox(r, sc, mr, emit)
	})
}

func readMbox(r *run, sc config.ScopeConfig, mr *mboxReader, emit func(emailJob) error) error {
	for seq := int64(1); ; seq++ {
		if err := r.tick(); err != nil {
			return err
		}
		from, raw, tooBig, err := mr.Next(r.mem.room())
		if err == io.EOF {
			return nil
		}
		if errors.Is(err, errNotMbox) {
			return task.Errorf(task.ScopeUnavailable, "scope %q: %s: %v", sc.Name, sc.Path, err)
		}
		if err != nil {
			return task.Errorf(task.ExecutionFailed, "scope %q: reading message %d: %v", sc.Name, seq, err)
		}
		if tooBig {
			return r.mem.grow(r.mem.room() + 1) // reports RESOURCE_EXHAUSTED
		}
		fallback, _ := fromLineDate(from)
		if err := r.mem.grow(int64(len(raw))); err != nil {
			return err
		}
		j := emailJob{raw: raw, id: strconv.FormatInt(seq, 10), seq: seq, fallback: fallback}
		if err := emit(j); err != nil {
			return err
		}
	}
}

// matchEmail decodes one message and offers it if a field matches.
func (r *run) matchEmail(raw []byte, id string, seq int64, fallback time.Time) error {
	m, bodySize, err := parseEmail(raw, &r.mem, false)
	if err != nil {
		return err
	}
	defer r.mem.release(bodySize)
	date := m.Date
	if date.IsZero() {
		date = fallback
	}
	key := cand{seq: seq, class: 1}
	ts := ""
	if !date.IsZero() {
		key.class, key.num = 0, date.UnixNano()
		ts = date.UTC().Format(time.RFC3339)
	}
	return r.matchFields(key, id, emailFields, []string{m.From, m.To, m.Subject, m.Body}, ts, func(h *Hit) {
		h.Sender, h.Subject = clip(m.From, labelMax), clip(m.Subject, labelMax)
	})
}

// parseEmail decodes a message's headers and its text body. The body is the
// message's text/plain parts that are not attachments, joined by a newline;
// when there is no text/plain part, its text/html parts, markup included.
// Transfer encodings (quoted-printable, base64) and charsets are decoded;
// text that still is not UTF-8 has its bad bytes replaced with U+FFFD. A
// message whose header cannot be parsed is searched as raw text: its body is
// the raw bytes. The decoded body is charged to mem; bodySize is the charge
// the caller must release.
func parseEmail(raw []byte, mem *budget, allHeaders bool) (m email, bodySize int64, err error) {
	e, perr := message.Read(bytes.NewReader(raw))
	if perr != nil && !message.IsUnknownCharset(perr) && !message.IsUnknownEncoding(perr) {
		return email{Body: clean(string(raw))}, 0, nil
	}
	h := mail.Header{Header: e.Header}
	m.From = headerText(h, "From")
	m.To = headerText(h, "To")
	m.Subject = headerText(h, "Subject")
	if id, err := h.MessageID(); err == nil {
		m.MessageID = id
	}
	m.Date = parseDate(h.Get("Date"))
	if allHeaders {
		for f := h.Fields(); f.Next(); {
			v, _ := f.Text()
			m.Headers = append(m.Headers, Field{Name: f.Key(), Value: clean(v)})
		}
	}
	var plain, html bytes.Buffer
	werr := e.Walk(func(path []int, part *message.Entity, err error) error {
		if err != nil && !message.IsUnknownCharset(err) && !message.IsUnknownEncoding(err) {
			return nil
		}
		if disp, _, _ := part.Header.ContentDisposition(); disp == "attachment" {
			return nil
		}
		ct, _, cerr := part.Header.ContentType()
		if cerr != nil || ct == "" {
			ct = "text/plain" // RFC 2045 §5.2's default
		}
		var dst *bytes.Buffer
		switch ct {
		case "text/plain":
			dst = &plain
		case "text/html":
			dst = &html
		default:
			return nil
		}
		if dst.Len() > 0 {
			dst.WriteByte('\n')
		}
		room := mem.room() - int64(plain.Len()+html.Len())
		n, rerr := io.Copy(dst, io.LimitReader(part.Body, room+1))
		if n > room {
			return errBodyTooBig
		}
		_ = rerr // a corrupt encoding keeps what decoded before it
		return nil
	})
	if errors.Is(werr, errBodyTooBig) {
		return email{}, 0, mem.grow(mem.room() + 1)
	}
	body := &plain
	if body.Len() == 0 {
		body = &html
	}
	bodySize = int64(body.Len())
	if err := mem.grow(bodySize); err != nil {
		return email{}, 0, err
	}
	m.Body = clean(body.String())
	return m, bodySize, nil
}

// parseDate reads a Date header. The common RFC 5322 shapes are tried with
// time.Parse first because net/mail.ParseDate, which handles the rest
// (obsolete zones, comments, missing weekday), costs an error allocation per
// layout it tries and was 15% of an mbox search. A date outside years
// 1–9999 is not usable.
func parseDate(v string) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC1123Z, v)
	if err != nil {
		t, err = netmail.ParseDate(v)
	}
	if err != nil || t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}
	}
	return t.UTC()
}

var errBodyTooBig = fmt.Errorf("body over the memory budget")

func headerText(h mail.Header, key string) string {
	v, _ := h.Text(key) // an unknown charset returns the raw value
	return clean(v)
}

// clean makes text valid UTF-8 so a snippet's offsets stay true after JSON
// encoding.
func clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
