/* Typed access: buf:pack([i,] fmt, v...) and buf:unpack([i,] fmt), with the
 * format language of string.pack (src/core/packfmt.c) and its results byte for
 * byte and value for value, on every Lua version (5.1, 5.2 and LuaJIT have
 * no string.pack). A pack is checked whole, values and room, before it
 * writes; an unpack never reads past the buffer. */
#include <string.h>

#include "lua/largs.h"
#include "lua/lbuffer.h"
#include "lua/lfuncs.h"
#include "core/packfmt.h"

#define NB 8
#define SZINT ((size_t)sizeof(lua_Integer))

/* A format's ops: the whole format, cached, or a long one chunk by chunk.
 * The ops are copied out of the cache: a finalizer run while they are used
 * may pack another format into the same slot. */
typedef struct reader {
  avxbuf_pk h;
  avxbuf_pk_chunk c;
} reader;

static const avxbuf_pk_chunk *first_ops(lmodule *m, reader *r, const char *fmt, size_t len)
{
  const avxbuf_pk_chunk *cached = avxbuf_pk_cached(m->packs, fmt, len);
  if (cached != NULL) {
    memcpy(&r->c, cached, offsetof(avxbuf_pk_chunk, op) + (size_t)cached->n * sizeof cached->op[0]);
    r->c.more = 0;
  } else {
    avxbuf_pk_init(&r->h, fmt, AVXBUF_PK_LUA);
    avxbuf_pk_compile(&r->h, &r->c);
  }
  return &r->c;
}

/* After the ops of the last chunk: the format's error (it names the format
 * argument), or the next chunk, or NULL at the end. */
static const avxbuf_pk_chunk *next_ops(lua_State *L, reader *r, int fmt_arg)
{
  if (r->c.bad) luaL_argerror(L, fmt_arg, r->c.err);
  if (!r->c.more) return NULL;
  avxbuf_pk_compile(&r->h, &r->c);
  return &r->c;
}

/* ---- pack ----------------------------------------------------------------- */

static void store_le(unsigned char *out, unsigned long long v, size_t size)
{
  for (size_t k = 0; k < size; k++) out[k] = (unsigned char)(v >> (NB * k));
}

static void put_int(unsigned char *out, unsigned long long v, int little, size_t size, int negative)
{
  if (little) {   /* constant sizes, which compilers make one store */
    switch (size) {
    case 1: store_le(out, v, 1); return;
    case 2: store_le(out, v, 2); return;
    case 4: store_le(out, v, 4); return;
    case 8: store_le(out, v, 8); return;
    default: break;
    }
  }
  for (size_t k = 0; k < size; k++) {
    unsigned char byte = k < sizeof v ? (unsigned char)(v >> (NB * k)) : (negative ? 0xFF : 0);
    out[little ? k : size - 1 - k] = byte;
  }
}

/* A float's bytes in the asked order. */
static void put_float(unsigned char *out, const void *p, size_t size, int little)
{
  if (little == avxbuf_pk_native_little()) {
    memcpy(out, p, size);
  } else {
    const unsigned char *s = p;
    for (size_t k = 0; k < size; k++) out[k] = s[size - 1 - k];
  }
}

/* A value as checked, ready to write. */
typedef union value {
  lua_Integer i;
  lua_Number n;
  struct { const char *s; size_t len; } str;
} value;

/* What string.pack says of value v for op, or NULL when it takes it; the
 * bytes it takes then (*body). A string's length within MAX_LENGTH keeps
 * the sum from wrapping; the caller says "format result too large". */
static const char *value_error(const avxbuf_pk_op *op, const value *v, size_t *body)
{
  *body = op->size;
  switch (op->kind) {
  case PK_INT: case PK_UINT: {
    long long lo;
    unsigned long long hi;
    if (avxbuf_pk_int_limits(op, SZINT, &lo, &hi) && !(v->i >= lo && (v->i < 0 || (unsigned long long)v->i < hi)))
      return op->kind == PK_INT ? "integer overflow" : "unsigned overflow";
    return NULL;
  }
  case PK_CHAR:
    return v->str.len <= avxbuf_pk_str_most(op) ? NULL : "string longer than given size";
  case PK_STRING:
    *body = op->size + v->str.len;
    return v->str.len <= avxbuf_pk_str_most(op) ? NULL : "string length does not fit in given size";
  case PK_ZSTR:
    *body = v->str.len + 1;
    return strlen(v->str.s) == v->str.len ? NULL : "string contains zeros";
  default:
    return NULL;
  }
}

