/* LuaJIT: hands the module to avxbuf.ffi (compiled in: src/lembed.c) with
 * what it needs to check buffers, pick kernels and call them through the
 * FFI, in code the JIT compiles: this state's plan, the string-instruction
 * kernels and the cookie key. Anything missing (no FFI, a layout it does
 * not recognise) leaves the C functions in place. */
#include "lavxbuf.h"

void avxbuf_luajit_install(lua_State *L, lmodule *m)
{
  int on = 0;
  lua_getglobal(L, "jit");
  int luajit = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (luajit) {
    int loaded = avxbuf_require_embedded(L, "avxbuf.ffi");
    if (loaded && lua_isfunction(L, -1)) {
      lua_pushvalue(L, -2);                       /* the module */
      lua_pushlightuserdata(L, &m->state.plan);
      lua_pushlightuserdata(L, (void *)&avxbuf_k_rep_movsb);
      lua_pushlightuserdata(L, (void *)&avxbuf_k_rep_stosb);
      lua_pushlightuserdata(L, (void *)&avxbuf_cookie_key);
      on = lua_pcall(L, 5, 0, 0) == LUA_OK;
      if (!on) lua_pop(L, 1);                     /* the error: keep the C path */
    } else {
      lua_pop(L, 1);                              /* the error, or what it gave */
    }
  }
  lua_pushboolean(L, on);
  lua_setfield(L, -2, "ffi");
}
