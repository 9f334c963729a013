package s3test_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fundsvc/fundsvc/internal/s3test"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

func TestPutGetList(t *testing.T) {
	srv := s3test.Shared(t)
	client := srv.Client()
	bucket := srv.NewBucket(t)
	ctx := t.Context()

	want := make([]byte, 100<<10)
	rand.Read(want)
	put := func(key string, body []byte) {
		t.Helper()
		_, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(bucket),
			Key:    aws.String(key),
			Body:   bytes.NewReader(body),
		})
		if err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
	}
	put("docs/b.bin", want)
	put("docs/a.txt", []byte("hello"))
	put("other/c.txt", []byte("not listed"))

	out, err := client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(bucket),
		Key:    aws.String("docs/b.bin"),
	})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil {
		t.Fatalf("read object: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("object read back differs: got %d bytes, want %d", len(got), len(want))
	}

	list, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
		Bucket: aws.String(bucket),
		Prefix: aws.String("docs/"),
	})
	if err != nil {
		t.Fatalf("ListObjectsV2: %v", err)
	}
	var keys []string
	for _, o := range list.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	if wantKeys := []string{"docs/a.txt", "docs/b.bin"}; !slices.Equal(keys, wantKeys) {
		t.Errorf("listed keys %q, want %q", keys, wantKeys)
	}
}

// validBucket is S3's bucket naming rule, less the rarer exceptions.
var validBucket = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func TestNewBucketNames(t *testing.T) {
	srv := s3test.Shared(t)
	seen := map[string]bool{}
	for _, name := range []string{"Short", "With spaces/And_Symbols!", "Long" + string(bytes.Repeat([]byte("x"), 100))} {
		t.Run(name, func(t *testing.T) {
			bucket := srv.NewBucket(t)
			if !validBucket.MatchString(bucket) {
				t.Errorf("bucket name %q is not a valid S3 name", bucket)
			}
			if seen[bucket] {
				t.Errorf("bucket name %q handed out twice", bucket)
			}
			seen[bucket] = true
		})
	}
}

// TestStartStop checks that Stop ends the server, with a server of its own.
func TestStartStop(t *testing.T) {
	srv, err := s3test.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	url := srv.Endpoint + "/minio/health/ready"
	resp, err := http.Get(url)
	if err != nil {
		srv.Stop()
		t.Fatalf("server not up after Start: %v", err)
	}
	resp.Body.Close()

	srv.Stop()
	srv.Stop() // a second Stop does nothing
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("server still answers after Stop: %s", resp.Status)
	}
}
