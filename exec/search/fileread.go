package search

import (
	"bytes"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"syscall"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
)

// Reading a matched file for its lines: ugrep reports only offsets, and
// context lines come from the file for both backends. The text must be the
// one the backend searched (byte-order marks, UTF-16), and a read never
// goes past max_file_size_bytes.

// decodeLikeBackend turns a file's bytes into the text the backend
// searched: like rg and ugrep, a UTF-8 byte-order mark is dropped and a
// file starting with a UTF-16 one is transcoded to UTF-8. ugrep's offsets
// and both backends' line texts refer to this text, and context lines must
// match it. When f holds ugrep's unresolved records, malformed UTF-16 is
// read as ugrep reads it and their offsets are moved onto the text (see
// decodeUTF16LikeUgrep); otherwise it decodes as rg does.
func decodeLikeBackend(data []byte, f *fileRecs) []byte {
	var bigEndian bool
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:]
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		bigEndian = true
	default:
		return data
	}
	if f != nil {
		text, shifts := decodeUTF16LikeUgrep(data[2:], bigEndian)
		ugrepToText(f, shifts)
		return text
	}
	order := unicode.LittleEndian
	if bigEndian {
		order = unicode.BigEndian
	}
	// rg (encoding_rs) writes U+FFFD for each unpaired surrogate, as x/text does.
	out, err := unicode.UTF16(order, unicode.ExpectBOM).NewDecoder().Bytes(data)
	if err != nil {
		return data
	}
	return out
}

// decodeUTF16LikeUgrep transcodes UTF-16 (after its byte-order mark) the
// way ugrep 3.11 reads it, so that ugrep's byte offsets can be placed: a
// high surrogate takes the next unit whatever it is (a valid pair, or one
// bad character for both units: ugrep then never sees the second one), a
// lone low surrogate is one bad character. ugrep writes a bad character as
// 5 bytes (code point 0x200000); the text here has U+FFFD (3 bytes) as rg
// does, and shifts lists where ugrep's bad characters started, so that
// ugrepToText can move its offsets. An odd last byte, which ugrep drops,
// is U+FFFD too, as in rg.
func decodeUTF16LikeUgrep(data []byte, bigEndian bool) (text []byte, shifts []int) {
	unit := func(i int) rune {
		if bigEndian {
			return rune(data[i])<<8 | rune(data[i+1])
		}
		return rune(data[i+1])<<8 | rune(data[i])
	}
	out := make([]byte, 0, len(data)*3/2+3)
	ugOff := 0 // offset in ugrep's text
	bad := func() {
		shifts = append(shifts, ugOff)
		out = utf8.AppendRune(out, utf8.RuneError)
		ugOff += 5
	}
	for i := 0; i+1 < len(data); i += 2 {
		u := unit(i)
		switch {
		case u >= 0xD800 && u < 0xDC00:
			if i+3 >= len(data) {
				bad()
				continue
			}
			i += 2
			if v := unit(i); v >= 0xDC00 && v < 0xE000 {
				out = utf8.AppendRune(out, 0x10000+(u-0xD800)<<10+(v-0xDC00))
				ugOff += 4
			} else {
				bad()
			}
		case u >= 0xDC00 && u < 0xE000:
			bad()
		default:
			n := len(out)
			out = utf8.AppendRune(out, u)
			ugOff += len(out) - n
		}
	}
	if len(data)%2 == 1 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return out, shifts
}

// ugrepToText moves a file's ugrep offsets onto decodeUTF16LikeUgrep's
// text: each bad character before an offset is 2 bytes shorter there, and
// an offset inside one lands on its start.
func ugrepToText(f *fileRecs, shifts []int) {
	if len(shifts) == 0 {
		return
	}
	move := func(off int) int {
		k, _ := slices.BinarySearch(shifts, off) // bad characters starting before off
		if k > 0 && off < shifts[k-1]+5 {
			return shifts[k-1] - 2*(k-1) // inside one: its start
		}
		return off - 2*k
	}
	for i, sp := range f.spans {
		f.spans[i] = span{move(sp.start), move(sp.end)}
	}
}

// whyBinary is fileEvents' answer for a file found binary only after it
// matched (sniffAfter): no events and no error, as if sniffed before.
const whyBinary = "binary"

// whyTooLarge is fileEvents' answer for a file that grew past
// max_file_size_bytes after it was checked: skipped and counted, like a
// file that was too large from the start (FR-LS-SRC-08). Vigil never reads
// more of a file than the cap.
const whyTooLarge = "too large"

var errTooLarge = errors.New("larger than max_file_size_bytes")

// fileBufs recycles the buffers files are read into for their lines:
// nothing keeps pointing into them (event texts are copies), and a dense
// search reads thousands of files.
var fileBufs = sync.Pool{New: func() any { return new([]byte) }}

// readRegularInto is readRegular reading into buf's storage when it is
// large enough (one read of the size fstat gives, no doubling). A file
// over maxSize (when > 0) is errTooLarge, and no more than maxSize bytes
// are ever read.
func readRegularInto(path string, buf []byte, maxSize int64) ([]byte, error) {
	fd, err := openRegular(path)
	if err != nil {
		return buf, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return buf, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return buf, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	if maxSize > 0 && st.Size > maxSize {
		return buf, errTooLarge
	}
	if need := int(st.Size) + 1; cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	// A file that grew since the stat may be read up to a little past the
	// size it had (the lines already found lie within that size), never
	// past the cap; a file that shrank is read to its end.
	limit := int(st.Size) + 64<<10
	if maxSize > 0 {
		if int64(limit) > maxSize {
			limit = int(maxSize) + 1 // one byte more tells "over"; no overflow, as limit is an int
		}
	}
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // the file grew: let append find room
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == st.Size {
			// Whole as it was at the stat: the lines the backend found
			// lie within that (it was done with the file), so the read
			// that would only confirm the end is skipped, one syscall per
			// file (a dense search reads thousands).
			break
		}
	}
	if maxSize > 0 && int64(len(buf)) > maxSize {
		return buf, errTooLarge
	}
	return buf, nil
}

// openRegular opens path for reading without blocking on a FIFO swapped in.
func openRegular(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			if err != nil {
				return -1, &fs.PathError{Op: "open", Path: path, Err: err}
			}
			return fd, nil
		}
	}
}

// sniffBytes is how much of a file's start is looked at for a NUL byte,
// which makes it binary.
const sniffBytes = 8192
