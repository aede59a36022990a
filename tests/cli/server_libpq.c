/*
 * server_libpq.c — `rackdb server` through libpq and through raw protocol
 * bytes: prepared statements with text and binary parameters (int4, int8,
 * numeric, float8, date, text, varchar) and results, Describe, error fields
 * (severity, SQLSTATE, message, position) from both protocols, Execute with
 * a row limit (PortalSuspended), COPY FROM STDIN / TO STDOUT (PQputCopyData,
 * PQputCopyEnd with and without an error, PQgetCopyData), PQcancel of a long
 * statement, 50 concurrent clients running TPC-H queries at SF 0.01 (answers
 * equal to the official ones and to each other), the connection limit,
 * SCRAM-SHA-256 logins, and malformed input that must close only its own
 * connection.
 * Starts its own servers from $RACKDB on free loopback ports.
 */
#include <arpa/inet.h>
#include <libpq-fe.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/pgwire/protocol.h"
#include "test.h"

typedef struct server {
    pid_t pid;
    int port;
    char log[64]; /* the server's stderr */
} server;

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &len))
        return -1;
    close(fd);
    return ntohs(a.sin_port);
}

static int connect_raw(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* Starts `$RACKDB server --port P [extra...]` and waits until it accepts. */
static bool start_server(server *s, const char *extra1, const char *extra2)
{
    const char *rackdb = getenv("RACKDB");
    if (!rackdb) return false;
    s->port = free_port();
    char port[16];
    snprintf(port, sizeof(port), "%d", s->port);
    snprintf(s->log, sizeof(s->log), "/tmp/rackdb_server_log_XXXXXX");
    int logfd = mkstemp(s->log);
    if (logfd < 0) return false;
    s->pid = fork();
    if (s->pid == 0) {
        dup2(logfd, 2);
        execl(rackdb, rackdb, "server", "--port", port, extra1, extra2, (char *)NULL);
        _exit(127);
    }
    close(logfd);
    for (int i = 0; i < 200; i++) {
        int fd = connect_raw(s->port);
        if (fd >= 0) {
            close(fd);
            return true;
        }
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    return false;
}

/* SIGTERM; true when it exited with status 0. */
static bool stop_server(server *s)
{
    kill(s->pid, SIGTERM);
    int status = 0;
    waitpid(s->pid, &status, 0);
    unlink(s->log);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static server main_server;

static PGconn *connect_as(int port, const char *user, const char *password)
{
    char info[256];
    snprintf(info, sizeof(info),
             "host=127.0.0.1 port=%d user=%s dbname=test connect_timeout=10%s%s", port, user,
             password ? " password=" : "", password ? password : "");
    return PQconnectdb(info);
}

static PGconn *conn(void)
{
    return connect_as(main_server.port, "tester", NULL);
}

static bool exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

static void test_startup(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    CHECK_STREQ(PQparameterStatus(c, "server_encoding"), "UTF8");
    CHECK_STREQ(PQparameterStatus(c, "integer_datetimes"), "on");
    CHECK_STREQ(PQparameterStatus(c, "DateStyle"), "ISO, MDY");
    CHECK_EQ_INT(PQserverVersion(c), 150000);
    CHECK(PQbackendPID(c) > 0);
    CHECK_EQ_INT(PQtransactionStatus(c), PQTRANS_IDLE);
    CHECK(exec_ok(c, "BEGIN"));
    CHECK_EQ_INT(PQtransactionStatus(c), PQTRANS_INTRANS);
    PQclear(PQexec(c, "SELECT * FROM nosuch"));
    CHECK_EQ_INT(PQtransactionStatus(c), PQTRANS_INERROR);
    CHECK(exec_ok(c, "ROLLBACK"));
    CHECK_EQ_INT(PQtransactionStatus(c), PQTRANS_IDLE);
    PQfinish(c);
}

static void test_prepared(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    REQUIRE(exec_ok(c, "CREATE TABLE p (a INTEGER, b VARCHAR(40), c DECIMAL(15,2), d DATE, "
                       "e BIGINT, g DOUBLE)"));
    /* text parameters with declared types */
    Oid types[] = {23, 1043, 1700, 1082, 20, 701};
    const char *v1[] = {"1", "it's; DROP TABLE p --", "-12.50", "1998-09-02", "-9000000000", "0.5"};
    PGresult *r = PQexecParams(c, "INSERT INTO p VALUES ($1, $2, $3, $4, $5, $6)", 6, types, v1,
                               NULL, NULL, 0);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    CHECK_STREQ(PQcmdStatus(r), "INSERT 0 1");
    PQclear(r);
    /* the same statement prepared, binary parameters */
    r = PQprepare(c, "ins", "INSERT INTO p VALUES ($1, $2, $3, $4, $5, $6)", 6, types);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    uint32_t a = htonl(2);
    const char *b = "two";
    /* numeric 1234.5 = digits 1234, 5000; weight 0; dscale 1 */
    unsigned char num[] = {0, 2, 0, 0, 0, 0, 0, 1, 0x04, 0xd2, 0x13, 0x88};
    uint32_t d = htonl((uint32_t)(10471 - 10957)); /* 1998-09-02 - 2000-01-01 */
    uint64_t e = 0;
    unsigned char ebytes[8], gbytes[8];
    e = (uint64_t)123456789012LL;
    for (int i = 0; i < 8; i++)
        ebytes[i] = (unsigned char)(e >> (56 - 8 * i));
    double g = -2.25;
    uint64_t gbits;
    memcpy(&gbits, &g, 8);
    for (int i = 0; i < 8; i++)
        gbytes[i] = (unsigned char)(gbits >> (56 - 8 * i));
    const char *v2[] = {(const char *)&a,     b,
                        (const char *)num,    (const char *)&d,
                        (const char *)ebytes, (const char *)gbytes};
    int lens[] = {4, 3, sizeof(num), 4, 8, 8};
    int fmts[] = {1, 1, 1, 1, 1, 1};
    r = PQexecPrepared(c, "ins", 6, v2, lens, fmts, 0);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    /* a NULL parameter */
    const char *v3[] = {"3", NULL, NULL, NULL, NULL, NULL};
    r = PQexecPrepared(c, "ins", 6, v3, NULL, NULL, 0);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);

    /* Describe of a prepared query: parameter and column types */
    r = PQprepare(c, "sel", "SELECT a, b, c, d, e, g FROM p WHERE a = $1", 1, (Oid[]){23});
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    r = PQdescribePrepared(c, "sel");
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    CHECK_EQ_INT(PQnparams(r), 1);
    CHECK_EQ_INT(PQparamtype(r, 0), 23);
    CHECK_EQ_INT(PQnfields(r), 6);
    if (PQnfields(r) == 6) {
        CHECK_EQ_INT(PQftype(r, 0), 23);
        CHECK_EQ_INT(PQftype(r, 1), 1043);
        CHECK_EQ_INT(PQfmod(r, 1), 44);
        CHECK_EQ_INT(PQftype(r, 2), 1700);
        CHECK_EQ_INT(PQfmod(r, 2), (15 << 16 | 2) + 4);
        CHECK_EQ_INT(PQftype(r, 3), 1082);
        CHECK_EQ_INT(PQftype(r, 4), 20);
        CHECK_EQ_INT(PQftype(r, 5), 701);
    }
    PQclear(r);

    /* text results */
    const char *k1[] = {"1"};
    r = PQexecPrepared(c, "sel", 1, k1, NULL, NULL, 0);
    REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
    CHECK_EQ_INT(PQntuples(r), 1);
    if (PQntuples(r) == 1) {
        CHECK_STREQ(PQgetvalue(r, 0, 1), "it's; DROP TABLE p --");
        CHECK_STREQ(PQgetvalue(r, 0, 2), "-12.50");
        CHECK_STREQ(PQgetvalue(r, 0, 3), "1998-09-02");
        CHECK_STREQ(PQgetvalue(r, 0, 4), "-9000000000");
        CHECK_STREQ(PQgetvalue(r, 0, 5), "0.5");
    }
    PQclear(r);
    /* the binary row read back as text, and binary results */
    const char *k2[] = {"2"};
    r = PQexecPrepared(c, "sel", 1, k2, NULL, NULL, 0);
    REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
    CHECK_STREQ(PQgetvalue(r, 0, 1), "two");
    CHECK_STREQ(PQgetvalue(r, 0, 2), "1234.50");
    CHECK_STREQ(PQgetvalue(r, 0, 3), "1998-09-02");
    CHECK_STREQ(PQgetvalue(r, 0, 4), "123456789012");
    CHECK_STREQ(PQgetvalue(r, 0, 5), "-2.25");
    PQclear(r);
    r = PQexecPrepared(c, "sel", 1, (const char *[]){(const char *)&a}, (int[]){4}, (int[]){1}, 1);
    REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
    CHECK_EQ_INT(PQfformat(r, 0), 1);
    CHECK_EQ_INT(PQgetlength(r, 0, 0), 4);
    CHECK_EQ_INT(ntohl(*(uint32_t *)PQgetvalue(r, 0, 0)), 2);
    CHECK_EQ_INT(PQgetlength(r, 0, 2), sizeof(num)); /* 1234.50: the same digits, dscale 2 */
    const unsigned char *n = (const unsigned char *)PQgetvalue(r, 0, 2);
    CHECK(n[0] == 0 && n[1] == 2 && n[7] == 2 && n[8] == 0x04 && n[9] == 0xd2);
    CHECK_EQ_INT(ntohl(*(uint32_t *)PQgetvalue(r, 0, 3)), (uint32_t)(10471 - 10957));
    const unsigned char *gb = (const unsigned char *)PQgetvalue(r, 0, 5);
    CHECK(memcmp(gb, gbytes, 8) == 0);
    CHECK_EQ_INT(PQgetlength(r, 0, 4), 8);
    CHECK(memcmp(PQgetvalue(r, 0, 4), ebytes, 8) == 0);
    CHECK_EQ_INT(PQgetlength(r, 0, 1), 3);
    CHECK(memcmp(PQgetvalue(r, 0, 1), "two", 3) == 0);
    PQclear(r);
    /* parameters declared text (25), in text and in binary format, and
     * int8/float8/numeric/date parameters compared in a WHERE clause */
    r = PQprepare(c, "bytext",
                  "SELECT a FROM p WHERE b = $1 AND e = $2 AND g = $3 AND c = $4 AND d = $5", 5,
                  (Oid[]){25, 20, 701, 1700, 1082});
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    r = PQexecPrepared(c, "bytext", 5,
                       (const char *[]){"two", "123456789012", "-2.25", "1234.5", "1998-09-02"},
                       NULL, NULL, 0);
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
          !strcmp(PQgetvalue(r, 0, 0), "2"));
    PQclear(r);
    r = PQexecPrepared(c, "bytext", 5, (const char *[]){v2[1], v2[4], v2[5], v2[2], v2[3]},
                       (int[]){lens[1], lens[4], lens[5], lens[2], lens[3]}, fmts, 0);
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
          !strcmp(PQgetvalue(r, 0, 0), "2"));
    PQclear(r);
    r = PQexecPrepared(c, "bytext", 5,
                       (const char *[]){"it's; DROP TABLE p --", v1[4], v1[5], v1[2], v1[3]},
                       (int[]){21, 0, 0, 0, 0}, (int[]){1, 0, 0, 0, 0}, 0);
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
          !strcmp(PQgetvalue(r, 0, 0), "1"));
    PQclear(r);
    /* an untyped text parameter compared with a string column */
    r = PQexecParams(c, "SELECT a FROM p WHERE b = $1", 1, NULL, (const char *[]){"two"}, NULL,
                     NULL, 0);
    CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
          !strcmp(PQgetvalue(r, 0, 0), "2"));
    PQclear(r);
    /* a bad value for a typed parameter */
    r = PQexecPrepared(c, "sel", 1, (const char *[]){"x1"}, NULL, NULL, 0);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22P02");
    PQclear(r);
    /* too few parameters */
    r = PQexecPrepared(c, "sel", 0, NULL, NULL, NULL, 0);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "08P01");
    PQclear(r);
    CHECK(exec_ok(c, "DROP TABLE p"));
    PQfinish(c);
}

