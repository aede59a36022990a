/*
 * settings.c — parsing, printing and defaults of session settings.
 */
#include "engine/settings.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#define MAX_THREADS            1024
#define DEFAULT_MEMORY_PERCENT 80

enum {
#define SETTING_ENUM(name, desc) SETTING_##name,
    ENG_SETTING_LIST(SETTING_ENUM)
#undef SETTING_ENUM
        SETTING_COUNT
};

static const char *const setting_names[] = {
#define SETTING_NAME(name, desc) #name,
    ENG_SETTING_LIST(SETTING_NAME)
#undef SETTING_NAME
};

static const char *const setting_descriptions[] = {
#define SETTING_DESC(name, desc) desc,
    ENG_SETTING_LIST(SETTING_DESC)
#undef SETTING_DESC
};

static const char *const join_names[] = {"auto", "hash", "radix", "sortmerge"};

int eng_default_threads(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n > MAX_THREADS ? MAX_THREADS : n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

uint64_t eng_physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 0;
    return (uint64_t)pages * (uint64_t)page;
}

/* A share of physical memory, rounded down to whole MB (1 GB if unknown). */
static uint64_t memory_percent(double percent)
{
    uint64_t ram = eng_physical_memory();
    if (!ram) ram = (uint64_t)1 << 30;
    uint64_t bytes = (uint64_t)((double)ram * percent / 100.0);
    return bytes / (1u << 20) * (1u << 20);
}

const char *eng_join_algorithm_name(eng_join_algorithm a)
{
    return (unsigned)a < sizeof(join_names) / sizeof(join_names[0]) ? join_names[a] : "?";
}

void eng_settings_init(eng_settings *s)
{
    s->threads = eng_default_threads();
    s->join_algorithm = ENG_JOIN_AUTO;
    s->memory_limit = memory_percent(DEFAULT_MEMORY_PERCENT);
    s->jit_compile_ahead = true;
    s->jit_cache = false;
}

size_t eng_settings_count(void)
{
    return SETTING_COUNT;
}

const char *eng_settings_name(size_t i)
{
    return i < SETTING_COUNT ? setting_names[i] : NULL;
}

const char *eng_settings_description(size_t i)
{
    return i < SETTING_COUNT ? setting_descriptions[i] : NULL;
}

static int find_setting(const char *name)
{
    for (int i = 0; i < SETTING_COUNT; i++)
        if (strcasecmp(name, setting_names[i]) == 0) return i;
    return -1;
}

static sto_status unknown(const char *name, int position)
{
    return sto_error_at(STO_UNDEFINED_OBJECT, position,
                        "unrecognized configuration parameter \"%s\"", name);
}

static sto_status bad_value(const char *name, const char *value, int position, const char *hint)
{
    return sto_error_at(STO_INVALID_PARAMETER_VALUE, position,
                        "invalid value for parameter \"%s\": \"%s\" (%s)", name, value, hint);
}

/* "8GB", "512 MB", "1.5GB", "80%" → bytes; false when malformed. */
static bool parse_memory(const char *text, uint64_t *out)
{
    errno = 0;
    char *end;
    double n = strtod(text, &end);
    if (end == text || errno || !(n > 0)) return false;
    while (isspace((unsigned char)*end))
        end++;
    double mult;
    if (*end == '%') {
        if (end[1] != '\0' || n > 100) return false;
        *out = memory_percent(n);
        return *out > 0;
    }
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"B", 1},         {"KB", 1024.0},          {"KIB", 1024.0},
                 {"MB", 1 << 20},  {"MIB", 1 << 20},        {"GB", 1 << 30},
                 {"GIB", 1 << 30}, {"TB", 1099511627776.0}, {"TIB", 1099511627776.0}};
    mult = 0;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcasecmp(end, units[i].unit) == 0) mult = units[i].mult;
    if (mult == 0) return false;
    double bytes = n * mult;
    if (bytes < 1 << 20 || bytes > 1e18) return false;
    *out = (uint64_t)bytes;
    return true;
}

