# avxbuf: `make` builds both flavours, `make test` runs the suite on both,
# `make bench` runs the benchmark. Set-up installs what is missing (Debian).

LUA ?= lua5.4
LUA_INC ?= $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
CC ?= cc
CFLAGS ?= -O2 -g
# C11 plus POSIX; ISA code is enabled per function (target attributes), so
# every file gets the same flags, as LuaRocks' builtin build requires.
AVXBUF_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -fPIC -fvisibility=hidden \
	-Wall -Wextra -Wno-psabi $(LUA_INC)
EMUL_CFLAGS = -DAVXBUF_EMULATE_AVX512 -DAVXBUF_CHECK_ALIGNMENT
LDFLAGS_SO = -shared -pthread

SRC = src/lavxbuf.c src/cpu.c src/policy.c src/settings.c src/dispatch.c \
	src/kernels/sse2.c src/kernels/avx.c src/kernels/avx2.c src/kernels/avx512.c \
	src/kernels/erms.c src/kernels/libc.c
HDR = $(wildcard src/*.h src/kernels/*.h)
NATIVE_OBJ = $(SRC:src/%.c=build/obj/%.o)
EMUL_OBJ = $(SRC:src/%.c=build/emul/obj/%.o)

DEBIAN_PACKAGES = lua5.4 liblua5.4-dev lua-unit libsimde-dev lua-argparse lua-cjson pkg-config gcc make

.PHONY: all deps test bench sweep clean

all: build/avxbuf.so build/emul/avxbuf.so build/avxbuf/counters.so build/emul/avxbuf/counters.so \
	build/two_states

build/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) -c $< -o $@

build/emul/obj/%.o: src/%.c $(HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(AVXBUF_CFLAGS) $(EMUL_CFLAGS) -c $< -o $@

build/avxbuf.so: $(NATIVE_OBJ)
	$(CC) $(LDFLAGS_SO) -o $@ $^

build/emul/avxbuf.so: $(EMUL_OBJ)
	$(CC) $(LDFLAGS_SO) -o $@ $^

# avxbuf.counters (perf_event_open) does not depend on the flavour; each
# flavour's directory gets a copy so that it is complete on its own.
build/avxbuf/counters.so build/emul/avxbuf/counters.so: src/counters.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -std=c11 -fPIC -fvisibility=hidden -Wall -Wextra $(LUA_INC) -shared -o $@ $<

# Two Lua states in one process, for the per-state settings test.
build/two_states: spec/two_states.c
	@mkdir -p build
	$(CC) $(CFLAGS) -std=c11 -Wall -Wextra $(LUA_INC) -o $@ $< $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4) -ldl

# Installs the Debian packages the build, tests and benchmarks need: with
# apt-get as root, otherwise prints the command and stops.
deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:" $$missing; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "missing Debian packages; run: sudo apt-get install -y $$missing"; exit 1; \
	  fi; \
	fi

test: deps
	@$(MAKE) --no-print-directory all
	$(LUA) spec/run.lua build build/emul

# The transform benchmark (every vector width, with licence counters), then
# a quick kernel sweep; `make sweep` runs the full one with JSON and SVG.
bench: deps
	@$(MAKE) --no-print-directory all
	$(LUA) bench/transform.lua
	$(LUA) bench/kernels.lua --quick

sweep: deps
	@$(MAKE) --no-print-directory all
	$(LUA) bench/kernels.lua --json build/kernels.json --svg build/kernels.svg

clean:
	rm -rf build
