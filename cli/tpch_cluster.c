/*
 * tpch_cluster.c — starting, using and stopping the local cluster of
 * `rackdb tpch run --servers N` (tpch_cluster.h).
 *
 * The servers' logs go to rankI.log in a fresh directory under $TMPDIR
 * (or /tmp), removed when the run ends well and kept (and named) when a
 * server failed, so its last words can be read.
 */
#include "cli/tpch_cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "engine/result.h"

#define READY_TIMEOUT_MS 120000 /* the servers connect, then rank 0 listens */
#define STOP_TIMEOUT_MS  10000

struct cli_tpch_cluster {
    int n;
    pid_t *pids; /* 0 once reaped */
    int *status;
    char dir[PATH_MAX];
    PGconn *conn;
    bool failed; /* keep the logs */
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* k free loopback ports: all bound at once so they differ, then released. */
static bool free_ports(int k, int *ports)
{
    int *fds = calloc((size_t)k, sizeof(*fds));
    bool ok = fds != NULL;
    for (int i = 0; ok && i < k; i++) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ok = fds[i] >= 0 && bind(fds[i], (struct sockaddr *)&a, sizeof(a)) == 0 &&
             getsockname(fds[i], (struct sockaddr *)&a, &len) == 0;
        if (ok)
            ports[i] = ntohs(a.sin_port);
        else if (fds[i] >= 0)
            close(fds[i]);
        if (!ok) {
            while (i-- > 0)
                close(fds[i]);
        }
    }
    for (int i = 0; ok && i < k; i++)
        close(fds[i]);
    free(fds);
    return ok;
}

/* Starts rank r; the child dies with the runner. */
static pid_t spawn(const cli_tpch_cluster *c, const char *exe, const char *file, int r, int port)
{
    char rank[16], portstr[16], log[PATH_MAX + 32];
    snprintf(rank, sizeof(rank), "%d", r);
    snprintf(portstr, sizeof(portstr), "%d", port);
    snprintf(log, sizeof(log), "%s/rank%d.log", c->dir, r);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execl(exe, "rackdb", "server", "--cluster", file, "--rank", rank, "--port", portstr,
          "--transport", "tcp", (char *)NULL);
    fprintf(stderr, "cannot run %s: %s\n", exe, strerror(errno));
    _exit(127);
}

/* A server that exited on its own; -1 when all run. */
static int exited(cli_tpch_cluster *c)
{
    for (int i = 0; i < c->n; i++) {
        if (!c->pids[i]) return i;
        if (waitpid(c->pids[i], &c->status[i], WNOHANG) == c->pids[i]) {
            c->pids[i] = 0;
            return i;
        }
    }
    return -1;
}

static void say_exited(cli_tpch_cluster *c, int r, char *err, size_t errsize)
{
    c->failed = true;
    snprintf(err, errsize, "server %d exited (status %d); its log is %s/rank%d.log", r,
             WIFEXITED(c->status[r]) ? WEXITSTATUS(c->status[r]) : 128 + WTERMSIG(c->status[r]),
             c->dir, r);
}

