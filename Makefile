# Targets for developers and CI (.ci/run calls `make test`).

GO            ?= go
DYNAMODB_PORT ?= 8000

# npm ci replaces tools/node_modules; the stamp inside it records that the
# install of the current package-lock.json finished.
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

.PHONY: build tools test fuzz run bench bench-export fmt lint openapi clean docsui chromium

build: docsui
	$(GO) build -o fundsvc ./cmd/fundsvc

tools: $(TOOLS_STAMP) tools/bin/minio docsui

# The /docs API reference embeds Swagger UI from the pinned swagger-ui-dist
# (api/docs.go): its bundle, stylesheet, licence and notice are copied into
# api/docsui (git-ignored) before anything builds the binary.
SWAGGER_UI := tools/node_modules/swagger-ui-dist
DOCSUI     := api/docsui/swagger-ui-bundle.js api/docsui/swagger-ui.css api/docsui/swagger-ui-LICENSE api/docsui/swagger-ui-NOTICE

docsui: $(DOCSUI)

api/docsui/swagger-ui-bundle.js api/docsui/swagger-ui.css: api/docsui/%: $(TOOLS_STAMP)
	cp $(SWAGGER_UI)/$* $@

api/docsui/swagger-ui-LICENSE api/docsui/swagger-ui-NOTICE: api/docsui/swagger-ui-%: $(TOOLS_STAMP)
	cp $(SWAGGER_UI)/$* $@

# The /docs test loads the page in headless Chromium (Debian's package);
# FUNDSVC_TEST_CHROMIUM names another binary instead.
chromium:
	@if [ -z "$$FUNDSVC_TEST_CHROMIUM" ] && ! command -v chromium >/dev/null; then \
		sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y chromium; \
	fi

$(TOOLS_STAMP): tools/package.json tools/package-lock.json
	cd tools && npm ci --no-audit --no-fund
	touch $@

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
test: tools chromium
	$(GO) vet ./...
	$(REDOCLY_LINT)
	scripts/with-dynamodb-local.sh $(GO) test -race -count=1 -timeout 14m ./...
	GO=$(GO) FUZZMINIMIZETIME=$(TEST_FUZZMINIMIZETIME) scripts/with-dynamodb-local.sh scripts/fuzz.sh $(TEST_FUZZTIME)

# New crashers land in <package>/testdata/fuzz/<target>/; commit them with
# the fix, and go test runs them from then on.
fuzz: tools
	GO=$(GO) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) scripts/with-dynamodb-local.sh scripts/fuzz.sh $(FUZZTIME)

# make run needs DynamoDB Local only, not the test tools.
run: $(TOOLS_STAMP) docsui
	DYNAMODB_PORT=$(DYNAMODB_PORT) scripts/run-local.sh

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
	rm -rf fundsvc tools/bin tools/node_modules cover.out coverage.out coverage.html $(DOCSUI)
	find . -path ./.git -prune -o \( -name '*.test' -o -name '*.coverprofile' \) -type f -print -exec rm -f {} +
