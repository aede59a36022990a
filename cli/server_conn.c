/*
 * server_conn.c — one client connection, from the startup packet to
 * Terminate, on its own thread.
 *
 * States: STARTUP (SSLRequest answered 'S' and TLS set up when the server
 * has a certificate, else 'N'; GSSENCRequest answered 'N'; CancelRequest
 * served and the socket closed), AUTH (trust, or SCRAM-SHA-256 when the
 * server has a password file), then the message loop. In the loop a Query
 * runs its statements one at a time (each with its own RowDescription,
 * DataRows and CommandComplete; an error ends the rest) and ends with
 * ReadyForQuery. The extended protocol (Parse, Bind, Describe, Execute,
 * Close, Flush, Sync) keeps named prepared statements and portals; after an
 * error every message up to Sync is skipped. A portal runs its statement
 * once, on the first Describe or Execute, keeps the rows and hands them out
 * max_rows at a time (PortalSuspended in between).
 *
 * COPY FROM STDIN / TO STDOUT: the session's COPY data channel
 * (rackdb_session_set_copy_io) is served here with the COPY sub-protocol —
 * CopyInResponse then CopyData until CopyDone/CopyFail, or CopyOutResponse,
 * CopyData and CopyDone — while the engine's statement runs; copy messages
 * that arrive after a failed COPY are dropped.
 *
 * Transactions: rackdb makes every statement durable on its own, so BEGIN,
 * COMMIT and ROLLBACK only drive the status byte of ReadyForQuery as
 * PostgreSQL does: 'T' after BEGIN; an error inside the block makes it 'E',
 * where everything but COMMIT/ROLLBACK fails with 25P02 until the block ends.
 *
 * Output is collected in c->out and sent before the thread blocks for input
 * (and whenever it grows large), so a pipelining client gets all its answers
 * without a round trip per message.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/server.h"
#include "cli/server_cluster.h"
#include "net/pgwire/params.h"
#include "net/pgwire/scram.h"
#include "net/pgwire/values.h"

#define FLUSH_AT          (256u << 10)
#define STARTUP_TIMEOUT_S 60

/* An error to report: from the engine, from the codec or made up here. */
typedef struct srv_err {
    char sqlstate[6];
    char message[512];
    int position;
    bool malformed; /* a message that cannot be decoded: close the connection */
} srv_err;

