/* avxbuf.counters: hardware and software event counts for the calling
 * thread (perf_event_open), plus the few raw readings a benchmark needs:
 * a monotonic clock, the TSC, MSRs and CPU pinning.
 *
 * An event that cannot be opened is kept in the group as unavailable, with
 * errno and a plain reason, and reported as such: never as 0. Event names
 * are resolved by the Lua module avxbuf.events (tables per microarchitecture). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/clock.h"
#include "lua/luaapi.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

#define GROUP_NAME "avxbuf.counters.group"
#define MAX_EVENTS 32

typedef struct event {
  const char *name;    /* in the group's own memory, after ev[] */
  int fd;              /* -1: unavailable */
  uint64_t id;
  char why[256];       /* when unavailable */
} event;

typedef struct group {
  int n, leader;       /* leader: index of the group leader, or -1 */
  event ev[MAX_EVENTS];
  char names[];        /* the events' names, each NUL-terminated */
} group;

static const struct { int err; const char *name; } errno_names[] = {
  { ENOENT, "ENOENT" }, { EOPNOTSUPP, "EOPNOTSUPP" }, { EACCES, "EACCES" }, { EPERM, "EPERM" },
  { ENODEV, "ENODEV" }, { ENOSYS, "ENOSYS" }, { EINVAL, "EINVAL" }, { EMFILE, "EMFILE" },
  { EBUSY, "EBUSY" }, { E2BIG, "E2BIG" }, { EIO, "EIO" }, { ENXIO, "ENXIO" },
};

static const char *errno_name(int err)
{
  for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
    if (errno_names[i].err == err) return errno_names[i].name;
  return "errno";
}

static int paranoid_level(void)
{
  int level = -99;
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  if (f) {
    if (fscanf(f, "%d", &level) != 1) level = -99;
    fclose(f);
  }
  return level;
}

/* A plain reason for a failed perf_event_open. */
static void explain(char *out, size_t len, int err, uint32_t type)
{
  const char *what;
  char buf[96];
  switch (err) {
  case ENOENT: case EOPNOTSUPP: case ENODEV:
    what = type == PERF_TYPE_SOFTWARE ? "the kernel has no such software event"
         : "no core PMU: this machine (typically a VM) exposes no such hardware counter";
    break;
  case EACCES: case EPERM:
    snprintf(buf, sizeof buf, "not permitted at perf_event_paranoid %d (run as root or lower it)",
             paranoid_level());
    what = buf;
    break;
  case ENOSYS: what = "this kernel has no perf_event_open"; break;
  case EINVAL: what = "the kernel rejected this event encoding on this CPU"; break;
  default: what = strerror(err); break;
  }
  snprintf(out, len, "%s (%s)", what, errno_name(err));
}

/* Close-on-exec: a counter must not leak into the processes io.popen and
 * os.execute start. */
static long perf_open(struct perf_event_attr *attr, int group_fd)
{
  return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any cpu */, group_fd,
                 PERF_FLAG_FD_CLOEXEC);
}

static group *checkgroup(lua_State *L)
{
  return luaL_checkudata(L, 1, GROUP_NAME);
}

static void close_all(group *g)
{
  for (int i = 0; i < g->n; i++) {
    if (g->ev[i].fd < 0) continue;
    close(g->ev[i].fd);
    g->ev[i].fd = -1;
    snprintf(g->ev[i].why, sizeof g->ev[i].why, "the group was closed");
  }
  g->leader = -1;
}

/* Opens event e of g; type/config come from avxbuf.events. */
static void open_event(group *g, event *e, uint32_t type, uint64_t config)
{
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  attr.disabled = g->leader < 0;          /* the leader starts and stops them all */
  attr.exclude_kernel = 1;                /* allowed at perf_event_paranoid 2 */
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID
                   | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  long fd = perf_open(&attr, g->leader < 0 ? -1 : g->ev[g->leader].fd);
  if (fd < 0) {
    e->fd = -1;
    explain(e->why, sizeof e->why, errno, type);
    return;
  }
  e->fd = (int)fd;
  if (ioctl(e->fd, PERF_EVENT_IOC_ID, &e->id) != 0) e->id = 0;
  if (g->leader < 0) g->leader = (int)(e - g->ev);
}

/* The names list, without repeats (an event named twice is opened once),
 * as a new array at the top of the stack; returns how many, and the bytes
 * their copies need. */
