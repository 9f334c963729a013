package iceberg

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/fundsvc/fundsvc/export"
)

// privateFS is iceberg-go's local file IO with the modes of the export's
// own local files: every file it creates is export.FileMode (0600) and
// every directory export.DirMode (0700), whatever the umask. iceberg-go's
// LocalFS makes them 0644 and 0755, and a table's metadata and manifests
// hold what its data files do in part: column bounds (amounts, IDs) and
// the files' paths. Reads, listing, renames and removals are LocalFS's.
type privateFS struct{ iceio.LocalFS }

// init makes privateFS the IO of local locations (no scheme, and file://)
// for every table of this process: it replaces the factory iceberg-go
// registers for them, the hook it offers for a scheme's IO. Tables in S3
// keep the s3 scheme's IO.
func init() {
	for _, scheme := range []string{"", "file"} {
		iceio.Unregister(scheme)
		iceio.Register(scheme, func(context.Context, *url.URL, map[string]string) (iceio.IO, error) { return privateFS{}, nil })
	}
}

// Create creates or truncates the file name, FileMode, making its missing
// directories DirMode.
func (privateFS) Create(name string) (iceio.FileWriter, error) {
	path, err := localPath(name)
	if err != nil {
		return nil, err
	}
	return createPrivate(path)
}

// WriteFile writes content to the file name as Create makes it.
func (privateFS) WriteFile(name string, content []byte) error {
	path, err := localPath(name)
	if err != nil {
		return err
	}
	f, err := createPrivate(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// MkdirAll makes the directory name and its missing parents, DirMode.
func (privateFS) MkdirAll(name string) error {
	path, err := localPath(name)
	if err != nil {
		return err
	}
	return os.MkdirAll(path, export.DirMode)
}

// Mkdir makes the directory name, DirMode.
func (privateFS) Mkdir(name string) error {
	path, err := localPath(name)
	if err != nil {
		return err
	}
	return os.Mkdir(path, export.DirMode)
}

// createPrivate creates or truncates the file at path with FileMode, also
// when it existed with another mode, making its missing directories
// DirMode.
func createPrivate(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), export.DirMode); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, export.FileMode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(export.FileMode); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// localPath is the local path a location names: a plain path as it is, a
// file:// URI (no host, or localhost) its path. It refuses other URIs.
func localPath(name string) (string, error) {
	scheme, rest, ok := strings.Cut(name, ":")
	if !ok || strings.ContainsAny(scheme, `/\`) || !strings.HasPrefix(rest, "//") {
		return name, nil // a path, which may hold a colon
	}
	if !strings.EqualFold(scheme, "file") {
		return "", fmt.Errorf("iceberg: %q is not a local location", name)
	}
	u, err := url.Parse(name)
	if err != nil {
		return "", fmt.Errorf("iceberg: local location %q: %w", name, err)
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", fmt.Errorf("iceberg: local location %q names host %q", name, u.Host)
	}
	return filepath.FromSlash(u.Path), nil
}
