/* LuaJIT: hands the module to require("avxbuf.ffi") with what it needs to
 * check buffers, pick kernels and call them through the FFI, in code the
 * JIT compiles: this state's plan, the string-instruction kernels and the
 * cookie key. Anything missing (no FFI, the Lua file not installed, a
 * layout it does not recognise) leaves the C functions in place. */
#include "lavxbuf.h"

void avxbuf_luajit_install(lua_State *L, lmodule *m)
{
  int on = 0;
  lua_getglobal(L, "jit");
  int luajit = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (luajit) {
    lua_getglobal(L, "pcall");
    lua_getglobal(L, "require");
    lua_pushliteral(L, "avxbuf.ffi");
    lua_call(L, 2, 2);
    if (lua_toboolean(L, -2) && lua_isfunction(L, -1)) {
      lua_pushvalue(L, -3);                       /* the module */
      lua_pushlightuserdata(L, &m->settings.plan);
      lua_pushlightuserdata(L, (void *)&avxbuf_k_rep_movsb);
      lua_pushlightuserdata(L, (void *)&avxbuf_k_rep_stosb);
      lua_pushlightuserdata(L, (void *)&avxbuf_cookie_key);
      on = lua_pcall(L, 5, 0, 0) == LUA_OK;
      if (!on) lua_pop(L, 1);                     /* the error: keep the C path */
      lua_pop(L, 1);
    } else {
      lua_pop(L, 2);
    }
  }
  lua_pushboolean(L, on);
  lua_setfield(L, -2, "ffi");
}
