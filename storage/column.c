/*
 * column.c — schemas: construction, copying, lookup (see column.h).
 */
#include "storage/column.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void sto_schema_free(sto_schema *s)
{
    if (!s) return;
    for (uint32_t i = 0; i < s->ncols; i++)
        free(s->cols[i].name);
    free(s->cols);
    free(s);
}

static sto_status check_type(const char *name, sto_type t)
{
    if (t.id >= STO_TYPE_COUNT)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "column \"%s\": unknown type id %u", name,
                         t.id);
    if (t.id == STO_TYPE_DECIMAL &&
        (t.precision < 1 || t.precision > STO_DECIMAL_MAX_PRECISION || t.scale > t.precision))
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "column \"%s\": DECIMAL(%u,%u) needs 1 <= precision <= %d and "
                         "0 <= scale <= precision",
                         name, t.precision, t.scale, STO_DECIMAL_MAX_PRECISION);
    return STO_OK;
}

sto_status sto_schema_new(uint32_t ncols, const char *const *names, const sto_type *types,
                          const bool *not_null, sto_schema **out)
{
    *out = NULL;
    for (uint32_t i = 0; i < ncols; i++) {
        if (!names[i] || !names[i][0])
            return sto_error(STO_INVALID_NAME, "column %u has no name", i + 1);
        STO_TRY(check_type(names[i], types[i]));
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return sto_error(STO_DUPLICATE_COLUMN, "column \"%s\" specified more than once",
                                 names[i]);
    }
    sto_schema *s = calloc(1, sizeof(*s));
    if (!s) return sto_error_oom();
    s->cols = calloc(ncols ? ncols : 1, sizeof(*s->cols));
    if (!s->cols) {
        free(s);
        return sto_error_oom();
    }
    for (uint32_t i = 0; i < ncols; i++) {
        s->cols[i].name = strdup(names[i]);
        if (!s->cols[i].name) {
            sto_schema_free(s);
            return sto_error_oom();
        }
        s->ncols = i + 1;
        s->cols[i].type = types[i];
        s->cols[i].not_null = not_null ? not_null[i] : false;
    }
    *out = s;
    return STO_OK;
}

sto_status sto_schema_copy(const sto_schema *s, sto_schema **out)
{
    *out = NULL;
    const char **names = calloc(s->ncols ? s->ncols : 1, sizeof(*names));
    sto_type *types = calloc(s->ncols ? s->ncols : 1, sizeof(*types));
    bool *nn = calloc(s->ncols ? s->ncols : 1, sizeof(*nn));
    sto_status st = STO_OK;
    if (!names || !types || !nn) {
        st = sto_error_oom();
        goto done;
    }
    for (uint32_t i = 0; i < s->ncols; i++) {
        names[i] = s->cols[i].name;
        types[i] = s->cols[i].type;
        nn[i] = s->cols[i].not_null;
    }
    st = sto_schema_new(s->ncols, names, types, nn, out);
done:
    free(names);
    free(types);
    free(nn);
    return st;
}

int sto_schema_find(const sto_schema *s, const char *name)
{
    for (uint32_t i = 0; i < s->ncols; i++)
        if (strcmp(s->cols[i].name, name) == 0) return (int)i;
    return -1;
}

bool sto_schema_equal(const sto_schema *a, const sto_schema *b)
{
    if (a == b) return true;
    if (a->ncols != b->ncols) return false;
    for (uint32_t i = 0; i < a->ncols; i++) {
        const sto_column_def *x = &a->cols[i], *y = &b->cols[i];
        if (strcmp(x->name, y->name) != 0 || x->not_null != y->not_null ||
            x->type.id != y->type.id || x->type.precision != y->type.precision ||
            x->type.scale != y->type.scale || x->type.length != y->type.length)
            return false;
    }
    return true;
}

/* Characters in UTF-8 bytes: every byte that is not a continuation byte. */
static size_t utf8_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

bool sto_string_fit(sto_type t, const char *s, uint32_t *len)
{
    uint32_t n = *len;
    if (t.id == STO_TYPE_CHAR)
        while (n > 0 && s[n - 1] == ' ')
            n--;
    *len = n;
    /* Bytes bound characters from above, so most values stop here. */
    if (t.length == 0 || n <= t.length) return true;
    if (utf8_chars(s, n) <= t.length) return true;
    /* Too many characters: find where the t.length-th one ends. */
    size_t chars = 0, cut = 0;
    for (cut = 0; cut < n; cut++) {
        if (((unsigned char)s[cut] & 0xC0) != 0x80) {
            if (chars == t.length) break;
            chars++;
        }
    }
    for (size_t i = cut; i < n; i++)
        if (s[i] != ' ') return false;
    *len = (uint32_t)cut;
    return true;
}
