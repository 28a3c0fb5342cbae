package search

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"sync"
)

// walkFinisher decides the fate of each file the backend is done with, on all
// cores, while the backend goes on (finishFile).
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
				if ctx.Err() == nil {
					p.finishFile(f, bp, &texts)
				}
			}
		})
	}
	return w
}

// add queues a file the backend is done with; its records must be sealed.
func (w *walkFinisher) add(f *walkFile) { w.todo <- f }

// wait returns once every queued file is finished (no more may be added).
func (w *walkFinisher) wait() {
	w.once.Do(func() { close(w.todo) })
	w.wg.Wait()
}

// finishFile decides the fate of a file the backend reported, on either
// walk. It is read and sniffed exactly as on the ordered path
// (readMatched), so what the backend did with encodings or NUL bytes
// never decides it. ugrep's offsets are in the text as ugrep decodes it
// (a byte-order mark is decoded likewise); rg's are in the bytes, except
// in a file that starts with a byte-order mark (rg transcodes it), which
// is searched again as the ordered path would, and so is one
// wholeLastLine describes. bp is the read buffer and texts the slab for
// the lines' texts, both the worker's own.
func (p *prepared) finishFile(f *walkFile, bp *[]byte, texts *[]byte) {
	if len(f.recs.lines) == 0 {
		return
	}
	data, why := p.readMatched(filepath.Join(p.pl.orderRoot, f.orderRel), bp, true)
	switch {
	case why == whyTooLarge || why == whyBinary:
		f.recs = fileRecs{} // dropped, counted
	case why != "":
		f.recs = fileRecs{}
		f.err = &FileError{Path: f.display, Error: why}
	case p.be.Name == "ugrep":
		p.keepLines(f, decodeLikeBackend(data, &f.recs), texts)
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

// searchAgain searches the text files rg's offsets do not describe
// (finishFile), alone, as the ordered path would.
func (p *prepared) searchAgain(ctx context.Context, files []*walkFile) {
	var again []item
	var againFiles []*walkFile
	for _, f := range files {
		if f.again {
			again = append(again, item{abs: filepath.Join(p.pl.orderRoot, f.orderRel), arg: "./" + f.orderRel, rel: f.display, size: -1})
			againFiles = append(againFiles, f)
		}
	}
	if len(again) == 0 {
		return
	}
	// whole: these files are not a run of the final order, so every
	// file's events are wanted (no cut inside the chunk).
	c := &chunk{items: again, results: make(chan fileResult, 2*len(again)+2), whole: true}
	p.searchChunk(ctx, c)
	k := 0
	for fr := range c.results {
		if fr.last {
			continue
		}
		againFiles[k].events, againFiles[k].err = fr.events, fr.err
		k++
	}
}
