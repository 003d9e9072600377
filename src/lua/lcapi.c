/* The C API table of include/avxbuf.h: thin wrappers over the binding's own
 * buffer functions, one table per Lua state (the settings are the state's). */
#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"

/* The table is the first member of the module record. */
#define MODULE_OF(api) ((lmodule *)(void *)(api))

static unsigned char *api_tobuffer(lua_State *L, int idx, size_t *len)
{
  buffer *b = testbuffer(L, idx);
  if (b == NULL) return NULL;
  buffer_wrote(b);   /* a pointer to write through */
  *len = b->len;
  return b->data;
}

static unsigned char *api_checkbuffer(lua_State *L, int arg, size_t *len)
{
  buffer *b = checkbuffer(L, arg);
  buffer_wrote(b);   /* a pointer to write through */
  *len = b->len;
  return b->data;
}

static unsigned char *api_newbuffer(const avxbuf_api *api, lua_State *L, size_t n)
{
  lmodule *m = MODULE_OF(api);
  m = avxbuf_pace(L, m);
  if (n > MAX_LENGTH)
    luaL_error(L, "%s", avxbuf_pushf(L, "avxbuf: a buffer of %llu bytes is too large (at most %llu)",
                                     (unsigned long long)n, (unsigned long long)MAX_LENGTH));
  luaL_getmetatable(L, BUFFER_NAME);
  buffer *b = avxbuf_pushbuffer(L, m, lua_gettop(L), n);
  lua_remove(L, -2);
  return b->data;
}

static unsigned char *api_resize(const avxbuf_api *api, lua_State *L, int idx, size_t n)
{
  lmodule *m = MODULE_OF(api);
  idx = lua_absindex(L, idx);   /* errors name the argument by its position */
  m = avxbuf_pace(L, m);   /* first: it may run finalizers, which may touch this buffer */
  buffer *b = checkbuffer(L, idx);
  avxbuf_resize(L, m, b, n, idx);
  return b->data;
}

static void api_copy(const avxbuf_api *api, void *dst, const void *src, size_t n)
{
  avxbuf_copy(&MODULE_OF(api)->state.plan, dst, src, n, avxbuf_overlap_of(dst, src, n));
}

static void api_fill(const avxbuf_api *api, void *dst, int byte, size_t n)
{
  avxbuf_fill(&MODULE_OF(api)->state.plan, dst, byte, n);
}

void avxbuf_capi_init(avxbuf_api *api)
{
  api->version = AVXBUF_API_VERSION;
  api->size = sizeof *api;
  api->tobuffer = api_tobuffer;
  api->checkbuffer = api_checkbuffer;
  api->newbuffer = api_newbuffer;
  api->resize = api_resize;
  api->copy = api_copy;
  api->fill = api_fill;
}
