package store

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/fundsvc/fundsvc/fund"
)

// The head's recent versions: the records (document and capital activity)
// of the head's version and of the OverviewHistory versions before it,
// newest first, which each commit writes on the head it puts, from the head
// it replaces. The overview lists the earlier ones from the head its Query
// reads first anyway, so it reads no history record at all: its Query
// covers the latest view only (SK < HistoryStart), and costs the same
// whatever the number of versions.
//
// They are stored as gzip-compressed JSON rather than as attributes:
// twenty-one versions' records as attributes take some 5 KB, which every
// GetItem of the head (the authorization of every document route, each
// write's read of the head) would pay in read units; compressed they take
// about a kilobyte (TestRecentVersionsStayCompact).

// recentVersion is one version's records on the head.
type recentVersion struct {
	fund.DocumentFields
	Version       int                   `json:"version"`
	PositionCount int                   `json:"positionCount"`
	CreatedAt     time.Time             `json:"createdAt"`
	CreatedBy     string                `json:"createdBy,omitempty"`
	Voided        bool                  `json:"voided,omitempty"`
	Activity      *fund.CapitalActivity `json:"capitalActivity,omitempty"`
}

func recentOf(d *fund.Document) recentVersion {
	return recentVersion{DocumentFields: d.DocumentFields, Version: d.Version, PositionCount: len(d.Positions),
		CreatedAt: d.CreatedAt, CreatedBy: d.CreatedBy, Voided: d.Voided, Activity: d.CapitalActivity}
}

// header is the version's document record, as a history record reads.
func (r *recentVersion) header(doc string) fund.DocumentHeader {
	return fund.DocumentHeader{ID: doc, DocumentFields: r.DocumentFields, PositionCount: r.PositionCount,
		Version: r.Version, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, Voided: r.Voided}
}

// nextRecent is the recent versions of the head that commits d after prev
// (nil for a new document): d's records, then prev's recent versions
// before d's, OverviewHistory of them at most.
func nextRecent(d *fund.Document, prev *Item) ([]byte, error) {
	out := []recentVersion{recentOf(d)}
	if prev != nil {
		earlier, err := decodeRecent(prev.Recent)
		if err != nil {
			return nil, fmt.Errorf("document %s: the head's recent versions: %w", d.ID, err)
		}
		for _, r := range earlier {
			if len(out) > OverviewHistory {
				break
			}
			if r.Version < d.Version {
				out = append(out, r)
			}
		}
	}
	return encodeRecent(out)
}

// The compressors are pooled: each holds some hundreds of kilobytes of
// state, which a commit and an overview would otherwise allocate.
var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	gzipReaders sync.Pool // of *gzip.Reader
)

func encodeRecent(rs []recentVersion) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if err := json.NewEncoder(zw).Encode(rs); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeRecent reads recent versions; none stored is none.
func decodeRecent(b []byte) ([]recentVersion, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var err error
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(b))
	} else {
		err = zr.Reset(bytes.NewReader(b))
	}
	if err != nil {
		return nil, err
	}
	defer gzipReaders.Put(zr)
	var rs []recentVersion
	if err := json.NewDecoder(zr).Decode(&rs); err != nil {
		return nil, err
	}
	return rs, nil
}