/* What kind of value op takes: 'i' an integer, 'n' a number, 's' a
 * string, 0 none. */
static int value_kind(const avxbuf_pk_op *op)
{
  switch (op->kind) {
  case PK_INT: case PK_UINT: return 'i';
  case PK_FLOAT: case PK_DOUBLE: case PK_NUMBER: return 'n';
  case PK_CHAR: case PK_STRING: case PK_ZSTR: return 's';
  default: return 0;
  }
}

/* Checks the values of c's ops, from argument *arg on, as string.pack
 * does, into v; returns the bytes they take from byte pos (from where
 * alignment is counted). Turning a number into a string (s, z, c)
 * allocates, and so may run any finalizer. */
static size_t check_values(lua_State *L, const avxbuf_pk_chunk *c, int fmt_arg, int *arg, size_t pos, value *v)
{
  size_t start = pos;
  for (int j = 0; j < c->n; j++) {
    const avxbuf_pk_op *op = &c->op[j];
    int kind = value_kind(op);
    if (kind == 'i') v[j].i = checkint(L, *arg);
    else if (kind == 'n') v[j].n = luaL_checknumber(L, *arg);
    else if (kind == 's') v[j].str.s = luaL_checklstring(L, *arg, &v[j].str.len);   /* the slot keeps it alive */
    size_t body;
    const char *err = value_error(op, &v[j], &body);
    if (err != NULL) luaL_argerror(L, *arg, err);
    if (kind) (*arg)++;
    size_t pad = AVXBUF_PK_PADDING(op, pos);
    if (body > MAX_LENGTH || pad + body > MAX_LENGTH - pos) luaL_argerror(L, fmt_arg, "format result too large");
    pos += pad + body;
  }
  return pos - start;
}

/* Writes c's ops with the values check_values gave, from byte pos; calls
 * nothing that allocates. */
static void write_values(const avxbuf_pk_chunk *c, size_t pos, const value *v, unsigned char *out)
{
  const unsigned char *from = out;
  for (int j = 0; j < c->n; j++) {
    const avxbuf_pk_op *op = &c->op[j];
    size_t pad = AVXBUF_PK_PADDING(op, pos + (size_t)(out - from));
    if (pad != 0) {   /* rare: only after ! */
      memset(out, 0, pad);
      out += pad;
    }
    switch (op->kind) {
    case PK_INT: case PK_UINT:
      /* Only signed formats extend the sign past 8 bytes (string.pack: I16 of -1 is ff x8 00 x8). */
      put_int(out, (unsigned long long)v[j].i, op->little, op->size, op->kind == PK_INT && v[j].i < 0);
      out += op->size;
      break;
    case PK_FLOAT: {
      float f = (float)v[j].n;
      put_float(out, &f, sizeof f, op->little);
      out += sizeof f;
      break;
    }
    case PK_DOUBLE: {
      double d = (double)v[j].n;
      put_float(out, &d, sizeof d, op->little);
      out += sizeof d;
      break;
    }
    case PK_NUMBER:
      put_float(out, &v[j].n, sizeof v[j].n, op->little);
      out += sizeof v[j].n;
      break;
    case PK_CHAR: case PK_STRING: case PK_ZSTR: {
      size_t len = v[j].str.len;
      if (op->kind == PK_STRING) {
        put_int(out, len, op->little, op->size, 0);
        out += op->size;
      }
      memcpy(out, v[j].str.s, len);
      out += len;
      if (op->kind == PK_CHAR) {
        memset(out, 0, op->size - len);
        out += op->size - len;
      } else if (op->kind == PK_ZSTR) {
        *out++ = '\0';
      }
      break;
    }
    case PK_PAD:
      *out++ = 0;
      break;
    default:
      break;
    }
  }
}

/* Where a writing pass goes: the buffer b, from offset base, grown to
 * take what does not fit. */
typedef struct sink {
  buffer *b;
  lmodule *m;
  size_t base;
  uint32_t gen;   /* b's generation after the pass's own last growth */
  int fmt_arg;
} sink;

#define RESTART ((size_t)-1)

/* Room for n bytes at offset `at` of the pass's output. Growing keeps the
 * buffer's bytes and what the pass wrote past them. */
