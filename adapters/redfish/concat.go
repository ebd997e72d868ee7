package redfish

import (
	"errors"
	"io"
)

// concatReader reads several ReadSeekers of known sizes one after the
// other, and seeks across them: the body of a multipart push is its
// header, the image file (never held in memory) and its trailer, and the
// HTTP client may rewind it to resend.
type concatReader struct {
	parts []io.ReadSeeker
	sizes []int64
	total int64
	pos   int64
}

func newConcatReader(parts []io.ReadSeeker, sizes []int64) *concatReader {
	r := &concatReader{parts: parts, sizes: sizes}
	for _, s := range sizes {
		r.total += s
	}
	return r
}

func (r *concatReader) Read(p []byte) (int, error) {
	if r.pos >= r.total {
		return 0, io.EOF
	}
	off := r.pos
	for i, size := range r.sizes {
		if off >= size {
			off -= size
			continue
		}
		if _, err := r.parts[i].Seek(off, io.SeekStart); err != nil {
			return 0, err
		}
		if int64(len(p)) > size-off {
			p = p[:size-off]
		}
		n, err := r.parts[i].Read(p)
		r.pos += int64(n)
		if err == io.EOF {
			if n == 0 && int64(n) < size-off {
				return 0, io.ErrUnexpectedEOF // the file shrank under us
			}
			err = nil
		}
		return n, err
	}
	return 0, io.EOF
}

func (r *concatReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.pos + offset
	case io.SeekEnd:
		abs = r.total + offset
	default:
		return 0, errors.New("concatReader: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("concatReader: negative position")
	}
	r.pos = abs
	return abs, nil
}
