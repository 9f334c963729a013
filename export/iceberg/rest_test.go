package iceberg

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/fundsvc/fundsvc/export"
)

// restCatalog is a small Iceberg REST catalog: the requests iceberg-go's
// REST client makes for an export, answered from a SQL catalog with this
// package's multi-table commit (POST /v1/transactions/commit, 409 on a
// refusal).
type restCatalog struct {
	backend *sqlCatalog
	// transactions: /v1/config advertises POST
	// /v1/{prefix}/transactions/commit.
	transactions bool

	mu       sync.Mutex
	requests []string // "METHOD path" of every request
	unknown  []string // those answered 404 as no route
}

func (s *restCatalog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/config", s.config)
	mux.HandleFunc("POST /v1/namespaces", s.createNamespace)
	mux.HandleFunc("POST /v1/namespaces/{ns}/tables", s.createTable)
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	if s.transactions {
		mux.HandleFunc("POST /v1/transactions/commit", s.commitTransaction)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.unknown = append(s.unknown, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		restError(w, http.StatusNotFound, "NotFoundException", errors.New("no route"))
	})
	mux.ServeHTTP(w, r)
}

// count is the number of requests to "METHOD path".
func (s *restCatalog) count(request string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if r == request {
			n++
		}
	}
	return n
}

func (s *restCatalog) config(w http.ResponseWriter, _ *http.Request) {
	endpoints := []string{
		"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}",
		"POST /v1/{prefix}/namespaces/{namespace}/tables", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	}
	if s.transactions {
		endpoints = append(endpoints, "POST /v1/{prefix}/transactions/commit")
	}
	restJSON(w, http.StatusOK, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}, "endpoints": endpoints})
}

func (s *restCatalog) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace []string `json:"namespace"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		restError(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	err := s.backend.CreateNamespace(r.Context(), req.Namespace, nil)
	switch {
	case errors.Is(err, catalog.ErrNamespaceAlreadyExists):
		restError(w, http.StatusConflict, "AlreadyExistsException", err)
	case err != nil:
		restError(w, http.StatusInternalServerError, "ServerError", err)
	default:
		restJSON(w, http.StatusOK, map[string]any{"namespace": req.Namespace, "properties": map[string]string{}})
	}
}

func (s *restCatalog) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name       string             `json:"name"`
		Schema     *iceberg.Schema    `json:"schema"`
		Location   string             `json:"location"`
		Properties iceberg.Properties `json:"properties"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		restError(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	tbl, err := s.backend.CreateTable(r.Context(), catalog.ToIdentifier(r.PathValue("ns"), req.Name), req.Schema,
		catalog.WithLocation(req.Location), catalog.WithProperties(req.Properties))
	switch {
	case errors.Is(err, catalog.ErrTableAlreadyExists):
		restError(w, http.StatusConflict, "AlreadyExistsException", err)
	case err != nil:
		restError(w, http.StatusInternalServerError, "ServerError", err)
	default:
		restTable(w, tbl)
	}
}

func (s *restCatalog) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.backend.LoadTable(r.Context(), catalog.ToIdentifier(r.PathValue("ns"), r.PathValue("table")))
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		restError(w, http.StatusNotFound, "NoSuchTableException", err)
	case err != nil:
		restError(w, http.StatusInternalServerError, "ServerError", err)
	default:
		restTable(w, tbl)
	}
}

