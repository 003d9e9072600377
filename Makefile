# avxbuf: `make` builds the module, `make test` builds both flavours and the
# suite's harnesses and runs it on both, `make bench` runs the benchmarks; each
# target installs what it misses (Debian), and its longer ones are tools/*.sh.

# Any of lua5.1 lua5.2 lua5.3 lua5.4 luajit: `make test LUA=lua5.1` builds
# against that interpreter's headers in build/lua5.1 and runs the suite there.
LUA ?= lua5.4
# (Debian's paths when pkg-config is not installed yet: `deps` installs it.)
LUA_INC ?= $(shell pkg-config --cflags $(LUA) 2>/dev/null || \
	echo -I/usr/include/$(if $(filter luajit,$(LUA)),luajit-2.1,$(LUA)))
LUA_LIB ?= $(shell pkg-config --libs $(LUA) 2>/dev/null || \
	echo -l$(if $(filter luajit,$(LUA)),luajit-5.1,$(LUA)))
CFLAGS ?= -O2 -g
# Where a build goes, and extra flags for it (the sanitizer builds set both).
BUILD ?= $(if $(filter lua5.4,$(LUA)),build,build/$(LUA))
SAN ?=
# The language and warnings of everything built here (psabi: GCC's note on
# vector arguments across ABI versions, which no caller of ours crosses).
WARN = -std=c11 -Wall -Wextra -Wno-psabi

# Every file gets the same flags, as LuaRocks' builtin build requires (ISA
# code is enabled per function). -fno-plt calls the Lua API through the GOT,
# without a PLT stub's jump (docs/benchmarks.md, "Cost of a call from Lua");
# -falign-loops=64 keeps a kernel's loop in the same fetch and uop-cache lines
# whatever the code around it (docs/kernels.md); the LuaRocks build goes
# without both. Every include of ours is written from src/: -Isrc.
AVXBUF_CFLAGS = $(WARN) -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden -fno-plt -falign-loops=64 \
	-Werror=implicit-function-declaration -Isrc $(LUA_INC) $(SAN)
EMUL_CFLAGS = -DAVXBUF_EMULATE_AVX512 -DAVXBUF_CHECK_ALIGNMENT
LDFLAGS_SO = -shared -pthread $(SAN)

# The module's sources, the one list, by folder (README, "Where things
# live"): the binding, then the Lua-free core it binds. The rockspecs list
# them for LuaRocks too; `make lint` checks that they agree.
SRC = src/lua/lavxbuf.c src/lua/lmodule.c src/lua/gcpoints.c src/lua/largs.c src/lua/lbuffer.c src/lua/linspect.c \
	src/lua/lpack.c src/core/packfmt.c src/lua/lmatch.c src/core/match.c src/lua/lio.c src/lua/lformat.c \
	src/lua/lsplit.c src/lua/lsettings.c src/lua/lcpu.c src/measure/lmeasure.c \
	src/lua/lcapi.c src/luajit/lluajit.c src/lua/lembed.c \
	src/core/cpu.c src/core/policy.c src/core/settings.c src/core/dispatch.c src/core/measured.c src/core/clock.c \
	src/core/buffer.c \
	src/kernels/sse2.c src/kernels/avx.c src/kernels/avx2.c src/kernels/avx512.c src/kernels/erms.c \
	src/kernels/libc.c src/kernels/twoway.c src/kernels/offsets.c src/kernels/registry.c