static void err_set(srv_err *e, const char *sqlstate, int position, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void err_set(srv_err *e, const char *sqlstate, int position, const char *fmt, ...)
{
    snprintf(e->sqlstate, sizeof(e->sqlstate), "%s", sqlstate);
    e->position = position;
    e->malformed = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

/* Takes st. */
static void err_from_status(srv_err *e, sto_status st)
{
    err_set(e, st->sqlstate, st->position, "%s", st->message);
    sto_status_free(st);
}

/* Takes re. */
static void err_from_engine(srv_err *e, rackdb_error *re)
{
    err_set(e, rackdb_error_sqlstate(re), rackdb_error_position(re), "%s",
            rackdb_error_message(re));
    rackdb_error_free(re);
}

/* --- socket I/O --------------------------------------------------------------- */

static bool flush_out(srv_conn *c)
{
    size_t done = 0;
    while (done < c->out.len) {
        ssize_t n = c->tls ? srv_tls_send(c, c->out.data + done, c->out.len - done)
                           : send(c->fd, c->out.data + done, c->out.len - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR && !c->tls) continue;
        if (n <= 0) {
            atomic_store(&c->peer_gone, true);
            pgw_buf_clear(&c->out);
            return false;
        }
        done += (size_t)n;
    }
    pgw_buf_clear(&c->out);
    return true;
}

static void flush_if_large(srv_conn *c)
{
    if (c->out.len >= FLUSH_AT) flush_out(c);
}

/* Receives more bytes, making room for at least `want` unread bytes. */
static bool read_more(srv_conn *c, size_t want)
{
    if (c->in_pos > 0) {
        memmove(c->in, c->in + c->in_pos, c->in_len - c->in_pos);
        c->in_len -= c->in_pos;
        c->in_pos = 0;
    }
    if (want < c->in_len + 8192) want = c->in_len + 8192;
    if (want > c->in_cap) {
        char *p = realloc(c->in, want);
        if (!p) return false;
        c->in = p;
        c->in_cap = want;
    }
    for (;;) {
        ssize_t n = c->tls ? srv_tls_recv(c, c->in + c->in_len, c->in_cap - c->in_len)
                           : recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (n < 0 && errno == EINTR && !c->tls) continue;
        if (n <= 0) return false;
        c->in_len += (size_t)n;
        return true;
    }
}

static void send_error(srv_conn *c, const char *severity, const srv_err *e)
{
    pgw_put_error(&c->out, false, severity, e->sqlstate, e->message, e->position);
}

/* Logs a fatal protocol problem, tells the client and flushes. */
static void fatal(srv_conn *c, const srv_err *e)
{
    fprintf(stderr, "rackdb server: connection %d (%s): FATAL %s: %s\n", c->pid, c->peer,
            e->sqlstate, e->message);
    send_error(c, "FATAL", e);
    flush_out(c);
}

typedef enum { MSG_OK, MSG_CLOSED, MSG_BAD } msg_result;

/* The next regular message: type, body and body length. */
static msg_result next_message(srv_conn *c, char *type, const char **body, size_t *len)
{
    for (;;) {
        size_t total = 0;
        sto_status st = STO_OK;
        pgw_frame_result fr =
            pgw_frame(c->in + c->in_pos, c->in_len - c->in_pos, c->srv->max_message, &total, &st);
        if (fr == PGW_FRAME_BAD) {
            srv_err e;
            err_from_status(&e, st);
            fatal(c, &e);
            return MSG_BAD;
        }
        if (fr == PGW_FRAME_OK) {
            const char *m = c->in + c->in_pos;
            *type = m[0];
            *body = m + 5;
            *len = total - 5;
            c->in_pos += total;
            return MSG_OK;
        }
        if (c->out.len && !flush_out(c)) return MSG_CLOSED;
        size_t want = 0;
        if (c->in_len - c->in_pos >= 5) {
            const unsigned char *h = (const unsigned char *)c->in + c->in_pos + 1;
            want = ((size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3]) + 1;
        }
        if (!read_more(c, want)) return MSG_CLOSED;
    }
}

/* --- COPY FROM STDIN / TO STDOUT ------------------------------------------------------ */

/* The engine asks for COPY data through these (rackdb_copy_io); they speak
 * the COPY sub-protocol on the connection. */
static int copy_begin(void *arg, rackdb_copy_dir dir, uint32_t columns, bool csv)
{
    srv_conn *c = arg;
    (void)csv; /* CSV is text too: format 0 */
    uint16_t n = columns > UINT16_MAX ? UINT16_MAX : (uint16_t)columns;
    if (dir == RACKDB_COPY_OUT) {
        pgw_put_copy_out_response(&c->out, n);
        c->copy_out = true;
        return 0;
    }
    c->copy_in_ended = false;
    c->copy_pending = NULL;
    c->copy_pending_len = 0;
    pgw_put_copy_in_response(&c->out, n);
    return flush_out(c) ? 0 : -1;
}

/* Hands out CopyData bytes until CopyDone (0) or CopyFail (-1). The data
 * stays in c->in until the next message is read, so it is copied once,
 * into the engine's buffer. */
static long copy_read(void *arg, char *buf, size_t cap, const char **message)
{
    srv_conn *c = arg;
    while (!c->copy_pending_len) {
        if (c->copy_in_ended) return 0;
        char type;
        const char *body;
        size_t len;
        if (next_message(c, &type, &body, &len) != MSG_OK) {
            atomic_store(&c->peer_gone, true);
            *message = "the connection was lost";
            return -1;
        }
        switch (type) {
        case 'd':
            c->copy_pending = body;
            c->copy_pending_len = len;
            break;
        case 'c':
            c->copy_in_ended = true;
            return 0;
        case 'f': {
            const char *m = "";
            sto_status st = pgw_read_copy_fail(body, len, &m);
            snprintf(c->copy_fail, sizeof(c->copy_fail), "%s", st ? "malformed CopyFail" : m);
            sto_status_free(st);
            *message = c->copy_fail;
            return -1;
        }
        case 'H': /* Flush and Sync mean nothing during COPY IN (as in PostgreSQL) */
        case 'S':
            break;
        default:
            snprintf(c->copy_fail, sizeof(c->copy_fail),
                     "unexpected message type 0x%02x during COPY from stdin", (unsigned char)type);
            *message = c->copy_fail;
            return -1;
        }
    }
    size_t n = c->copy_pending_len < cap ? c->copy_pending_len : cap;
    memcpy(buf, c->copy_pending, n);
    c->copy_pending += n;
    c->copy_pending_len -= n;
    return (long)n;
}

static int copy_write(void *arg, const char *data, size_t len)
{
    srv_conn *c = arg;
    if (atomic_load(&c->peer_gone)) return -1;
    pgw_put_copy_data(&c->out, data, len);
    if (c->out.oom) return -1;
    flush_if_large(c);
    return atomic_load(&c->peer_gone) ? -1 : 0;
}

/* --- startup and authentication --------------------------------------------------- */

static void put_parameter_statuses(srv_conn *c)
{
    char version[64];
    snprintf(version, sizeof(version), SRV_SERVER_VERSION " (rackdb %s)", rackdb_version());
    static const char *const fixed[][2] = {
        {"server_encoding", "UTF8"},
        {"client_encoding", "UTF8"},
        {"DateStyle", "ISO, MDY"},
        {"integer_datetimes", "on"},
        {"IntervalStyle", "postgres"},
        {"is_superuser", "on"},
        {"standard_conforming_strings", "on"},
        {"TimeZone", "UTC"},
    };
    pgw_put_parameter_status(&c->out, "server_version", version);
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        pgw_put_parameter_status(&c->out, fixed[i][0], fixed[i][1]);
    pgw_put_parameter_status(&c->out, "session_authorization", c->user);
    pgw_put_parameter_status(&c->out, "application_name", c->info.application_name);
}

/* SCRAM-SHA-256: AuthenticationSASL, two rounds, AuthenticationSASLFinal. */
static bool authenticate(srv_conn *c)
{
    srv_err e;
    pgw_scram scram;
    sto_status st = pgw_scram_begin(&scram, c->user, srv_password_of(c->srv, c->user));
    if (st) {
        err_from_status(&e, st);
        fatal(c, &e);
        pgw_scram_end(&scram);
        return false;
    }
    bool ok = false;
    pgw_put_auth_sasl(&c->out, PGW_SCRAM_MECHANISM);
    char type;
    const char *body, *mech, *data;
    size_t len, dlen;
    if (next_message(c, &type, &body, &len) != MSG_OK) goto out;
    if (type != 'p') {
        err_set(&e, STO_PROTOCOL_VIOLATION, 0, "expected SASL response, got message type %d", type);
        goto fail;
    }
    if ((st = pgw_read_sasl_initial(body, len, &mech, &data, &dlen))) goto fail_st;
    if (strcmp(mech, PGW_SCRAM_MECHANISM) != 0) {
        err_set(&e, STO_PROTOCOL_VIOLATION, 0,
                "client selected an invalid SASL authentication mechanism");
        goto fail;
    }
    pgw_buf reply = {0};
    st = pgw_scram_server_first(&scram, data, dlen, &reply);
    if (!st) pgw_put_auth_sasl_continue(&c->out, reply.data, reply.len);
    pgw_buf_free(&reply);
    if (st) goto fail_st;
    if (next_message(c, &type, &body, &len) != MSG_OK) goto out;
    if (type != 'p') {
        err_set(&e, STO_PROTOCOL_VIOLATION, 0, "expected SASL response, got message type %d", type);
        goto fail;
    }
    st = pgw_scram_server_final(&scram, body, len, &reply);
    if (!st) pgw_put_auth_sasl_final(&c->out, reply.data, reply.len);
    pgw_buf_free(&reply);
    if (st) goto fail_st;
    ok = true;
    goto out;
fail_st:
    err_from_status(&e, st);
fail:
    fatal(c, &e);
out:
    pgw_scram_end(&scram);
    return ok;
}

/* Reads startup packets until a StartupMessage; false when the connection
 * ends here (cancel request, refusal, error). */
static bool startup(srv_conn *c)
{
    srv_err e;
    for (;;) {
        size_t total = 0;
        sto_status st = STO_OK;
        pgw_frame_result fr =
            pgw_frame_startup(c->in + c->in_pos, c->in_len - c->in_pos, &total, &st);
        if (fr == PGW_FRAME_BAD) {
            err_from_status(&e, st);
            fatal(c, &e);
            return false;
        }
        if (fr == PGW_FRAME_NEED_MORE) {
            if (!read_more(c, 0)) return false;
            continue;
        }
        pgw_startup s;
        const char *pkt = c->in + c->in_pos;
        c->in_pos += total;
        if ((st = pgw_read_startup(pkt, total, &s))) {
            err_from_status(&e, st);
            fatal(c, &e);
            return false;
        }
        if (s.code == PGW_SSL_CODE && c->srv->tls && !c->tls) {
            /* Bytes the client sent after its SSLRequest would bypass the
             * handshake (PostgreSQL's CVE-2021-23214): refuse them. */
            if (c->in_pos != c->in_len) {
                err_set(&e, "08P01", 0, "received unencrypted data after SSL request");
                fatal(c, &e);
                return false;
            }
            pgw_buf_append(&c->out, "S", 1);
            if (!flush_out(c)) return false;
            char why[256];
            if (!srv_tls_accept(c, why, sizeof(why))) {
                fprintf(stderr, "rackdb server: %s: TLS handshake failed: %s\n", c->peer, why);
                return false;
            }
            continue;
        }
        if (s.code == PGW_SSL_CODE || s.code == PGW_GSSENC_CODE) {
            pgw_buf_append(&c->out, "N", 1);
            if (!flush_out(c)) return false;
            continue;
        }
        if (s.code == PGW_CANCEL_CODE) {
            srv_cancel(c->srv, s.cancel_pid, s.cancel_key);
            return false;
        }
        const char *user = pgw_startup_param(&s, "user");
        if (!user || !*user) {
            err_set(&e, "28000", 0, "no PostgreSQL user name specified in startup packet");
            fatal(c, &e);
            return false;
        }
        const char *db = pgw_startup_param(&s, "database");
        const char *app = pgw_startup_param(&s, "application_name");
        const char *enc = pgw_startup_param(&s, "client_encoding");
        const char *options = pgw_startup_param(&s, "options");
        snprintf(c->options, sizeof(c->options), "%s", options ? options : "");
        snprintf(c->user, sizeof(c->user), "%s", user);
        snprintf(c->database, sizeof(c->database), "%s", db && *db ? db : user);
        snprintf(c->info.application_name, sizeof(c->info.application_name), "%s", app ? app : "");
        if (enc && strcasecmp(enc, "UTF8") && strcasecmp(enc, "UTF-8") &&
            strcasecmp(enc, "SQL_ASCII") && strcasecmp(enc, "auto")) {
            err_set(&e, "22023", 0, "invalid value for parameter \"client_encoding\": \"%s\"", enc);
            fatal(c, &e);
            return false;
        }
        return true;
    }
}

/* Applies the startup parameter `options` ("-c threads=4 --memory_limit=8GB",
 * as PGOPTIONS sends it) to the session; false with *e set when a setting is
 * unknown or its value invalid. */
static bool apply_options(srv_conn *c, const char *options, srv_err *e)
{
    char *copy = strdup(options), *save = NULL;
    if (!copy) {
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        return false;
    }
    bool ok = true, expect_c = false;
    for (char *tok = strtok_r(copy, " \t", &save); ok && tok; tok = strtok_r(NULL, " \t", &save)) {
        char *setting = NULL;
        if (expect_c)
            setting = tok, expect_c = false;
        else if (!strcmp(tok, "-c"))
            expect_c = true;
        else if (!strncmp(tok, "-c", 2))
            setting = tok + 2;
        else if (!strncmp(tok, "--", 2))
            setting = tok + 2;
        else {
            err_set(e, "22023", 0, "invalid command-line argument for server process: %s", tok);
            ok = false;
        }
        if (!setting) continue;
        char *eq = strchr(setting, '=');
        if (!eq) {
            err_set(e, "22023", 0, "-c %s requires a value", setting);
            ok = false;
            break;
        }
        *eq = '\0';
        for (char *p = setting; *p; p++)
            if (*p == '-') *p = '_';
        rackdb_error *re = NULL;
        if (rackdb_session_set(c->session, setting, eq + 1, &re) != RACKDB_OK) {
            err_from_engine(e, re);
            ok = false;
        }
    }
    free(copy);
    return ok;
}

/* --- running statements ------------------------------------------------------------ */

/* The first word of a statement, lowercased, into buf. */
static void first_word(const char *sql, char *buf, size_t cap)
{
    size_t skip = 0, len = strlen(sql);
    /* blanks and comments */
    while (skip < len && rackdb_is_blank(sql, skip + 1))
        skip++;
    while (skip < len && !isalpha((unsigned char)sql[skip]) && sql[skip] != '(')
        skip++;
    size_t n = 0;
    while (skip < len && isalpha((unsigned char)sql[skip]) && n + 1 < cap)
        buf[n++] = (char)tolower((unsigned char)sql[skip++]);
    buf[n] = '\0';
}

static bool is_query_word(const char *w)
{
    return !strcmp(w, "select") || !strcmp(w, "with") || !strcmp(w, "values") ||
           !strcmp(w, "show") || !strcmp(w, "table") || !strcmp(w, "explain") || !*w;
}

/* After a successful statement: the transaction status PostgreSQL would
 * report, with its warnings. */
static void track_transaction(srv_conn *c, const char *tag)
{
    if (!strcmp(tag, "BEGIN")) {
        if (c->txn != 'I')
            pgw_put_error(&c->out, true, "WARNING", "25001",
                          "there is already a transaction in progress", 0);
        c->txn = 'T';
    } else if (!strcmp(tag, "COMMIT") || !strcmp(tag, "ROLLBACK")) {
        if (c->txn == 'I')
            pgw_put_error(&c->out, true, "WARNING", "25P01", "there is no transaction in progress",
                          0);
        c->txn = 'I';
    }
}

/* Runs the one statement in text. *out is NULL when the text was blank.
 * False with *e set on failure (the transaction state is updated). */
static bool run_statement(srv_conn *c, const char *text, srv_result **out, srv_err *e)
{
    *out = NULL;
    char word[16];
    first_word(text, word, sizeof(word));
    if (c->txn == 'E') {
        if (strcmp(word, "rollback") && strcmp(word, "commit") && strcmp(word, "end") &&
            strcmp(word, "abort")) {
            err_set(e, "25P02", 0,
                    "current transaction is aborted, commands ignored until end of "
                    "transaction block");
            return false;
        }
        c->txn = 'I';
        /* The engine's session ends its block too (it restores the settings
         * of BEGIN); its answer is the same tag. */
        const char *rollback = "ROLLBACK";
        rackdb_result *rr = NULL;
        rackdb_error *re = NULL;
        if (rackdb_next(c->session, &rollback, &rr, &re) == RACKDB_ERROR) rackdb_error_free(re);
        rackdb_result_free(rr);
        *out = srv_result_new_tag("ROLLBACK");
        if (!*out) err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        return *out != NULL;
    }
    sto_status st = STO_OK;
    pgw_buf notices = {0};
    bool answered = srv_catalog_answer(c->srv->db, &c->info, text, out, &st, &notices);
    pgw_buf_append(&c->out, notices.data, notices.len);
    pgw_buf_free(&notices);
    if (answered) {
        if (st) {
            err_from_status(e, st);
            goto failed;
        }
        if (!*out) {
            err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
            goto failed;
        }
        return true;
    }
    if (c->srv->cluster) {
        /* queries and CALL dbgen run on the whole cluster */
        atomic_store(&c->busy, true);
        answered = cli_cluster_answer(c->srv->cluster, c->session, text, out, &st);
        atomic_store(&c->busy, false);
        if (answered) {
            if (st) {
                err_from_status(e, st);
                goto failed;
            }
            return true;
        }
    }
    const char *p = text;
    rackdb_result *r = NULL;
    rackdb_error *re = NULL;
    atomic_store(&c->busy, true);
    rackdb_code rc = rackdb_next(c->session, &p, &r, &re);
    atomic_store(&c->busy, false);
    /* COPY TO STDOUT ends with CopyDone, but not when it failed */
    if (c->copy_out && rc == RACKDB_OK) pgw_put_copy_done(&c->out);
    c->copy_out = false;
    if (rc == RACKDB_DONE) return true;
    if (rc == RACKDB_ERROR) {
        err_from_engine(e, re);
        goto failed;
    }
    *out = srv_result_from_engine(r);
    if (!*out) {
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        goto failed;
    }
    track_transaction(c, (*out)->tag);
    return true;
failed:
    if (c->txn == 'T') c->txn = 'E';
    return false;
}

static void log_error(srv_conn *c, const srv_err *e)
{
    fprintf(stderr, "rackdb server: connection %d: ERROR %s: %s\n", c->pid, e->sqlstate,
            e->message);
}

/* RowDescription for r; formats as Bind gave them (NULL: all text). */
static bool put_row_description(srv_conn *c, srv_result *r, uint16_t nformats,
                                const int16_t *formats, srv_err *e)
{
    if (nformats > 1 && nformats != r->ncols) {
        err_set(e, STO_PROTOCOL_VIOLATION, 0,
                "bind message has %u result formats but query has "
                "%u columns",
                nformats, r->ncols);
        return false;
    }
    pgw_field *f = calloc(r->ncols ? r->ncols : 1, sizeof(*f));
    if (!f) {
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        return false;
    }
    for (uint32_t i = 0; i < r->ncols; i++) {
        uint32_t oid = srv_result_oid(r, i);
        int16_t len = -1;
        switch (oid) {
        case PGW_OID_BOOL:
            len = 1;
            break;
        case PGW_OID_INT2:
            len = 2;
            break;
        case PGW_OID_INT4:
        case PGW_OID_DATE:
        case PGW_OID_OID:
        case PGW_OID_FLOAT4:
            len = 4;
            break;
        case PGW_OID_INT8:
        case PGW_OID_FLOAT8:
            len = 8;
            break;
        }
        int16_t fmt = pgw_format_of(nformats, formats, i);
        if (fmt == 1 && !pgw_binary_supported(oid)) {
            free(f);
            err_set(e, STO_FEATURE_NOT_SUPPORTED, 0,
                    "binary output for type oid %u is not supported", oid);
            return false;
        }
        f[i] = (pgw_field){srv_result_name(r, i), oid, len, srv_result_typmod(r, i), fmt};
    }
    pgw_put_row_description(&c->out, (uint16_t)r->ncols, f);
    free(f);
    return true;
}

/* DataRows [from, from + count) of r. */
static bool put_rows(srv_conn *c, srv_result *r, uint64_t from, uint64_t count, uint16_t nformats,
                     const int16_t *formats, srv_err *e)
{
    pgw_buf bin = {0};
    bool ok = true;
    for (uint64_t row = from; ok && row < from + count; row++) {
        size_t m = pgw_data_row_begin(&c->out, (uint16_t)r->ncols);
        for (uint32_t col = 0; col < r->ncols; col++) {
            const char *v = srv_result_text(r, row, col);
            if (!v) {
                pgw_put_value(&c->out, NULL, -1);
            } else if (pgw_format_of(nformats, formats, col) == 1) {
                pgw_buf_clear(&bin);
                sto_status st = pgw_text_to_binary(srv_result_oid(r, col), v, &bin);
                if (st) {
                    err_from_status(e, st);
                    ok = false;
                    break;
                }
                pgw_put_value(&c->out, bin.data, (int32_t)bin.len);
            } else {
                pgw_put_value(&c->out, v, (int32_t)strlen(v));
            }
        }
        if (!ok) {
            c->out.len = m - 1; /* drop the unfinished row */
            break;
        }
        pgw_msg_end(&c->out, m);
        flush_if_large(c);
        if (atomic_load(&c->peer_gone)) break;
    }
    pgw_buf_free(&bin);
    if (ok && c->out.oom) {
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory sending rows");
        pgw_buf_clear(&c->out);
        ok = false;
    }
    return ok;
}

/* Characters (not bytes) in s[0, n): error positions count characters. */
static int char_count(const char *s, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80) k++;
    return k;
}

/* --- simple query -------------------------------------------------------------------- */

static void simple_query(srv_conn *c, const char *sql)
{
    size_t total = strlen(sql);
    /* sql points into c->in, which COPY FROM STDIN reads more messages into */
    char *own = strdup(sql);
    if (!own) {
        srv_err e;
        err_set(&e, STO_OUT_OF_MEMORY, 0, "out of memory");
        send_error(c, "ERROR", &e);
        pgw_put_ready(&c->out, c->txn);
        return;
    }
    sql = own;
    if (rackdb_is_blank(sql, total)) {
        free(own);
        pgw_put_empty_query(&c->out);
        pgw_put_ready(&c->out, c->txn);
        return;
    }
    const char *p = sql;
    for (;;) {
        size_t rest = total - (size_t)(p - sql);
        if (rackdb_is_blank(p, rest)) break;
        size_t len = rackdb_statement_length(p, rest);
        if (len == 0) len = rest;
        char *stmt = strndup(p, len);
        srv_err e;
        srv_result *r = NULL;
        if (!stmt) {
            err_set(&e, STO_OUT_OF_MEMORY, 0, "out of memory");
            send_error(c, "ERROR", &e);
            break;
        }
        bool ok = run_statement(c, stmt, &r, &e);
        free(stmt);
        if (ok && r) {
            if (r->has_rows)
                ok = put_row_description(c, r, 0, NULL, &e) &&
                     put_rows(c, r, 0, srv_result_rows(r), 0, NULL, &e);
            if (ok) pgw_put_command_complete(&c->out, r->tag);
        }
        srv_result_free(r);
        if (!ok) {
            if (e.position > 0) e.position += char_count(sql, (size_t)(p - sql));
            log_error(c, &e);
            send_error(c, "ERROR", &e);
            break;
        }
        p += len;
        if (atomic_load(&c->peer_gone)) {
            free(own);
            return;
        }
    }
    free(own);
    pgw_put_ready(&c->out, c->txn);
}

/* --- extended query ------------------------------------------------------------------ */

static srv_stmt *find_stmt(srv_conn *c, const char *name)
{
    for (srv_stmt *s = c->stmts; s; s = s->next)
        if (!strcmp(s->name, name)) return s;
    return NULL;
}

static srv_portal *find_portal(srv_conn *c, const char *name)
{
    for (srv_portal *p = c->portals; p; p = p->next)
        if (!strcmp(p->name, name)) return p;
    return NULL;
}

static void free_stmt(srv_stmt *s)
{
    free(s->name);
    free(s->query);
    free(s->oids);
    free(s);
}

static void free_portal(srv_portal *p)
{
    free(p->name);
    free(p->sql);
    free(p->formats);
    srv_result_free(p->result);
    free(p);
}

static void drop_stmt(srv_conn *c, const char *name)
{
    for (srv_stmt **s = &c->stmts; *s; s = &(*s)->next) {
        if (!strcmp((*s)->name, name)) {
            srv_stmt *dead = *s;
            *s = dead->next;
            free_stmt(dead);
            return;
        }
    }
}

static void drop_portal(srv_conn *c, const char *name)
{
    for (srv_portal **p = &c->portals; *p; p = &(*p)->next) {
        if (!strcmp((*p)->name, name)) {
            srv_portal *dead = *p;
            *p = dead->next;
            free_portal(dead);
            return;
        }
    }
}

static bool do_parse(srv_conn *c, const char *body, size_t len, srv_err *e)
{
    pgw_parse_msg m;
    sto_status st = pgw_read_parse(body, len, &m);
    if (st) {
        err_from_status(e, st);
        e->malformed = true;
        return false;
    }
    bool ok = false;
    if (*m.name && find_stmt(c, m.name)) {
        err_set(e, "42P05", 0, "prepared statement \"%s\" already exists", m.name);
        goto out;
    }
    size_t first = rackdb_statement_length(m.query, strlen(m.query));
    if (first && !rackdb_is_blank(m.query + first, strlen(m.query + first))) {
        err_set(e, STO_SYNTAX_ERROR, 0,
                "cannot insert multiple commands into a prepared "
                "statement");
        goto out;
    }
    drop_stmt(c, m.name);
    srv_stmt *s = calloc(1, sizeof(*s));
    int used = pgw_param_max(m.query);
    int n = used > m.nparams ? used : m.nparams;
    if (!s || !(s->name = strdup(m.name)) || !(s->query = strdup(m.query)) ||
        (n && !(s->oids = calloc((size_t)n, sizeof(uint32_t))))) {
        if (s) free_stmt(s);
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        goto out;
    }
    s->nparams = n;
    for (int i = 0; i < m.nparams; i++)
        s->oids[i] = m.param_oids[i];
    s->next = c->stmts;
    c->stmts = s;
    pgw_put_parse_complete(&c->out);
    ok = true;
out:
    pgw_parse_msg_free(&m);
    return ok;
}

static bool do_bind(srv_conn *c, const char *body, size_t len, srv_err *e)
{
    pgw_bind_msg m;
    sto_status st = pgw_read_bind(body, len, &m);
    if (st) {
        err_from_status(e, st);
        e->malformed = true;
        return false;
    }
    bool ok = false;
    pgw_param *params = NULL;
    pgw_buf *texts = NULL;
    srv_portal *p = NULL;
    srv_stmt *s = find_stmt(c, m.statement);
    if (!s) {
        err_set(e, "26000", 0, "prepared statement \"%s\" does not exist", m.statement);
        goto out;
    }
    if (*m.portal && find_portal(c, m.portal)) {
        err_set(e, "42P03", 0, "portal \"%s\" already exists", m.portal);
        goto out;
    }
    if (m.nparams != s->nparams) {
        err_set(e, STO_PROTOCOL_VIOLATION, 0,
                "bind message supplies %u parameters, but prepared statement \"%s\" requires %d",
                m.nparams, s->name, s->nparams);
        goto out;
    }
    params = calloc(m.nparams ? m.nparams : 1, sizeof(*params));
    texts = calloc(m.nparams ? m.nparams : 1, sizeof(*texts));
    if (!params || !texts) goto oom;
    for (uint16_t i = 0; i < m.nparams; i++) {
        params[i].oid = s->oids[i];
        if (!m.values[i]) continue;
        if (pgw_format_of(m.nformats, m.formats, i) == 1) {
            st = pgw_binary_to_text(s->oids[i], m.values[i], (size_t)m.lengths[i], &texts[i]);
        } else {
            if (memchr(m.values[i], '\0', (size_t)m.lengths[i]))
                st = sto_error(STO_INVALID_TEXT_REPRESENTATION,
                               "invalid byte sequence for encoding \"UTF8\": 0x00");
            else
                pgw_buf_append(&texts[i], m.values[i], (size_t)m.lengths[i]);
        }
        pgw_buf_append(&texts[i], "", 1);
        if (!st) st = pgw_buf_status(&texts[i]);
        if (st) {
            err_from_status(e, st);
            goto out;
        }
        params[i].text = texts[i].data;
    }
    drop_portal(c, m.portal);
    p = calloc(1, sizeof(*p));
    if (!p || !(p->name = strdup(m.portal))) goto oom;
    st = pgw_substitute(s->query, m.nparams, params, &p->sql);
    if (st) {
        err_from_status(e, st);
        goto out;
    }
    if (m.nresult_formats) {
        p->formats = malloc(m.nresult_formats * sizeof(int16_t));
        if (!p->formats) goto oom;
        memcpy(p->formats, m.result_formats, m.nresult_formats * sizeof(int16_t));
        p->nformats = m.nresult_formats;
    }
    p->next = c->portals;
    c->portals = p;
    p = NULL;
    pgw_put_bind_complete(&c->out);
    ok = true;
    goto out;
oom:
    err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
out:
    if (p) free_portal(p);
    for (uint16_t i = 0; texts && i < m.nparams; i++)
        pgw_buf_free(&texts[i]);
    free(texts);
    free(params);
    pgw_bind_msg_free(&m);
    return ok;
}

/* Runs the portal's statement unless it already ran. */
static bool run_portal(srv_conn *c, srv_portal *p, srv_err *e)
{
    if (p->result) return true;
    if (!run_statement(c, p->sql, &p->result, e)) return false;
    if (!p->result) {
        p->result = srv_result_new_tag("");
        if (!p->result) {
            err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
            return false;
        }
    }
    return true;
}

static bool do_describe(srv_conn *c, const char *body, size_t len, srv_err *e)
{
    char kind;
    const char *name;
    sto_status st = pgw_read_target(body, len, &kind, &name);
    if (st) {
        err_from_status(e, st);
        e->malformed = true;
        return false;
    }
    if (kind == 'P') {
        srv_portal *p = find_portal(c, name);
        if (!p) {
            err_set(e, "34000", 0, "portal \"%s\" does not exist", name);
            return false;
        }
        if (!run_portal(c, p, e)) return false;
        if (!p->result->has_rows) {
            pgw_put_no_data(&c->out);
            return true;
        }
        return put_row_description(c, p->result, p->nformats, p->formats, e);
    }
    srv_stmt *s = find_stmt(c, name);
    if (!s) {
        err_set(e, "26000", 0, "prepared statement \"%s\" does not exist", name);
        return false;
    }
    uint32_t *oids = calloc(s->nparams ? (size_t)s->nparams : 1, sizeof(uint32_t));
    if (!oids) {
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        return false;
    }
    for (int i = 0; i < s->nparams; i++)
        oids[i] = s->oids[i] ? s->oids[i] : PGW_OID_TEXT;
    pgw_put_parameter_description(&c->out, (uint16_t)s->nparams, oids);
    free(oids);
    char word[16];
    first_word(s->query, word, sizeof(word));
    if (!is_query_word(word)) {
        pgw_put_no_data(&c->out);
        return true;
    }
    /* The columns of a query are known once it ran; with every parameter
     * NULL, a query answers quickly and the shape is the same. */
    pgw_param *nulls = calloc(s->nparams ? (size_t)s->nparams : 1, sizeof(*nulls));
    char *sql = NULL;
    if (!nulls) {
        err_set(e, STO_OUT_OF_MEMORY, 0, "out of memory");
        return false;
    }
    st = pgw_substitute(s->query, s->nparams, nulls, &sql);
    free(nulls);
    if (st) {
        err_from_status(e, st);
        return false;
    }
    srv_result *r = NULL;
    bool ok = run_statement(c, sql, &r, e);
    free(sql);
    if (ok) {
        if (r && r->has_rows)
            ok = put_row_description(c, r, 0, NULL, e);
        else
            pgw_put_no_data(&c->out);
    }
    srv_result_free(r);
    return ok;
}

static bool do_execute(srv_conn *c, const char *body, size_t len, srv_err *e)
{
    const char *name;
    int32_t max_rows;
    sto_status st = pgw_read_execute(body, len, &name, &max_rows);
    if (st) {
        err_from_status(e, st);
        e->malformed = true;
        return false;
    }
    srv_portal *p = find_portal(c, name);
    if (!p) {
        err_set(e, "34000", 0, "portal \"%s\" does not exist", name);
        return false;
    }
    if (!run_portal(c, p, e)) return false;
    srv_result *r = p->result;
    if (!r->has_rows) {
        if (*r->tag)
            pgw_put_command_complete(&c->out, r->tag);
        else
            pgw_put_empty_query(&c->out);
        return true;
    }
    uint64_t total = srv_result_rows(r), left = total - p->sent;
    uint64_t n = max_rows > 0 && (uint64_t)max_rows < left ? (uint64_t)max_rows : left;
    if (!put_rows(c, r, p->sent, n, p->nformats, p->formats, e)) return false;
    p->sent += n;
    if (p->sent < total) {
        pgw_put_portal_suspended(&c->out);
    } else if (!strncmp(r->tag, "SELECT", 6)) {
        char tag[40];
        snprintf(tag, sizeof(tag), "SELECT %llu", (unsigned long long)n);
        pgw_put_command_complete(&c->out, tag);
    } else {
        pgw_put_command_complete(&c->out, r->tag);
    }
    return true;
}

static bool do_close(srv_conn *c, const char *body, size_t len, srv_err *e)
{
    char kind;
    const char *name;
    sto_status st = pgw_read_target(body, len, &kind, &name);
    if (st) {
        err_from_status(e, st);
        e->malformed = true;
        return false;
    }
    if (kind == 'S')
        drop_stmt(c, name);
    else
        drop_portal(c, name);
    pgw_put_close_complete(&c->out);
    return true;
}

/* --- the loop ------------------------------------------------------------------------- */

/* Handles one message; false ends the connection. */
static bool handle_message(srv_conn *c, char type, const char *body, size_t len)
{
    srv_err e;
    bool ok = true;
    if (c->skip_to_sync && strchr("PBDECH", type) && type) return true;
    switch (type) {
    case 'Q': {
        const char *sql;
        sto_status st = pgw_read_query(body, len, &sql);
        if (st) {
            err_from_status(&e, st);
            fatal(c, &e);
            return false;
        }
        c->skip_to_sync = false;
        simple_query(c, sql);
        return true;
    }
    case 'P':
        ok = do_parse(c, body, len, &e);
        break;
    case 'B':
        ok = do_bind(c, body, len, &e);
        break;
    case 'D':
        ok = do_describe(c, body, len, &e);
        break;
    case 'E':
        ok = do_execute(c, body, len, &e);
        break;
    case 'C':
        ok = do_close(c, body, len, &e);
        break;
    case 'H':
        return flush_out(c);
    case 'S':
        c->skip_to_sync = false;
        drop_portal(c, "");
        pgw_put_ready(&c->out, c->txn);
        return true;
    case 'X':
        return false;
    case 'd': /* CopyData, CopyDone, CopyFail outside COPY: ignored as PostgreSQL does */
    case 'c':
    case 'f':
        return true;
    default:
        err_set(&e, STO_PROTOCOL_VIOLATION, 0, "invalid frontend message type %d",
                (unsigned char)type);
        fatal(c, &e);
        return false;
    }
    if (!ok) {
        if (e.malformed) {
            fatal(c, &e);
            return false;
        }
        log_error(c, &e);
        send_error(c, "ERROR", &e);
        c->skip_to_sync = true;
        if (c->txn == 'T') c->txn = 'E';
    }
    return true;
}

static void conn_free(srv_conn *c)
{
    while (c->stmts) {
        srv_stmt *s = c->stmts;
        c->stmts = s->next;
        free_stmt(s);
    }
    while (c->portals) {
        srv_portal *p = c->portals;
        c->portals = p->next;
        free_portal(p);
    }
    pgw_buf_free(&c->out);
    free(c->in);
    srv_tls_end(c);
    close(c->fd);
    free(c);
}

void *srv_conn_main(void *arg)
{
    srv_conn *c = arg;
    srv_server *srv = c->srv;
    bool registered = false;
    c->txn = 'I';
    c->info.user = c->user;
    c->info.database = c->database;
    struct timeval tv = {STARTUP_TIMEOUT_S, 0};
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (!startup(c)) goto done;
    srv_err e;
    if (!(registered = srv_register(srv, c))) {
        err_set(&e, "53300", 0, "sorry, too many clients already");
        fatal(c, &e);
        goto done;
    }
    if (srv->passwords && !authenticate(c)) goto done;
    rackdb_error *re = NULL;
    rackdb_session *session = NULL;
    if (rackdb_session_open(srv->db, &session, &re) != RACKDB_OK) {
        err_from_engine(&e, re);
        fatal(c, &e);
        goto done;
    }
    pthread_mutex_lock(&srv->lock);
    c->session = session;
    pthread_mutex_unlock(&srv->lock);
    rackdb_copy_io io = {copy_begin, copy_read, copy_write, c};
    rackdb_session_set_copy_io(session, &io);
    if (c->options[0] && !apply_options(c, c->options, &e)) {
        fatal(c, &e);
        goto done;
    }
    tv.tv_sec = 0;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    fprintf(stderr, "rackdb server: connection %d from %s: user=%s database=%s%s\n", c->pid,
            c->peer, c->user, c->database, c->tls ? " (TLS)" : "");
    pgw_put_auth_ok(&c->out);
    put_parameter_statuses(c);
    pgw_put_backend_key(&c->out, c->pid, c->key);
    pgw_put_ready(&c->out, c->txn);
    for (;;) {
        char type;
        const char *body;
        size_t len;
        if (next_message(c, &type, &body, &len) != MSG_OK) break;
        if (!handle_message(c, type, body, len)) break;
        if (atomic_load(&c->peer_gone)) break;
    }
    flush_out(c);
    fprintf(stderr, "rackdb server: connection %d closed%s\n", c->pid,
            atomic_load(&c->peer_gone) ? " (client went away)" : "");
done:
    if (registered) srv_unregister(srv, c);
    pthread_mutex_lock(&srv->lock);
    srv_forget(srv, c);
    pthread_mutex_unlock(&srv->lock);
    if (c->session) rackdb_session_close(c->session);
    conn_free(c);
    pthread_mutex_lock(&srv->lock);
    if (--srv->threads == 0) pthread_cond_broadcast(&srv->idle);
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}
