# avxbuf: `make` builds the module, `make test` builds both flavours and the
# suite's harnesses and runs it on both, `make bench` runs the benchmarks. Set-up installs what is missing (Debian).
# Hardening: `make sanitize`, `make valgrind`, `make fuzz`, `make threads`.

# Any of lua5.1 lua5.2 lua5.3 lua5.4 luajit: `make test LUA=lua5.1` builds
# against that interpreter's headers in build/lua5.1 and runs the suite there.
LUA ?= lua5.4
# (Debian's paths when pkg-config is not installed yet: `deps` installs it.)
LUA_INC ?= $(shell pkg-config --cflags $(LUA) 2>/dev/null || \
	echo -I/usr/include/$(if $(filter luajit,$(LUA)),luajit-2.1,$(LUA)))
LUA_LIB ?= $(shell pkg-config --libs $(LUA) 2>/dev/null || \
	echo -l$(if $(filter luajit,$(LUA)),luajit-5.1,$(LUA)))
CC ?= cc
CFLAGS ?= -O2 -g
# Where a build goes, and extra flags for it (the sanitizer builds set both).
BUILD ?= $(if $(filter lua5.4,$(LUA)),build,build/$(LUA))
SAN ?=
# The language and warnings of everything built here (psabi: GCC's note on
# vector arguments across ABI versions, which no caller of ours crosses).
WARN = -std=c11 -Wall -Wextra -Wno-psabi

# C11 plus POSIX; ISA code is enabled per function (target attributes), so
# every file gets the same flags, as LuaRocks' builtin build requires.
# -fno-plt calls the interpreter's API through the GOT, without the jump
# through a PLT stub, and a call from Lua makes several such calls (what it
# saved: docs/benchmarks.md, "Cost of a call from Lua"). -falign-loops=64
# starts every loop on a 64-byte line, as the kernels' entry points are
# (kernels.h): a kernel's loop then sits in the same fetch and decoded-uop
# cache lines whatever the code around it, as glibc's string functions' do
# (docs/kernels.md). The LuaRocks build, which cannot take flags, goes
# without both. Every include of ours is written from src/ ("core/cpu.h",
# "lua/lmodule.h"): -Isrc here, incdirs in the rockspecs.
AVXBUF_CFLAGS = $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden -fno-plt -falign-loops=64 \
	-Werror=implicit-function-declaration -Isrc $(LUA_INC) $(SAN)
EMUL_CFLAGS = -DAVXBUF_EMULATE_AVX512 -DAVXBUF_CHECK_ALIGNMENT
LDFLAGS_SO = -shared -pthread $(SAN)

# The module's sources, the one list, by folder (README, "Where things
# live"): the binding (src/lua/, with gcpoints.c, the torture build's
# collections; src/luajit/, src/measure/) and the Lua-free core it binds
# (src/core/, src/kernels/). The rockspecs list them for LuaRocks' builtin
# build; `make lint` checks that they agree (tools/same_rockspecs.lua).
SRC = src/lua/lavxbuf.c src/lua/lmodule.c src/lua/gcpoints.c src/lua/largs.c src/lua/lbuffer.c src/lua/linspect.c \
	src/lua/lpack.c src/core/packfmt.c src/lua/lmatch.c src/core/match.c src/lua/lio.c src/lua/lformat.c \
	src/lua/lsplit.c src/lua/lsettings.c src/lua/lcpu.c src/measure/lmeasure.c \
	src/lua/lcapi.c src/luajit/lluajit.c src/lua/lembed.c \
	src/core/cpu.c src/core/policy.c src/core/settings.c src/core/dispatch.c src/core/clock.c src/core/buffer.c \
	src/kernels/sse2.c src/kernels/avx.c src/kernels/avx2.c src/kernels/avx512.c src/kernels/erms.c \
	src/kernels/libc.c src/kernels/twoway.c src/kernels/offsets.c src/kernels/registry.c