CORE_SRC = $(filter src/core/% src/kernels/%,$(SRC))
# avxbuf.counters, a module of its own (it links gcpoints.o too).
COUNTERS_SRC = src/counters/counters.c
HDR = $(wildcard src/*/*.h include/*.h)
NATIVE_OBJ = $(SRC:src/%.c=$(BUILD)/obj/%.o)
EMUL_OBJ = $(SRC:src/%.c=$(BUILD)/emul/obj/%.o)
COUNTERS_OBJ = $(COUNTERS_SRC:src/%.c=$(BUILD)/obj/%.o)
CORE_OBJ = $(CORE_SRC:src/%.c=$(BUILD)/obj/%.o)
NATIVE = $(BUILD)/avxbuf.so $(BUILD)/avxbuf/counters.so
MODULES = $(NATIVE) $(BUILD)/emul/avxbuf.so $(BUILD)/emul/avxbuf/counters.so

.PHONY: all modules native suite static deps lua-headers deps-hardening check-default test test-gc test-versions test-hosts test-aarch64 test-i386 release-rockspec dist test-install bench sweep sanitize valgrind fuzz threads hardening lint audit clean

# `make`: the module and avxbuf.counters, nothing else.
all: native
native: $(NATIVE)
modules: $(MODULES)

# What the suite loads: both flavours, the C API test module (also built for
# a future C API version), the C harnesses and each flavour's page-edge check.
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

# avxbuf.counters does not depend on the flavour, but each flavour's
# directory gets a copy to be complete; it links the torture build's
# collections (gcpoints.o, empty in any other build) as it calls Lua too.
$(BUILD)/avxbuf.so: $(NATIVE_OBJ)
$(BUILD)/emul/avxbuf.so: $(EMUL_OBJ)
$(BUILD)/avxbuf/counters.so $(BUILD)/emul/avxbuf/counters.so: $(COUNTERS_OBJ) $(BUILD)/obj/lua/gcpoints.o
$(MODULES):
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SO) -o $@ $^

# Embedding: a static library with both openers, and a host program that
# registers them as luaL_requiref does (spec/runner.c) and runs the suite.
static: $(BUILD)/static/libavxbuf.a $(BUILD)/static/host $(BUILD)/static/capi.so
$(BUILD)/static/libavxbuf.a: $(NATIVE_OBJ) $(COUNTERS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/static/host: spec/runner.c $(BUILD)/static/libavxbuf.a
	$(CC) $(CFLAGS) $(WARN) -DAVXBUF_STATIC -Iinclude $(LUA_INC) -o $@ $< \
	  $(BUILD)/static/libavxbuf.a $(LUA_LIB) -lpthread -lm -ldl

# The C API test module, built as a separate C module would be: avxbuf.h only.
$(BUILD)/capi_future/capi.so: CAPI_VERSION = -DAVXBUF_API_VERSION=2
$(BUILD)/capi.so $(BUILD)/emul/capi.so $(BUILD)/static/capi.so $(BUILD)/capi_future/capi.so: spec/capi_module.c include/avxbuf.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -Iinclude $(CAPI_VERSION) $(LDFLAGS_SO) -o $@ $<

# The kernel sweep without Lua, timed from C. Each row's timing loop starts
# on a 64-byte boundary: where a loop of a few cycles an iteration lands
# moves its time by more than the rows differ.
$(BUILD)/bench/csweep: bench/csweep.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) -falign-loops=64 -Isrc $(SAN) -o $@ $^ -lpthread

# The do-nothing C function the call-cost table measures against.
$(BUILD)/bench/noop.so: bench/noop.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -shared -o $@ $<

# Two Lua states in one process (the per-state settings test), and a host
# whose allocator fails on demand (spec/oom_spec.lua).
$(BUILD)/two_states: spec/two_states.c spec/harness.h
$(BUILD)/oom_host: spec/oom_host.c src/lua/luaapi.h src/lua/gcpoints.h src/lua/compat.h
$(BUILD)/two_states $(BUILD)/oom_host:
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(WARN) $(LUA_INC) -Isrc -o $@ $< $(LUA_LIB) -ldl

# Reads and writes at a page's edge: each flavour's core and kernels, no Lua.
$(BUILD)/pageguard: spec/pageguard.c $(CORE_OBJ)
$(BUILD)/emul/pageguard: spec/pageguard.c $(CORE_SRC:src/%.c=$(BUILD)/emul/obj/%.o)
$(BUILD)/pageguard $(BUILD)/emul/pageguard:
	$(CC) $(CFLAGS) $(WARN) -Isrc $(SAN) -o $@ $^

# Set-up: tools/deps.sh installs what a group of targets needs (apt-get as
# root; otherwise it prints the command), nothing when it is all there.
deps:
	@tools/deps.sh build $(LUA)
deps-hardening: deps
	@tools/deps.sh hardening

# What is built against LUA's headers installs them when the compiler does
# not find lua.h; where it is found (any LUA_INC) nothing is installed.
LUA_BUILT = $(NATIVE_OBJ) $(EMUL_OBJ) $(COUNTERS_OBJ) $(SPEC_BUILDS) $(BUILD)/static/host \
	$(BUILD)/static/capi.so $(BUILD)/bench/noop.so
$(LUA_BUILT): | lua-headers
lua-headers:
	@echo '#include "lua.h"' | $(CC) $(LUA_INC) -E -o /dev/null - 2>/dev/null || tools/deps.sh headers $(LUA)

# Lua 5.4 also runs the suite in the embedding host (DIR@PROGRAM).
test: deps
	@$(MAKE) --no-print-directory suite $(if $(filter lua5.4,$(LUA)),static)
	$(LUA) spec/run.lua $(BUILD) $(BUILD)/emul $(if $(filter lua5.4,$(LUA)),$(BUILD)/static@$(BUILD)/static/host)

# ---- the suite elsewhere: each script's header says what and how -------------
test-versions:
	@tools/test-versions.sh
test-hosts:
	@tools/test-hosts.sh
test-aarch64: deps
	@tools/test-aarch64.sh
test-i386: deps
	@LUA=$(LUA) tools/test-i386.sh

# ---- benchmarks -----------------------------------------------------------------
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

# Is the default the best this CPU has? (docs/benchmarks.md)
check-default: deps
	@LUA=$(LUA) tools/check-default.sh

# ---- hardening ---------------------------------------------------------------
sanitize: deps-hardening
	@LUA=$(LUA) tools/sanitize.sh
test-gc: deps-hardening
	@tools/test-gc.sh
valgrind: deps-hardening
	@LUA=$(LUA) tools/valgrind.sh

# libFuzzer harnesses (fuzz/): build/fuzz/NAME is fuzz/fuzz_NAME.c with what
# FUZZ_LINK_NAME says; NAME_emul is the same with the emulated flavour's flags.
FUZZ_CC = clang
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(WARN) -D_POSIX_C_SOURCE=200809L \
	-Isrc $(LUA_INC)
FUZZERS = $(addprefix build/fuzz/,kernels kernels_emul options decide pack match dispatch dispatch_emul)
FUZZ_LINK_kernels = $(CORE_SRC) -lpthread
FUZZ_LINK_options = src/core/settings.c
FUZZ_LINK_decide = src/core/cpu.c src/core/policy.c -lpthread
# avxbuf_copy/avxbuf_fill, inline path included (emulated: use_avx=3 too).
FUZZ_LINK_dispatch = $(CORE_SRC) -lpthread
# The whole module in an uninstrumented Lua 5.4 (match: against string.find/match/gmatch).
FUZZ_LINK_pack = -Iinclude $(SRC) $(LUA_LIB) -lpthread -lm
FUZZ_LINK_match = $(FUZZ_LINK_pack)
build/fuzz/%: fuzz/fuzz_%.c $(SRC) $(HDR) $(wildcard fuzz/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LINK_$*)
build/fuzz/%_emul: fuzz/fuzz_%.c $(SRC) $(HDR) $(wildcard fuzz/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(EMUL_CFLAGS) -o $@ $< $(FUZZ_LINK_$*)
fuzz: deps-hardening $(FUZZERS)
	@tools/fuzz.sh $(FUZZERS)

# Four threads, each with its own lua_State and knobs, copying and zeroing at
# once, under ThreadSanitizer (harness and module instrumented).
threads: deps-hardening
	@$(MAKE) --no-print-directory native build/tsan/threads BUILD=build/tsan SAN=-fsanitize=thread
	TSAN_OPTIONS=halt_on_error=1 build/tsan/threads build/tsan
$(BUILD)/threads: spec/threads.c
	$(CC) $(CFLAGS) $(WARN) $(SAN) $(LUA_INC) -Isrc -o $@ $< $(LUA_LIB) -lpthread -ldl

hardening: sanitize valgrind fuzz threads test-gc

# ---- release and audit ---------------------------------------------------------
# A release: avxbuf-VERSION-1.rockspec, made from the scm one here, and the
# source rock `make dist` writes, which `make test-install` installs offline.
VERSION := $(shell sed -n 's/^#define AVXBUF_VERSION "\(.*\)"/\1/p' include/avxbuf.h)
RELEASE_ROCKSPEC = avxbuf-$(VERSION)-1.rockspec
release-rockspec:
	@tools/deps.sh dist
	rm -rf build/release && mkdir -p build/release && cp avxbuf-scm-1.rockspec build/release/
	cd build/release && luarocks new_version avxbuf-scm-1.rockspec $(VERSION) --tag=v$(VERSION)
	cp build/release/$(RELEASE_ROCKSPEC) .
dist: deps
	@LUA=$(LUA) VERSION=$(VERSION) tools/dist.sh
test-install: dist
	@VERSION=$(VERSION) tools/test-install.sh

# What avxbuf promises about instructions, checked on the compiled code.
audit: deps
	@LUA=$(LUA) BUILD=$(BUILD) tools/audit.sh

# luacheck and cppcheck; the one source list against the rockspecs; the
# layers of src/ (tools/layers.lua), normal and torture build; doc references.
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