static int unique_names(lua_State *L, size_t *bytes)
{
  lua_Integer n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n <= MAX_EVENTS, 1, "expected 1 to 32 event names");
  lua_createtable(L, (int)n, 0);   /* the names */
  lua_createtable(L, 0, (int)n);   /* the set of them */
  int count = 0;
  *bytes = 0;
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_argerror(L, 1, lua_pushfstring(L, "event name %d is a %s, not a string", (int)i, luaL_typename(L, -1)));
    lua_pushvalue(L, -1);
    lua_rawget(L, -3);
    int seen = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (seen) { lua_pop(L, 1); continue; }
    lua_pushvalue(L, -1);
    lua_pushboolean(L, 1);
    lua_rawset(L, -4);
    *bytes += lua_rawlen(L, -1) + 1;
    lua_rawseti(L, -3, ++count);
  }
  lua_pop(L, 1);
  return count;
}

/* counters.open{name, ...} -> group. The names are copied into the group
 * before avxbuf.events resolves them: nothing that resolve does to its
 * argument can pull a name from under the group. */
static int l_open(lua_State *L)
{
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  size_t bytes;
  int n = unique_names(L, &bytes);                          /* index 2 */
  lua_getglobal(L, "require");
  lua_pushliteral(L, "avxbuf.events");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "resolve");                           /* index 4 */
  group *g = lua_newuserdatauv(L, sizeof *g + bytes, 0);    /* index 5 */
  g->n = 0;
  g->leader = -1;
  luaL_setmetatable(L, GROUP_NAME);
  char *p = g->names;
  for (int i = 0; i < n; i++) {
    size_t len;
    lua_rawgeti(L, 2, i + 1);
    const char *name = lua_tolstring(L, -1, &len);
    event *e = &g->ev[g->n++];
    memcpy(p, name, len + 1);
    e->name = p;
    e->fd = -1;
    snprintf(e->why, sizeof e->why, "not opened");
    p += len + 1;
    lua_pushvalue(L, 4);
    lua_insert(L, -2);
    lua_call(L, 1, 2);   /* type, config | nil, reason; unknown names raise */
    if (lua_isnil(L, -2)) {
      const char *why = lua_tostring(L, -1);
      snprintf(e->why, sizeof e->why, "%s", why ? why : "unavailable");
    } else {
      open_event(g, e, (uint32_t)luaL_checkinteger(L, -2), (uint64_t)luaL_checkinteger(L, -1));
    }
    lua_pop(L, 2);
  }
  return 1;
}