static void test_errors(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    PGresult *r = PQexec(c, "SELECT * FROM nosuch");
    CHECK_EQ_INT(PQresultStatus(r), PGRES_FATAL_ERROR);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42P01");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED), "ERROR");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
                "relation \"nosuch\" does not exist");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION), "15");
    PQclear(r);
    r = PQexecParams(c, "SELEC 1", 0, NULL, NULL, NULL, NULL, 0);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42601");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SEVERITY), "ERROR");
    CHECK(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) != NULL);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION), "1");
    PQclear(r);
    /* through the extended protocol: the same fields from a prepared
     * statement's execution */
    r = PQprepare(c, "bad", "SELECT 1 FROM nosuch2 WHERE 1 = $1", 1, (Oid[]){23});
    PQclear(r);
    r = PQexecPrepared(c, "bad", 1, (const char *[]){"1"}, NULL, NULL, 0);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42P01");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
                "relation \"nosuch2\" does not exist");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION), "15");
    PQclear(r);
    r = PQexecParams(c, "SELECT 1 / $1", 1, (Oid[]){23}, (const char *[]){"0"}, NULL, NULL, 0);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22012");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY), "division by zero");
    PQclear(r);
    /* the connection stays usable */
    CHECK(exec_ok(c, "SHOW server_version"));
    PQfinish(c);
}