bool cli_tpch_cluster_start(int n, cli_tpch_cluster **out, char *err, size_t errsize)
{
    *out = NULL;
    cli_tpch_cluster *c = calloc(1, sizeof(*c));
    int *ports = calloc((size_t)(2 * n), sizeof(int));
    if (c) {
        c->pids = calloc((size_t)n, sizeof(*c->pids));
        c->status = calloc((size_t)n, sizeof(*c->status));
    }
    if (!c || !ports || !c->pids || !c->status) {
        snprintf(err, errsize, "out of memory");
        goto fail;
    }
    c->n = n;
    const char *tmp = getenv("TMPDIR");
    snprintf(c->dir, sizeof(c->dir), "%s/rackdb-cluster-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char exe[PATH_MAX];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (!mkdtemp(c->dir) || el <= 0) {
        snprintf(err, errsize, "cannot make %s or find this program: %s", c->dir, strerror(errno));
        c->dir[0] = '\0';
        goto fail;
    }
    exe[el] = '\0';
    if (!free_ports(2 * n, ports)) {
        snprintf(err, errsize, "cannot find %d free loopback ports", 2 * n);
        goto fail;
    }
    char file[PATH_MAX + 16];
    snprintf(file, sizeof(file), "%s/cluster", c->dir);
    FILE *f = fopen(file, "w");
    for (int i = 0; f && i < n; i++)
        fprintf(f, "127.0.0.1:%d\n", ports[i]);
    if (!f || fclose(f) != 0) {
        snprintf(err, errsize, "cannot write %s", file);
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        c->pids[i] = spawn(c, exe, file, i, ports[n + i]);
        if (c->pids[i] < 0) {
            c->pids[i] = 0;
            snprintf(err, errsize, "cannot start server %d: %s", i, strerror(errno));
            goto fail;
        }
    }
    char conninfo[128];
    snprintf(conninfo, sizeof(conninfo),
             "host=127.0.0.1 port=%d user=rackdb dbname=rackdb connect_timeout=5", ports[n]);
    double deadline = now_ms() + READY_TIMEOUT_MS;
    for (;;) {
        int r = exited(c);
        if (r >= 0) {
            say_exited(c, r, err, errsize);
            goto fail;
        }
        c->conn = PQconnectdb(conninfo);
        if (PQstatus(c->conn) == CONNECTION_OK) break;
        if (now_ms() > deadline) {
            c->failed = true;
            snprintf(err, errsize, "the coordinator did not take clients within %d s: %s",
                     READY_TIMEOUT_MS / 1000, PQerrorMessage(c->conn));
            goto fail;
        }
        PQfinish(c->conn);
        c->conn = NULL;
        sleep_ms(100);
    }
    free(ports);
    *out = c;
    return true;
fail:
    free(ports);
    cli_tpch_cluster_stop(c);
    return false;
}

/* The rows of a PGresult as a rackdb_result of text columns. */
static bool to_result(PGresult *pr, rackdb_result **out)
{
    int nc = PQnfields(pr), nr = PQntuples(pr);
    const char **names = calloc((size_t)nc + 1, sizeof(*names));
    char(*tmp)[16] = calloc((size_t)nc + 1, sizeof(*tmp));
    sto_type *types = calloc((size_t)nc + 1, sizeof(*types));
    sto_value *vals = calloc((size_t)nc + 1, sizeof(*vals));
    sto_schema *schema = NULL;
    sto_status st = (!names || !tmp || !types || !vals) ? sto_error_oom() : STO_OK;
    for (int i = 0; !st && i < nc; i++) {
        snprintf(tmp[i], sizeof(tmp[i]), "c%d", i + 1);
        names[i] = tmp[i];
        types[i] = sto_type_string(STO_TYPE_VARCHAR, 0);
    }
    if (!st) st = sto_schema_new((uint32_t)nc, names, types, NULL, &schema);
    if (!st) st = eng_result_new_rows(schema, out);
    for (int r = 0; !st && r < nr; r++) {
        for (int i = 0; i < nc; i++) {
            vals[i].is_null = PQgetisnull(pr, r, i);
            vals[i].v.str = sto_str_make(PQgetvalue(pr, r, i), (uint32_t)PQgetlength(pr, r, i));
        }
        st = eng_result_append_row(*out, vals);
    }
    if (st && *out) {
        rackdb_result_free(*out);
        *out = NULL;
    }
    bool ok = st == STO_OK;
    sto_status_free(st);
    sto_schema_free(schema);
    free(names);
    free(tmp);
    free(types);
    free(vals);
    return ok;
}

/* Whether the coordinator's connection broke because a server died. */
static void explain_failure(cli_tpch_cluster *c, char *err, size_t errsize)
{
    int r = exited(c);
    if (r < 0) return;
    size_t len = strlen(err);
    char more[PATH_MAX + 128];
    say_exited(c, r, more, sizeof(more));
    snprintf(err + len, len < errsize ? errsize - len : 0, " (%s)", more);
}

