/* The Lua API as every C file that calls it sees it: include this, never
 * lua.h, lauxlib.h, compat.h or gcpoints.h on their own. The order is the
 * point: the collector-torture wrappers (gcpoints.h) come before the
 * version shims (compat.h), so that the shims' macros and inline functions
 * call the wrapped API, in every file, whatever it includes first. */
#ifndef AVXBUF_LUAAPI_H
#define AVXBUF_LUAAPI_H

#include "lua.h"
#include "lauxlib.h"
#include "lua/gcpoints.h"
#include "lua/compat.h"

#endif