CORE_SRC = $(filter src/core/% src/kernels/%,$(SRC))
# avxbuf.counters, a module of its own (it links gcpoints.o too).
COUNTERS_SRC = src/counters/counters.c
HDR = $(wildcard src/*/*.h include/*.h)
NATIVE_OBJ = $(SRC:src/%.c=$(BUILD)/obj/%.o)
EMUL_OBJ = $(SRC:src/%.c=$(BUILD)/emul/obj/%.o)
COUNTERS_OBJ = $(COUNTERS_SRC:src/%.c=$(BUILD)/obj/%.o)
NATIVE = $(BUILD)/avxbuf.so $(BUILD)/avxbuf/counters.so
MODULES = $(NATIVE) $(BUILD)/emul/avxbuf.so $(BUILD)/emul/avxbuf/counters.so



.PHONY: all modules native suite static deps lua-headers deps-hardening check-default test test-gc test-versions test-hosts test-aarch64 test-i386 release-rockspec dist test-install bench sweep sanitize valgrind fuzz threads hardening lint audit clean

# `make`: the module and avxbuf.counters, nothing else.
all: native

native: $(NATIVE)

modules: $(MODULES)

# What the suite loads: both flavours, the C API test module (also built
# for a future C API version), the two-state harness and each flavour's
# page-edge check.
SPEC_BUILDS = $(BUILD)/two_states $(BUILD)/oom_host $(BUILD)/capi.so $(BUILD)/emul/capi.so $(BUILD)/capi_future/capi.so \
	$(BUILD)/pageguard $(BUILD)/emul/pageguard
suite: $(MODULES) $(SPEC_BUILDS)

$(BUILD)/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -c $< -o $@

$(BUILD)/emul/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) $(EMUL_CFLAGS) -c $< -o $@

# The Lua code compiled into the module (src/lua/lembed.c: .incbin).
EMBEDDED_LUA = lua/avxbuf/ffi.lua lua/avxbuf/ffi_format.lua lua/avxbuf/tune.lua lua/avxbuf/stats.lua lua/avxbuf/licence.lua
$(BUILD)/obj/lua/lembed.o $(BUILD)/emul/obj/lua/lembed.o: $(EMBEDDED_LUA)

$(BUILD)/avxbuf.so: $(NATIVE_OBJ)
	$(CC) $(LDFLAGS_SO) -o $@ $^

$(BUILD)/emul/avxbuf.so: $(EMUL_OBJ)
	$(CC) $(LDFLAGS_SO) -o $@ $^

# avxbuf.counters (perf_event_open) does not depend on the flavour; each
# flavour's directory gets a copy so that it is complete on its own. It
# calls the Lua API too, so the torture build's collections (gcpoints.o,
# empty in any other build) are linked in.
$(BUILD)/avxbuf/counters.so $(BUILD)/emul/avxbuf/counters.so: $(COUNTERS_OBJ) $(BUILD)/obj/lua/gcpoints.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SO) -o $@ $^

# Embedding: a static library with both openers, and a host program that
# registers them as luaL_requiref does (spec/runner.c; for every LUA) and
# runs the suite.
static: $(BUILD)/static/libavxbuf.a $(BUILD)/static/host $(BUILD)/static/capi.so
$(BUILD)/static/libavxbuf.a: $(NATIVE_OBJ) $(COUNTERS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/static/host: spec/runner.c $(BUILD)/static/libavxbuf.a
	$(CC) $(CFLAGS) $(WARN) -DAVXBUF_STATIC -Iinclude $(LUA_INC) -o $@ $< \
	  $(BUILD)/static/libavxbuf.a $(LUA_LIB) -lpthread -lm -ldl

# The C API test module, built as a separate C module would be: avxbuf.h only.
$(BUILD)/capi.so $(BUILD)/emul/capi.so $(BUILD)/static/capi.so: spec/capi_module.c include/avxbuf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -Iinclude $(LDFLAGS_SO) -o $@ $<
$(BUILD)/capi_future/capi.so: spec/capi_module.c include/avxbuf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -Iinclude -DAVXBUF_API_VERSION=2 $(LDFLAGS_SO) -o $@ $<

# The kernel sweep without Lua: the core objects and glibc, timed from C.
CORE_OBJ = $(CORE_SRC:src/%.c=$(BUILD)/obj/%.o)
# Each row's timing loop starts on a 64-byte boundary: where a loop of a few
# cycles an iteration lands moves its time by more than the rows differ.
$(BUILD)/bench/csweep: bench/csweep.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -falign-loops=64 -Isrc $(SAN) -o $@ $^ -lpthread

# The do-nothing C function the call-cost table measures against.
$(BUILD)/bench/noop.so: bench/noop.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -shared -o $@ $<

# Two Lua states in one process, for the per-state settings test.
$(BUILD)/two_states: spec/two_states.c spec/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(LUA_INC) -Isrc -o $@ $< $(LUA_LIB) -ldl

# Reads and writes at a page's edge (spec/pageguard.c): each flavour's core
# and kernels, no Lua.
$(BUILD)/pageguard: spec/pageguard.c $(CORE_OBJ)
	$(CC) $(CFLAGS) $(WARN) -Isrc $(SAN) -o $@ $^
$(BUILD)/emul/pageguard: spec/pageguard.c $(CORE_SRC:src/%.c=$(BUILD)/emul/obj/%.o)
	$(CC) $(CFLAGS) $(WARN) -Isrc $(SAN) -o $@ $^

# A host whose allocator fails on demand, for spec/oom_spec.lua.
$(BUILD)/oom_host: spec/oom_host.c src/lua/luaapi.h src/lua/gcpoints.h src/lua/compat.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(LUA_INC) -Isrc -o $@ $< $(LUA_LIB) -ldl

# Set-up, not building: tools/deps.sh installs what a group of targets needs
# (apt-get as root; otherwise it prints the command) and does nothing when
# it is all there.
deps:
	@tools/deps.sh build $(LUA)

# What is built against LUA's headers installs them when the compiler does
# not find lua.h (`make LUA=lua5.3` on a fresh machine), as `make test`
# installs what it needs; where it is found (any LUA_INC: the sanitizer and
# the foreign builds set theirs) nothing is installed.
LUA_BUILT = $(NATIVE_OBJ) $(EMUL_OBJ) $(COUNTERS_OBJ) $(SPEC_BUILDS) $(BUILD)/static/host \
	$(BUILD)/static/capi.so $(BUILD)/bench/noop.so
$(LUA_BUILT): | lua-headers
lua-headers:
	@echo '#include "lua.h"' | $(CC) $(LUA_INC) -E -o /dev/null - 2>/dev/null || tools/deps.sh headers $(LUA)

deps-hardening: deps
	@tools/deps.sh hardening

# Lua 5.4 also runs the suite in the embedding host (DIR@PROGRAM).
test: deps
	@$(MAKE) --no-print-directory suite $(if $(filter lua5.4,$(LUA)),static)
	$(LUA) spec/run.lua $(BUILD) $(BUILD)/emul $(if $(filter lua5.4,$(LUA)),$(BUILD)/static@$(BUILD)/static/host)

# The suite on every Lua the project supports (5.4 is `make test`).
# Two lanes at once (tools/at-once.sh), each Lua in its own build directory
# and one flavour at a time (AVXBUF_SPEC_JOBS: the lanes fill the two cores);
# the packages first, so that no two apt-get runs meet.
test-versions:
	@for v in lua5.1 lua5.2 lua5.3 luajit; do tools/deps.sh build $$v || exit 1; done
	@AVXBUF_SPEC_JOBS=1 tools/at-once.sh "$(MAKE) --no-print-directory test LUA=lua5.1 && $(MAKE) --no-print-directory test LUA=lua5.2" \
	  "$(MAKE) --no-print-directory test LUA=luajit && $(MAKE) --no-print-directory test LUA=lua5.3"

# Real hosts (docs/hosts.md), avxbuf built for each one's Lua: nginx's Lua
# module (its OpenResty LuaJIT, unpacked: installing it would remove
# Debian's LuaJIT) and HAProxy 2.6 (Lua 5.3) on 127.0.0.1 under a load whose
# every response is checked, then Neovim (LuaJIT) headless.
HOSTS_BUILD ?= build/hosts
test-hosts:
	@tools/deps.sh hosts
	@tools/deps.sh nginx-lua $(HOSTS_BUILD)/nginx-lua
	@$(MAKE) --no-print-directory native LUA=luajit BUILD=$(HOSTS_BUILD)/luajit
	@$(MAKE) --no-print-directory native LUA=lua5.3 BUILD=$(HOSTS_BUILD)/lua5.3
	timeout 300 tools/hosts/run.sh $(HOSTS_BUILD)

# The transform benchmark (every vector width, with licence counters), then
# a quick kernel sweep; `make sweep` runs the full one with JSON and SVG.
bench: deps
	@$(MAKE) --no-print-directory native $(BUILD)/bench/noop.so
	$(LUA) bench/licence.lua
	$(LUA) bench/transform.lua
	$(LUA) bench/kernels.lua --quick

sweep: deps
	@$(MAKE) --no-print-directory native $(BUILD)/bench/noop.so
	$(LUA) bench/kernels.lua --json build/kernels.json --svg build/kernels.svg

# Is the default the best this CPU has? The C sweep ten times (the
# default, every kernel, rep movsb/stosb and glibc, timed from C), judged by
# bench/plancheck.lua cell by cell from 256 B: each cell's best row picked on
# five runs, the default judged against it on the other five (with three, one
# run's outlier and one slow run together moved a median:
# docs/runs/zen4-vm-2026-12-04.md),
# with twin controls (rows of identical code judged so) and the same judgement
# of each kernel's own row beside it: the floor this machine's noise sets.
# Then the same with what avxbuf.tune() finds here, and its default row cell
# by cell against the first ten runs' (the unchanged kernel rows: the floor).
# Each judgement reads the dispatch tax too (the default against the row of
# the kernel it runs, beside the twin's noise); plancheck's status 3 says it
# exceeds the noise in more than 5% of the cells, 4 that the cells miss the
# plan targets (none below 0.85x the best row, at most 5% below 0.95x, at
# least 95% at 0.98x glibc or above), 5 both. The check fails, once both
# judgements are printed, where the default misses the targets or either
# judgement's tax exceeds the noise; tune's settings missing the targets is
# printed, not failed (they are a measurement, not the default).
CHECK_RUNS = $(foreach k,1 2 3 4 5 6 7 8 9 10,build/check/default-$(k).json)
TUNED_RUNS = $(CHECK_RUNS:build/check/default-%=build/check/tuned-%)
check-default: deps
	@$(MAKE) --no-print-directory native build/bench/csweep
	@mkdir -p build/check && rm -f build/check/failed
	@for f in $(CHECK_RUNS); do echo "build/bench/csweep --json $$f"; build/bench/csweep --json $$f > $${f%.json}.txt || exit 1; done
	$(LUA) bench/plancheck.lua $(CHECK_RUNS) > build/check/plancheck.txt; s=$$?; cat build/check/plancheck.txt; \
	  case $$s in 0) ;; 3|4|5) [ $$s = 4 ] || echo "the default: the dispatch tax exceeds the noise in over 5% of cells" \
	  >> build/check/failed; [ $$s = 3 ] || sed -n 's/^target (none below.*: not met: /the default misses the plan targets: /p' \
	  build/check/plancheck.txt >> build/check/failed;; *) exit $$s;; esac
	$(LUA) bench/tune.lua --json build/check/tune.json > build/check/tune.txt; s=$$?; cat build/check/tune.txt; exit $$s
	@opts=$$(sed -n 's/^AVXBUF_OPTIONS="\(.*\)"$$/\1/p' build/check/tune.txt); \
	for f in $(TUNED_RUNS); do echo "AVXBUF_OPTIONS=$$opts build/bench/csweep --json $$f"; \
	  AVXBUF_OPTIONS="$$opts" build/bench/csweep --json $$f > $${f%.json}.txt || exit 1; done
	$(LUA) bench/plancheck.lua --before $(CHECK_RUNS) -- $(TUNED_RUNS); s=$$?; case $$s in 0|4) ;; \
	  3|5) echo "tune's settings: the dispatch tax exceeds the noise in over 5% of cells" >> build/check/failed;; \
	  *) exit $$s;; esac
	@if [ -f build/check/failed ]; then sed 's/^/check-default: /' build/check/failed; exit 1; fi

# Foreign targets build against Debian's Lua 5.4 for that architecture,
# unpacked (not installed) by tools/deps.sh into build/lua-ARCH, and link
# its static library into spec/runner.c, which exports the Lua API (-Wl,-E)
# to the module it loads.
foreign_lua = -Ibuild/lua-$(1)/usr/include/lua5.4 -Ibuild/lua-$(1)/usr/include/$(2)
foreign_lib = build/lua-$(1)/usr/lib/$(2)/liblua5.4.a -Wl,-E -lm -ldl

# Non-x86: cross-compiled for aarch64 (portable kernels: the C library) and
# the suite run under qemu-aarch64. Specs that start child processes are
# skipped there (the children would be host binaries), and so are those
# needing perf_event_open, which qemu-user does not emulate.
AARCH64_SYSROOT = /usr/aarch64-linux-gnu
test-aarch64: deps
	@tools/deps.sh aarch64
	@tools/deps.sh lua-for arm64 build/lua-arm64
	@$(MAKE) --no-print-directory native build/aarch64/capi.so BUILD=build/aarch64 CC=aarch64-linux-gnu-gcc \
	  LUA_INC="$(call foreign_lua,arm64,aarch64-linux-gnu)"
	aarch64-linux-gnu-gcc -O2 $(call foreign_lua,arm64,aarch64-linux-gnu) -o build/aarch64/runner spec/runner.c \
	  $(call foreign_lib,arm64,aarch64-linux-gnu)
	AVXBUF_SPEC_DIR=build/aarch64 AVXBUF_SPEC_NO_CHILDREN=1 AVXBUF_SPEC_QEMU=1 \
	  qemu-aarch64 -L $(AARCH64_SYSROOT) build/aarch64/runner spec/run.lua

# 32-bit x86 (gcc-multilib brings the 32-bit C library): the module and
# spec/runner.c built with -m32, twice: as Debian's i386 baseline builds it
# (no SSE2: the C library's kernels) and with -msse2 (the x86 kernels).
# Child processes would be the 64-bit interpreter, so those specs are
# skipped. Some kernels refuse 32-bit executables ("Exec format error",
# status 126: no IA32 emulation); there the runner runs under qemu-i386 (a
# wrapper, build/i386*/qemu-runner; no -L: its loader and libraries are on
# the host's paths), which emulates its own CPU and no perf_event_open
# (AVXBUF_SPEC_QEMU). I386_EXEC: auto (try the runner, else qemu), native,
# or qemu (to test that path on a kernel that runs 32-bit code).
I386_EXEC ?= auto
test-i386: deps
	@tools/deps.sh i386
	@tools/deps.sh lua-for i386 build/lua-i386
	@set -e; for f in build/i386 build/i386-sse2; do \
	  flags="-m32"; [ $$f = build/i386-sse2 ] && flags="-m32 -msse2"; \
	  $(MAKE) --no-print-directory native $$f/capi.so BUILD=$$f CC="gcc $$flags" \
	    LUA_INC="$(call foreign_lua,i386,i386-linux-gnu)"; \
	  gcc $$flags -O2 $(call foreign_lua,i386,i386-linux-gnu) -o $$f/runner spec/runner.c \
	    $(call foreign_lib,i386,i386-linux-gnu); \
	  { echo '#!/bin/sh'; echo '# make test-i386: the runner beside this script, under qemu-i386'; \
	    echo 'AVXBUF_SPEC_QEMU=1; export AVXBUF_SPEC_QEMU'; \
	    echo 'exec qemu-i386 "$${0%/*}/runner" "$$@"'; } > $$f/qemu-runner; \
	  chmod +x $$f/qemu-runner; \
	done
	@set -e; case "$(I386_EXEC)" in \
	  native) runner=runner ;; \
	  qemu) runner=qemu-runner; echo "i386: I386_EXEC=qemu; running under qemu-i386" ;; \
	  auto) if build/i386/runner /dev/null; then runner=runner; \
	    else status=$$?; \
	      if [ $$status != 126 ]; then echo "i386: build/i386/runner /dev/null failed (status $$status)" >&2; exit 1; fi; \
	      runner=qemu-runner; echo "i386: this kernel refuses 32-bit binaries; running under qemu-i386"; \
	    fi ;; \
	  *) echo "I386_EXEC must be auto, native or qemu" >&2; exit 2 ;; \
	esac; \
	echo "$(LUA) spec/run.lua build/i386@build/i386/$$runner build/i386-sse2@build/i386-sse2/$$runner"; \
	$(LUA) spec/run.lua build/i386@build/i386/$$runner build/i386-sse2@build/i386-sse2/$$runner

