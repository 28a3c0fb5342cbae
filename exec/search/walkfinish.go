package search

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"sync"
)

// finishUgrepFile decides the fate of a file ugrep reported, as the
// ordered path does once a file matched (sniffAfter): read whole (over
// max_file_size_bytes: dropped, counted), a NUL byte in the first 8 KiB
// makes it binary (dropped, counted), a byte-order mark is decoded as
// ugrep decodes it, and ugrep's offsets give the lines.
func (p *prepared) finishUgrepFile(f *walkFile, bp *[]byte, texts *[]byte) {
	if len(f.recs.lines) == 0 {
		return
	}
	data, err := readRegularInto(filepath.Join(p.pl.orderRoot, f.orderRel), (*bp)[:0], p.e.maxSize)
	*bp = data[:0]
	switch {
	case err == errTooLarge:
		f.recs = fileRecs{}
	case err != nil:
		f.recs = fileRecs{}
		f.err = &FileError{Path: f.display, Error: errText(err)}
	case bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0:
		f.recs = fileRecs{} // binary
	default:
		p.keepLines(f, decodeLikeBackend(data, &f.recs), texts)
	}
}

// walkFinisher decides the fate of each file rg is done with, on all
// cores, while rg goes on (finishFile).
type walkFinisher struct {
	todo chan *walkFile
	wg   sync.WaitGroup
	once sync.Once
}

// startFinisher starts the workers; past ctx's end (the deadline, or the
// walk handing over) they skip what is left, so that a timed-out search
// answers promptly with the files already read.
func (p *prepared) startFinisher(ctx context.Context) *walkFinisher {
	w := &walkFinisher{todo: make(chan *walkFile, 1<<14)}
	for range max(runtime.GOMAXPROCS(0), 1) * 2 {
		w.wg.Go(func() {
			bp := fileBufs.Get().(*[]byte)
			defer fileBufs.Put(bp)
			var texts []byte // where this worker's files keep their lines' texts
			for f := range w.todo {
				switch {
				case ctx.Err() != nil:
				case p.be.Name == "ugrep":
					p.finishUgrepFile(f, bp, &texts)
				default:
					p.finishFile(f, bp, &texts)
				}
			}
		})
	}
	return w
}

// add queues a file rg is done with; its records must be sealed.
func (w *walkFinisher) add(f *walkFile) { w.todo <- f }

// wait returns once every queued file is finished (no more may be added).
func (w *walkFinisher) wait() {
	w.once.Do(func() { close(w.todo) })
	w.wg.Wait()
}

// finishFile decides a reported file's fate. It is read and sniffed
// exactly as on the ordered path (NUL in the first 8 KiB: binary, dropped
// but counted; over max_file_size_bytes: dropped, counted), so what rg did
// with encodings or NUL bytes never decides it. A text file that starts
// with a byte-order mark (rg's offsets are then in its transcoded text) is
// searched again as the ordered path would, and so is one wholeLastLine
// describes; the lines of the rest come from the bytes read, at rg's
// offsets. bp is the read buffer and texts the slab for the lines' texts,
// both the worker's own.
func (p *prepared) finishFile(f *walkFile, bp *[]byte, texts *[]byte) {
	if len(f.recs.lines) == 0 {
		return
	}
	data, err := readRegularInto(filepath.Join(p.pl.orderRoot, f.orderRel), (*bp)[:0], p.e.maxSize)
	*bp = data[:0]
	switch {
	case err == errTooLarge:
		f.recs = fileRecs{}
	case err != nil:
		f.recs = fileRecs{}
		f.err = &FileError{Path: f.display, Error: errText(err)}
	case bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0:
		f.recs = fileRecs{} // binary
	case hasBOM(data) || wholeLastLine(data, &f.recs):
		f.again = true
	default:
		p.keepLines(f, data, texts)
	}
}

// keepLines gives a text file's records their lines from data, the
// file's bytes as the backend searched them, and keeps the file; one that
// no longer fits its records is a per-file error. The texts go to the
// tail of texts, a slab shared by the worker's files (one allocation per
// megabyte, not a doubling one per file).
func (p *prepared) keepLines(f *walkFile, data []byte, texts *[]byte) {
	if cap(*texts)-len(*texts) < 64<<10 {
		*texts = make([]byte, 0, 1<<20)
	}
	slab := *texts
	f.recs.text = slab[len(slab):]
	if !resolveLinesCut(data, &f.recs, p.e.maxLine) {
		f.recs = fileRecs{}
		f.err = &FileError{Path: f.display, Error: "file changed while it was searched"}
		return
	}
	t := f.recs.text
	f.recs.text = t[:len(t):len(t)]
	if len(t) > 0 && cap(slab)-len(slab) >= len(t) && &slab[:len(slab)+1][len(slab)] == &t[0] {
		*texts = slab[:len(slab)+len(t)] // written in place: keep it
	}
	f.keep = true
}

// wholeLastLine reports whether a record spans an unterminated last line
// from its start to the end of the file. That is what rg 13's -o prints
// for a line whose only match is the empty one at the end of the file,
// which its printer drops (--json then gives no submatch): "$" or "x*" on
// "abc\nfoo". A real match over such a whole line looks the same, so such
// files are searched again; they are rare.
func wholeLastLine(data []byte, f *fileRecs) bool {
	if len(data) == 0 || data[len(data)-1] == '\n' || len(f.lines) == 0 {
		return false
	}
	start := bytes.LastIndexByte(data, '\n') + 1
	last := f.lines[len(f.lines)-1]
	for _, sp := range f.spans[last.span0:last.span1] {
		if sp.start == start && sp.end == len(data) {
			return true
		}
	}
	return false
}

// hasBOM reports whether data starts with a UTF-8 or UTF-16 byte-order
// mark, which makes rg search a transcoded text.
func hasBOM(data []byte) bool {
	return bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) ||
		bytes.HasPrefix(data, []byte{0xFF, 0xFE}) || bytes.HasPrefix(data, []byte{0xFE, 0xFF})
}
