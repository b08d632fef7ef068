# WatchRelay — `make run` (the main job) and `make test` (everything CI checks).
# Both install what is missing first (Debian packages, Python test tools).
SHELL := bash
SWIFT ?= swift
BUILD_LOG := .build/build.log

.PHONY: run test deps build build-tests schema-check serve clean

deps:
	@scripts/install-deps.sh

# Builds, failing on any compiler warning (Swift 6 strict concurrency must stay clean).
build: deps
	@mkdir -p .build
	@$(SWIFT) build 2>&1 | tee $(BUILD_LOG)
	@scripts/check-warnings.sh $(BUILD_LOG)

build-tests: deps
	@mkdir -p .build
	@$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@scripts/check-warnings.sh $(BUILD_LOG)

schema-check: deps
	@python3 scripts/check_schemas.py

# The main job. Until the demo exists this runs the relay on its embedded defaults.
run: build
	@$(SWIFT) run --skip-build watchrelay serve

serve: run

test: build-tests schema-check
	@$(SWIFT) test --skip-build 2>&1 | tee .build/test.log; exit $${PIPESTATUS[0]}
	@scripts/test-summary.sh .build/test.log
	@echo "conformance: an independent Python client written from Protocol/PROTOCOL.md alone"
	@WATCHRELAY_BIN=$$($(SWIFT) build --show-bin-path)/watchrelay python3 Tests/conformance/conformance_client.py

clean:
	rm -rf .build