# ---- hardening ---------------------------------------------------------------

# The whole suite, both flavours, against AddressSanitizer + UBSan builds. The
# interpreter is not instrumented, so the ASan runtime is preloaded; any
# report aborts the run.
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ASAN_RUN = LD_PRELOAD=$$($(CC) -print-file-name=libasan.so) AVXBUF_SPEC_SANITIZED=1 \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
sanitize: deps-hardening
	@$(MAKE) --no-print-directory suite BUILD=build/asan SAN="$(SANITIZE)"
	$(ASAN_RUN) $(LUA) spec/run.lua build/asan build/asan/emul

# The collector-torture build (src/lua/gcpoints.h), under ASan: wherever the
# binding may run the collector it runs a full collection, so a finalizer
# that frees, resizes or appends to a buffer (spec/gc_spec.lua arms them)
# runs at every such point: the specs of the binding's own functions (the
# kernel and policy specs meet no new point, and take minutes there), on
# Lua 5.4, on 5.1 (whose API collects before it copies) and on LuaJIT, where
# spec/gc_spec.lua runs the FFI path with the JIT off and on; and
# avxbuf.counters, which links the same points.
TORTURE = $(SANITIZE) -DAVXBUF_GC_TORTURE
# Two lanes at once: the pattern specs (most of the time: every capture a
# string pushed, every push a full collection), and the rest, then LuaJIT.
TORTURE_SPECS = TestCollectorInCalls TestBuffer TestCApi TestBadInput TestGrowth TestForgery TestMemory \
	TestFind TestRfind TestCompare TestHex TestIO TestPack TestRecords TestSplit TestStream TestCounters
