package export

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// zstdWindow is the match window of the export's ZSTD encoders: a page
// (parquet-go's page buffer is 256 KiB) is compressed on its own, so a
// window beyond it gains next to nothing.
const zstdWindow = 256 << 10

// zstdCodec is Parquet's ZSTD codec with encoders sized to a page.
// parquet-go's own (parquet.Zstd) keeps the encoder's default 8 MiB window,
// and an encoder given more than 128 KiB at once allocates a history that
// large: some 8 MiB per pooled encoder, once a table is large enough for
// its pages to fill. The frames are standard ZSTD either way.
type zstdCodec struct {
	encoders sync.Pool // *zstd.Encoder
}

var exportZstd zstdCodec

func (c *zstdCodec) String() string                            { return "ZSTD" }
func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode compresses src into dst's storage.
func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(zstdWindow),
			zstd.WithLowerEncoderMem(true), zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
		if err != nil {
			return nil, err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}

// Decode is parquet-go's: the export only writes, and tests read back.
func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) { return parquet.Zstd.Decode(dst, src) }
