# Targets for developers and CI (.ci/run calls `make test`).

GO ?= go

# gin's nomsgpack build tag leaves out its MessagePack binding
# (github.com/ugorji/go/codec), which fundsvc never uses: about 30 seconds of
# a cold build. Every build and test of this Makefile gets it through
# GOFLAGS (added to the user's own); a plain `go build ./cmd/fundsvc` works
# too, with the binding linked.
ifeq ($(filter -tags=nomsgpack,$(GOFLAGS)),)
export GOFLAGS := $(strip $(shell $(GO) env GOFLAGS) -tags=nomsgpack)
endif

# The binaries record their VCS revision (fundsvc version, /livez) where git
# can read the checkout, whatever GOFLAGS says of -buildvcs.
BUILDVCS = $(shell git status --porcelain >/dev/null 2>&1 && echo -buildvcs=true)

# npm ci replaces tools/node_modules; a stamp inside it records that an
# install of the current package-lock.json finished: RUN_STAMP the
# dependencies make run needs (DynamoDB Local, Swagger UI; npm ci
# --omit=dev), TOOLS_STAMP everything, the test tools too (make tools), which
# holds the former, so it touches both.
RUN_STAMP   := tools/node_modules/.fundsvc-run-installed
TOOLS_STAMP := tools/node_modules/.fundsvc-installed

# MinIO, the S3 server internal/s3test runs; a new version's stamp rebuilds it.
MINIO_VERSION := v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_STAMP   := tools/bin/.minio-$(MINIO_VERSION)

# The OpenAPI document under Redocly's recommended rules (the pinned
# @redocly/cli); .redocly.lint-ignore.yaml lists the problems that are true.
REDOCLY_LINT = tools/node_modules/.bin/redocly lint --extends=recommended api/openapi.json

# Go files to check, leaving out installed tools and local data.
GO_FILES = $(shell find . \( -path ./tools -o -path ./.data -o -path ./.git \) -prune -o -name '*.go' -print)

# Fuzzing runs every fuzz target of the module, one at a time
# (scripts/fuzz.sh): `make test` gives each a short pass, `make fuzz` a long
# one. Minimizing a new input stops the fuzzing meanwhile (a kilobyte-sized
# document takes longer than a whole short pass), so it is bounded too.
FUZZTIME              ?= 60s
FUZZMINIMIZETIME      ?= 10s
TEST_FUZZTIME         ?= 3s
TEST_FUZZMINIMIZETIME ?= 1s

.PHONY: build fundsvc fundsvc-iceberg tools run-tools test fuzz run reset-demo bench bench-export fmt lint openapi clean docsui chromium

# fundsvc, and fundsvc-iceberg: fundsvc with the Iceberg publisher, which
# `fundsvc export --format iceberg` and `ddl --format iceberg` run.
build: fundsvc fundsvc-iceberg

# go build knows what is out of date, so these always run it.
fundsvc: docsui
	@echo "building fundsvc (the first build takes a few minutes)..."
	$(GO) build $(BUILDVCS) -o $@ ./cmd/fundsvc

fundsvc-iceberg: docsui
	@echo "building fundsvc-iceberg, fundsvc with the Iceberg publisher (the first build takes a few minutes)..."
	$(GO) build $(BUILDVCS) -o $@ ./cmd/fundsvc-iceberg

tools: $(TOOLS_STAMP) tools/bin/minio docsui

# What make run needs from npm.
run-tools: $(RUN_STAMP) docsui

# The /docs API reference embeds Swagger UI from the pinned swagger-ui-dist
# (api/docs.go): its bundle, stylesheet, licence and notice are copied into
# api/docsui (git-ignored) before anything builds the binary.
SWAGGER_UI := tools/node_modules/swagger-ui-dist
DOCSUI     := api/docsui/swagger-ui-bundle.js api/docsui/swagger-ui.css api/docsui/swagger-ui-LICENSE api/docsui/swagger-ui-NOTICE

docsui: $(DOCSUI)

api/docsui/swagger-ui-bundle.js api/docsui/swagger-ui.css: api/docsui/%: $(RUN_STAMP)
	cp $(SWAGGER_UI)/$* $@

api/docsui/swagger-ui-LICENSE api/docsui/swagger-ui-NOTICE: api/docsui/swagger-ui-%: $(RUN_STAMP)
	cp $(SWAGGER_UI)/$* $@

# The /docs test loads the page in headless Chromium (Debian's package);
# FUNDSVC_TEST_CHROMIUM names another binary instead.
chromium:
	@if [ -z "$$FUNDSVC_TEST_CHROMIUM" ] && ! command -v chromium >/dev/null; then \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y chromium; \
	fi

$(TOOLS_STAMP): tools/package.json tools/package-lock.json
	@echo "installing DynamoDB Local, Swagger UI and the test tools (DuckDB, Redocly, icebird) from npm..."
	cd tools && npm ci --no-audit --no-fund
	touch $@ $(RUN_STAMP)