static unsigned char *place(lua_State *L, sink *k, size_t at, size_t n)
{
  size_t end = k->base + at;
  avxbuf_reserve(L, k->m, k->b, avxbuf_checkgrowth(L, k->fmt_arg, end, n), end > k->b->len ? end : k->b->len);
  k->gen = k->b->gen;
  return k->b->data + end;
}

/* One pass over the format fmt (len bytes), checking every value as
 * string.pack does and writing it to k (NULL: measure only); returns the
 * total size. Checking may run a finalizer, which may change the buffer:
 * then it returns RESTART (a number made a string stays one, so the next
 * pass checks without allocating). */
static size_t pack_pass(lua_State *L, lmodule *m, const char *fmt, size_t len, int fmt_arg, sink *k)
{
  reader r;
  value v[AVXBUF_PK_CHUNK];
  size_t total = 0;
  int arg = fmt_arg + 1;
  for (const avxbuf_pk_chunk *c = first_ops(m, &r, fmt, len); c != NULL; c = next_ops(L, &r, fmt_arg)) {
    size_t bytes = check_values(L, c, fmt_arg, &arg, total, v);
    if (k != NULL) {
      if (k->b->gen != k->gen) return RESTART;
      write_values(c, total, v, place(L, k, total, bytes));
    }
    total += bytes;
  }
  return total;
}

double avxbuf_pack_staged(buffer *b, const char *fmt, size_t len, const avxbuf_pack_value *sv, int count)
{
  reader r;
  const avxbuf_pk_chunk *c = first_ops(b->module, &r, fmt, len);
  if (c->bad || c->more) return 0;
  value v[AVXBUF_PK_CHUNK];
  size_t pos = 0;
  int arg = 0;
  for (int j = 0; j < c->n; j++) {
    const avxbuf_pk_op *op = &c->op[j];
    int kind = value_kind(op);
    if (kind) {
      if (arg >= count || (kind == 's') != (sv[arg].s != NULL)) return 0;   /* a conversion: C's */
      if (kind == 'i') {
        if (!avxbuf_number_is_integer(sv[arg].n)) return 0;
        v[j].i = (lua_Integer)sv[arg].n;
      } else if (kind == 'n') {
        v[j].n = sv[arg].n;
      } else {
        v[j].str.s = sv[arg].s;
        v[j].str.len = (size_t)sv[arg].len;
      }
      arg++;
    }
    size_t body;
    if (value_error(op, &v[j], &body) != NULL) return 0;
    size_t pad = AVXBUF_PK_PADDING(op, pos);
    if (body > MAX_LENGTH || pad + body > MAX_LENGTH - pos) return 0;
    pos += pad + body;
  }
  if (pos > MAX_LENGTH - b->len) return 0;
  size_t end = b->len + pos;
  if (!avxbuf_room(b, end)) return 0;
  write_values(c, 0, v, b->data + b->len);
  buffer_setlen(b, end);
  return (double)end + 1;
}

/* buf:pack([i,] fmt, v...) -> the index after the last byte written. At i
 * (1 .. #buf + 1), or appended without it; the buffer grows to take what
 * does not fit. */
static int l_pack(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lmodule *m = buffer_module(L, b);
  m = avxbuf_pace(L, m);   /* first: a finalizer it runs may change b */
  int at = lua_type(L, 2) != LUA_TSTRING;   /* an index before the format */
  int fmt_arg = 2 + at;
  lua_Integer i = at ? checkint(L, 2) : 0;
  size_t len;
  const char *fmt = luaL_checklstring(L, fmt_arg, &len);
  sink k = { b, m, 0, 0, fmt_arg };
  size_t total = 0;
  do {
    if (at) {
      /* Within the bytes there are: every value checked (measured) before
       * any is written. Checking may run a finalizer, which may resize b:
       * its length is read after. */
      avxbuf_checkindex(L, 2, i, b->len);
      total = pack_pass(L, m, fmt, len, fmt_arg, NULL);
      k.base = avxbuf_checkindex(L, 2, i, b->len);
      avxbuf_checkgrowth(L, fmt_arg, k.base, total);
      /* All the room first: growing fails before a byte is written over
       * the buffer's own, or not at all (growth runs no Lua code). */
      if (k.base + total > b->len) avxbuf_reserve(L, m, b, k.base + total, b->len);
    } else {
      /* Written past the length, which moves only at the end: an error on
       * the way leaves the buffer as it was. */
      k.base = b->len;
    }
    k.gen = b->gen;
  } while ((total = pack_pass(L, m, fmt, len, fmt_arg, &k)) == RESTART);
  /* A write within the length changes the bytes, not the length. */
  if (k.base + total > b->len) buffer_setlen(b, k.base + total);
  else buffer_wrote(b);
  lua_pushinteger(L, (lua_Integer)(k.base + total + 1));
  return 1;
}