static int l_start(lua_State *L)
{
  group *g = checkgroup(L);
  if (g->leader >= 0) {
    int fd = g->ev[g->leader].fd;
    ioctl(fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  }
  return 0;
}

/* :stop() -> {events = {name = {value = n} | {unavailable = why}},
 *             time_enabled, time_running, multiplexed} */
static int l_stop(lua_State *L)
{
  group *g = checkgroup(L);
  uint64_t buf[3 + 2 * MAX_EVENTS];
  uint64_t nr = 0, enabled = 0, running = 0;
  int have = 0;
  if (g->leader >= 0) {
    int fd = g->ev[g->leader].fd;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
    ssize_t got = read(fd, buf, sizeof buf);
    if (got >= (ssize_t)(3 * sizeof(uint64_t))) {
      nr = buf[0]; enabled = buf[1]; running = buf[2];
      have = 1;
    }
  }
  lua_createtable(L, 0, 4);
  lua_createtable(L, 0, g->n);
  for (int i = 0; i < g->n; i++) {
    event *e = &g->ev[i];
    lua_createtable(L, 0, 1);
    if (e->fd < 0) {
      lua_pushstring(L, e->why);
      lua_setfield(L, -2, "unavailable");
    } else {
      int found = 0;
      for (uint64_t k = 0; have && k < nr && k < MAX_EVENTS; k++) {
        if (buf[3 + 2 * k + 1] == e->id) {
          lua_pushinteger(L, (lua_Integer)buf[3 + 2 * k]);
          lua_setfield(L, -2, "value");
          found = 1;
        }
      }
      if (!found) {
        lua_pushliteral(L, "opened, but the group read returned no value for it");
        lua_setfield(L, -2, "unavailable");
      }
    }
    lua_setfield(L, -2, e->name);
  }
  lua_setfield(L, -2, "events");
  if (have) {
    lua_pushinteger(L, (lua_Integer)enabled);
    lua_setfield(L, -2, "time_enabled");
    lua_pushinteger(L, (lua_Integer)running);
    lua_setfield(L, -2, "time_running");
    lua_pushboolean(L, enabled != running);   /* multiplexed: values are estimates */
    lua_setfield(L, -2, "multiplexed");
  }
  return 1;
}

static int l_close(lua_State *L)
{
  close_all(checkgroup(L));
  return 0;
}

/* counters.available() -> true | false, reason: can this thread count cycles? */
static int l_available(lua_State *L)
{
  group g = { .n = 1, .leader = -1 };
  g.ev[0].name = "cycles";
  open_event(&g, &g.ev[0], PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
  int ok = g.ev[0].fd >= 0;
  lua_pushboolean(L, ok);
  if (ok) lua_pushliteral(L, "hardware counters can be opened for this thread");
  else lua_pushstring(L, g.ev[0].why);
  close_all(&g);
  return 2;
}

/* counters.pin(cpu) -> true | nil, reason */
static int l_pin(lua_State *L)
{
  lua_Integer cpu = luaL_checkinteger(L, 1);
  luaL_argcheck(L, cpu >= 0 && cpu < CPU_SETSIZE, 1, "no such CPU number");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    luaL_pushfail(L);
    lua_pushfstring(L, "sched_setaffinity(%d): %s (%s)", (int)cpu, strerror(errno), errno_name(errno));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* counters.cpus() -> {cpu, ...}: the CPUs this thread may run on */
static int l_cpus(lua_State *L)
{
  cpu_set_t set;
  lua_newtable(L);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) { lua_pushinteger(L, c); lua_rawseti(L, -2, ++n); }
  return 1;
}

/* counters.clock() -> seconds (CLOCK_MONOTONIC) */
static int l_clock(lua_State *L)
{
  lua_pushnumber(L, (lua_Number)avxbuf_now());
  return 1;
}

/* counters.tsc() -> the time-stamp counter, or nil, reason */
static int l_tsc(lua_State *L)
{
#ifdef HAVE_TSC
  lua_pushinteger(L, (lua_Integer)__rdtsc());
  return 1;
#else
  luaL_pushfail(L);
  lua_pushliteral(L, "no time-stamp counter on this architecture");
  return 2;
#endif
}

/* counters.msr(cpu, register) -> value | nil, reason (needs root and the msr module) */
static int l_msr(lua_State *L)
{
  lua_Integer cpu = luaL_checkinteger(L, 1), reg = luaL_checkinteger(L, 2);
  luaL_argcheck(L, cpu >= 0 && cpu < CPU_SETSIZE, 1, "no such CPU number");
  luaL_argcheck(L, reg >= 0 && reg <= 0xFFFFFFFF, 2, "an MSR number is from 0 to 0xFFFFFFFF");
  char path[64];
  uint64_t value;
  snprintf(path, sizeof path, "/dev/cpu/%d/msr", (int)cpu);
  int fd = open(path, O_RDONLY);
  if (fd < 0 || pread(fd, &value, sizeof value, (off_t)reg) != sizeof value) {
    int err = errno;
    if (fd >= 0) close(fd);
    char why[256];
    snprintf(why, sizeof why, "%s register 0x%llX: %s (%s)%s", path, (unsigned long long)reg,
             strerror(err), errno_name(err),
             err == ENOENT ? "; load the msr module (modprobe msr)"
             : err == EIO ? "; the CPU or hypervisor does not provide this MSR" : "");
    luaL_pushfail(L);
    lua_pushstring(L, why);
    return 2;
  }
  close(fd);
  lua_pushinteger(L, (lua_Integer)value);
  return 1;
}

static const luaL_Reg group_methods[] = {
  { "start", l_start }, { "stop", l_stop }, { "close", l_close },
  { NULL, NULL }
};

static const luaL_Reg module_funcs[] = {
  { "open", l_open }, { "available", l_available }, { "pin", l_pin }, { "cpus", l_cpus },
  { "clock", l_clock }, { "tsc", l_tsc }, { "msr", l_msr },
  { NULL, NULL }
};

__attribute__((visibility("default"))) int luaopen_avxbuf_counters(lua_State *L)
{
  luaL_newmetatable(L, GROUP_NAME);
  luaL_newlib(L, group_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, l_close);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, l_close);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
  luaL_newlib(L, module_funcs);
  return 1;
}
