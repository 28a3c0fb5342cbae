package auditpane

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"sync/atomic"

	"github.com/vigil-dev/vigil/audit"
)

// verified is what a verification of the whole log found.
type verified struct {
	chain  *audit.Chain
	anchor *audit.Report // the head disagrees with the chain
	mark   fileMark
	first  string // entry #0's hash
	end    int64  // just after the last complete line fed
	err    error
}

// verifyLog feeds every complete line of the log at path to a fresh chain,
// streaming (memory stays flat whatever the log's size), and marks the bytes
// it fed (fileMark) so a later change can be told from a pure append.
// progress, when set, is told the bytes done after every megabyte; good counts
// the lines verified so far (they are valid: the filter trusts them unparsed).
//
// This is the pane's one call into the audit engine's verification: a faster
// streaming verifier drops in here, as long as it hashes the bytes it checks
// into the mark.
func verifyLog(ctx context.Context, path string, progress func(done, total int64), good *atomic.Int64) verified {
	anchor := audit.ReadAnchor(path) // before the log: appends move the head last
	out := verified{chain: audit.NewChain(), mark: fileMark{lastOff: -1, prefix: sha256.New()}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		out.anchor = out.chain.CheckAnchor(anchor)
		return out
	}
	if err != nil {
		out.err = err
		return out
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		out.err = err
		return out
	}
	out.mark.info = st
	r := bufio.NewReaderSize(f, 1<<20)
	var long []byte // a line longer than the reader's buffer, gathered
	var last []byte // the last line fed (hashed once, at the end)
	off, tick := int64(0), int64(0)
	for {
		part, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, part...)
			continue
		}
		line := part
		if long != nil {
			line = append(long, part...)
			long = nil
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			body := line[:len(line)-1]
			e, ok := out.chain.Feed(body)
			if off == 0 && ok {
				out.first = e.Hash
			}
			out.mark.lastOff = off
			if ok {
				last = append(last[:0], body...)
				out.mark.prefix.Write(line)
				good.Store(out.chain.Len())
			} else {
				last, out.mark.prefix = nil, nil
			}
			off += int64(len(line))
			if progress != nil && off-tick >= 1<<20 {
				tick = off
				progress(off, st.Size())
				if ctx.Err() != nil {
					out.err = ctx.Err()
					return out
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			out.err = err
			return out
		}
	}
	if last != nil {
		out.mark.last = sha256.Sum256(last)
	}
	out.end = off
	out.anchor = out.chain.CheckAnchor(anchor)
	return out
}
