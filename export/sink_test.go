package export_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fundsvc/fundsvc/export"
	"github.com/fundsvc/fundsvc/internal/s3test"
)

// TestSinksPublishWholeObjectsOnly streams an object larger than several
// upload parts into each sink, and aborts another half way: the first
// reads back byte for byte (on S3 as a completed multipart upload), the
// aborted one is nowhere, not even among the bucket's pending uploads.
func TestSinksPublishWholeObjectsOnly(t *testing.T) {
	minio := s3test.Shared(t)
	client := minio.Client()
	bucket := minio.NewBucket(t)
	s3sink, err := export.OpenSink("s3://"+bucket+"/p", client)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := dirSink(t)
	ctx := context.Background()

	data := make([]byte, 20<<20+12345) // more than two 8 MiB parts
	r := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for name, sink := range map[string]export.Sink{"s3": s3sink, "dir": dir} {
		t.Run(name, func(t *testing.T) {
			o, err := sink.Create(ctx, "a/b/whole.parquet")
			if err != nil {
				t.Fatal(err)
			}
			for rest := data; len(rest) > 0; rest = rest[min(len(rest), 100_000):] {
				if _, err := o.Write(rest[:min(len(rest), 100_000)]); err != nil {
					t.Fatal(err)
				}
			}
			if keys, _ := sink.List(ctx, "a/b/whole"); len(keys) != 0 && name == "s3" {
				t.Errorf("the object is listed before Close: %v", keys)
			}
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}

			half, err := sink.Create(ctx, "a/b/aborted.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := half.Write(data[:10<<20]); err != nil {
				t.Fatal(err)
			}
			half.Abort()

			keys, err := sink.List(ctx, "a/")
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 1 || keys[0] != "a/b/whole.parquet" {
				t.Fatalf("listed %v, want only a/b/whole.parquet", keys)
			}
			got, err := sink.Get(ctx, "a/b/whole.parquet")
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(got) != sha256.Sum256(data) {
				t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
			}
		})
	}

	// The S3 object came in parts; the aborted upload left none pending.
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/a/b/whole.parquet"), PartNumber: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if parts := aws.ToInt32(head.PartsCount); parts < 3 {
		t.Errorf("the object has %d parts; want a multipart upload of at least 3", parts)
	}
	uploads, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Errorf("%d multipart uploads still pending after Abort", len(uploads.Uploads))
	}
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("p/a/b/whole.parquet")})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Body.Close()
	if b, _ := io.ReadAll(obj.Body); !bytes.Equal(b, data) {
		t.Error("the object read through the SDK differs")
	}
}
