/*
 * status.h — errors as values, for every layer of rackdb.
 *
 * A function that can fail returns an sto_status: NULL means success, and
 * anything else is a heap-allocated error carrying a SQLSTATE (the
 * five-character code PostgreSQL clients understand), a message for humans
 * and, where the error belongs to a spot in the statement text, a 1-based
 * character position (0 = none). Callers either handle the error or return
 * it upward unchanged; whoever finally reports it frees it.
 *
 * This lives in storage/ because storage/ is the bottom layer and every
 * layer above must speak the same error type. When memory is too short to
 * build an error, the constructors return a shared, read-only "out of
 * memory" status that sto_status_free recognizes and leaves alone.
 */
#ifndef RACKDB_STORAGE_STATUS_H
#define RACKDB_STORAGE_STATUS_H

#include <stdarg.h>

/* SQLSTATE codes rackdb raises, named once (PostgreSQL's codes). */
#define STO_SQLSTATE_LIST(X)                                                                       \
    X(SUCCESS, "00000")                                                                            \
    X(FEATURE_NOT_SUPPORTED, "0A000")                                                              \
    X(CARDINALITY_VIOLATION, "21000")                                                              \
    X(NOT_NULL_VIOLATION, "23502")                                                                 \
    X(STRING_DATA_RIGHT_TRUNCATION, "22001")                                                       \
    X(NUMERIC_VALUE_OUT_OF_RANGE, "22003")                                                         \
    X(INVALID_DATETIME_FORMAT, "22007")                                                            \
    X(DATETIME_FIELD_OVERFLOW, "22008")                                                            \
    X(DIVISION_BY_ZERO, "22012")                                                                   \
    X(INVALID_PARAMETER_VALUE, "22023")                                                            \
    X(BAD_COPY_FILE_FORMAT, "22P04")                                                               \
    X(INVALID_TEXT_REPRESENTATION, "22P02")                                                        \
    X(INVALID_ESCAPE_SEQUENCE, "22025")                                                            \
    X(DATA_EXCEPTION, "22000")                                                                     \
    X(INVALID_ARGUMENT_FOR_LOGARITHM, "2201E")                                                     \
    X(INVALID_ARGUMENT_FOR_POWER_FUNCTION, "2201F")                                                \
    X(INVALID_NAME, "42602")                                                                       \
    X(SYNTAX_ERROR, "42601")                                                                       \
    X(UNDEFINED_COLUMN, "42703")                                                                   \
    X(UNDEFINED_TABLE, "42P01")                                                                    \
    X(UNDEFINED_FUNCTION, "42883")                                                                 \
    X(UNDEFINED_OBJECT, "42704")                                                                   \
    X(AMBIGUOUS_COLUMN, "42702")                                                                   \
    X(DUPLICATE_TABLE, "42P07")                                                                    \
    X(DUPLICATE_COLUMN, "42701")                                                                   \
    X(DATATYPE_MISMATCH, "42804")                                                                  \
    X(GROUPING_ERROR, "42803")                                                                     \
    X(INVALID_COLUMN_REFERENCE, "42P10")                                                           \
    X(WRONG_OBJECT_TYPE, "42809")                                                                  \
    X(DEPENDENT_OBJECTS_STILL_EXIST, "2BP01")                                                      \
    X(PROGRAM_LIMIT_EXCEEDED, "54000")                                                             \
    X(STATEMENT_TOO_COMPLEX, "54001")                                                              \
    X(TOO_MANY_ARGUMENTS, "54023")                                                                 \
    X(OUT_OF_MEMORY, "53200")                                                                      \
    X(DISK_FULL, "53100")                                                                          \
    X(QUERY_CANCELED, "57014")                                                                     \
    X(IO_ERROR, "58030")                                                                           \
    X(UNDEFINED_FILE, "58P01")                                                                     \
    X(PROTOCOL_VIOLATION, "08P01")                                                                 \
    X(CONNECTION_FAILURE, "08006")                                                                 \
    X(DATA_CORRUPTED, "XX001")                                                                     \
    X(INTERNAL_ERROR, "XX000")

#define STO_SQLSTATE_DEFINE(name, code) static const char STO_##name[] = code;
STO_SQLSTATE_LIST(STO_SQLSTATE_DEFINE)
#undef STO_SQLSTATE_DEFINE

typedef struct sto_status_s *sto_status;

struct sto_status_s {
    char sqlstate[6]; /* five characters and a NUL */
    int position;     /* 1-based character offset in the statement, 0 = none */
    char message[];   /* NUL-terminated, for humans */
};

#define STO_OK ((sto_status)0)

/* A new error with a printf-style message. Never returns NULL. */
sto_status sto_error(const char *sqlstate, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The same, tied to a position in the statement text. */
sto_status sto_error_at(const char *sqlstate, int position, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* va_list form of sto_error_at, for wrappers. */
sto_status sto_error_v(const char *sqlstate, int position, const char *fmt, va_list ap);

/* The shared out-of-memory status (never freed). */
sto_status sto_error_oom(void);

/* Adds context in front of the message: "<prefix>: <old message>". Frees the
 * old status; returns the new one (or the old one if memory ran out). */
sto_status sto_status_wrap(sto_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Frees an error; NULL and the shared out-of-memory status are left alone. */
void sto_status_free(sto_status st);

/* Propagate an error to the caller. */
#define STO_TRY(expr)                                                                              \
    do {                                                                                           \
        sto_status try_st_ = (expr);                                                               \
        if (try_st_) return try_st_;                                                               \
    } while (0)

#endif
