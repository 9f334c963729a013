package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fundsvc/fundsvc/config"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/store"
)

// exportFlags are the own flags of export and ddl.
type exportFlags struct {
	date      string
	progress  string
	location  string
	waitLease time.Duration
	sinceLast bool
	settle    time.Duration
}

func registerExport(fs *flag.FlagSet, f *flags) {
	fs.StringVar(&f.export.date, "date", "", "the snapshot's `DATE`, YYYY-MM-DD (default today, UTC)")
	fs.StringVar(&f.export.progress, "progress", "auto", "how progress is shown, `auto|bar|log`: auto draws a bar on a terminal and writes JSON log lines otherwise")
	fs.DurationVar(&f.export.waitLease, "wait-lease", 0, "wait up to this long for another export of the same date to finish (0: refuse at once)")
	fs.BoolVar(&f.export.sinceLast, "since-last", false, "incremental: the latest earlier snapshot plus the documents changed since it (a full export if there is none)")
	fs.DurationVar(&f.export.settle, "settle", store.ChangeSettleMargin, "how long a commit may take to appear in the store's change index: a snapshot is complete up to its start less this")
}

func registerDDL(fs *flag.FlagSet, f *flags) {
	fs.StringVar(&f.export.location, "location", "", "where the snapshots are, `s3://BUCKET/PREFIX|DIR` (default the export destination, --dest)")
}

// ddlLocation is where ddl says the snapshots are: --location, else the
// export destination, a directory made absolute.
func (f exportFlags) ddlLocation(cfg config.Config) (string, error) {
	location := cmp.Or(f.location, cfg.ExportDest)
	if strings.HasPrefix(location, "s3://") {
		return location, nil
	}
	return filepath.Abs(location)
}

// printDDL prints the Athena DDL of every dataset (export.AllDDL),
// or for --format iceberg what Athena needs of the Iceberg tables.
func printDDL(ctx context.Context, e invocation) error {
	location, err := e.f.export.ddlLocation(e.cfg)
	if err != nil {
		return err
	}
	if e.cfg.ExportFormat == config.FormatIceberg {
		if err := e.p.Iceberg.DDL(ctx, e.cfg, location, envCredentials(e.getenv), e.stdout); err != nil {
			return fmt.Errorf("ddl: %w", err)
		}
		return nil
	}
	_, err = io.WriteString(e.stdout, export.AllDDL(location))
	return err
}

