# pChronicle — one GNU Makefile (STYLE.md §12).
#   make            static + shared library and the CLI (build/)
#   make test       bootstrap (apt + pinned npm oracle), -Werror build, every test suite
#   make asan test / make ubsan test   the same under a sanitizer (build-asan/, build-ubsan/)
#   make fault      pchronicle-vortex with the fault-injection hook (build-fault/; make test
#                   builds it for tests/cli/vortex_faults.sh; src/core/fault.c)
#   make fuzz       libFuzzer targets (clang), run each for FUZZ_SECONDS
#   make bench      benchmarks beside their peers (not part of make test)
#   make bench-report   the RFC-0006 §22 benchmark on six corpus kinds and its Go/No-Go report
#   make demo       the main job on the example data shipped in examples/
#   make install PREFIX=/usr/local [DESTDIR=...]

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
FUZZ_SECONDS ?= 30

MODE := release
ifneq ($(filter asan,$(MAKECMDGOALS)),)
MODE := asan
endif
ifneq ($(filter ubsan,$(MAKECMDGOALS)),)
MODE := ubsan
endif
ifneq ($(filter fault,$(MAKECMDGOALS)),)
MODE := fault
endif

WARN := -Wall -Wextra -Wshadow -Wcast-qual -Wcast-align -Wstrict-prototypes \
        -Wmissing-prototypes -Wundef -Wpointer-arith -Wvla -Wformat=2 -Wwrite-strings \
        -Wswitch-enum -Wno-switch-enum
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread -fvisibility=hidden -fPIC -Iinclude -Isrc $(WARN)

ifeq ($(MODE),asan)
BUILD := build-asan
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -DPCH_ARENA_DEBUG
LDSAN := -fsanitize=address,undefined
else ifeq ($(MODE),fault)
BUILD := build-fault
OPT := -O1 -g -DPCH_FAULT_INJECTION
LDSAN :=
else ifeq ($(MODE),ubsan)
BUILD := build-ubsan
OPT := -O1 -g -fsanitize=undefined -fno-sanitize-recover=all
LDSAN := -fsanitize=undefined
else
BUILD := build
OPT := -O3 -g
LDSAN :=
endif

ifneq ($(filter test check,$(MAKECMDGOALS)),)
WERROR := -Werror
endif

CFLAGS_ALL := $(BASE_CFLAGS) $(OPT) $(WERROR) $(CFLAGS)
LIBS := -lzstd -lm -lsqlite3 -pthread
TEST_LIBS := $(LIBS) -ljansson

