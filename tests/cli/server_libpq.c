/*
 * server_libpq.c — `rackdb server` through libpq and through raw protocol
 * bytes: prepared statements with text and binary parameters and results,
 * Describe, error fields, Execute with a row limit (PortalSuspended),
 * COPY FROM STDIN / TO STDOUT (PQputCopyData, PQputCopyEnd with and without
 * an error, PQgetCopyData), PQcancel, 50 concurrent clients, the connection limit, SCRAM-SHA-256
 * logins, and malformed input that must close only its own connection.
 * Starts its own servers from $RACKDB on free loopback ports.
 */
#include <arpa/inet.h>
#include <libpq-fe.h>
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
    pgw_buf b = {0};
    size_t m = pgw_msg_begin(&b, 'Q');
    pgw_put_cstr(&b, "SET threads = 1; CALL dbgen(sf = 1)");
    pgw_msg_end(&b, m);
    send_all(fd, b.data, b.len);
    pgw_buf_free(&b);
    struct timespec ts = {0, 300000000L};
    nanosleep(&ts, NULL);
    close(fd);
    for (int i = 0; i < 200 && log_count(&main_server, "(client went away)") == before; i++) {
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

#define CLIENTS 50

static void *client_main(void *arg)
{
    char *answer = arg;
    PGconn *c = conn();
    answer[0] = '\0';
    if (PQstatus(c) != CONNECTION_OK) {
        snprintf(answer, 256, "connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        PGresult *r = PQexecParams(c, "SELECT x FROM shared WHERE x >= $1 ORDER BY x", 1,
                                   (Oid[]){23}, (const char *[]){"2"}, NULL, NULL, 0);
        for (int row = 0; row < PQntuples(r) && n < 200; row++)
            n += (size_t)snprintf(answer + n, 256 - n, "%s,", PQgetvalue(r, row, 0));
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            n += (size_t)snprintf(answer + n, 256 - n, "%s", PQresultErrorMessage(r));
        PQclear(r);
    }
    PQfinish(c);
    return NULL;
}

static void test_concurrent(void)
{
    PGconn *c = conn();
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    REQUIRE(exec_ok(c, "CREATE TABLE shared (x INTEGER)"));
    REQUIRE(exec_ok(c, "INSERT INTO shared VALUES (3), (1), (2)"));
    static char answers[CLIENTS][256];
    pthread_t t[CLIENTS];
    for (int i = 0; i < CLIENTS; i++)
        pthread_create(&t[i], NULL, client_main, answers[i]);
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < CLIENTS; i++)
        CHECK_STREQ(answers[i], "2,3,2,3,2,3,");
    CHECK(exec_ok(c, "DROP TABLE shared"));
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