TORTURE_PATTERN_SPECS = TestMatch TestGmatch
test-gc: deps-hardening
	@tools/deps.sh build luajit
	@tools/deps.sh build lua5.1
	@$(MAKE) --no-print-directory native build/torture/capi.so build/torture/capi_future/capi.so BUILD=build/torture SAN="$(TORTURE)"
	@$(MAKE) --no-print-directory native build/torture-luajit/capi.so build/torture-luajit/capi_future/capi.so LUA=luajit BUILD=build/torture-luajit SAN="$(TORTURE)"
	@$(MAKE) --no-print-directory native build/torture-lua5.1/capi.so build/torture-lua5.1/capi_future/capi.so LUA=lua5.1 BUILD=build/torture-lua5.1 SAN="$(TORTURE)"
	lua5.4 tools/layers.lua -D AVXBUF_GC_TORTURE --objects build/torture/obj src
	tools/at-once.sh "AVXBUF_SPEC_TORTURE=1 $(ASAN_RUN) lua5.4 spec/run.lua build/torture -- $(TORTURE_PATTERN_SPECS) \
	   && $(ASAN_RUN) lua5.1 spec/run.lua build/torture-lua5.1 -- $(TORTURE_SPECS)" \
	  "$(ASAN_RUN) lua5.4 spec/run.lua build/torture -- $(TORTURE_SPECS) \
	   && $(ASAN_RUN) luajit spec/run.lua build/torture-luajit -- $(TORTURE_SPECS)"