# A whole install (TOOLS_STAMP) holds the run's dependencies, so make run
# after make test installs nothing; when a goal needs the whole install, it
# comes first (order-only), never beside this one. A checkout that had the
# whole install keeps it when the lock changes: make run installs the whole
# lock again rather than removing the test tools.
$(RUN_STAMP): tools/package.json tools/package-lock.json | $(if $(filter tools test fuzz lint bench bench-export,$(MAKECMDGOALS)),$(TOOLS_STAMP))
	@if [ $(TOOLS_STAMP) -nt tools/package.json ] && [ $(TOOLS_STAMP) -nt tools/package-lock.json ]; then :; \
	elif [ -e $(TOOLS_STAMP) ]; then \
		echo "installing DynamoDB Local, Swagger UI and the test tools this checkout had from npm again (the lock changed)..."; \
		(cd tools && npm ci --no-audit --no-fund) && touch $(TOOLS_STAMP); \
	else \
		echo "installing DynamoDB Local and Swagger UI from npm..."; \
		cd tools && npm ci --omit=dev --no-audit --no-fund; \
	fi
	@touch $@

# go install leaves an up-to-date binary alone, hence the touch.
tools/bin/minio: $(MINIO_STAMP)
	GOBIN=$(CURDIR)/tools/bin $(GO) install github.com/minio/minio@$(MINIO_VERSION)
	touch $@

$(MINIO_STAMP):
	mkdir -p tools/bin
	rm -f tools/bin/.minio-*
	touch $@

# One DynamoDB Local serves every test binary of the run (see
# scripts/with-dynamodb-local.sh); it is stopped afterwards, pass or fail.
# scripts/test.sh runs every test exactly once: with -race, but for the
# tests its norace list names, which run beside them without it (crash
# tests, and tests that drive the code one request or call at a time and
# check what comes out, whose goroutines other tests run under -race; the
# script's header says which and why). It checks first that every test falls
# in exactly one of the two runs.
test: tools chromium
	$(GO) vet ./...
	$(REDOCLY_LINT)
	GO=$(GO) FUZZMINIMIZETIME=$(TEST_FUZZMINIMIZETIME) scripts/with-dynamodb-local.sh scripts/test.sh --fuzz $(TEST_FUZZTIME)

# New crashers land in <package>/testdata/fuzz/<target>/; commit them with
# the fix, and go test runs them from then on.
fuzz: tools
	GO=$(GO) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) scripts/with-dynamodb-local.sh scripts/fuzz.sh $(FUZZTIME)

# make run checks its two ports (DYNAMODB_PORT, 8000; FUNDSVC_LISTEN,
# 127.0.0.1:8080) before it installs, builds or starts anything, then
# installs only what running needs (not the test tools), builds fundsvc
# (not fundsvc-iceberg) and starts the stack (scripts/run-local.sh).
run:
	@scripts/run-local.sh --check
	@$(MAKE) --no-print-directory run-tools fundsvc
	@scripts/run-local.sh

# Restores the demo on make run's stack, from another terminal: deletes and
# recreates the table and seeds it (fundsvc seed --reset, which refuses any
# endpoint but a loopback one), with the stack file's settings.
reset-demo: fundsvc
	@f="$${FUNDSVC_STACK_FILE:-.data/stack.env}"; test -f "$$f" || { echo "no stack file $$f: start the stack with make run first" >&2; exit 1; }
	./fundsvc seed --reset

# The export against a raw parallel Scan, on a table loaded into a fresh
# DynamoDB Local (not part of make test). BENCH_EXPORT_FLAGS=-items=100000,1000000
# compares peak memory across table sizes.
BENCH_EXPORT_FLAGS ?=
bench-export: $(TOOLS_STAMP) build
	$(GO) run ./internal/bench/exportbench -fundsvc ./fundsvc -out docs/benchmarks.md $(BENCH_EXPORT_FLAGS)

# The service's routes against the raw DynamoDB operations behind them, and
# a sustained mixed load, on a dataset loaded into DynamoDB Local (not part
# of make test). BENCH_FLAGS="-docs=40 -sustain=20s" makes a quick run.
BENCH_FLAGS ?=
bench: $(TOOLS_STAMP) build
	$(GO) run ./internal/bench/servicebench -fundsvc ./fundsvc -out docs/benchmarks.md $(BENCH_FLAGS)

fmt:
	gofmt -w $(GO_FILES)

lint: $(TOOLS_STAMP)
	@unformatted=$$(gofmt -l $(GO_FILES)); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-ed (run make fmt):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(REDOCLY_LINT)

# api/openapi.json is generated from the route table (api/spec.go) and the
# wire types; TestOpenAPIGolden fails when the committed file differs.
openapi:
	$(GO) test ./api -run '^TestOpenAPIGolden$$' -count=1 -update

# Leaves .data/, the database of `make run`, alone.
clean:
	rm -rf fundsvc fundsvc-iceberg tools/bin tools/node_modules cover.out coverage.out coverage.html $(DOCSUI)
	find . -path ./.git -prune -o \( -name '*.test' -o -name '*.coverprofile' \) -type f -print -exec rm -f {} +
