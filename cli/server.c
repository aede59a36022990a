/*
 * server.c — `rackdb server`: listens, accepts, and keeps the table of
 * connections.
 *
 *   rackdb server [--host 127.0.0.1] [--port 5432] [--password-file FILE]
 *                 [--tls-cert FILE --tls-key FILE]
 *                 [--max-connections N] [--max-message-size BYTES]
 *                 [--cluster FILE --rank I [--transport tcp|verbs|auto]] [DIR]
 *
 * Threads: the main thread waits on the listening socket and a signalfd
 * (SIGINT/SIGTERM are blocked everywhere and read from there, so no signal
 * handler and no global state are needed); each connection gets its own
 * thread (server_conn.c); a watchdog thread polls the sockets of
 * connections whose statement is running and interrupts the statement when
 * the client hung up. All sessions share one instance, and through it the
 * engine's worker pool. On a signal the server stops accepting, interrupts
 * every running statement, shuts every socket down, waits for the
 * connection threads and closes the instance.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "cli/commands.h"
#include "cli/server.h"
#include "cli/server_cluster.h"

#define EXIT_USAGE        2
#define WATCHDOG_EVERY_MS 50

static const char server_usage[] =
    "usage: rackdb server [--host ADDR] [--port N] [--password-file FILE]\n"
    "                     [--tls-cert FILE --tls-key FILE]\n"
    "                     [--max-connections N] [--max-message-size BYTES]\n"
    "                     [--cluster FILE --rank I [--transport tcp|verbs|auto]] [DIR]\n"
    "\n"
    "Serves DIR (or an in-memory database) over the PostgreSQL protocol.\n"
    "  --host ADDR             address to listen on (default 127.0.0.1)\n"
    "  --port N                TCP port (default 5432)\n"
    "  --password-file FILE    lines user:password; enables SCRAM-SHA-256\n"
    "                          (default: trust, any user)\n"
    "  --tls-cert FILE         PEM certificate (chain): SSLRequest gets TLS\n"
    "  --tls-key FILE          its PEM private key\n"
    "  --max-connections N     more clients are refused with 53300 (default 100)\n"
    "  --max-message-size B    larger messages close the connection (default 64MB)\n"
    "  --cluster FILE          one server of a cluster: FILE lists host:port per rank\n"
    "                          (the servers' own links); rank 0 coordinates queries\n"
    "  --rank I                this server's line in FILE, counting from 0\n"
    "  --transport T           tcp, verbs (RDMA) or auto (default: auto)\n"
    "  --peer-timeout-ms N     a silent server fails the cluster after N ms (5000)\n";

bool srv_register(srv_server *srv, srv_conn *c)
{
    bool ok = false;
    pthread_mutex_lock(&srv->lock);
    for (int i = 0; !srv->stopping && i < srv->max_connections; i++) {
        if (srv->slots[i]) continue;
        srv->slots[i] = c;
        c->pid = (int32_t)(++srv->next_pid & 0x7fffffff);
        uint32_t key = 0;
        if (RAND_bytes((unsigned char *)&key, sizeof(key)) != 1)
            key = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)i;
        c->key = (int32_t)key;
        ok = true;
        break;
    }
    pthread_mutex_unlock(&srv->lock);
    return ok;
}

void srv_unregister(srv_server *srv, srv_conn *c)
{
    pthread_mutex_lock(&srv->lock);
    for (int i = 0; i < srv->max_connections; i++)
        if (srv->slots[i] == c) srv->slots[i] = NULL;
    pthread_mutex_unlock(&srv->lock);
}

void srv_cancel(srv_server *srv, int32_t pid, int32_t key)
{
    pthread_mutex_lock(&srv->lock);
    for (int i = 0; i < srv->max_connections; i++) {
        srv_conn *c = srv->slots[i];
        if (c && c->pid == pid && c->key == key) {
            if (atomic_load(&c->busy) && c->session) rackdb_interrupt(c->session);
            fprintf(stderr, "rackdb server: cancel request for connection %d\n", pid);
        }
    }
    pthread_mutex_unlock(&srv->lock);
}

void srv_forget(srv_server *srv, srv_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else if (srv->all == c)
        srv->all = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

const char *srv_password_of(const srv_server *srv, const char *user)
{
    for (int i = 0; i < srv->npasswords; i++)
        if (strcmp(srv->passwords[i].user, user) == 0) return srv->passwords[i].password;
    return NULL;
}

/* Interrupts the statement of every client that has hung up. */
static void *watchdog_main(void *arg)
{
    srv_server *srv = arg;
    for (;;) {
        pthread_mutex_lock(&srv->lock);
        bool stop = srv->stopping;
        for (int i = 0; !stop && i < srv->max_connections; i++) {
            srv_conn *c = srv->slots[i];
            if (!c || !atomic_load(&c->busy)) continue;
            struct pollfd p = {c->fd, POLLRDHUP, 0};
            /* again on every round while the statement runs: an interrupt
             * that lands just before the statement starts is cleared by it */
            if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
                atomic_store(&c->peer_gone, true);
                rackdb_interrupt(c->session);
            }
        }
        pthread_mutex_unlock(&srv->lock);
        if (stop) return NULL;
        struct timespec ts = {0, WATCHDOG_EVERY_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static void free_passwords(srv_server *srv)
{
    for (int i = 0; i < srv->npasswords; i++) {
        free(srv->passwords[i].user);
        free(srv->passwords[i].password);
    }
    free(srv->passwords);
    srv->passwords = NULL;
    srv->npasswords = 0;
}

/* Reads user:password lines; blank lines and lines starting with # are
 * skipped. */
static bool load_passwords(srv_server *srv, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rackdb server: cannot read %s: %s\n", path, strerror(errno));
        return false;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;
    bool ok = true;
    srv->passwords = calloc(1, sizeof(srv_password)); /* trust is off even when empty */
    if (!srv->passwords) ok = false;
    while (ok && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0 || line[0] == '#') continue;
        char *colon = strchr(line, ':');
        if (!colon || colon == line) {
            fprintf(stderr, "rackdb server: %s:%d: expected user:password\n", path, lineno);
            ok = false;
            break;
        }
        srv_password *grown =
            realloc(srv->passwords, (size_t)(srv->npasswords + 1) * sizeof(srv_password));
        if (!grown) {
            ok = false;
            break;
        }
        srv->passwords = grown;
        *colon = '\0';
        srv_password *p = &srv->passwords[srv->npasswords];
        p->user = strdup(line);
        p->password = strdup(colon + 1);
        srv->npasswords++;
        if (!p->user || !p->password) ok = false;
    }
    free(line);
    fclose(f);
    return ok;
}

static int listen_on(const char *host, const char *port)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc) {
        fprintf(stderr, "rackdb server: %s:%s: %s\n", host, port, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) break;
        fprintf(stderr, "rackdb server: cannot listen on %s:%s: %s\n", host, port, strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static void peer_name(const struct sockaddr_storage *ss, char *out, size_t cap)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        port = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        port = ntohs(a->sin6_port);
    }
    snprintf(out, cap, "%s:%d", host, port);
}

