package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/fundsvc/fundsvc/internal/harness"
	"github.com/fundsvc/fundsvc/store"
)

// The floor is what any service in its own process would cost a position
// read on this machine: a bare net/http server that makes the position
// read's Query (the raw baseline's, with the store's client) and answers
// as many bytes as fundsvc's median answer to that read, doing nothing
// else (no authentication, decoding, encoding or log). Measured against
// the same raw baseline in the same run, its ratio is the part of the
// position read's that is the hop between processes and the answer's
// bytes over loopback; the position read's ratio above it is the
// service's own work.
const floorName = "position across documents: the floor (a bare server's Query)"

// floorEnv, set to a listen address, makes this binary serve the floor
// rather than benchmark (startFloor runs it so, with the endpoint and table
// in floorEndpointEnv and floorTableEnv).
const (
	floorEnv         = "SERVICEBENCH_FLOOR_LISTEN"
	floorEndpointEnv = "SERVICEBENCH_FLOOR_DYNAMODB_ENDPOINT"
	floorTableEnv    = "SERVICEBENCH_FLOOR_TABLE"
)

// serveFloorIfAsked serves the floor, and exits, if floorEnv is set.
func serveFloorIfAsked() {
	if addr := os.Getenv(floorEnv); addr != "" {
		fmt.Fprintln(os.Stderr, "servicebench floor:", serveFloor(addr))
		os.Exit(1)
	}
}

// serveFloor serves the floor on addr until the process is killed.
func serveFloor(addr string) error {
	endpoint, table := os.Getenv(floorEndpointEnv), os.Getenv(floorTableEnv)
	if endpoint == "" || table == "" {
		return fmt.Errorf("%s needs %s and %s", floorEnv, floorEndpointEnv, floorTableEnv)
	}
	// The configuration dynamotest.Server.Config gives the raw side.
	r := &raw{client: store.NewDB(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("dynamotest", "dynamotest", ""),
		BaseEndpoint: aws.String(endpoint),
	}).Client(), table: table}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /v1/positions/{id}", func(w http.ResponseWriter, req *http.Request) {
		n, err := strconv.Atoi(req.URL.Query().Get("bytes"))
		if err != nil || n < 2 {
			http.Error(w, "want ?bytes=N, N at least 2", http.StatusBadRequest)
			return
		}
		if _, err := r.positionItems(req.Context(), req.PathValue("id"), apiPageLimit, false); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = w.Write(floorAnswer(n))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return srv.ListenAndServe()
}

var (
	floorAnswers   sync.Map // int → []byte
	errFloorExited = errors.New("the floor server exited")
)

// floorAnswer is a JSON string of n bytes, quotes included.
func floorAnswer(n int) []byte {
	if b, ok := floorAnswers.Load(n); ok {
		return b.([]byte)
	}
	b := []byte(`"` + strings.Repeat("x", n-2) + `"`)
	floorAnswers.Store(n, b)
	return b
}

// startFloor runs this binary as the floor server (floorEnv) on the table
// and returns it as a service to send requests to (its token unused). The
// caller must call stop.
func startFloor(ctx context.Context, endpoint, table string) (*service, error) {
	port, err := harness.FreePort()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), floorEnv+"=127.0.0.1:"+strconv.Itoa(port),
		floorEndpointEnv+"="+endpoint, floorTableEnv+"="+table)
	if os.Getenv("GOGC") == "" {
		// As fundsvc serve collects (cli.serveGCPercent), so that the
		// floor has no cost the service is spared.
		cmd.Env = append(cmd.Env, "GOGC=400")
	}
	exited, out, err := harness.StartProcess(cmd)
	if err != nil {
		return nil, err
	}
	s := &service{
		base:   "http://127.0.0.1:" + strconv.Itoa(port),
		client: benchClient(),
		cmd:    cmd, exited: exited, out: out,
	}
	wctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := harness.WaitReady(wctx, 20*time.Millisecond, exited, errFloorExited, "no 200 from the floor's /livez", func(ctx context.Context) error {
		status, _, _, err := s.do(ctx, http.MethodGet, "/livez", nil)
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("/livez answered %d", status)
		}
		return err
	}); err != nil {
		s.stop()
		return nil, harness.WithOutput(err, "floor server", out)
	}
	return s, nil
}

// answerSizes records the sizes of a route's answers, for the floor to
// answer as many bytes.
type answerSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (a *answerSizes) add(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sizes = append(a.sizes, n)
}

// median is the median answer's bytes, 0 before any.
func (a *answerSizes) median() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return percentile(a.sizes, 0.5)
}
