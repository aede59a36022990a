/*
 * exec_setop.h — the executor's part of set operations: what happens to a
 * pipeline's rows between its run and the next pipeline's.
 *
 * physical_setop.c plans UNION / INTERSECT / EXCEPT [ALL] as row sinks and
 * a hash aggregation; two things are left that no generated code does:
 * appending the right input's rows to the left input's (concat_from), and
 * keeping each counted group as often as the set operation says
 * (count_setop). eng_exec_setop_rows does both on the rowsets in place,
 * after the pipeline ran and before anything reads its rows.
 */
#ifndef RACKDB_ENGINE_EXEC_SETOP_H
#define RACKDB_ENGINE_EXEC_SETOP_H

#include "engine/physical.h"
#include "engine/rt_result.h"

/* outs[i] is what pipeline p (the i-th) made; outs[j] for j < i what
 * earlier ones made. Appends and consumes outs[p->concat_from - 1] when
 * set, then filters or repeats the rows of outs[i] for p->count_setop.
 * Errors: out of memory (53200 past the memory limit), 57014 on cancel. */
sto_status eng_exec_setop_rows(const eng_pipe *p, eng_rowset *outs, unsigned i, atomic_int *cancel);

#endif
