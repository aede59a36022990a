/*
 * test_code_cache.c — the JIT's code cache (cg_jit_compile_cached): modules
 * built alike share one compiled code object (each in its own module, with
 * its own symbol prefix), a different constant or mode compiles anew,
 * references keep shared code alive, clearing and eviction drop the
 * cache's references, and a JIT destroyed with a full cache frees it all.
 */
#include <stdint.h>

#include "codegen/ir.h"
#include "codegen/jit.h"
#include "test.h"

static bool ok(sto_status st)
{
    if (st) fprintf(stderr, "unexpected error: %s\n", st->message);
    sto_status_free(st);
    return st == STO_OK;
}

/* int32_t scale(cg_error *, int64_t x, int64_t *out): *out = x * factor. */
typedef int32_t (*scale_fn)(cg_error *, int64_t, int64_t *);

/* Compiles scale for `factor` through the cache; *hit as returned. */
static cg_code *cached_scale(cg_jit *jit, int64_t factor, cg_mode mode, bool *hit)
{
    cg_module *m = NULL;
    if (!ok(cg_module_create(jit, "scale", &m))) return NULL;
    LLVMTypeRef params[] = {cg_i64(m), cg_ptr(m)};
    cg_fn f;
    if (!ok(cg_fn_begin(&f, m, "scale", params, 2))) {
        cg_module_destroy(m);
        return NULL;
    }
    LLVMValueRef r = cg_mul(&f, cg_fn_param(&f, 0), cg_const_i64(m, factor), STO_TYPE_BIGINT);
    LLVMBuildStore(f.b, r, cg_fn_param(&f, 1));
    cg_fn_return_ok(&f);
    if (!ok(cg_fn_end(&f))) {
        cg_module_destroy(m);
        return NULL;
    }
    cg_code *code = NULL;
    if (!ok(cg_jit_compile_cached(jit, m, mode, &code, hit))) return NULL;
    return code;
}

/* Calls the code's scale(x); -1 when it has none or it fails. */
static int64_t call(cg_code *code, int64_t x)
{
    scale_fn fn = code ? (scale_fn)cg_code_fn(code, "scale") : NULL;
    int64_t out = -1;
    cg_error err = cg_error_none();
    if (!fn || fn(&err, x, &out) != 0) return -1;
    return out;
}

static void release(cg_code *code)
{
    CHECK(ok(cg_code_free(code)));
}

static void test_shared_code(void)
{
    cg_jit *jit = NULL;
    REQUIRE(ok(cg_jit_create(NULL, &jit)));
    bool hit = true;
    cg_code *a = cached_scale(jit, 3, CG_MODE_FAST, &hit);
    REQUIRE(a);
    CHECK(!hit);
    cg_code *b = cached_scale(jit, 3, CG_MODE_FAST, &hit);
    REQUIRE(b);
    CHECK(hit);
    CHECK(a == b);
    CHECK(cg_code_fn(a, "scale") == cg_code_fn(b, "scale"));
    CHECK_EQ_INT(call(b, 5), 15);

    cg_code *c = cached_scale(jit, 4, CG_MODE_FAST, &hit); /* another constant */
    REQUIRE(c);
    CHECK(!hit);
    CHECK(c != a);
    CHECK_EQ_INT(call(c, 5), 20);
    cg_code *d = cached_scale(jit, 3, CG_MODE_OPT, &hit); /* another mode */
    REQUIRE(d);
    CHECK(!hit);
    CHECK(d != a);
    CHECK_EQ_INT(call(d, 5), 15);
    CHECK_EQ_INT(cg_code_stats(d)->mode, CG_MODE_OPT);

    cg_jit_counters n;
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.compiled, 3);
    CHECK_EQ_INT(n.live_code, 3);
    CHECK_EQ_INT(n.cache_entries, 3);
    CHECK_EQ_INT(n.cache_hits, 1);
    CHECK_EQ_INT(n.cache_misses, 3);

    /* The callers' references go; the cache keeps the code callable. */
    release(a);
    release(b);
    release(c);
    release(d);
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.live_code, 3);
    cg_code *e = cached_scale(jit, 4, CG_MODE_FAST, &hit);
    CHECK(hit);
    CHECK_EQ_INT(call(e, 7), 28);

    /* Cleared: code in use stays until released; the next request
     * compiles anew. */
    cg_jit_cache_clear(jit);
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.cache_entries, 0);
    CHECK_EQ_INT(n.live_code, 1);
    CHECK_EQ_INT(call(e, 2), 8);
    release(e);
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.live_code, 0);
    cg_code *f = cached_scale(jit, 3, CG_MODE_FAST, &hit);
    CHECK(!hit);
    CHECK_EQ_INT(call(f, 5), 15);
    release(f);
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.compiled, 4);
    CHECK(ok(cg_jit_destroy(jit))); /* with one entry cached */
}

/* More distinct modules than the cache holds: the least recently used go,
 * the one used all along stays. */
static void test_eviction(void)
{
    cg_jit *jit = NULL;
    REQUIRE(ok(cg_jit_create(NULL, &jit)));
    bool hit;
    for (int i = 0; i < CG_CODE_CACHE_MAX + 8; i++) {
        cg_code *keep = cached_scale(jit, 1000, CG_MODE_FAST, &hit);
        CHECK(hit == (i > 0));
        release(keep);
        cg_code *code = cached_scale(jit, i, CG_MODE_FAST, &hit);
        CHECK(!hit);
        CHECK_EQ_INT(call(code, 2), 2 * i);
        release(code);
    }
    cg_jit_counters n;
    cg_jit_get_counters(jit, &n);
    CHECK_EQ_INT(n.cache_entries, CG_CODE_CACHE_MAX);
    CHECK_EQ_INT(n.live_code, CG_CODE_CACHE_MAX);
    cg_code *first = cached_scale(jit, 0, CG_MODE_FAST, &hit); /* evicted long ago */
    CHECK(!hit);
    CHECK_EQ_INT(call(first, 9), 0);
    release(first);
    CHECK(ok(cg_jit_destroy(jit)));
}

int main(void)
{
    RUN(test_shared_code);
    RUN(test_eviction);
    return TEST_REPORT();
}
