package fundtest

import (
	"archive/zip"
	"bytes"
	"io"
	"runtime"
	"testing"
)

// HeapProbe passes R through and, when R ends, takes the live heap (after
// a collection, LiveHeap): what the reading of R holds at that moment. A
// reader that holds what it read has it all in the heap then; one that
// streams has little.
type HeapProbe struct {
	R     io.Reader
	Bytes int64 // read from R
	AtEnd int64 // live heap bytes when R ended; 0 until then
}

func (p *HeapProbe) Read(b []byte) (int, error) {
	n, err := p.R.Read(b)
	p.Bytes += int64(n)
	if err == io.EOF && p.AtEnd == 0 {
		p.AtEnd = LiveHeap()
	}
	return n, err
}

// LiveHeap collects garbage and returns the bytes of the heap still live.
func LiveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// Repeated reads Line N times, never holding more than Line.
type Repeated struct {
	Line []byte
	N    int
	off  int
}

func (r *Repeated) Read(b []byte) (int, error) {
	done := 0
	for done < len(b) && r.N > 0 {
		c := copy(b[done:], r.Line[r.off:])
		done += c
		if r.off += c; r.off == len(r.Line) {
			r.off, r.N = 0, r.N-1
		}
	}
	if done == 0 {
		return 0, io.EOF
	}
	return done, nil
}

// PaddedWorkbook returns the workbook xlsx with one more part of size
// bytes, stored uncompressed: a workbook of that size whose sheet is
// xlsx's.
func PaddedWorkbook(t testing.TB, xlsx []byte, size int) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "customXml/padding.bin", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, &Repeated{Line: make([]byte, 64<<10), N: size / (64 << 10)}); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