/* ---- unpack ------------------------------------------------------------- */

static unsigned long long load_le(const unsigned char *p, size_t size)
{
  unsigned long long res = 0;
  for (size_t k = size; k-- > 0; ) res = res << NB | p[k];
  return res;
}

/* (inline: the loads of constant sizes are its fast path) */
static inline __attribute__((always_inline)) lua_Integer get_int(lua_State *L, const unsigned char *p, int little,
                                                                 size_t size, int issigned, int fmt_arg)
{
  unsigned long long res = 0;
  size_t limit = size <= SZINT ? size : SZINT;
  if (little && size == 4) {   /* constant sizes, which compilers make one load */
    res = load_le(p, 4);
  } else if (little && size == 8) {
    res = load_le(p, 8);
  } else {
    for (size_t k = limit; k-- > 0; ) {
      res <<= NB;
      res |= p[little ? k : size - 1 - k];
    }
  }
  if (size < SZINT) {
    if (issigned) {   /* sign-extend */
      unsigned long long mask = 1ull << (size * NB - 1);
      res = (res ^ mask) - mask;
    }
  } else if (size > SZINT) {   /* the extra bytes must only extend the sign */
    unsigned char ext = issigned && (lua_Integer)res < 0 ? 0xFF : 0;
    for (size_t k = limit; k < size; k++)
      if (p[little ? k : size - 1 - k] != ext)
        luaL_argerror(L, fmt_arg, avxbuf_pushf(L, "%d-byte integer does not fit into Lua Integer", (int)size));
  }
  return (lua_Integer)res;
}

/* A float from its bytes in the given order. */
static void get_float(void *dst, const unsigned char *p, size_t size, int little)
{
  if (little == avxbuf_pk_native_little()) {
    memcpy(dst, p, size);
  } else {
    unsigned char *d = dst;
    for (size_t k = 0; k < size; k++) d[k] = p[size - 1 - k];
  }
}

static void too_short(lua_State *L, int arg, size_t need, size_t pos, size_t len)
{
  luaL_argerror(L, arg, avxbuf_pushf(L, "data too short: %llu %s needed at index %llu of a %llu-byte buffer",
                                     (unsigned long long)need, AVXBUF_BYTES(need), (unsigned long long)pos + 1,
                                     (unsigned long long)len));
}

/* Bytes of the buffer as a pass reads them: offset x (from the buffer's
 * start, as alignment counts) is at p[x - base], for base <= x < end. */
typedef struct view {
  const unsigned char *p;
  size_t base, end;
  size_t len;   /* the buffer's length, for messages */
} view;

/* How a pass reads the format: its argument, and where short data goes. */
typedef struct unpacking {
  const char *fmt;
  size_t fmtlen;
  int fmt_arg;
  int data_arg;    /* what "data too short" names */
  size_t *needed;  /* NULL: short data raises; else it gets the bytes missing */
} unpacking;

/* What a pass returns for data that is only short (with needed). */
#define SHORT ((size_t)-2)

/* Short data at offset pos (the data ends at v->end), with `least` more
 * bytes the option there needs at the least: the caller's error, or (with
 * u->needed) the pass goes on counting what the rest of the format needs
 * at the least, unless that is more than any buffer holds (then no more
 * data can complete it, and it raises all the same). */
static size_t shortfall(lua_State *L, const unpacking *u, const view *v, size_t pos, size_t least)
{
  if (u->needed == NULL || least > MAX_LENGTH - pos)
    too_short(L, u->data_arg, least > SIZE_MAX - pos ? SIZE_MAX : least, pos, v->len);
  return pos + least;
}

/* One pass of unpack over the format from offset pos of v: with push, the
 * values are pushed; without, only checked; *after_string is set when a
 * value follows a string value. Returns the offset after the last byte read, or
 * RESTART where it needs bytes past v's end that the buffer has (v is a
 * window, or a snapshot whose bytes a finalizer changed in place while it
 * was made), or SHORT (with u->needed: the data ends too soon). Short
 * data past the buffer's end is otherwise the caller's error. */
