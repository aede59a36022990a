/*
 * test_perf_map.c — the perf map (codegen/perf_map.h): every function the JIT
 * compiles gets one line whose address range holds the function's address
 * and whose name says which module, function and mode it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/ir.h"
#include "codegen/jit.h"
#include "test.h"

static bool ok(sto_status st)
{
    if (st) fprintf(stderr, "unexpected error: %s\n", st->message);
    sto_status_free(st);
    return st == STO_OK;
}

/* int32_t name(cg_error *, int64_t *out): *out = value. */
static void build_store(cg_module *m, const char *name, int64_t value)
{
    cg_fn f;
    LLVMTypeRef params[] = {cg_ptr(m)};
    REQUIRE(ok(cg_fn_begin(&f, m, name, params, 1)));
    LLVMBuildStore(f.b, cg_const_i64(m, value), cg_fn_param(&f, 0));
    cg_fn_return_ok(&f);
    CHECK(ok(cg_fn_end(&f)));
}

typedef int32_t (*store_fn)(cg_error *, int64_t *);

typedef struct map_line {
    uintptr_t start;
    uint64_t size;
    char name[128];
} map_line;

/* Reads up to max lines of the map at path; how many there were. */
static int read_map(const char *path, map_line *lines, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    char buf[256];
    while (fgets(buf, sizeof(buf), f)) {
        unsigned long long start, size;
        char name[128];
        if (sscanf(buf, "%llx %llx %127s", &start, &size, name) != 3) {
            n = -1;
            break;
        }
        if (n < max) lines[n] = (map_line){(uintptr_t)start, size, ""};
        if (n < max) snprintf(lines[n].name, sizeof(lines[n].name), "%s", name);
        n++;
    }
    fclose(f);
    return n;
}

/* The line whose range holds addr, NULL if none or several. */
static const map_line *line_for(const map_line *lines, int n, const void *addr)
{
    const map_line *hit = NULL;
    for (int i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)addr;
        if (a < lines[i].start || a >= lines[i].start + lines[i].size) continue;
        if (hit) return NULL;
        hit = &lines[i];
    }
    return hit;
}

/* Two modules, one with two functions, in both modes: one line each. */
static void test_lines_per_function(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/rackdb-test-perf-map-%ld.map", (long)getpid());
    unlink(path);
    cg_jit_options options = {.perf_map_path = path};
    cg_jit *jit = NULL;
    REQUIRE(ok(cg_jit_create(&options, &jit)));

    cg_code *codes[2] = {NULL, NULL};
    cg_mode modes[2] = {CG_MODE_FAST, CG_MODE_OPT};
    for (int k = 0; k < 2; k++) {
        cg_module *m = NULL;
        REQUIRE(ok(cg_module_create(jit, k == 0 ? "p3" : "p4", &m)));
        build_store(m, "pipeline", 11 + k);
        build_store(m, "helper", 21 + k);
        REQUIRE(ok(cg_jit_compile(jit, m, modes[k], &codes[k])));
    }

    map_line lines[8];
    int n = read_map(path, lines, 8);
    CHECK_EQ_INT(n, 4);
    const char *names[2][2] = {{"rackdb_p3_fast", "rackdb_p3_helper_fast"},
                               {"rackdb_p4_opt", "rackdb_p4_helper_opt"}};
    const char *fns[2] = {"pipeline", "helper"};
    for (int k = 0; k < 2 && n == 4; k++) {
        for (int i = 0; i < 2; i++) {
            void *addr = cg_code_fn(codes[k], fns[i]);
            REQUIRE(addr);
            const map_line *l = line_for(lines, n, addr);
            REQUIRE(l);
            CHECK(l->start == (uintptr_t)addr); /* the line starts at the function */
            CHECK(l->size > 0 && l->size < 4096);
            CHECK_STREQ(l->name, names[k][i]);
            /* the code at that address is the function */
            int64_t out = 0;
            cg_error err = cg_error_none();
            CHECK_EQ_INT(((store_fn)addr)(&err, &out), CG_ERR_NONE);
            CHECK_EQ_INT(out, (i == 0 ? 11 : 21) + k);
        }
    }
    for (int k = 0; k < 2; k++)
        CHECK(ok(cg_code_free(codes[k])));
    CHECK(ok(cg_jit_destroy(jit)));
    unlink(path);
}

/* RACKDB_PERF_MAP=1 writes where perf looks: /tmp/perf-<pid>.map. */
static void test_environment(void)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)getpid());
    unlink(path);

    cg_jit *jit = NULL;
    unsetenv("RACKDB_PERF_MAP");
    REQUIRE(ok(cg_jit_create(NULL, &jit)));
    cg_module *m = NULL;
    REQUIRE(ok(cg_module_create(jit, "p0", &m)));
    build_store(m, "pipeline", 1);
    cg_code *code = NULL;
    REQUIRE(ok(cg_jit_compile(jit, m, CG_MODE_FAST, &code)));
    CHECK(access(path, F_OK) != 0); /* off unless asked for */
    CHECK(ok(cg_code_free(code)));
    CHECK(ok(cg_jit_destroy(jit)));

    setenv("RACKDB_PERF_MAP", "1", 1);
    REQUIRE(ok(cg_jit_create(NULL, &jit)));
    unsetenv("RACKDB_PERF_MAP");
    REQUIRE(ok(cg_module_create(jit, "p7", &m)));
    build_store(m, "pipeline", 1);
    REQUIRE(ok(cg_jit_compile(jit, m, CG_MODE_OPT, &code)));
    map_line lines[4];
    int n = read_map(path, lines, 4);
    CHECK_EQ_INT(n, 1);
    const map_line *l = n == 1 ? line_for(lines, n, cg_code_fn(code, "pipeline")) : NULL;
    CHECK(l != NULL);
    if (l) CHECK_STREQ(l->name, "rackdb_p7_opt");
    CHECK(ok(cg_code_free(code)));
    CHECK(ok(cg_jit_destroy(jit)));
    unlink(path);
}

/* A path that cannot be opened is an error, not a crash or silence. */
static void test_bad_path(void)
{
    cg_jit_options options = {.perf_map_path = "/nonexistent-dir/perf.map"};
    cg_jit *jit = NULL;
    sto_status st = cg_jit_create(&options, &jit);
    CHECK(st != STO_OK);
    CHECK(jit == NULL);
    if (st) CHECK_STREQ(st->sqlstate, "58030");
    sto_status_free(st);
}

int main(void)
{
    RUN(test_lines_per_function);
    RUN(test_environment);
    RUN(test_bad_path);
    return TEST_REPORT();
}