# The suite under memcheck, plain build (AVX2 natively) and emulated flavour
# (the AVX-512 logic: valgrind cannot execute AVX-512): zero errors, zero
# definite leaks. Child processes the specs start run without valgrind.
VALGRIND = valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite
valgrind: deps-hardening
	@$(MAKE) --no-print-directory suite
	tools/at-once.sh "AVXBUF_SPEC_DIR=build AVXBUF_SPEC_LIGHT=1 AVXBUF_SPEC_VALGRIND=1 $(VALGRIND) $(LUA) spec/run.lua" \
	  "AVXBUF_SPEC_DIR=build/emul AVXBUF_SPEC_LIGHT=1 AVXBUF_SPEC_VALGRIND=1 $(VALGRIND) $(LUA) spec/run.lua"

# libFuzzer harnesses (fuzz/), bounded in time, seeded from fuzz/corpus/, as
# many at once as the machine has cores (each fuzzer one thread).
FUZZ_CC = clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(WARN) -D_POSIX_C_SOURCE=200809L \
	-Isrc $(LUA_INC)
FUZZ_SECONDS ?= 20
FUZZERS = build/fuzz/kernels build/fuzz/kernels_emul build/fuzz/options build/fuzz/decide build/fuzz/pack \
	build/fuzz/match build/fuzz/dispatch build/fuzz/dispatch_emul