func (s *restCatalog) commitTransaction(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TableChanges []struct {
			Identifier struct {
				Namespace []string `json:"namespace"`
				Name      string   `json:"name"`
			} `json:"identifier"`
			Requirements table.Requirements `json:"requirements"`
			Updates      table.Updates      `json:"updates"`
		} `json:"table-changes"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		restError(w, http.StatusBadRequest, "BadRequestException", err)
		return
	}
	commits := make([]table.TableCommit, len(req.TableChanges))
	for i, c := range req.TableChanges {
		commits[i] = table.TableCommit{Identifier: append(c.Identifier.Namespace, c.Identifier.Name),
			Requirements: c.Requirements, Updates: c.Updates}
	}
	err := s.backend.CommitTransaction(r.Context(), commits)
	switch {
	case errors.Is(err, table.ErrCommitFailed):
		restError(w, http.StatusConflict, "CommitFailedException", err)
	case errors.Is(err, catalog.ErrNoSuchTable):
		restError(w, http.StatusNotFound, "NoSuchTableException", err)
	case err != nil:
		restError(w, http.StatusInternalServerError, "ServerError", err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func restTable(w http.ResponseWriter, tbl *table.Table) {
	restJSON(w, http.StatusOK, map[string]any{"metadata-location": tbl.MetadataLocation(), "metadata": tbl.Metadata(), "config": map[string]string{}})
}

func restJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func restError(w http.ResponseWriter, status int, kind string, err error) {
	restJSON(w, status, map[string]any{"error": map[string]any{"message": err.Error(), "type": kind, "code": status}})
}

// newRESTCatalog serves a REST catalog backed by a fresh SQL catalog and
// opens it as OpenCatalog does for --iceberg-catalog rest.
func newRESTCatalog(t *testing.T, transactions bool) (*restCatalog, *Catalog, error) {
	t.Helper()
	backend := newCatalog(t, nil, filepath.Join(t.TempDir(), "catalog.db")).cat.(*sqlCatalog)
	s := &restCatalog{backend: backend, transactions: transactions}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := OpenCatalog(t.Context(), CatalogConfig{Kind: KindREST, URI: srv.URL})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return s, c, err
}

// TestRESTCatalogCommitsARunAtOnce exports through a REST catalog whose
// server offers transactions/commit: each run is one request to it, every
// table reads the run, and a commit another writer beat to one table is
// answered 409 and retried as a whole. A server that does not offer the
// endpoint is refused before the export writes anything.
func TestRESTCatalogCommitsARunAtOnce(t *testing.T) {
	const commit = "POST /v1/transactions/commit"
	t.Run("each run is one transactions/commit request", func(t *testing.T) {
		s, sink, _ := oneDocumentInDirectory(t)
		rest, cat, err := newRESTCatalog(t, true)
		if err != nil {
			t.Fatal(err)
		}
		first, err := Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-20"), Catalog: cat})
		if err != nil {
			t.Fatalf("the first run: %v", err)
		}
		if n := rest.count(commit); n != 1 {
			t.Errorf("the first run sent %d transactions/commit requests, want 1", n)
		}

		s.putDocument(t, "DOC_2", "FUND_B", 2, "5")
		var moved int64
		var events []CommitEvent
		cfg := Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat,
			OnCommit: func(e CommitEvent) { events = append(events, e) }}
		cfg.beforeCommit = func(attempt int, _ []string) {
			if attempt == 1 { // another writer, on the server's own catalog
				moved = emptyTable(t, &Catalog{cat: rest.backend, namespace: DefaultNamespace}, "positions")
			}
		}
		second, err := Run(t.Context(), cfg)
		if err != nil {
			t.Fatalf("the second run: %v", err)
		}
		if n := rest.count(commit); n != 3 {
			t.Errorf("the runs sent %d transactions/commit requests, want 3 (the second run's first refused)", n)
		}
		if len(events) != 2 || !events[0].Refused || events[1].Refused {
			t.Errorf("events %+v: want the second run's first commit refused, its second committed", events)
		}
		server := &Catalog{cat: rest.backend, namespace: DefaultNamespace}
		for _, name := range export.Datasets {
			parent := first.Snapshots[name]
			if name == "positions" {
				parent = moved
			}
			checkReadsRun(t, loadTable(t, server, name), second, parent)
			checkReadsRun(t, loadTable(t, cat, name), second, parent)
		}
		rest.mu.Lock()
		defer rest.mu.Unlock()
		if len(rest.unknown) != 0 {
			t.Errorf("requests the stand-in does not serve: %v", rest.unknown)
		}
	})

	t.Run("a server without transactions/commit is refused before anything is written", func(t *testing.T) {
		s, sink, dir := oneDocumentInDirectory(t)
		rest, cat, err := newRESTCatalog(t, false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(t.Context(), Config{Export: exportConfig(t, s, sink, "2026-11-21"), Catalog: cat})
		if !errors.Is(err, ErrNoAtomicCommit) || !strings.Contains(err.Error(), "transactions/commit") {
			t.Fatalf("err = %v, want ErrNoAtomicCommit naming the endpoint", err)
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("the destination holds %v (%v): something was written", entries, err)
		}
		rest.mu.Lock()
		defer rest.mu.Unlock()
		for _, r := range rest.requests {
			if r != "GET /v1/config" && r != "POST /v1/namespaces" {
				t.Errorf("request %s: the check was not the first thing the run did", r)
			}
		}
	})
}
