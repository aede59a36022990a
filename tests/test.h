/*
 * test.h — the tiny harness every C unit test uses.
 *
 * A test file defines functions and lists them in main() with RUN(fn).
 * CHECK records a failure and goes on; REQUIRE stops the current test.
 * The program prints "N passed, N failed" and exits non-zero on failure,
 * so ctest and a person both see what happened.
 */
#ifndef RACKDB_TEST_H
#define RACKDB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures_;  /* failures in the running test */
static int test_passed_, test_failed_;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
            test_failures_++;                                                \
        }                                                                    \
    } while (0)

#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                    \
            test_failures_++;                                                  \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_STREQ(a, b)                                                     \
    do {                                                                      \
        const char *a_ = (a), *b_ = (b);                                      \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                              \
            fprintf(stderr, "%s:%d: CHECK_STREQ failed: \"%s\" != \"%s\"\n",  \
                    __FILE__, __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
            test_failures_++;                                                 \
        }                                                                     \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                         \
    do {                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                        \
        if (a_ != b_) {                                                            \
            fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s = %lld, expected %lld\n", \
                    __FILE__, __LINE__, #a, a_, b_);                               \
            test_failures_++;                                                      \
        }                                                                          \
    } while (0)

#define RUN(fn)                                                   \
    do {                                                          \
        test_failures_ = 0;                                       \
        fn();                                                     \
        if (test_failures_) {                                     \
            fprintf(stderr, "FAIL %s\n", #fn);                    \
            test_failed_++;                                       \
        } else {                                                  \
            test_passed_++;                                       \
        }                                                         \
    } while (0)

#define TEST_REPORT()                                               \
    (printf("%d passed, %d failed\n", test_passed_, test_failed_), \
     test_failed_ ? 1 : 0)

/* Directory of ../shared (reference data), from the environment ctest sets. */
static inline const char *test_shared_dir(void)
{
    const char *d = getenv("RACKDB_SHARED");
    return d ? d : "../shared";
}

#endif
