package export

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Sink is where a snapshot is written: a local directory or an S3 prefix.
// Keys are slash-separated paths relative to the destination.
type Sink interface {
	// Create starts an object that becomes visible under key only when
	// Close succeeds; Abort discards it.
	Create(ctx context.Context, key string) (Object, error)
	// Put writes a small object whole, replacing any object under key in
	// one step: readers see the old or the new content, never a mix.
	Put(ctx context.Context, key string, data []byte) error
	// Get reads a small object; a missing key is fs.ErrNotExist.
	Get(ctx context.Context, key string) ([]byte, error)
	// Open streams an object of any size (an incremental export reads the
	// data files it rewrites); a missing key is fs.ErrNotExist.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// List returns every key under prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Delete removes keys; missing keys are not an error.
	Delete(ctx context.Context, keys []string) error
	// URI is the location of key as other tools name it.
	URI(key string) string
}

// Object is an object being written.
type Object interface {
	io.Writer
	Close() error
	Abort()
}

// OpenSink opens dest: "s3://bucket/prefix" through client, or a local
// directory (created if missing).
func OpenSink(dest string, client *s3.Client) (Sink, error) {
	if rest, ok := strings.CutPrefix(dest, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return nil, fmt.Errorf("destination %q names no bucket", dest)
		}
		if client == nil {
			return nil, fmt.Errorf("destination %q needs an S3 client", dest)
		}
		uploads := transfermanager.New(client, func(o *transfermanager.Options) {
			// A file smaller than one part is sent with one PutObject, as
			// soon as its part is read: no larger buffer than the parts.
			o.PartSizeBytes, o.MultipartUploadThreshold, o.Concurrency = partSize, partSize, uploadConcurrency
		})
		return &s3Sink{client: client, uploads: uploads, bucket: bucket, prefix: strings.Trim(prefix, "/")}, nil
	}
	if strings.Contains(dest, "://") {
		return nil, fmt.Errorf("destination %q: only s3:// URLs and local directories are supported", dest)
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, DirMode); err != nil {
		return nil, fmt.Errorf("destination %s: %w", dest, err)
	}
	return &dirSink{root: abs}, nil
}

// A snapshot holds every investor's money, so a local export is readable by
// its owner only: the directories the sink creates are DirMode and its files
// FileMode, whatever the umask; export/iceberg writes its metadata and
// manifests with the same modes. Sharing it (a group, an ACL) is the
// operator's explicit choice, made on the destination directory, never a
// default. (An existing destination directory keeps its own mode.)
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// dirSink writes into a local directory. Objects are written to a hidden
// temporary file beside their final name and renamed into place, so a key
// never names a partly written file.
type dirSink struct{ root string }

func (d *dirSink) path(key string) string { return filepath.Join(d.root, filepath.FromSlash(key)) }

func (d *dirSink) URI(key string) string { return d.path(key) }