build/fuzz/kernels: fuzz/fuzz_kernels.c $(CORE_SRC) $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ fuzz/fuzz_kernels.c $(CORE_SRC) -lpthread

build/fuzz/kernels_emul: fuzz/fuzz_kernels.c $(CORE_SRC) $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(EMUL_CFLAGS) -o $@ fuzz/fuzz_kernels.c $(CORE_SRC) -lpthread

build/fuzz/options: fuzz/fuzz_options.c src/core/settings.c $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ fuzz/fuzz_options.c src/core/settings.c

build/fuzz/decide: fuzz/fuzz_decide.c src/core/cpu.c src/core/policy.c $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ fuzz/fuzz_decide.c src/core/cpu.c src/core/policy.c -lpthread

# The whole module in a Lua 5.4 state (Lua itself uninstrumented).
build/fuzz/pack: fuzz/fuzz_pack.c $(SRC) $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Iinclude -D_POSIX_C_SOURCE=200809L -o $@ fuzz/fuzz_pack.c $(SRC) \
	  $(LUA_LIB) -lpthread -lm

# buf:find/match/gmatch against string.find/match/gmatch, the same way.
build/fuzz/match: fuzz/fuzz_match.c $(SRC) $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Iinclude -D_POSIX_C_SOURCE=200809L -o $@ fuzz/fuzz_match.c $(SRC) \
	  $(LUA_LIB) -lpthread -lm