static void start_connection(srv_server *srv, int fd, const char *peer)
{
    srv_conn *c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return;
    }
    c->srv = srv;
    c->fd = fd;
    snprintf(c->peer, sizeof(c->peer), "%s", peer);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&srv->lock);
    srv->threads++;
    c->next = srv->all;
    if (srv->all) srv->all->prev = c;
    srv->all = c;
    pthread_mutex_unlock(&srv->lock);
    pthread_t t;
    if (pthread_create(&t, &attr, srv_conn_main, c) != 0) {
        fprintf(stderr, "rackdb server: %s: cannot start a thread\n", peer);
        pthread_mutex_lock(&srv->lock);
        srv->threads--;
        srv_forget(srv, c);
        pthread_mutex_unlock(&srv->lock);
        close(fd);
        free(c);
    }
    pthread_attr_destroy(&attr);
}

/* Accepts until SIGINT or SIGTERM arrives on sigfd. */
static void accept_loop(srv_server *srv, int lfd, int sigfd)
{
    for (;;) {
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {sigfd, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "rackdb server: poll: %s\n", strerror(errno));
            return;
        }
        if (p[1].revents) {
            struct signalfd_siginfo si;
            if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                fprintf(stderr, "rackdb server: %s, shutting down\n",
                        si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
            return;
        }
        if (!p[0].revents) continue;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
                fprintf(stderr, "rackdb server: accept: %s\n", strerror(errno));
            if (errno == EMFILE || errno == ENFILE) {
                struct timespec ts = {0, 100000000L};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        char peer[64];
        peer_name(&ss, peer, sizeof(peer));
        start_connection(srv, fd, peer);
    }
}

/* Stops every connection and waits for their threads. */
static void stop_all(srv_server *srv)
{
    pthread_mutex_lock(&srv->lock);
    srv->stopping = true;
    for (srv_conn *c = srv->all; c; c = c->next) {
        if (c->session && atomic_load(&c->busy)) rackdb_interrupt(c->session);
        shutdown(c->fd, SHUT_RDWR);
    }
    while (srv->threads > 0)
        pthread_cond_wait(&srv->idle, &srv->lock);
    pthread_mutex_unlock(&srv->lock);
}

static bool parse_count(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return false;
    *out = v;
    return true;
}

int cli_server(int argc, char **argv)
{
    const char *host = "127.0.0.1", *port = "5432", *password_file = NULL, *dir = NULL;
    const char *tls_cert = NULL, *tls_key = NULL;
    cli_cluster_options cluster = {NULL, -1, MUX_TRANSPORT_AUTO, 0};
    long max_conn = 100, max_msg = PGW_DEFAULT_MAX_MSG;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(server_usage, stdout);
            return 0;
        } else if (a[0] == '-' && !v) {
            fprintf(stderr, "rackdb server: %s needs an argument\n", a);
            return EXIT_USAGE;
        } else if (strcmp(a, "--host") == 0) {
            host = argv[++i];
        } else if (strcmp(a, "--port") == 0) {
            if (!parse_count(v, 1, 65535, &n)) goto bad_value;
            port = argv[++i];
        } else if (strcmp(a, "--password-file") == 0) {
            password_file = argv[++i];
        } else if (strcmp(a, "--tls-cert") == 0) {
            tls_cert = argv[++i];
        } else if (strcmp(a, "--tls-key") == 0) {
            tls_key = argv[++i];
        } else if (strcmp(a, "--max-connections") == 0) {
            if (!parse_count(v, 1, 100000, &max_conn)) goto bad_value;
            i++;
        } else if (strcmp(a, "--cluster") == 0) {
            cluster.file = argv[++i];
        } else if (strcmp(a, "--rank") == 0) {
            if (!parse_count(v, 0, MUX_MAX_SERVERS - 1, &n)) goto bad_value;
            cluster.rank = (int)n;
            i++;
        } else if (strcmp(a, "--transport") == 0) {
            sto_status tst = mux_transport_parse(v, &cluster.transport);
            if (tst) {
                sto_status_free(tst);
                goto bad_value;
            }
            i++;
        } else if (strcmp(a, "--peer-timeout-ms") == 0) {
            if (!parse_count(v, 100, 600000, &n)) goto bad_value;
            cluster.peer_timeout_ms = (int)n;
            i++;
        } else if (strcmp(a, "--max-message-size") == 0) {
            if (!parse_count(v, 1024, 1L << 30, &max_msg)) goto bad_value;
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "rackdb server: unknown option \"%s\"\n%s", a, server_usage);
            return EXIT_USAGE;
        } else if (!dir) {
            dir = a;
        } else {
            fprintf(stderr, "rackdb server: more than one directory given\n");
            return EXIT_USAGE;
        }
        continue;
    bad_value:
        fprintf(stderr, "rackdb server: invalid value \"%s\" for %s\n", v, a);
        return EXIT_USAGE;
    }

    if (!tls_cert != !tls_key) {
        fprintf(stderr, "rackdb server: --tls-cert and --tls-key go together\n");
        return EXIT_USAGE;
    }
    if (!cluster.file != (cluster.rank < 0)) {
        fprintf(stderr, "rackdb server: --cluster and --rank go together\n");
        return EXIT_USAGE;
    }
    srv_server srv = {.max_connections = (int)max_conn, .max_message = (size_t)max_msg};
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.idle, NULL);
    int status = 1, lfd = -1, sigfd = -1;
    bool watchdog = false;
    pthread_t watchdog_thread;
    if (password_file && !load_passwords(&srv, password_file)) goto out;
    if (tls_cert) {
        sto_status st = srv_tls_load(tls_cert, tls_key, &srv.tls);
        if (st) {
            fprintf(stderr, "rackdb server: %s\n", st->message);
            sto_status_free(st);
            goto out;
        }
    }
    srv.slots = calloc((size_t)max_conn, sizeof(srv_conn *));
    if (!srv.slots) goto out;

    /* Block the signals before any thread starts, so all inherit the mask
     * and only the signalfd sees them; a client that vanishes must not kill
     * the server with SIGPIPE. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sigfd < 0) goto out;

    rackdb_error *err = NULL;
    if (rackdb_open(dir, &srv.db, &err) != RACKDB_OK) {
        fprintf(stderr, "rackdb server: cannot open %s: %s\n", dir ? dir : "an in-memory database",
                rackdb_error_message(err));
        rackdb_error_free(err);
        goto out;
    }
    if (cluster.file) {
        sto_status cst = cli_cluster_start(srv.db, &cluster, &srv.cluster);
        if (cst) {
            fprintf(stderr, "rackdb server: cannot join the cluster: %s\n", cst->message);
            sto_status_free(cst);
            goto out;
        }
    }
    lfd = listen_on(host, port);
    if (lfd < 0) goto out;
    if (pthread_create(&watchdog_thread, NULL, watchdog_main, &srv) != 0) goto out;
    watchdog = true;
    fprintf(stderr, "rackdb server: listening on %s:%s (%s, %s%s, max %ld connections)\n", host,
            port, dir ? dir : "in memory", srv.passwords ? "scram-sha-256" : "trust",
            srv.tls ? ", TLS" : "", max_conn);
    accept_loop(&srv, lfd, sigfd);
    close(lfd);
    lfd = -1;
    status = 0;
out:
    stop_all(&srv);
    if (watchdog) pthread_join(watchdog_thread, NULL);
    if (lfd >= 0) close(lfd);
    if (sigfd >= 0) close(sigfd);
    cli_cluster_stop(srv.cluster);
    rackdb_close(srv.db);
    free(srv.slots);
    free_passwords(&srv);
    srv_tls_free(srv.tls);
    pthread_cond_destroy(&srv.idle);
    pthread_mutex_destroy(&srv.lock);
    if (status == 0) fprintf(stderr, "rackdb server: stopped\n");
    return status;
}
