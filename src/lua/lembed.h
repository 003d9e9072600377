/* Lua modules compiled into avxbuf (lua/avxbuf/ffi.lua, tune.lua). */
#ifndef AVXBUF_LEMBED_H
#define AVXBUF_LEMBED_H

#include "lua/luaapi.h"

/* require(name) of one of them (avxbuf.ffi, avxbuf.tune): pushes it and
 * returns 1, or pushes the error and returns 0. */
int avxbuf_require_embedded(lua_State *L, const char *name);

#endif
