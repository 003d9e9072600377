/* avxbuf's C API, for C modules that create, read, write and grow avxbuf
 * buffers, and for programs that embed Lua and link avxbuf in.
 *
 * A module does not link against avxbuf. It asks the Lua state for the
 * function table that `require "avxbuf"` leaves there (as NumPy hands out
 * its C API through a capsule):
 *
 *   #include "avxbuf.h"
 *   static int sum(lua_State *L) {
 *     const avxbuf_api *api = avxbuf_api_get(L);    // requires avxbuf if needed
 *     size_t n;
 *     const unsigned char *p = api->checkbuffer(L, 1, &n);
 *     ...
 *   }
 *
 * The table belongs to the Lua state it came from (its settings are that
 * state's) and lives until lua_close finalizes avxbuf. Finalizers that
 * lua_close runs after that one (those of objects made before avxbuf was
 * required) get a Lua error from avxbuf_api_get: such a finalizer calls it
 * (in lua_pcall) rather than keeping the pointer. Data pointers stay valid until
 * the buffer is resized, grown or freed, or until Lua code runs (a
 * finalizer may grow a buffer: any call that allocates may run one).
 *
 * Embedding: link libavxbuf.a (`make static`) and register the openers
 * before running Lua code:
 *   luaL_requiref(L, "avxbuf", luaopen_avxbuf, 0); lua_pop(L, 1);
 *   luaL_requiref(L, "avxbuf.counters", luaopen_avxbuf_counters, 0); lua_pop(L, 1);
 */
#ifndef AVXBUF_H
#define AVXBUF_H

#include <stddef.h>
#include "lua.h"
#include "lauxlib.h"

/* The release (avxbuf.version in Lua); the Makefile and the release
 * rockspec take it from here. */
#define AVXBUF_VERSION "2.0.0"

/* Raised whenever a field changes meaning or place; fields are only ever
 * appended otherwise (see avxbuf_api.size). */
#ifndef AVXBUF_API_VERSION
#define AVXBUF_API_VERSION 1
#endif

/* The registry field that holds the table: a userdata whose first member
 * points to it. */
#define AVXBUF_API_KEY "avxbuf.api"

typedef struct avxbuf_api avxbuf_api;
struct avxbuf_api {
  int version;          /* the AVXBUF_API_VERSION avxbuf was built with */
  size_t size;          /* its sizeof(avxbuf_api) */

  /* The data and length of the buffer at idx: its unread bytes (64-byte
   * aligned unless bytes were consumed from the front since the buffer last
   * grew, compacted or was reset: docs/streams.md), or NULL if the value
   * there is not an avxbuf buffer (len is then untouched). The pointer may
   * be written through: the buffer's generation moves on, so that an
   * iterator that read ahead (LuaJIT's split) reads those bytes again. */
  unsigned char *(*tobuffer)(lua_State *L, int idx, size_t *len);
  /* The same, or the error "bad argument #arg (avxbuf.buffer expected,
   * got ...)". */
  unsigned char *(*checkbuffer)(lua_State *L, int arg, size_t *len);
  /* Pushes a new buffer of n zero bytes and returns its data. Raises a Lua
   * error if n is too large or memory runs out. */
  unsigned char *(*newbuffer)(const avxbuf_api *api, lua_State *L, size_t n);
  /* Sets the length of the buffer at idx to n: bytes past the old length
   * are zero, capacity grows geometrically. Returns the data, which may
   * have moved. Raises a Lua error on a non-buffer, too large an n or no
   * memory, and then the buffer is unchanged. */
  unsigned char *(*resize)(const avxbuf_api *api, lua_State *L, int idx, size_t n);
  /* memmove and memset with the kernels this Lua state's settings pick,
   * as avxbuf.copy and avxbuf.fill do. */
  void (*copy)(const avxbuf_api *api, void *dst, const void *src, size_t n);
  void (*fill)(const avxbuf_api *api, void *dst, int byte, size_t n);
};

/* The table of this Lua state: requires avxbuf if it is not loaded yet, and
 * raises a Lua error if it cannot be had or was built for another version
 * of this header. */
static inline const avxbuf_api *avxbuf_api_get(lua_State *L)
{
  const avxbuf_api *api;
  lua_getfield(L, LUA_REGISTRYINDEX, AVXBUF_API_KEY);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "avxbuf");
    lua_call(L, 1, 0);
    lua_getfield(L, LUA_REGISTRYINDEX, AVXBUF_API_KEY);
  }
  {
    const avxbuf_api *const *holder = (const avxbuf_api *const *)lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (holder == NULL)
      luaL_error(L, "avxbuf: require \"avxbuf\" left no C API in the registry");
    api = *holder;
  }
  if (api == NULL)
    luaL_error(L, "avxbuf: the C API is gone: lua_close has finalized avxbuf");
  else if (api->version != AVXBUF_API_VERSION)
    luaL_error(L, "avxbuf: this module was built for avxbuf C API version %d, but the avxbuf loaded "
                  "provides version %d; rebuild the module against that avxbuf's avxbuf.h",
               AVXBUF_API_VERSION, api->version);
  else if (api->size < sizeof(avxbuf_api))
    luaL_error(L, "avxbuf: this module needs a newer avxbuf (its C API has %d of the %d bytes "
                  "this module was built for)", (int)api->size, (int)sizeof(avxbuf_api));
  return api;
}

/* The openers, for programs that link avxbuf statically. */
int luaopen_avxbuf(lua_State *L);
int luaopen_avxbuf_counters(lua_State *L);

#endif