/* COUNT(*) of a table, -1 on error. */
static long count_rows(PGconn *c, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
    PGresult *r = PQexec(c, sql);
    long n = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return n;
}

/* Starts COPY FROM STDIN, sends the data in the given pieces and ends it
 * (with a CopyFail when fail_message is set); the final result. */
static PGresult *copy_in(PGconn *c, const char *sql, const char *const *pieces, int n,
                         const char *fail_message)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COPY_IN) return r;
    CHECK_EQ_INT(PQnfields(r), 2);
    CHECK_EQ_INT(PQbinaryTuples(r), 0);
    PQclear(r);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(PQputCopyData(c, pieces[i], (int)strlen(pieces[i])), 1);
    CHECK_EQ_INT(PQputCopyEnd(c, fail_message), 1);
    r = PQgetResult(c);
    PGresult *extra = PQgetResult(c);
    CHECK(extra == NULL);
    PQclear(extra);
    return r;
}

/* COPY FROM STDIN / TO STDOUT: data in pieces that cut lines, CopyFail,
 * a bad row, and the table unchanged after each failure. */
static void test_copy(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    CHECK(exec_ok(c, "CREATE TABLE cp (a INTEGER NOT NULL, b VARCHAR(10))"));
    const char *good[] = {"1,a\n2,", "b\n3", ",c\n"};
    PGresult *r = copy_in(c, "COPY cp FROM STDIN (DELIMITER ',')", good, 3, NULL);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    CHECK_STREQ(PQcmdStatus(r), "COPY 3");
    PQclear(r);

    const char *more[] = {"4,d\n"};
    r = copy_in(c, "COPY cp FROM STDIN (DELIMITER ',')", more, 1, "client gave up");
    CHECK_EQ_INT(PQresultStatus(r), PGRES_FATAL_ERROR);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57014");
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
                "COPY from stdin failed: client gave up");
    PQclear(r);
    CHECK_EQ_INT(count_rows(c, "cp"), 3);

    const char *bad[] = {"5,e\n", "x,f\n"};
    r = copy_in(c, "COPY cp FROM STDIN (DELIMITER ',')", bad, 2, NULL);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_FATAL_ERROR);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22P02");
    const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    CHECK(msg && strstr(msg, "line 2, column 1 (a)") != NULL);
    PQclear(r);
    CHECK_EQ_INT(count_rows(c, "cp"), 3);

    /* an error before any data: no CopyInResponse */
    r = PQexec(c, "COPY nosuch FROM STDIN");
    CHECK_EQ_INT(PQresultStatus(r), PGRES_FATAL_ERROR);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42P01");
    PQclear(r);

    r = PQexec(c, "COPY cp TO STDOUT (FORMAT csv, HEADER)");
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COPY_OUT);
    CHECK_EQ_INT(PQnfields(r), 2);
    PQclear(r);
    char out[256] = "";
    size_t len = 0;
    char *buf;
    int n;
    while ((n = PQgetCopyData(c, &buf, 0)) > 0) {
        if (len + (size_t)n < sizeof(out)) {
            memcpy(out + len, buf, (size_t)n);
            len += (size_t)n;
            out[len] = '\0';
        }
        PQfreemem(buf);
    }
    CHECK_EQ_INT(n, -1);
    CHECK_STREQ(out, "a,b\n1,a\n2,b\n3,c\n");
    r = PQgetResult(c);
    CHECK_EQ_INT(PQresultStatus(r), PGRES_COMMAND_OK);
    CHECK_STREQ(PQcmdStatus(r), "COPY 3");
    PQclear(r);
    CHECK(PQgetResult(c) == NULL);
    /* the connection stays usable */
    CHECK_EQ_INT(count_rows(c, "cp"), 3);
    PQfinish(c);
}

