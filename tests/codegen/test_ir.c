/*
 * test_ir.c — codegen/ir.h's string type: %sto_str is the C sto_str's two
 * words, in memory and as constants, so generated code and C agree on every
 * string, short (inline) or long (pointer).
 */
#include <stdint.h>
#include <string.h>

#include "codegen/ir.h"
#include "codegen/jit.h"
#include "test.h"

static bool ok(sto_status st)
{
    if (st) fprintf(stderr, "unexpected error: %s\n", st->message);
    sto_status_free(st);
    return st == STO_OK;
}

/* Constants: the words are the C struct's bytes, and a non-constant has
 * none. */
static void test_const_words(void)
{
    cg_jit *jit = NULL;
    REQUIRE(ok(cg_jit_create(NULL, &jit)));
    cg_module *m = NULL;
    REQUIRE(ok(cg_module_create(jit, "str", &m)));
    const char *texts[] = {"", "A", "BRAZIL", "exactly12byt", "a string longer than twelve"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        sto_str s = sto_str_make(texts[i], (uint32_t)strlen(texts[i]));
        LLVMValueRef c = cg_const_value(m, STO_TYPE_VARCHAR, &s);
        CHECK(LLVMTypeOf(c) == cg_type(m, STO_TYPE_VARCHAR));
        uint64_t w[2], got0 = 0, got1 = 0;
        memcpy(w, &s, sizeof(w));
        CHECK(cg_const_str_words(c, &got0, &got1));
        CHECK(got0 == w[0]);
        CHECK(got1 == w[1]);
        CHECK_EQ_INT(got0 & 0xFFFFFFFF, strlen(texts[i]));
    }
    CHECK(cg_type(m, STO_TYPE_CHAR) == cg_type(m, STO_TYPE_VARCHAR));
    CHECK_EQ_INT(cg_abi_size(m, cg_type(m, STO_TYPE_VARCHAR)), sizeof(sto_str));
    cg_module_destroy(m);
    CHECK(ok(cg_jit_destroy(jit)));
}

/* int32_t copy(cg_error *, const sto_str *in, sto_str *out, uint64_t *words,
 *              sto_str *konst): *out = *in through a %sto_str value, its words
 * to words[0..1], and the constant "special requests" to *konst. */
typedef int32_t (*copy_fn)(cg_error *, const sto_str *, sto_str *, uint64_t *, sto_str *);

static void test_memory(void)
{
    cg_jit *jit = NULL;
    REQUIRE(ok(cg_jit_create(NULL, &jit)));
    static const char *konst_text = "special requests";
    sto_str konst_c = sto_str_make(konst_text, (uint32_t)strlen(konst_text));
    cg_code *codes[2] = {NULL, NULL};
    const cg_mode modes[2] = {CG_MODE_FAST, CG_MODE_OPT};
    for (int k = 0; k < 2; k++) {
        cg_module *m = NULL;
        REQUIRE(ok(cg_module_create(jit, "copy", &m)));
        cg_fn f;
        LLVMTypeRef params[] = {cg_ptr(m), cg_ptr(m), cg_ptr(m), cg_ptr(m)};
        REQUIRE(ok(cg_fn_begin(&f, m, "copy", params, 4)));
        LLVMTypeRef str = cg_type(m, STO_TYPE_VARCHAR);
        LLVMValueRef v = LLVMBuildLoad2(f.b, str, cg_fn_param(&f, 0), "");
        LLVMBuildStore(f.b, v, cg_fn_param(&f, 1));
        for (unsigned w = 0; w < 2; w++)
            cg_store_elem(&f, cg_i64(m), cg_fn_param(&f, 2), cg_const_i64(m, w),
                          LLVMBuildExtractValue(f.b, v, w, ""));
        LLVMBuildStore(f.b, cg_const_value(m, STO_TYPE_VARCHAR, &konst_c), cg_fn_param(&f, 3));
        cg_fn_return_ok(&f);
        REQUIRE(ok(cg_fn_end(&f)));
        REQUIRE(ok(cg_jit_compile(jit, m, modes[k], &codes[k])));
    }
    const char *texts[] = {
        "", "N", "GERMANY", "exactly12byt", "thirteen byte", "a much longer string"};
    for (int k = 0; k < 2; k++) {
        copy_fn fn = (copy_fn)cg_code_fn(codes[k], "copy");
        REQUIRE(fn);
        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
            sto_str in = sto_str_make(texts[i], (uint32_t)strlen(texts[i])), out, konst;
            memset(&out, 0xAB, sizeof(out));
            uint64_t words[2] = {0, 0}, expect[2];
            memcpy(expect, &in, sizeof(expect));
            cg_error err = cg_error_none();
            CHECK_EQ_INT(fn(&err, &in, &out, words, &konst), CG_ERR_NONE);
            CHECK(memcmp(&in, &out, sizeof(in)) == 0);
            CHECK(sto_str_eq(&in, &out));
            CHECK(words[0] == expect[0] && words[1] == expect[1]);
            CHECK(sto_str_eq(&konst, &konst_c));
            CHECK_EQ_INT(konst.len, strlen(konst_text));
            CHECK(memcmp(sto_str_data(&konst), konst_text, konst.len) == 0);
        }
    }
    for (int k = 0; k < 2; k++)
        CHECK(ok(cg_code_free(codes[k])));
    CHECK(ok(cg_jit_destroy(jit)));
}

int main(void)
{
    RUN(test_const_words);
    RUN(test_memory);
    return TEST_REPORT();
}