static size_t unpack_pass(lua_State *L, lmodule *m, const view *v, size_t pos, const unpacking *u,
                          int push, int *nres, int *after_string)
{
  reader r;
  int is_short = 0, had_string = 0;   /* from here on, only count what each option needs at the least */
  for (const avxbuf_pk_chunk *c = first_ops(m, &r, u->fmt, u->fmtlen); c != NULL; c = next_ops(L, &r, u->fmt_arg)) {
    if (push && !is_short) luaL_checkstack(L, c->n + 1, "too many results");   /* and the index */
    for (int j = 0; j < c->n; j++) {
      const avxbuf_pk_op *op = &c->op[j];
      size_t pad = AVXBUF_PK_PADDING(op, pos);
      size_t least = avxbuf_pk_least(op, pos);
      if (is_short || pos > v->end || pad + op->size > v->end - pos) {
        if (!is_short && v->end < v->len) return RESTART;
        pos = shortfall(L, u, v, pos, least);
        is_short = 1;
        continue;
      }
      pos += pad;
      const unsigned char *p = v->p + (pos - v->base);
      size_t slen = 0, skip = 0;   /* a string's length, and the bytes after it */
      switch (op->kind) {
      case PK_INT: case PK_UINT:
        /* (checked without pushing only where get_int can raise) */
        if (push) lua_pushinteger(L, get_int(L, p, op->little, op->size, op->kind == PK_INT, u->fmt_arg));
        else if (op->size > SZINT) get_int(L, p, op->little, op->size, op->kind == PK_INT, u->fmt_arg);
        break;
      case PK_FLOAT: case PK_DOUBLE: case PK_NUMBER:
        if (push) {
          float f;
          double d;
          lua_Number num;
          if (op->kind == PK_FLOAT) get_float(&f, p, sizeof f, op->little), num = (lua_Number)f;
          else if (op->kind == PK_DOUBLE) get_float(&d, p, sizeof d, op->little), num = (lua_Number)d;
          else get_float(&num, p, sizeof num, op->little);
          lua_pushnumber(L, num);
        }
        break;
      case PK_CHAR:
        slen = op->size;
        break;
      case PK_STRING: {
        unsigned long long prefix = (unsigned long long)get_int(L, p, op->little, op->size, 0, u->fmt_arg);
        if (prefix > v->end - pos - op->size) {   /* before the cast: size_t may be 32 bits */
          if (v->end < v->len) return RESTART;
          size_t most = SIZE_MAX - op->size;
          pos = shortfall(L, u, v, pos, prefix > most ? SIZE_MAX : op->size + (size_t)prefix);
          is_short = 1;
          continue;
        }
        slen = (size_t)prefix;
        p += op->size;
        break;
      }
      case PK_ZSTR: {
        const unsigned char *z = memchr(p, 0, v->end - pos);
        if (z == NULL) {
          if (v->end < v->len) return RESTART;
          if (u->needed == NULL) luaL_argerror(L, u->fmt_arg, "unfinished string for format 'z'");
          pos = shortfall(L, u, v, pos, v->end - pos + 1);
          is_short = 1;
          continue;
        }
        slen = (size_t)(z - p);
        skip = slen + 1;
        break;
      }
      default:   /* x, X: no value */
        pos += op->size;
        continue;
      }
      (*nres)++;
      if (had_string) *after_string = 1;
      if (op->kind == PK_CHAR || op->kind == PK_STRING || op->kind == PK_ZSTR) {
        had_string = 1;
        if (push) lua_pushlstring(L, (const char *)p, slen);
        if (op->kind == PK_STRING) pos += slen;
        pos += skip;
      }
      pos += op->size;
    }
  }
  if (is_short) {
    *u->needed = pos - v->len;
    return SHORT;
  }
  return pos;
}

/* The bytes a first try copies (most records are shorter), and the largest
 * snapshot taken on the C stack. */
#define WINDOW 128
#define SNAPSHOT_STACK 512

/* The 0-based start of an unpack: the first unread byte for the stream
 * form, else argument 2 as string.unpack's init (negative counts from the
 * end). */
static size_t unpack_start(lua_State *L, const buffer *b, int stream, lua_Integer i)
{
  if (stream) return 0;
  size_t start = avxbuf_sub_start(i, b->len) - 1;
  luaL_argcheck(L, start <= b->len, 2, "initial position out of the buffer");
  return start;
}