# avxbuf_copy/avxbuf_fill, inline path included; the emulated build adds
# use_avx=3 and its avx3_threshold split.
build/fuzz/dispatch build/fuzz/dispatch_emul: fuzz/fuzz_dispatch.c $(CORE_SRC) $(HDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(if $(filter %_emul,$@),$(EMUL_CFLAGS)) -o $@ fuzz/fuzz_dispatch.c $(CORE_SRC) -lpthread

fuzz: deps-hardening $(FUZZERS)
	@rm -f build/fuzz/*.status
	@printf '%s\n' $(FUZZERS) | xargs -P "$$(nproc)" -n 1 sh -c '\
	  f=$$1; name=$$(basename $$f); seeds=fuzz/corpus/$${name%_emul}; work=build/fuzz/corpus-$$name; \
	  rm -rf $$work; mkdir -p $$work; \
	  if $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build/fuzz/$$name- \
	    $$work $$seeds 2> build/fuzz/$$name.log; then echo ok; else echo failed; fi > build/fuzz/$$name.status' sh
	@for f in $(FUZZERS); do \
	  name=$$(basename $$f); echo "fuzz $$name: $(FUZZ_SECONDS) s ($$(nproc) at a time)"; \
	  if [ "$$(cat build/fuzz/$$name.status)" != ok ]; then tail -40 build/fuzz/$$name.log; exit 1; fi; \
	  grep -E 'stat::number_of_executed_units|stat::new_units_added' build/fuzz/$$name.log; \
	done

# Four threads, each with its own lua_State and knobs, copying and zeroing at
# once, under ThreadSanitizer (harness and module instrumented).
TSAN = -fsanitize=thread
threads: deps-hardening
	@$(MAKE) --no-print-directory native BUILD=build/tsan SAN="$(TSAN)"
	$(CC) $(CFLAGS) $(WARN) $(TSAN) $(LUA_INC) -Isrc -o build/tsan/threads spec/threads.c \
	  $(LUA_LIB) -lpthread -ldl
	TSAN_OPTIONS=halt_on_error=1 build/tsan/threads build/tsan

hardening: sanitize valgrind fuzz threads test-gc

# ---- release ---------------------------------------------------------------------

# A release is the rockspec avxbuf-VERSION-1.rockspec (made from the scm one
# by `make release-rockspec`) and the source rock `make dist` writes: that
# rockspec and the tree at HEAD (git archive), zipped as LuaRocks packs it.
# `make test-install` installs it with LuaRocks from a local rocks server
# and nothing else -- no network -- for Lua 5.4 and for LuaJIT.
VERSION := $(shell sed -n 's/^#define AVXBUF_VERSION "\(.*\)"/\1/p' include/avxbuf.h)
RELEASE_ROCKSPEC = avxbuf-$(VERSION)-1.rockspec
SRC_ROCK = build/dist/avxbuf-$(VERSION)-1.src.rock

release-rockspec:
	@tools/deps.sh dist
	rm -rf build/release && mkdir -p build/release && cp avxbuf-scm-1.rockspec build/release/
	cd build/release && luarocks new_version avxbuf-scm-1.rockspec $(VERSION) --tag=v$(VERSION)
	cp build/release/$(RELEASE_ROCKSPEC) .

dist: deps
	@tools/deps.sh dist
	$(LUA) tools/same_rockspecs.lua avxbuf-scm-1.rockspec $(RELEASE_ROCKSPEC)
	luarocks lint $(RELEASE_ROCKSPEC)
	rm -rf build/dist && mkdir -p build/dist/stage
	git archive --format=tar --prefix=avxbuf/ HEAD | tar -x -C build/dist/stage
	cp $(RELEASE_ROCKSPEC) build/dist/stage/
	cd build/dist/stage && zip -qr ../$(notdir $(SRC_ROCK)) $(RELEASE_ROCKSPEC) avxbuf
	@echo "wrote $(SRC_ROCK)"

INSTALL_CHECK = local a = require "avxbuf"; local b = a.new(); b:put("ok"); assert(b:tostring() == "ok"); \
	assert(a.version == "$(VERSION)", a.version); \
	assert(require("avxbuf.counters").clock() > 0); print(_VERSION .. ": installed avxbuf " .. a.version .. ", " .. a.cpu().reason)
test-install: dist
	@tools/deps.sh build luajit
	rm -rf build/dist/server build/dist/tree-5.4 build/dist/tree-5.1 && mkdir -p build/dist/server
	cp $(SRC_ROCK) build/dist/server/ && luarocks-admin make_manifest build/dist/server >/dev/null
	luarocks --lua-version 5.4 install avxbuf --only-server=$(CURDIR)/build/dist/server --tree build/dist/tree-5.4
	LUA_PATH="build/dist/tree-5.4/share/lua/5.4/?.lua;;" LUA_CPATH="build/dist/tree-5.4/lib/lua/5.4/?.so" \
	  lua5.4 -e '$(INSTALL_CHECK)'
	test -f "$$(luarocks --lua-version 5.4 --tree build/dist/tree-5.4 show --rock-dir avxbuf)/include/avxbuf.h"
	luarocks --lua-version 5.1 install avxbuf --only-server=$(CURDIR)/build/dist/server --tree build/dist/tree-5.1 \
	  LUA_INCDIR=/usr/include/luajit-2.1
	LUA_PATH="build/dist/tree-5.1/share/lua/5.1/?.lua;;" LUA_CPATH="build/dist/tree-5.1/lib/lua/5.1/?.so" \
	  luajit -e '$(INSTALL_CHECK) assert(a.ffi, "the FFI path")'

# ---- instruction audit -------------------------------------------------------

# What avxbuf promises about instructions, checked on the compiled code
# (tools/audit.lua): the module built by GCC and clang at every optimisation
# level, and by LuaRocks' builtin build (one set of flags for every file).
# The emulated build answers which kernels vector_zeroing=false picks at
# use_avx=3.
AUDIT_COMPILERS = gcc clang
AUDIT_LEVELS = -O0 -O1 -O2 -O3 -Os
audit: deps
	@tools/deps.sh audit
	@$(MAKE) --no-print-directory modules
	$(LUA) tools/layers.lua -U AVXBUF_GC_TORTURE --objects $(BUILD)/obj src
	@set -e; for cc in $(AUDIT_COMPILERS); do for o in $(AUDIT_LEVELS); do \
	  d=build/audit/$$cc$$o; \
	  $(MAKE) --no-print-directory -s native BUILD=$$d CC=$$cc CFLAGS="$$o -g"; \
	  $(LUA) tools/audit.lua --label "$$cc $$o" --select $(BUILD)/emul/avxbuf.so --select $$d/avxbuf.so \
	    $$d/avxbuf.so $$d/avxbuf/counters.so || fail=1; \
	done; done; \
	rm -rf build/audit/luarocks; \
	luarocks --lua-version 5.4 make --tree build/audit/luarocks avxbuf-scm-1.rockspec >build/audit/luarocks.log 2>&1 \
	  || { cat build/audit/luarocks.log; exit 1; }; \
	d=build/audit/luarocks/lib/lua/5.4; \
	$(LUA) tools/audit.lua --label "luarocks builtin" --select $(BUILD)/emul/avxbuf.so --select $$d/avxbuf.so \
	  $$d/avxbuf.so $$d/avxbuf/counters.so || fail=1; \
	$(LUA) tools/audit_planted.lua || fail=1; \
	exit $${fail:-0}

# luacheck (.luacheckrc) on the Lua code, cppcheck on the C code; the
# source list against the rockspecs; no include or redefinition cycle in
# src/, and nothing of src/core/ or src/kernels/ including the Lua binding's
# folders, in the normal and the torture build (the audit and test-gc, which
# build, check the symbols too).
lint:
	@tools/deps.sh lint
	luacheck -q lua bench spec tools
	lua5.4 tools/same_rockspecs.lua avxbuf-scm-1.rockspec $(RELEASE_ROCKSPEC) $(SRC)
	lua5.4 tools/layers.lua -U AVXBUF_GC_TORTURE src
	lua5.4 tools/layers.lua -D AVXBUF_GC_TORTURE src
	lua5.4 tools/layers.lua --planted
	lua5.4 tools/docrefs.lua
	lua5.4 tools/docrefs.lua --planted
	cppcheck --quiet --inline-suppr --enable=warning,style,performance,portability --std=c11 -I src \
	  --suppress=missingIncludeSystem --error-exitcode=1 src fuzz spec/two_states.c spec/threads.c spec/runner.c spec/oom_host.c spec/pageguard.c

clean:
	rm -rf build
