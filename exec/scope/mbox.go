package scope

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"time"
)

// mboxReader splits an mbox file into messages. The framing is mboxrd's:
//   - a message starts at a line beginning "From " that is the file's first
//     non-blank line or follows a blank line (requiring the blank line keeps
//     an unquoted "From " in a body written by a careless mboxo writer from
//     splitting the message);
//   - the blank line before a separator belongs to the framing, not the
//     message;
//   - a body line matching ^>+From  loses one '>' (this also reverses
//     mboxo's quoting of plain "From " lines).
//
// Lines may end in LF or CRLF. A line longer than the bufio buffer is read in
// pieces.
type mboxReader struct {
	br      *bufio.Reader
	next    []byte // the From_ line that starts the next message
	started bool
	buf     []byte // the current message
	err     error
}

var errNotMbox = errors.New("not an mbox file: the first non-blank line does not start with \"From \"")

func newMboxReader(r io.Reader) *mboxReader {
	return &mboxReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// line reads one line including its ending. The slice is valid until the
// next call. It stops growing a line past max bytes, reporting tooLong.
func (m *mboxReader) line(scratch []byte, max int64) (line []byte, tooLong bool, err error) {
	l, err := m.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return l, false, err
	}
	scratch = append(scratch[:0], l...)
	for err == bufio.ErrBufferFull {
		if int64(len(scratch)) > max {
			return nil, true, nil
		}
		l, err = m.br.ReadSlice('\n')
		scratch = append(scratch, l...)
	}
	return scratch, false, err
}

func isBlank(l []byte) bool {
	return len(l) == 0 || (len(l) == 1 && l[0] == '\n') || (len(l) == 2 && l[0] == '\r' && l[1] == '\n')
}

// Next returns the next message: its From_ line (without the line ending)
// and its raw bytes, unquoted, which the caller keeps. max bounds
// the bytes one message may take; over it Next reports tooBig. At the end it
// returns io.EOF.
func (m *mboxReader) Next(max int64) (from string, raw []byte, tooBig bool, err error) {
	if m.err != nil {
		return "", nil, false, m.err
	}
	var scratch []byte
	if !m.started {
		m.started = true
		for {
			l, long, err := m.line(scratch, max)
			if long {
				m.err = errNotMbox
				return "", nil, false, m.err
			}
			if len(l) == 0 && err != nil {
				if err == io.EOF {
					m.err = io.EOF
				} else {
					m.err = err
				}
				return "", nil, false, m.err
			}
			if isBlank(l) {
				continue
			}
			if !bytes.HasPrefix(l, []byte("From ")) {
				m.err = errNotMbox
				return "", nil, false, m.err
			}
			m.next = append(m.next[:0], l...)
			break
		}
	}
	if m.next == nil {
		m.err = io.EOF
		return "", nil, false, io.EOF
	}
	from = strings.TrimRight(string(m.next), "\r\n")
	m.next = m.next[:0]
	m.buf = nil // the caller owns each message's bytes (they go to a decoding worker)
	prevBlank := false
	blankLen := 0
	for {
		l, long, rerr := m.line(scratch, max)
		if long || int64(len(m.buf)+len(l)) > max {
			m.err = errors.New("message too big")
			return from, nil, true, nil
		}
		if len(l) > 0 {
			if prevBlank && bytes.HasPrefix(l, []byte("From ")) {
				m.buf = m.buf[:len(m.buf)-blankLen]
				m.next = append(m.next, l...)
				return from, m.buf, false, nil
			}
			prevBlank = isBlank(l)
			blankLen = len(l)
			if l[0] == '>' {
				i := 0
				for i < len(l) && l[i] == '>' {
					i++
				}
				if bytes.HasPrefix(l[i:], []byte("From ")) {
					l = l[1:]
				}
			}
			m.buf = append(m.buf, l...)
		}
		if rerr == io.EOF {
			m.next = nil
			if prevBlank {
				m.buf = m.buf[:len(m.buf)-blankLen]
			}
			return from, m.buf, false, nil
		}
		if rerr != nil {
			m.err = rerr
			return from, nil, false, rerr
		}
	}
}

// fromLineDate parses the date of an mbox From_ line ("From sender Thu Jan  1
// 00:00:00 2024"). asctime carries no zone, so the time is taken as UTC.
func fromLineDate(from string) (time.Time, bool) {
	f := strings.Fields(from)
	if len(f) < 3 {
		return time.Time{}, false
	}
	s := strings.Join(f[2:], " ")
	for _, layout := range []string{
		"Mon Jan 2 15:04:05 2006",
		"Mon Jan 2 15:04:05 -0700 2006",
		"Mon Jan 2 15:04:05 2006 -0700",
		"Mon Jan 2 15:04:05 MST 2006",
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