/* The largest unit that divides the value exactly. */
static void format_memory(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (u < 4 && bytes && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, "%" PRIu64 "%s", bytes, units[u]);
}

/* "on"/"off" and PostgreSQL's other spellings of a boolean; false when the
 * text is none of them. */
static bool parse_bool(const char *text, bool *out)
{
    static const char *const spellings[][2] = {
        {"off", "on"}, {"false", "true"}, {"no", "yes"}, {"0", "1"}};
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
        for (int v = 0; v < 2; v++) {
            if (strcasecmp(text, spellings[i][v]) != 0) continue;
            *out = v == 1;
            return true;
        }
    }
    return false;
}

sto_status eng_settings_set(eng_settings *s, const char *name, const char *value, int position)
{
    switch (find_setting(name)) {
    case SETTING_threads: {
        char *end;
        errno = 0;
        long n = strtol(value, &end, 10);
        if (end == value || *end || errno || n < 1 || n > MAX_THREADS)
            return bad_value(name, value, position, "an integer from 1 to 1024");
        s->threads = (int)n;
        return STO_OK;
    }
    case SETTING_join_algorithm:
        for (size_t i = 0; i < sizeof(join_names) / sizeof(join_names[0]); i++) {
            if (strcasecmp(value, join_names[i]) == 0) {
                s->join_algorithm = (eng_join_algorithm)i;
                return STO_OK;
            }
        }
        return bad_value(name, value, position, "auto, hash, radix or sortmerge");
    case SETTING_memory_limit: {
        uint64_t bytes;
        if (!parse_memory(value, &bytes))
            return bad_value(name, value, position,
                             "a size of at least 1MB such as '512MB' or '8GB', or a percentage");
        s->memory_limit = bytes;
        return STO_OK;
    }
    case SETTING_jit_compile_ahead:
        if (!parse_bool(value, &s->jit_compile_ahead))
            return bad_value(name, value, position, "on or off");
        return STO_OK;
    case SETTING_jit_cache:
        if (!parse_bool(value, &s->jit_cache)) return bad_value(name, value, position, "on or off");
        return STO_OK;
    default:
        return unknown(name, position);
    }
}

sto_status eng_settings_reset(eng_settings *s, const char *name, int position)
{
    eng_settings d;
    eng_settings_init(&d);
    switch (find_setting(name)) {
    case SETTING_threads:
        s->threads = d.threads;
        return STO_OK;
    case SETTING_join_algorithm:
        s->join_algorithm = d.join_algorithm;
        return STO_OK;
    case SETTING_memory_limit:
        s->memory_limit = d.memory_limit;
        return STO_OK;
    case SETTING_jit_compile_ahead:
        s->jit_compile_ahead = d.jit_compile_ahead;
        return STO_OK;
    case SETTING_jit_cache:
        s->jit_cache = d.jit_cache;
        return STO_OK;
    default:
        return unknown(name, position);
    }
}

sto_status eng_settings_get(const eng_settings *s, const char *name, char *buf, size_t size,
                            int position)
{
    switch (find_setting(name)) {
    case SETTING_threads:
        snprintf(buf, size, "%d", s->threads);
        return STO_OK;
    case SETTING_join_algorithm:
        snprintf(buf, size, "%s", eng_join_algorithm_name(s->join_algorithm));
        return STO_OK;
    case SETTING_memory_limit:
        format_memory(s->memory_limit, buf, size);
        return STO_OK;
    case SETTING_jit_compile_ahead:
        snprintf(buf, size, "%s", s->jit_compile_ahead ? "on" : "off");
        return STO_OK;
    case SETTING_jit_cache:
        snprintf(buf, size, "%s", s->jit_cache ? "on" : "off");
        return STO_OK;
    default:
        return unknown(name, position);
    }
}
