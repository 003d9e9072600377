/* What lsettings.c (knobs, kernels) shares with lcpu.c (cpu, decide). */
#ifndef AVXBUF_LSETTINGS_H
#define AVXBUF_LSETTINGS_H

#include "lua/lmodule.h"

/* This state's knobs and plan. */
#define STATE(L) (&MODULE(L)->state)

/* The knobs in force that differ from what the policy alone gives on this
 * machine (set by configure or AVXBUF_OPTIONS), in the table at the top:
 * as its field overrides (config()'s values), and named at the end of its
 * reason, which otherwise would still say what the default uses. */
void avxbuf_set_overrides(lua_State *L, const avxbuf_settings *in_force);

#endif