/* --- raw protocol ------------------------------------------------------------ */

static bool send_all(int fd, const void *p, size_t n)
{
    return send(fd, p, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* Reads one message; type 0 on EOF. */
static char read_msg(int fd, char *body, size_t cap, size_t *len)
{
    unsigned char h[5];
    size_t got = 0;
    while (got < 5) {
        ssize_t n = recv(fd, h + got, 5 - got, 0);
        if (n <= 0) return 0;
        got += (size_t)n;
    }
    uint32_t l = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 8 | h[4];
    if (l < 4 || l - 4 > cap) return 0;
    *len = l - 4;
    got = 0;
    while (got < *len) {
        ssize_t n = recv(fd, body + got, *len - got, 0);
        if (n <= 0) return 0;
        got += (size_t)n;
    }
    return (char)h[0];
}

/* Opens a raw connection and reads up to the first ReadyForQuery. */
static int raw_session(int port)
{
    int fd = connect_raw(port);
    if (fd < 0) return -1;
    pgw_buf b = {0};
    size_t m = pgw_msg_begin(&b, 0);
    pgw_put_i32(&b, (int32_t)PGW_PROTOCOL_V3);
    pgw_put_cstr(&b, "user");
    pgw_put_cstr(&b, "raw");
    pgw_put_u8(&b, 0);
    pgw_msg_end(&b, m);
    send_all(fd, b.data, b.len);
    pgw_buf_free(&b);
    static char body[1 << 16];
    size_t len;
    char t;
    while ((t = read_msg(fd, body, sizeof(body), &len)) && t != 'Z') {
    }
    if (t != 'Z') {
        close(fd);
        return -1;
    }
    return fd;
}

/* The types of the messages until ReadyForQuery (or EOF), as a string. */
static void read_types(int fd, char *types, size_t cap)
{
    static char body[1 << 16];
    size_t len, n = 0;
    char t;
    while ((t = read_msg(fd, body, sizeof(body), &len)) && n + 1 < cap) {
        types[n++] = t;
        if (t == 'Z') break;
    }
    types[n] = '\0';
}

static void test_row_limit(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    REQUIRE(exec_ok(c, "CREATE TABLE five (x INTEGER)"));
    REQUIRE(exec_ok(c, "INSERT INTO five VALUES (1), (2), (3), (4), (5)"));
    int fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    pgw_buf b = {0};
    size_t m = pgw_msg_begin(&b, 'P');
    pgw_put_cstr(&b, "");
    pgw_put_cstr(&b, "SELECT x FROM five ORDER BY x");
    pgw_put_i16(&b, 0);
    pgw_msg_end(&b, m);
    m = pgw_msg_begin(&b, 'B');
    pgw_put_cstr(&b, "cur");
    pgw_put_cstr(&b, "");
    pgw_put_i16(&b, 0), pgw_put_i16(&b, 0), pgw_put_i16(&b, 0);
    pgw_msg_end(&b, m);
    for (int i = 0; i < 3; i++) {
        m = pgw_msg_begin(&b, 'E');
        pgw_put_cstr(&b, "cur");
        pgw_put_i32(&b, 2);
        pgw_msg_end(&b, m);
    }
    m = pgw_msg_begin(&b, 'S');
    pgw_msg_end(&b, m);
    send_all(fd, b.data, b.len);
    char types[64];
    read_types(fd, types, sizeof(types));
    /* ParseComplete, BindComplete, 2 rows + suspended, 2 rows + suspended,
     * 1 row + CommandComplete, ReadyForQuery */
    CHECK_STREQ(types, "12DDsDDsDCZ");
    /* after an error, everything up to Sync is skipped */
    pgw_buf_clear(&b);
    m = pgw_msg_begin(&b, 'B');
    pgw_put_cstr(&b, "");
    pgw_put_cstr(&b, "nosuch");
    pgw_put_i16(&b, 0), pgw_put_i16(&b, 0), pgw_put_i16(&b, 0);
    pgw_msg_end(&b, m);
    m = pgw_msg_begin(&b, 'E');
    pgw_put_cstr(&b, "");
    pgw_put_i32(&b, 0);
    pgw_msg_end(&b, m);
    m = pgw_msg_begin(&b, 'S');
    pgw_msg_end(&b, m);
    send_all(fd, b.data, b.len);
    read_types(fd, types, sizeof(types));
    CHECK_STREQ(types, "EZ");
    pgw_buf_free(&b);
    close(fd);
    CHECK(exec_ok(c, "DROP TABLE five"));
    PQfinish(c);
}

/* Garbage, an oversized length and a truncated message each close their own
 * connection; a client beside them keeps working. */
static void test_malformed(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    char types[64];
    /* an unknown message type */
    int fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    send_all(fd, "\x01garbage-garbage", 16);
    read_types(fd, types, sizeof(types));
    CHECK_STREQ(types, "E"); /* FATAL, then EOF */
    close(fd);
    /* a length over the limit */
    fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    send_all(fd, "Q\x7f\xff\xff\xff", 5);
    read_types(fd, types, sizeof(types));
    CHECK_STREQ(types, "E");
    close(fd);
    /* a Query whose string lacks its terminator inside the message */
    fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    send_all(fd,
             "Q\0\0\0\x08"
             "abcd",
             9);
    read_types(fd, types, sizeof(types));
    CHECK_STREQ(types, "E");
    close(fd);
    /* a Bind that claims more parameters than it carries */
    fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    send_all(fd, "B\0\0\0\x0c\0\0\0\0\0\x50\0\0", 13);
    read_types(fd, types, sizeof(types));
    CHECK_STREQ(types, "E");
    close(fd);
    /* a truncated message and a vanished client */
    fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    send_all(fd, "Q\0\0\0\x40SELE", 9);
    close(fd);
    /* garbage instead of a startup packet */
    fd = connect_raw(main_server.port);
    REQUIRE(fd >= 0);
    send_all(fd, "\xff\xff\xff\xff garbage", 12);
    read_types(fd, types, sizeof(types));
    CHECK_STREQ(types, "E");
    close(fd);
    CHECK(exec_ok(c, "SHOW server_version"));
    PQfinish(c);
}

typedef struct canceler {
    PGconn *c;
    atomic_bool done;
} canceler;

/* Sends a cancel request every 300 ms until the statement has returned (a
 * request that arrives before the statement starts has nothing to cancel). */
static void *cancel_later(void *arg)
{
    canceler *k = arg;
    PGcancel *pc = PQgetCancel(k->c);
    while (!atomic_load(&k->done)) {
        struct timespec ts = {0, 300000000L};
        nanosleep(&ts, NULL);
        char err[256];
        if (!atomic_load(&k->done)) PQcancel(pc, err, sizeof(err));
    }
    PQfreeCancel(pc);
    return NULL;
}

static void test_cancel(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    CHECK(exec_ok(c, "SET threads = 1"));
    canceler k = {c, false};
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, &k);
    /* generating SF 1 on one thread takes far longer than the delay */
    PGresult *r = PQexec(c, "CALL dbgen(sf = 1)");
    atomic_store(&k.done, true);
    pthread_join(t, NULL);
    CHECK_STREQ(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57014");
    PQclear(r);
    CHECK(exec_ok(c, "SHOW server_version"));
    PQfinish(c);
}

/* How often `needle` occurs in the server's log. */
static int log_count(const server *s, const char *needle)
{
    FILE *f = fopen(s->log, "r");
    if (!f) return 0;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

/* A client that hangs up while its statement runs gets it canceled. */
static void test_disconnect(void)
{
    int before = log_count(&main_server, "(client went away)");
    int canceled = log_count(&main_server, "ERROR 57014");
    int fd = raw_session(main_server.port);
    REQUIRE(fd >= 0);
    /* SET first, on its own, so that the hang-up below cannot fall on it
     * (it would end the connection before the long statement starts) */
    pgw_buf b = {0};
    size_t m = pgw_msg_begin(&b, 'Q');
    pgw_put_cstr(&b, "SET threads = 1");
    pgw_msg_end(&b, m);
    send_all(fd, b.data, b.len);
    char body[512];
    size_t len;
    char type;
    while ((type = read_msg(fd, body, sizeof(body), &len)) && type != 'Z')
        ;
    CHECK_EQ_INT(type, 'Z');
    pgw_buf_clear(&b);
    m = pgw_msg_begin(&b, 'Q');
    pgw_put_cstr(&b, "CALL dbgen(sf = 1)");
    pgw_msg_end(&b, m);
    send_all(fd, b.data, b.len);
    pgw_buf_free(&b);
    struct timespec ts = {0, 300000000L};
    nanosleep(&ts, NULL);
    close(fd);
    /* up to 60 s: under sanitizers on a loaded machine the interrupt takes
     * a while to land; the loop ends as soon as it has */
    for (int i = 0; i < 1200 && log_count(&main_server, "(client went away)") == before; i++) {
        ts.tv_nsec = 50000000L;
        nanosleep(&ts, NULL);
    }
    CHECK_EQ_INT(log_count(&main_server, "(client went away)"), before + 1);
    CHECK_EQ_INT(log_count(&main_server, "ERROR 57014"), canceled + 1);
    PGconn *c = conn();
    CHECK(PQstatus(c) == CONNECTION_OK);
    CHECK(exec_ok(c, "SHOW server_version"));
    PQfinish(c);
}

/* --- 50 concurrent clients running TPC-H queries ------------------------------- */

#define CLIENTS            50
#define QUERIES_PER_CLIENT 3

/* Cheap ones at SF 0.01 (a few ms each), covering scans, joins, group by,
 * subqueries and outer joins; q15 is left out, its view would be shared. */
static const int tpch_queries[] = {1, 3, 4, 6, 10, 12, 13, 14, 17, 19, 22};
#define NQUERIES ((int)(sizeof(tpch_queries) / sizeof(tpch_queries[0])))

/* A whole file, NUL-terminated; NULL if unreadable. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1))) {
        if (fread(buf, 1, (size_t)size, f) == (size_t)size) {
            buf[size] = '\0';
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

static char *tpch_file(const char *dir, int q, const char *ext)
{
    const char *shared = getenv("RACKDB_SHARED");
    char path[512];
    snprintf(path, sizeof(path), "%s/tpch/%s/q%02d.%s", shared ? shared : "/work/shared", dir, q,
             ext);
    return read_text(path);
}

/* A result as text: rows one a line, fields joined by '|' (the answers'
 * format); an error as "ERROR <sqlstate> <message>". */
static char *result_text(PGresult *r)
{
    pgw_buf b = {0};
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        pgw_buf_append_str(&b, "ERROR ");
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        pgw_buf_append_str(&b, state ? state : "?");
        pgw_buf_append_str(&b, " ");
        pgw_buf_append_str(&b, PQresultErrorMessage(r));
    }
    for (int row = 0; row < PQntuples(r); row++) {
        for (int col = 0; col < PQnfields(r); col++) {
            if (col) pgw_buf_append(&b, "|", 1);
            pgw_buf_append_str(&b, PQgetisnull(r, row, col) ? "NULL" : PQgetvalue(r, row, col));
        }
        pgw_buf_append(&b, "\n", 1);
    }
    pgw_buf_append(&b, "", 1);
    return b.data; /* NULL when out of memory */
}

/* The next '|'- or line-delimited field of *s, blanks trimmed. */
static size_t next_field(const char **s, const char **field)
{
    const char *p = *s;
    while (*p == ' ')
        p++;
    *field = p;
    size_t n = strcspn(p, "|\n");
    *s = p + n;
    while (n && p[n - 1] == ' ')
        n--;
    return n;
}

static bool as_number(const char *f, size_t n, double *out)
{
    char buf[64];
    if (!n || n >= sizeof(buf)) return false;
    memcpy(buf, f, n);
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return *end == '\0';
}

/* Same rows in the same order; numbers within 0.01 (the answers are
 * rounded), strings exactly. */
static bool same_answer(const char *got, const char *want)
{
    while (*got && *want) {
        const char *a, *b;
        size_t an = next_field(&got, &a), bn = next_field(&want, &b);
        double x, y;
        bool numbers = as_number(a, an, &x) && as_number(b, bn, &y);
        if (numbers ? fabs(x - y) > 0.01 : (an != bn || memcmp(a, b, an) != 0)) return false;
        if (*got != *want) return false; /* one row ended before the other */
        got++;
        want++;
    }
    return *got == *want;
}

typedef struct tpch_client {
    int id;
    pthread_barrier_t *start;
    char *sql[NQUERIES];               /* shared, read-only */
    char *answers[QUERIES_PER_CLIENT]; /* this client's, in the order it ran them */
} tpch_client;

static int client_query(const tpch_client *k, int i)
{
    return (k->id + i * 7) % NQUERIES;
}

static void *client_main(void *arg)
{
    tpch_client *k = arg;
    PGconn *c = conn();
    /* every client connects first, then all start their queries at once */
    pthread_barrier_wait(k->start);
    for (int i = 0; i < QUERIES_PER_CLIENT; i++) {
        if (PQstatus(c) != CONNECTION_OK) {
            k->answers[i] = strdup(PQerrorMessage(c));
            continue;
        }
        PGresult *r = PQexec(c, k->sql[client_query(k, i)]);
        k->answers[i] = result_text(r);
        PQclear(r);
    }
    PQfinish(c);
    return NULL;
}

/* 50 clients run TPC-H queries at SF 0.01 at the same time: every answer
 * equals the official one, so all clients running a query agree. */
static void test_concurrent(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    REQUIRE(exec_ok(c, "CALL dbgen(sf = 0.01)"));
    static tpch_client clients[CLIENTS];
    char *sql[NQUERIES], *official[NQUERIES];
    for (int q = 0; q < NQUERIES; q++) {
        sql[q] = tpch_file("queries", tpch_queries[q], "sql");
        official[q] = tpch_file("answers/sf0.01", tpch_queries[q], "csv");
        REQUIRE(sql[q] && official[q]);
    }
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, CLIENTS);
    pthread_t t[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        clients[i] = (tpch_client){.id = i, .start = &start};
        memcpy(clients[i].sql, sql, sizeof(sql));
        pthread_create(&t[i], NULL, client_main, &clients[i]);
    }
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    /* every answer is the official one, and those of one query are
     * identical byte for byte across clients */
    const char *first[NQUERIES] = {0};
    int wrong = 0, differ = 0;
    for (int i = 0; i < CLIENTS; i++) {
        for (int j = 0; j < QUERIES_PER_CLIENT; j++) {
            int q = client_query(&clients[i], j);
            const char *got = clients[i].answers[j];
            if (!got || !same_answer(got, official[q])) {
                if (wrong++ < 3)
                    fprintf(stderr, "client %d, q%02d: got\n%.300s\nexpected\n%.300s\n", i,
                            tpch_queries[q], got ? got : "(out of memory)", official[q]);
                continue;
            }
            if (!first[q])
                first[q] = got;
            else if (strcmp(first[q], got) != 0)
                differ++;
        }
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(differ, 0);
    for (int i = 0; i < CLIENTS; i++)
        for (int j = 0; j < QUERIES_PER_CLIENT; j++)
            free(clients[i].answers[j]);
    for (int q = 0; q < NQUERIES; q++) {
        free(sql[q]);
        free(official[q]);
    }
    PQfinish(c);
}

static void test_max_connections(void)
{
    server s;
    REQUIRE(start_server(&s, "--max-connections", "2"));
    PGconn *a = connect_as(s.port, "a", NULL), *b = connect_as(s.port, "b", NULL);
    CHECK(PQstatus(a) == CONNECTION_OK && PQstatus(b) == CONNECTION_OK);
    PGconn *x = connect_as(s.port, "x", NULL);
    CHECK(PQstatus(x) == CONNECTION_BAD);
    CHECK(strstr(PQerrorMessage(x), "sorry, too many clients already") != NULL);
    PQfinish(x);
    PQfinish(a);
    /* a freed slot can be taken again */
    struct timespec ts = {0, 200000000L};
    nanosleep(&ts, NULL);
    x = connect_as(s.port, "x", NULL);
    CHECK(PQstatus(x) == CONNECTION_OK);
    PQfinish(x);
    PQfinish(b);
    CHECK(stop_server(&s));
}

static void test_scram(void)
{
    char path[] = "/tmp/rackdb_pw_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const char *lines = "# users\nalice:s3cret\nbob:hunter2\n";
    CHECK(write(fd, lines, strlen(lines)) == (ssize_t)strlen(lines));
    close(fd);
    server s;
    bool started = start_server(&s, "--password-file", path);
    unlink(path);
    REQUIRE(started);
    PGconn *c = connect_as(s.port, "alice", "s3cret");
    CHECK(PQstatus(c) == CONNECTION_OK);
    PQfinish(c);
    c = connect_as(s.port, "alice", "wrong");
    CHECK(PQstatus(c) == CONNECTION_BAD);
    CHECK(strstr(PQerrorMessage(c), "password authentication failed for user \"alice\"") != NULL);
    PQfinish(c);
    c = connect_as(s.port, "mallory", "s3cret");
    CHECK(PQstatus(c) == CONNECTION_BAD);
    CHECK(strstr(PQerrorMessage(c), "password authentication failed for user \"mallory\"") != NULL);
    PQfinish(c);
    c = connect_as(s.port, "bob", "hunter2");
    CHECK(PQstatus(c) == CONNECTION_OK);
    CHECK(exec_ok(c, "SHOW server_version"));
    PQfinish(c);
    CHECK(stop_server(&s));
}

/* SIGTERM with a connection that never sent its startup packet and one that
 * is idle: the server still stops, with status 0. */
static void test_shutdown(void)
{
    int silent = connect_raw(main_server.port), idle = raw_session(main_server.port);
    CHECK(silent >= 0 && idle >= 0);
    CHECK(stop_server(&main_server));
    close(silent);
    close(idle);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!start_server(&main_server, NULL, NULL)) {
        fprintf(stderr, "cannot start the server ($RACKDB)\n");
        return 1;
    }
    RUN(test_startup);
    RUN(test_prepared);
    RUN(test_errors);
    RUN(test_copy);
    RUN(test_row_limit);
    RUN(test_malformed);
    RUN(test_concurrent);
    RUN(test_cancel);
    RUN(test_disconnect);
    RUN(test_max_connections);
    RUN(test_scram);
    RUN(test_shutdown);
    return TEST_REPORT();
}
