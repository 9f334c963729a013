package api_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unsafe"

	"github.com/fundsvc/fundsvc/api"
	"github.com/fundsvc/fundsvc/fund"
	"github.com/fundsvc/fundsvc/internal/fundtest"
	"golang.org/x/sys/unix"
)

// TestALargeWorkbookIsWrittenToDiskOnce posts a 2 MiB workbook, over what
// a body's Idempotency-Key holds in memory (1 MiB), and counts the files
// created in the temporary folder while it is read: with a key, one, the
// body the key spooled to hash it, which the import then reads where it
// lies; without, one, the import's own copy of the stream.
func TestALargeWorkbookIsWrittenToDiskOnce(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, tmp, unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	s := startAPI(t, fundtest.New(t), func(o *api.Options) { o.MaxBodyBytes = 4 << 20 })
	file := fundtest.PaddedWorkbook(t, importTemplate(t, s, fund.KindCapitalCallNotice, "xlsx"), 2<<20)
	for _, c := range []struct {
		name    string
		headers []string
		want    string // the prefix of the one file created
	}{
		{"with an Idempotency-Key", []string{"Idempotency-Key", "a-large-workbook"}, "fundsvc-body-"},
		{"without", nil, "fundsvc-import-"},
	} {
		created(t, fd) // none before
		res := postImport(t, s, "?dryRun=true", xlsxMedia, file, c.headers...)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d\n%s", c.name, res.Status, res.Body)
		}
		if rep := reportOf(t, res); !rep.Valid || len(rep.Documents) == 0 {
			t.Fatalf("%s: the workbook was not read as the template:\n%s", c.name, res.Body)
		}
		if got := created(t, fd); len(got) != 1 || !strings.HasPrefix(got[0], c.want) {
			t.Errorf("%s: files created %q, want one %s…", c.name, got, c.want)
		}
	}
}

// created drains the inotify descriptor fd and returns the names of the
// files created since it was last drained.
func created(t *testing.T, fd int) []string {
	t.Helper()
	var names []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			names = append(names, string(bytes.TrimRight(name, "\x00")))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