// runExport writes one snapshot. On a terminal it draws a progress bar;
// otherwise it logs one JSON line per dataset and a summary.
var runExport = withStore(func(ctx context.Context, e invocation, store *store.Store) error {
	cfg, f, log, getenv, stdout := e.cfg, e.f.export, e.log, e.getenv, e.stdout
	if f.progress != "auto" && f.progress != "bar" && f.progress != "log" {
		return fmt.Errorf("export: --progress %q: want auto, bar or log", f.progress)
	}
	if f.settle < 0 {
		return fmt.Errorf("export: --settle %s: want a duration of 0 or more", f.settle)
	}
	if f.waitLease < 0 {
		return fmt.Errorf("export: --wait-lease %s: want a duration of 0 or more", f.waitLease)
	}
	date := fund.Date{}
	if f.date == "" {
		date = fund.MustDate(time.Now().UTC().Format("2006-01-02"))
	} else {
		d, err := fund.ParseDate(f.date)
		if err != nil {
			return fmt.Errorf("export: --date: %w", err)
		}
		date = d
	}
	var client *s3.Client
	if strings.HasPrefix(cfg.ExportDest, "s3://") {
		c, err := s3Client(ctx, cfg, getenv)
		if err != nil {
			return err
		}
		client = c
	}
	sink, err := export.OpenSink(cfg.ExportDest, client)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}

	progress := &export.Progress{}
	bar := f.progress == "bar" || f.progress == "auto" && isTerminal(stdout)
	onEvent := func(e export.Event) {
		switch e.Kind {
		case export.EventScan:
			log.Info("scan finished", "table", cfg.Table, "items", e.Items, "segments", cfg.ExportSegments,
				"seconds", e.Elapsed.Seconds(), "items_per_second", rate(e.Items, e.Elapsed))
		case export.EventChanges:
			log.Info("changes read", "documents_changed", e.Items, "why", e.Key)
		case export.EventDataset:
			log.Info("dataset written", "dataset", e.Dataset, "rows", e.Rows, "bytes", e.Bytes, "files", e.Files, "seconds", e.Elapsed.Seconds())
		}
	}
	stop := func() {}
	if bar {
		stop = drawBar(stdout, progress)
		onEvent = nil
	}
	ecfg := export.Config{
		Store: store, Sink: sink, Date: date, Segments: cfg.ExportSegments,
		TargetFileBytes: cfg.ExportFileBytes, Compression: cfg.ExportCompression,
		Progress: progress, OnEvent: onEvent, LeaseWait: f.waitLease, SinceLast: f.sinceLast, Settle: f.settle,
	}
	var m *export.Manifest
	if cfg.ExportFormat == config.FormatIceberg {
		m, err = e.p.Iceberg.Export(ctx, ecfg, cfg, envCredentials(getenv), log)
	} else {
		m, err = export.Run(ctx, ecfg)
	}
	stop() // the bar's last line ends before anything else is written
	if err != nil {
		return tableError(cfg, err)
	}
	elapsed := m.FinishedAt.Sub(m.StartedAt)
	rows, size := m.Totals()
	if bar {
		what := fmt.Sprintf("%d items scanned", m.ItemsScanned)
		if m.Kind == "incremental" {
			what = fmt.Sprintf("incremental from %s, %d documents changed", m.Base, m.DocumentsChanged)
		}
		fmt.Fprintf(stdout, "snapshot %s published to %s: %s, %d rows, %s in %d datasets, %.1fs\n",
			m.SnapshotDate, sink.URI(export.ManifestKey(date)), what, rows, megabytes(size), len(m.Datasets), elapsed.Seconds())
		if m.Why != "" {
			fmt.Fprintf(stdout, "  %s\n", m.Why)
		}
		return nil
	}
	log.Info("snapshot published", "snapshot_date", m.SnapshotDate, "run_id", m.RunID, "kind", m.Kind,
		"base", m.Base, "documents_changed", m.DocumentsChanged, "complete_up_to", m.CompleteUpTo,
		"read_capacity_units", m.Capacity.ReadUnits, "write_capacity_units", m.Capacity.WriteUnits,
		"manifest", sink.URI(export.ManifestKey(date)), "items", m.ItemsScanned, "rows", rows, "bytes", size,
		"seconds", elapsed.Seconds(), "items_per_second", rate(m.ItemsScanned, elapsed))
	return nil
})

// s3Client connects to S3 or an S3-compatible store with the standard
// credential chain (AWS_ACCESS_KEY_ID, profiles, instance roles).
func s3Client(ctx context.Context, cfg config.Config, getenv func(string) string) (*s3.Client, error) {
	region := cmp.Or(cfg.S3Region, cfg.Region)
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(region)}
	if p := envCredentials(getenv); p != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(p))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.S3Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.S3Endpoint)
		}
		o.UsePathStyle = cfg.S3PathStyle
	}), nil
}

// drawBar redraws one status line until stop is called; stop draws it a
// last time and ends it with a newline.
func drawBar(w io.Writer, p *export.Progress) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			items := p.ItemsScanned.Load()
			fmt.Fprintf(w, "\r\033[Kexport: %d items scanned (%.0f/s) · %d rows written · %s",
				items, rate(items, time.Since(start)), p.RowsWritten.Load(), megabytes(p.BytesWritten.Load()))
			select {
			case <-done:
				fmt.Fprintln(w)
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
