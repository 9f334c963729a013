package export

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestZstdCodecRoundTripsPagesOfEverySize: the export's ZSTD frames, with
// their small window, decode with a standard decoder, for pages below,
// at and well above the window and the 128 KiB block size.
func TestZstdCodecRoundTripsPagesOfEverySize(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, n := range []int{0, 1, 100, 128 << 10, zstdWindow, 3 * zstdWindow, 4 << 20} {
		var page bytes.Buffer
		for i := 0; page.Len() < n; i++ {
			fmt.Fprintf(&page, "POS_%04d_%03d|%d.%02d;", i%97, i%13, i*7919%100000, i%100)
		}
		src := page.Bytes()[:n]
		enc, err := exportZstd.Encode(nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if n > 1000 && len(enc) >= n/2 {
			t.Errorf("%d bytes compressed to %d: the codec does not compress", n, len(enc))
		}
		got, err := dec.DecodeAll(enc, nil)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("%d bytes: decoded %d bytes, equal %v, err %v", n, len(got), bytes.Equal(got, src), err)
		}
	}
}