func (d *dirSink) Create(_ context.Context, key string) (Object, error) {
	final := d.path(key)
	if err := os.MkdirAll(filepath.Dir(final), DirMode); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(final), "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes 0600 today; the mode is set anyway, so that the
	// promise does not rest on another package's default.
	if err := f.Chmod(FileMode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &fileObject{f: f, final: final}, nil
}

type fileObject struct {
	f     *os.File
	final string
}

func (o *fileObject) Write(p []byte) (int, error) { return o.f.Write(p) }

func (o *fileObject) Close() error {
	if err := o.f.Sync(); err != nil {
		o.Abort()
		return err
	}
	if err := o.f.Close(); err != nil {
		_ = os.Remove(o.f.Name())
		return err
	}
	if err := os.Rename(o.f.Name(), o.final); err != nil {
		_ = os.Remove(o.f.Name())
		return err
	}
	return syncDir(filepath.Dir(o.final))
}

func (o *fileObject) Abort() {
	_ = o.f.Close()
	_ = os.Remove(o.f.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func (d *dirSink) Put(ctx context.Context, key string, data []byte) error {
	o, err := d.Create(ctx, key)
	if err != nil {
		return err
	}
	if _, err := o.Write(data); err != nil {
		o.Abort()
		return err
	}
	return o.Close()
}

func (d *dirSink) Get(_ context.Context, key string) ([]byte, error) {
	return os.ReadFile(d.path(key))
}

func (d *dirSink) Open(_ context.Context, key string) (io.ReadCloser, error) {
	return os.Open(d.path(key))
}

// List includes the hidden temporary files of unfinished objects, so that
// cleaning up after a crashed run finds them too.
func (d *dirSink) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	start := d.path(path.Dir(prefix + "x")) // the directory the prefix lies in
	err := filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

// Delete also removes directories the deletions leave empty.
func (d *dirSink) Delete(_ context.Context, keys []string) error {
	for _, key := range keys {
		if err := os.Remove(d.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for dir := path.Dir(key); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if os.Remove(d.path(dir)) != nil {
				break // not empty
			}
		}
	}
	return nil
}

// s3Sink writes under an S3 prefix. Data files stream through multipart
// uploads (the SDK's transfer manager, which replaces the deprecated
// feature/s3/manager uploader): an upload that is not completed is never an
// object, and a failed one is aborted.
type s3Sink struct {
	client  *s3.Client
	uploads *transfermanager.Client
	bucket  string
	prefix  string
}

func (s *s3Sink) key(key string) string {
	if s.prefix == "" {
		return key
	}
	return s.prefix + "/" + key
}

func (s *s3Sink) URI(key string) string { return "s3://" + s.bucket + "/" + s.key(key) }

// partSize bounds the memory of one upload: the transfer manager holds at
// most uploadConcurrency+1 parts of this size.
const (
	partSize          = 8 << 20
	uploadConcurrency = 2
)

func (s *s3Sink) Create(ctx context.Context, key string) (Object, error) {
	// Not cancelled with the run: an upload the run gives up on must still
	// be able to send its AbortMultipartUpload.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pr, pw := io.Pipe()
	o := &s3Object{pw: pw, cancel: cancel, done: make(chan error, 1)}
	go func() {
		_, err := s.uploads.UploadObject(ctx, &transfermanager.UploadObjectInput{
			Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)), Body: pr,
			ContentType: aws.String(contentType(key)),
		})
		_ = pr.CloseWithError(err) // unblock the writer if the upload failed
		o.done <- err
	}()
	return o, nil
}

type s3Object struct {
	pw     *io.PipeWriter
	cancel context.CancelFunc
	done   chan error
}

func (o *s3Object) Write(p []byte) (int, error) { return o.pw.Write(p) }

func (o *s3Object) Close() error {
	_ = o.pw.Close()
	err := <-o.done
	o.cancel()
	return err
}

// Abort fails the upload through its body, so the transfer manager aborts
// the multipart upload while its context is still live; cancelling first
// would leave the parts pending.
func (o *s3Object) Abort() {
	_ = o.pw.CloseWithError(errors.New("export aborted"))
	<-o.done
	o.cancel()
}

func (s *s3Sink) Put(ctx context.Context, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.key(key)), Body: bytes.NewReader(data),
		ContentType: aws.String(contentType(key)),
	})
	return err
}

func (s *s3Sink) Get(ctx context.Context, key string) ([]byte, error) {
	body, err := s.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(body)
}

func (s *s3Sink) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(key))})
	var missing *types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("%s: %w", s.URI(key), fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

func (s *s3Sink) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	strip := s.key("")
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.key(prefix))})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), strip))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func (s *s3Sink) Delete(ctx context.Context, keys []string) error {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		ids := make([]types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			ids[i] = types.ObjectIdentifier{Key: aws.String(s.key(k))}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return err
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("delete %s: %s", aws.ToString(e.Key), aws.ToString(e.Message))
		}
		keys = keys[n:]
	}
	return nil
}

func contentType(key string) string {
	switch path.Ext(key) {
	case ".parquet":
		return "application/vnd.apache.parquet"
	case ".json":
		return "application/json"
	case ".sql":
		return "application/sql"
	default:
		return "text/plain; charset=utf-8"
	}
}

// newRunID names one export run: sortable by start time, unique.
func newRunID(start interface{ Format(string) string }) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return start.Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}