# The Vortex side (src/vortex, src/projection) is a separate library and program: the
# pchronicle CLI links no Vortex code (RFC-0006 §3.6, §18.3).
# src/sql/vx_*.c are the SQL relations over the Vortex projection: built on that side.
VX_DIRS := src/vortex src/projection
VX_SQL_SRC := $(wildcard src/sql/vx_*.c)
LIB_SRC := $(sort $(filter-out $(addsuffix /%,$(VX_DIRS)) $(VX_SQL_SRC),$(wildcard src/*/*.c)))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
VX_SRC := $(sort $(wildcard $(addsuffix /*.c,$(VX_DIRS))) $(VX_SQL_SRC))
VX_OBJ := $(VX_SRC:%.c=$(BUILD)/%.o)
CLI_SRC := $(sort $(wildcard tools/pchronicle/*.c))
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
VX_CLI_SRC := $(sort $(wildcard tools/pchronicle-vortex/*.c))
VX_CLI_OBJ := $(VX_CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*_test.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRC := $(sort $(wildcard fuzz/*.c))
FUZZ_TARGETS := $(filter-out fuzz/replay_driver.c,$(FUZZ_SRC))
FUZZ_REPLAY := $(FUZZ_TARGETS:fuzz/%.c=$(BUILD)/fuzz/%_replay)
FUZZ_LF := $(FUZZ_TARGETS:fuzz/%.c=build-fuzz/%)

STATIC_LIB := $(BUILD)/libpchronicle.a
SHARED_LIB := $(BUILD)/libpchronicle.so
CLI := $(BUILD)/pchronicle
VX_LIB := $(BUILD)/libpchronicle-vortex.a
VX_CLI := $(if $(VX_CLI_SRC),$(BUILD)/pchronicle-vortex)

.PHONY: all test check asan ubsan fault fuzz fuzz-replay bench bench-report demo install clean bootstrap \
        unit-tests cli-tests compat-tests golden-update

all: $(STATIC_LIB) $(SHARED_LIB) $(CLI) $(VX_LIB) $(VX_CLI) $(BUILD)/pchronicle_sqlite.so \
     $(BUILD)/pchronicle_vortex_sqlite.so
asan ubsan: all
fault: $(VX_CLI)

# Missing Debian packages are installed once (stamp), before anything compiles.
DEB_STAMP := $(BUILD)/.deb-ok
$(DEB_STAMP): scripts/bootstrap.sh
	@mkdir -p $(BUILD)
	@scripts/bootstrap.sh --deb-only
	@touch $@

$(BUILD)/%.o: %.c | $(DEB_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(STATIC_LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SHARED_LIB): $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDSAN) $(LIBS)

$(CLI): $(CLI_OBJ) $(STATIC_LIB)
	$(CC) -o $@ $(CLI_OBJ) $(STATIC_LIB) $(LDSAN) $(LIBS)

# Loadable SQLite extension: the Storyline virtual tables (docs/sql.md).
$(BUILD)/pchronicle_sqlite.so: $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDSAN) $(LIBS)

# Loadable SQLite extension with the Vortex projection's relations too (docs/sql.md).
$(BUILD)/pchronicle_vortex_sqlite.so: $(LIB_OBJ) $(VX_OBJ)
	$(CC) -shared -o $@ $^ $(LDSAN) $(LIBS)

$(VX_LIB): $(VX_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/pchronicle-vortex: $(VX_CLI_OBJ) $(VX_LIB) $(STATIC_LIB)
	$(CC) -o $@ $(VX_CLI_OBJ) $(VX_LIB) $(STATIC_LIB) $(LDSAN) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/harness.h tests/json_equal.h $(STATIC_LIB) $(VX_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -o $@ $< $(VX_LIB) $(STATIC_LIB) $(LDSAN) $(TEST_LIBS)

$(BUILD)/fuzz/%_replay: fuzz/%.c fuzz/replay_driver.c $(STATIC_LIB) $(VX_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< fuzz/replay_driver.c $(VX_LIB) $(STATIC_LIB) $(LDSAN) $(LIBS)

# libFuzzer builds: the library is compiled once with clang (coverage + ASan + UBSan), then
# each fuzz/<target>.c links against it.
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -pthread -Iinclude -Isrc -g -O1 \
               -fsanitize=fuzzer-no-link,address,undefined
FUZZ_OBJ := $(patsubst %.c,build-fuzz/obj/%.o,$(LIB_SRC) $(VX_SRC))
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build-fuzz/libfuzz.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^
build-fuzz/%: fuzz/%.c build-fuzz/libfuzz.a
	clang $(FUZZ_CFLAGS) -MMD -MP -fsanitize=fuzzer -o $@ $< build-fuzz/libfuzz.a $(LIBS)

bootstrap:
	@scripts/bootstrap.sh

# make test: bootstrap first (it must not run in parallel with the build that needs it).
test check: bootstrap
	@$(MAKE) --no-print-directory MODE_GOALS="$(filter asan ubsan,$(MAKECMDGOALS))" test-run $(filter asan ubsan,$(MAKECMDGOALS)) WERROR=-Werror

.PHONY: test-run
test-run: all $(UNIT_BIN) $(FUZZ_REPLAY)
	@$(MAKE) --no-print-directory fault WERROR=$(WERROR)
	@BUILD=$(BUILD) MODE=$(MODE) PCH_FAULT_CLI=$(CURDIR)/build-fault/pchronicle-vortex scripts/run-tests.sh

fuzz: $(FUZZ_LF)
	@for t in $(FUZZ_LF); do n=$$(basename $$t); mkdir -p fuzz/corpus/$$n; \
	  echo "fuzz $$n for $(FUZZ_SECONDS)s"; \
	  $$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 fuzz/corpus/$$n >/dev/null 2>build-fuzz/$$n.log || { tail -30 build-fuzz/$$n.log; exit 1; }; done

bench: all bootstrap
	@BUILD=$(BUILD) bench/run.sh

# The RFC-0006 §22 benchmark on the six corpus kinds and its computed Go/No-Go report
# (bench/report/REPORT.md and plots; bench/report/README.md). Long: see bench/bench_report.sh.
bench-report: all bootstrap
	@BUILD=$(BUILD) bench/bench_report.sh

demo: bootstrap
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) scripts/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/pchronicle
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/pchronicle
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/pchronicle/*.h $(DESTDIR)$(PREFIX)/include/pchronicle/
	install -d $(DESTDIR)$(PREFIX)/include/pchronicle-vortex
	install -m 644 include/pchronicle-vortex/*.h $(DESTDIR)$(PREFIX)/include/pchronicle-vortex/
	install -m 644 $(VX_LIB) $(DESTDIR)$(PREFIX)/lib/
	$(if $(VX_CLI),install -m 755 $(VX_CLI) $(DESTDIR)$(PREFIX)/bin/pchronicle-vortex)
	install -m 755 $(BUILD)/pchronicle_sqlite.so $(BUILD)/pchronicle_vortex_sqlite.so $(DESTDIR)$(PREFIX)/lib/

clean:
	rm -rf build build-asan build-ubsan build-fault build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(VX_OBJ:.o=.d) $(VX_CLI_OBJ:.o=.d)
# the libFuzzer build tracks headers too (a stale object after a struct change crashed it)
-include $(FUZZ_OBJ:.o=.d) $(FUZZ_LF:=.d)
