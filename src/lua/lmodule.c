/* The module record and the identities of avxbuf's userdata: the keys
 * whose addresses make their cookies, and the checks that read them. */
#include "lua/lmodule.h"
#include "core/packfmt.h"

const char avxbuf_cookie_key, avxbuf_anchor_key;

anchor *avxbuf_testanchor(lua_State *L, int idx)
{
  size_t size = sizeof(anchor);
  anchor *a = (anchor *)avxbuf_testprivate(L, idx, &avxbuf_anchor_key, offsetof(anchor, cookie), &size);
  return size == sizeof(anchor) ? a : NULL;
}

lmodule *avxbuf_module(lua_State *L)
{
  anchor *a = avxbuf_testanchor(L, lua_upvalueindex(1));
  if (a == NULL || a->module == NULL) luaL_error(L, "avxbuf: this function's module record was replaced");
  return a->module;
}

void avxbuf_module_unref(lua_State *L, lmodule *m)
{
  if (--m->refs > 0) return;
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  if (m->packs) alloc(ud, m->packs, sizeof *m->packs, 0);
  if (m->stage) alloc(ud, m->stage, m->stage_size, 0);
  alloc(ud, m, sizeof *m, 0);
}