/* buf:unpack(i, fmt) -> values..., the index after the last byte read; as
 * string.unpack, short data raises. buf:unpack(fmt) (no third argument:
 * a string index stays an index) -> values..., read
 * from the front and consumed (the stream form: docs/streams.md); short
 * data gives nil, "short", the bytes missing at the least, and consumes
 * nothing. Every value comes from the bytes of one moment, as buf:match's:
 * a string result can run a finalizer that changes the buffer, so values
 * are read from a copy taken before anything is made. First, of the next
 * WINDOW bytes; a format that reads past them is checked on the buffer
 * itself by a pass that makes nothing, and read from a copy of the bytes
 * that pass found it reads. */
static int l_unpack(lua_State *L)
{
  buffer *b = checkbuffer(L, 1);
  lmodule *m = buffer_module(L, b);
  int stream = lua_type(L, 2) == LUA_TSTRING && lua_isnone(L, 3);   /* buf:unpack(fmt) */
  lua_Integer i = stream ? 1 : checkint(L, 2);
  size_t needed = 0;
  unpacking u = { NULL, 0, 3 - stream, 2, stream ? &needed : NULL };
  u.fmt = luaL_checklstring(L, u.fmt_arg, &u.fmtlen);
  if (stream) u.data_arg = u.fmt_arg;   /* no index to blame */
  int top = lua_gettop(L), n = 0, after_string = 0;
  unsigned char stack[SNAPSHOT_STACK];
  size_t start = unpack_start(L, b, stream, i);
  size_t w = b->len - start < WINDOW ? b->len - start : WINDOW;
  /* A constant size where the memory allows (the bytes past the length
   * are the buffer's too, and never read): a few vector moves, where GCC
   * made a variable one rep movsq, a string instruction whose start-up
   * cost a short unpack would pay in full. */
  if (b->cap - start >= WINDOW) memcpy(stack, b->data + start, WINDOW);
  else memcpy(stack, b->data + start, w);
  view v = { stack, start, start + w, b->len };
  size_t end = unpack_pass(L, m, &v, start, &u, 1, &n, &after_string);
  unsigned char *scratch = NULL;   /* a userdata at top + 1, once one is needed */
  size_t cap = 0;
  while (end == RESTART) {
    lua_settop(L, top + (scratch != NULL));
    start = unpack_start(L, b, stream, i);
    view live = { b->data, 0, b->len, b->len };
    end = unpack_pass(L, m, &live, start, &u, 0, &n, &after_string);
    if (end == SHORT) break;
#if LUA_VERSION_NUM >= 504
    /* 5.4's lua_pushlstring copies before it may collect, and a number
     * makes nothing: with no value after a string, every value is read
     * from the buffer before a finalizer can change it, with no copy (a
     * frame of s4 or c1000, the common long record). */
    if (!after_string) {
      n = 0;
      end = unpack_pass(L, m, &live, start, &u, 1, &n, &after_string);
      break;
    }
#endif
    size_t need = end - start;
    unsigned char *copy = need <= sizeof stack ? stack : scratch;
    if (need > sizeof stack && need > cap) {
      /* Made, then the bytes checked again: a finalizer may run while it is
       * made. Twice as large each time, so that finalizers growing the
       * buffer at every collection cannot keep this from ending. */
      if (scratch) lua_remove(L, top + 1);
      cap = cap > MAX_LENGTH / 2 || need > 2 * cap ? need : 2 * cap;
      scratch = (unsigned char *)avxbuf_pushscratch(L, cap);
      lua_insert(L, top + 1);
      end = RESTART;
      continue;
    }
    /* The bytes from start to end, copied with nothing between the check
     * and the copy that can run a finalizer. */
    memcpy(copy, b->data + start, need);
    view snap = { copy, start, end, b->len };
    n = 0;
    if (unpack_pass(L, m, &snap, start, &u, 1, &n, &after_string) != end) end = RESTART;
  }
  if (scratch) lua_remove(L, top + 1);
  if (end == SHORT) {
    lua_settop(L, top);
    lua_pushnil(L);
    lua_pushliteral(L, "short");
    lua_pushinteger(L, (lua_Integer)needed);
    return 3;
  }
  if (stream) {
    /* On the buffer as it is once the values exist (a finalizer may have
     * changed it): as if unpack(1, fmt) and skip had run one after the other. */
    buffer_consume(b, end < b->len ? end : b->len);
    return n;
  }
  lua_pushinteger(L, (lua_Integer)end + 1);
  return n + 1;
}

const luaL_Reg avxbuf_pack_methods[] = {
  { "pack", l_pack }, { "unpack", l_unpack },
  { NULL, NULL }
};