bool cli_tpch_cluster_run(cli_tpch_cluster *c, const char *sql, rackdb_result **rows, double *ms,
                          char *err, size_t errsize, bool *unsupported)
{
    *rows = NULL;
    *ms = 0;
    *unsupported = false;
    size_t total = strlen(sql);
    const char *p = sql;
    double t0 = now_ms();
    bool ok = true;
    while (ok) {
        size_t rest = total - (size_t)(p - sql);
        if (rackdb_is_blank(p, rest)) break;
        size_t len = rackdb_statement_length(p, rest);
        if (len == 0) len = rest;
        char *stmt = strndup(p, len);
        if (!stmt) {
            snprintf(err, errsize, "out of memory");
            ok = false;
            break;
        }
        PGresult *pr = PQexec(c->conn, stmt);
        free(stmt);
        p += len;
        ExecStatusType s = PQresultStatus(pr);
        if (s == PGRES_TUPLES_OK) {
            rackdb_result_free(*rows);
            *rows = NULL;
            if (!to_result(pr, rows)) {
                snprintf(err, errsize, "out of memory");
                ok = false;
            }
        } else if (s != PGRES_COMMAND_OK && s != PGRES_EMPTY_QUERY) {
            const char *state = pr ? PQresultErrorField(pr, PG_DIAG_SQLSTATE) : NULL;
            const char *msg = pr ? PQresultErrorField(pr, PG_DIAG_MESSAGE_PRIMARY) : NULL;
            snprintf(err, errsize, "%s", msg ? msg : PQerrorMessage(c->conn));
            *unsupported = state && strcmp(state, "0A000") == 0;
            ok = false;
        }
        PQclear(pr);
    }
    *ms = now_ms() - t0;
    if (!ok) {
        rackdb_result_free(*rows);
        *rows = NULL;
        if (PQstatus(c->conn) == CONNECTION_OK)
            PQclear(PQexec(c->conn, "DROP VIEW IF EXISTS revenue0"));
        else
            explain_failure(c, err, errsize);
    }
    return ok;
}

uint64_t cli_tpch_cluster_shuffle_bytes(cli_tpch_cluster *c)
{
    PGresult *pr = PQexec(c->conn, "SHOW shuffle_bytes");
    uint64_t v = 0;
    if (PQresultStatus(pr) == PGRES_TUPLES_OK && PQntuples(pr) == 1)
        v = strtoull(PQgetvalue(pr, 0, 0), NULL, 10);
    PQclear(pr);
    return v;
}

bool cli_tpch_cluster_stop(cli_tpch_cluster *c)
{
    if (!c) return true;
    if (c->conn) PQfinish(c->conn);
    bool clean = !c->failed;
    for (int i = 0; c->pids && i < c->n; i++)
        if (c->pids[i]) kill(c->pids[i], SIGTERM);
    double deadline = now_ms() + STOP_TIMEOUT_MS;
    for (int i = 0; c->pids && i < c->n; i++) {
        while (c->pids[i]) {
            pid_t w = waitpid(c->pids[i], &c->status[i], WNOHANG);
            if (w == c->pids[i] || (w < 0 && errno != EINTR)) {
                if (w < 0 || !WIFEXITED(c->status[i]) || WEXITSTATUS(c->status[i]) != 0)
                    clean = false;
                c->pids[i] = 0;
            } else if (now_ms() > deadline) {
                fprintf(stderr, "rackdb tpch run: server %d did not stop; killing it\n", i);
                kill(c->pids[i], SIGKILL);
                waitpid(c->pids[i], &c->status[i], 0);
                c->pids[i] = 0;
                clean = false;
            } else {
                sleep_ms(20);
            }
        }
    }
    if (c->dir[0]) {
        if (clean) {
            char path[PATH_MAX + 32];
            for (int i = 0; i < c->n; i++) {
                snprintf(path, sizeof(path), "%s/rank%d.log", c->dir, i);
                unlink(path);
            }
            snprintf(path, sizeof(path), "%s/cluster", c->dir);
            unlink(path);
            rmdir(c->dir);
        } else {
            fprintf(stderr, "rackdb tpch run: the servers' logs are in %s\n", c->dir);
        }
    }
    free(c->pids);
    free(c->status);
    free(c);
    return clean;
}
