package eventlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// MaxRecord bounds a line Read takes for a record; a longer one is skipped
// as torn, without holding more than this of it.
const MaxRecord = 16 << 20

// Read hands fn each whole record of the log r, in order, and counts the
// torn lines it skipped. A whole record is a line that ends in a newline
// and holds one JSON object. A torn line is any other: the part of a
// record a crash or a full disk cut short (which a later record, starting
// on a line of its own, follows), text glued onto one by a writer that did
// not cut it back, or a line over MaxRecord. A blank line is neither.
// record is fn's only during the call. fn returning an error stops the
// read with that error.
func Read(r io.Reader, fn func(record []byte) error) (torn int, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	overlong := false
	for {
		chunk, rerr := br.ReadSlice('\n')
		switch {
		case overlong:
		case len(line)+len(chunk) > MaxRecord+1:
			overlong, line = true, line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		if rerr != nil && rerr != io.EOF {
			return torn, rerr
		}
		switch {
		case overlong:
			torn++
		case len(jsonSpace(line)) == 0:
		case !whole(line):
			torn++
		default:
			if err := fn(line[:len(line)-1]); err != nil {
				return torn, err
			}
		}
		if rerr == io.EOF {
			return torn, nil
		}
		line, overlong = line[:0], false
	}
}

// whole reports whether line, with its newline, is a record.
func whole(line []byte) bool {
	if line[len(line)-1] != '\n' {
		return false
	}
	body := jsonSpace(line)
	return len(body) > 0 && body[0] == '{' && json.Valid(body)
}

// jsonSpace is b without the whitespace JSON allows around a value.
func jsonSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }
