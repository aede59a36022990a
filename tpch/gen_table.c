/*
 * gen_table.c — the in-memory table sink (see gen_table.h).
 */
#include "tpch/gen_table.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

sto_status tpch_table_schema(tpch_table_id t, sto_schema **out)
{
    const tpch_table_info *info = tpch_table_info_get(t);
    const char *names[32];
    sto_type types[32];
    bool not_null[32];
    for (int c = 0; c < info->column_count; c++) {
        names[c] = info->columns[c].name;
        types[c] = info->columns[c].type;
        /* schema.sql leaves only the nation and region comments nullable */
        not_null[c] = !((t == TPCH_NATION || t == TPCH_REGION) && c == info->column_count - 1);
    }
    return sto_schema_new((uint32_t)info->column_count, names, types, not_null, out);
}

/* Can a column of type `have` hold the generator's values of column `want`? */
static bool column_fits(sto_type have, const tpch_column *want)
{
    switch (want->type.id) {
    case STO_TYPE_INTEGER:
        return have.id == STO_TYPE_INTEGER || have.id == STO_TYPE_BIGINT;
    case STO_TYPE_DECIMAL:
        return have.id == STO_TYPE_DECIMAL && have.scale == 2;
    case STO_TYPE_DATE:
        return have.id == STO_TYPE_DATE;
    default:
        return have.id == STO_TYPE_CHAR || have.id == STO_TYPE_VARCHAR;
    }
}

static sto_status check_schema(const sto_table *t, tpch_table_id id)
{
    const tpch_table_info *info = tpch_table_info_get(id);
    const sto_schema *s = sto_table_schema(t);
    if ((int)s->ncols != info->column_count)
        return sto_error(STO_DATATYPE_MISMATCH, "table for %s has %u columns, TPC-H has %d",
                         info->name, s->ncols, info->column_count);
    for (int c = 0; c < info->column_count; c++)
        if (!column_fits(s->cols[c].type, &info->columns[c]))
            return sto_error(STO_DATATYPE_MISMATCH, "column %d (%s) of %s cannot hold %s", c + 1,
                             s->cols[c].name, info->name, info->columns[c].name);
    return NULL;
}

/* --- one task: a unit range into chunks of its own -------------------------- */

typedef struct chunk_list {
    sto_chunk **items;
    size_t count, cap;
} chunk_list;

typedef struct task {
    int64_t first, last;
    chunk_list out[TPCH_TABLE_COUNT];
} task;

typedef struct table_sink {
    tpch_sink base;
    sto_table *const *tables;
    task *task;
} table_sink;

static sto_status push_chunk(chunk_list *l, sto_chunk *c)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sto_chunk **items = realloc(l->items, cap * sizeof(*items));
        if (!items) return sto_error_oom();
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = c;
    return NULL;
}

static sto_status table_row(tpch_sink *self, tpch_table_id t, const tpch_value *v)
{
    table_sink *s = (table_sink *)self;
    chunk_list *l = &s->task->out[t];
    sto_chunk *c = l->count ? l->items[l->count - 1] : NULL;
    if (!c || sto_chunk_full(c)) {
        STO_TRY(sto_table_new_chunk(s->tables[t], STO_CHUNK_ROWS, &c));
        sto_status st = push_chunk(l, c);
        if (st) {
            sto_chunk_free(c);
            return st;
        }
    }
    const sto_schema *schema = c->schema;
    uint32_t row = c->rows;
    for (uint32_t i = 0; i < schema->ncols; i++) {
        sto_type type = schema->cols[i].type;
        switch (type.id) {
        case STO_TYPE_INTEGER:
        case STO_TYPE_DATE:
            ((int32_t *)c->cols[i])[row] = (int32_t)v[i].i;
            break;
        case STO_TYPE_BIGINT:
        case STO_TYPE_DECIMAL:
            ((int64_t *)c->cols[i])[row] = v[i].i;
            break;
        default: {
            uint32_t len = v[i].len;
            if (!sto_string_fit(type, v[i].s, &len))
                return sto_error(STO_STRING_DATA_RIGHT_TRUNCATION, "value too long for column %s",
                                 schema->cols[i].name);
            if (!sto_chunk_make_str(c, v[i].s, len, &((sto_str *)c->cols[i])[row]))
                return sto_error_oom();
        }
        }
        if (c->validity[i]) sto_bitmap_set(c->validity[i], row);
    }
    sto_chunk_set_rows(c, row + 1);
    return NULL;
}

typedef struct job {
    const tpch_gen *g;
    unsigned tables;
    sto_table *const *targets;
    task *tasks;
    int ntasks;
    int next;
    sto_status error;
    const atomic_int *cancel; /* NULL: not cancelable */
    pthread_mutex_t lock;
} job;

static void *job_worker(void *arg)
{
    job *j = arg;
    table_sink sink = {{table_row}, j->targets, NULL};
    for (;;) {
        pthread_mutex_lock(&j->lock);
        if (!j->error && j->cancel && atomic_load_explicit(j->cancel, memory_order_relaxed))
            j->error = sto_error(STO_QUERY_CANCELED, "canceling statement due to user request");
        int i = j->error ? j->ntasks : j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->ntasks) break;
        sink.task = &j->tasks[i];
        sto_status st =
            tpch_gen_rows(j->g, j->tables, sink.task->first, sink.task->last, &sink.base);
        for (int t = 0; !st && t < TPCH_TABLE_COUNT; t++)
            for (size_t k = 0; k < sink.task->out[t].count; k++)
                sto_chunk_seal(sink.task->out[t].items[k]); /* statistics, in parallel */
        if (st) {
            pthread_mutex_lock(&j->lock);
            if (!j->error)
                j->error = st;
            else
                sto_status_free(st);
            pthread_mutex_unlock(&j->lock);
        }
    }
    return NULL;
}

/* Units per task: about four chunks of rows of the larger table. */
static int64_t task_units(tpch_table_id unit_table)
{
    switch (unit_table) {
    case TPCH_PART:
    case TPCH_ORDERS:
        return 65536;
    default:
        return 4 * (int64_t)STO_CHUNK_ROWS;
    }
}

/* Generates one unit table's tables; appends them all or none. */
static sto_status gen_pass(const tpch_gen *g, tpch_table_id unit_table, unsigned tables, int parts,
                           int part, int threads, sto_table *const targets[],
                           const atomic_int *cancel)
{
    int64_t first = 0, last = tpch_gen_units(g, unit_table);
    if (unit_table != TPCH_NATION && unit_table != TPCH_REGION)
        tpch_split_units(last, parts, part, &first, &last);
    int64_t per = task_units(unit_table);
    int64_t ntasks = (last - first + per - 1) / per;
    job j;
    memset(&j, 0, sizeof(j));
    j.g = g;
    j.tables = tables;
    j.targets = targets;
    j.cancel = cancel;
    j.ntasks = (int)ntasks;
    j.tasks = calloc(ntasks > 0 ? (size_t)ntasks : 1, sizeof(task));
    if (!j.tasks) return sto_error_oom();
    for (int i = 0; i < j.ntasks; i++) {
        j.tasks[i].first = first + i * per;
        j.tasks[i].last = j.tasks[i].first + per < last ? j.tasks[i].first + per : last;
    }
    pthread_mutex_init(&j.lock, NULL);
    pthread_t tid[256];
    int started = 0;
    if (threads > j.ntasks) threads = j.ntasks > 0 ? j.ntasks : 1;
    for (int i = 1; i < threads && i < 256; i++)
        if (pthread_create(&tid[started], NULL, job_worker, &j) == 0) started++;
    job_worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);

    /* all chunks of a table in task order, appended in one step */
    sto_status st = j.error;
    for (int t = 0; !st && t < TPCH_TABLE_COUNT; t++) {
        if (!(tables & TPCH_BIT(t))) continue;
        chunk_list all = {0};
        for (int i = 0; !st && i < j.ntasks; i++)
            for (size_t k = 0; !st && k < j.tasks[i].out[t].count; k++)
                st = push_chunk(&all, j.tasks[i].out[t].items[k]);
        if (!st) st = sto_table_append_chunks(targets[t], all.items, all.count);
        if (!st) /* the table owns them now */
            for (int i = 0; i < j.ntasks; i++)
                j.tasks[i].out[t].count = 0;
        free(all.items);
    }
    for (int i = 0; i < j.ntasks; i++) {
        for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
            for (size_t k = 0; k < j.tasks[i].out[t].count; k++)
                sto_chunk_free(j.tasks[i].out[t].items[k]);
            free(j.tasks[i].out[t].items);
        }
    }
    free(j.tasks);
    return st;
}

sto_status tpch_gen_tables(const tpch_gen *g, unsigned tables, int parts, int part, int threads,
                           sto_table *const targets[TPCH_TABLE_COUNT])
{
    return tpch_gen_tables_cancelable(g, tables, parts, part, threads, targets, NULL);
}

sto_status tpch_gen_tables_cancelable(const tpch_gen *g, unsigned tables, int parts, int part,
                                      int threads, sto_table *const targets[TPCH_TABLE_COUNT],
                                      const atomic_int *cancel)
{
    if (parts < 1) parts = 1;
    if (part < 1 || part > parts)
        return sto_error(STO_INVALID_PARAMETER_VALUE, "part %d is outside 1..%d", part, parts);
    if (threads < 1) threads = 1;
    for (int t = 0; t < TPCH_TABLE_COUNT; t++) {
        if (!(tables & TPCH_BIT(t))) continue;
        if (!targets[t])
            return sto_error(STO_INTERNAL_ERROR, "no table given for %s",
                             tpch_table_info_get((tpch_table_id)t)->name);
        STO_TRY(check_schema(targets[t], (tpch_table_id)t));
    }
    /* Tables already filled stay filled if a later pass fails; note their
     * row counts so a failure undoes everything. */
    uint64_t before[TPCH_TABLE_COUNT] = {0};
    for (int t = 0; t < TPCH_TABLE_COUNT; t++)
        if (tables & TPCH_BIT(t)) before[t] = sto_table_rows(targets[t]);
    sto_status st = NULL;
    for (int u = 0; u < TPCH_TABLE_COUNT && !st; u++) {
        unsigned pass = 0;
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if ((tables & TPCH_BIT(t)) &&
                (int)tpch_table_info_get((tpch_table_id)t)->unit_table == u)
                pass |= TPCH_BIT(t);
        if (pass) st = gen_pass(g, (tpch_table_id)u, pass, parts, part, threads, targets, cancel);
    }
    if (st)
        for (int t = 0; t < TPCH_TABLE_COUNT; t++)
            if (tables & TPCH_BIT(t)) sto_table_truncate(targets[t], before[t]);
    return st;
}
