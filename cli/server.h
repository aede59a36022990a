/*
 * server.h — `rackdb server`: the PostgreSQL wire protocol server's parts.
 *
 * The protocol codec (framing, message decoding and encoding, SCRAM, binary
 * values, $n binding) lives in net/pgwire/ and knows nothing of the engine;
 * this program side runs it against the public API (include/rackdb.h):
 *
 *   server.c          options, the listening socket, signals, the table of
 *                     connections (limits, cancel keys) and the watchdog that
 *                     cancels the query of a client that went away
 *   server_conn.c     one thread per connection: startup, authentication,
 *                     the simple and extended query protocols, transactions
 *   server_result.c   a result as the protocol sees it: the engine's, or one
 *                     the server builds itself (catalog answers)
 *   server_catalog.c  what tools ask PostgreSQL's catalog for (version(),
 *                     SHOW server_version, psql's \dt and \d), answered from
 *                     rackdb's catalog
 *   server_tls.c      TLS after an SSLRequest (--tls-cert/--tls-key)
 */
#ifndef RACKDB_CLI_SERVER_H
#define RACKDB_CLI_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "net/pgwire/protocol.h"
#include "rackdb.h"
#include "storage/status.h"

typedef struct srv_conn srv_conn;
typedef struct ssl_ctx_st SSL_CTX; /* OpenSSL's, as <openssl/types.h> names them */
typedef struct ssl_st SSL;

/* One user:password line of --password-file. */
typedef struct srv_password {
    char *user, *password;
} srv_password;

typedef struct srv_server {
    rackdb *db;
    int max_connections;
    size_t max_message;
    srv_password *passwords; /* NULL: trust */
    int npasswords;
    SSL_CTX *tls;                /* NULL: SSLRequest is answered 'N' */
    struct cli_cluster *cluster; /* --cluster: this server's part (server_cluster.h) */

    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t idle;  /* signaled when threads reaches 0 */
    srv_conn **slots;     /* max_connections entries, NULL = free */
    srv_conn *all;        /* every connection thread's, registered or not */
    int threads;          /* connection threads alive */
    bool stopping;
    uint32_t next_pid;
} srv_server;

/* Registers c in a free slot and gives it a process id and secret key;
 * false when every slot is taken. */
bool srv_register(srv_server *srv, srv_conn *c);
void srv_unregister(srv_server *srv, srv_conn *c);

/* Takes c out of srv->all (srv->lock held). */
void srv_forget(srv_server *srv, srv_conn *c);

/* Cancels the running query of the connection with that key, if any. */
void srv_cancel(srv_server *srv, int32_t pid, int32_t key);

/* The password of user, NULL when unknown. */
const char *srv_password_of(const srv_server *srv, const char *user);

/* A result: the engine's (engine != NULL) or built here (rows of text). */
typedef struct srv_result {
    rackdb_result *engine;
    char tag[64];
    bool has_rows;
    uint32_t ncols;
    char **names;
    uint32_t *oids;
    uint64_t nrows;
    char **cells; /* nrows * ncols, NULL = SQL NULL */
} srv_result;

srv_result *srv_result_from_engine(rackdb_result *r); /* takes r; NULL if out of memory */
/* A result with these columns and no rows yet (tag "SELECT n" on finish). */
srv_result *srv_result_new(uint32_t ncols, const char *const *names, const uint32_t *oids);
srv_result *srv_result_new_tag(const char *tag);
bool srv_result_add_row(srv_result *r, const char *const *cells); /* copies */
void srv_result_finish(srv_result *r);                            /* sets "SELECT n" */
void srv_result_free(srv_result *r);

uint64_t srv_result_rows(const srv_result *r);
const char *srv_result_name(const srv_result *r, uint32_t col);
uint32_t srv_result_oid(const srv_result *r, uint32_t col);
int32_t srv_result_typmod(const srv_result *r, uint32_t col);
const char *srv_result_text(srv_result *r, uint64_t row, uint32_t col); /* NULL = NULL */

/* What the catalog layer needs to know of a connection. */
typedef struct srv_client_info {
    const char *user, *database;
    char application_name[64];
} srv_client_info;

/* Answers stmt when it is one of the catalog questions tools ask (or a SET
 * of a client parameter); false when the engine should run it. A reported
 * parameter change is appended as ParameterStatus to `notices`. */
bool srv_catalog_answer(rackdb *db, srv_client_info *info, const char *stmt, srv_result **out,
                        sto_status *err, pgw_buf *notices);

/* The server_version reported to clients. */
#define SRV_SERVER_VERSION "15.0"

/* A prepared statement (Parse) and a portal (Bind). */
typedef struct srv_stmt {
    struct srv_stmt *next;
    char *name, *query;
    int nparams;
    uint32_t *oids; /* nparams; 0 = unspecified */
} srv_stmt;

typedef struct srv_portal {
    struct srv_portal *next;
    char *name, *sql;
    int16_t *formats; /* result formats as Bind gave them */
    uint16_t nformats;
    srv_result *result; /* NULL until run */
    uint64_t sent;      /* rows already sent */
} srv_portal;

/* One client connection. The fields above `in` are shared with the
 * server's threads (under srv->lock, or atomic); the rest belong to the
 * connection's thread. */
struct srv_conn {
    srv_server *srv;
    srv_conn *prev, *next; /* in srv->all */
    int fd;
    SSL *tls; /* after an SSLRequest answered 'S': all I/O goes through it */
    char peer[64];
    int32_t pid, key;
    rackdb_session *session;
    atomic_bool busy;      /* a statement is running */
    atomic_bool peer_gone; /* the watchdog saw the client leave */

    char *in; /* received bytes not yet consumed: in[in_pos, in_len) */
    size_t in_len, in_cap, in_pos;
    pgw_buf out;
    char txn;          /* 'I' idle, 'T' in a transaction block, 'E' failed block */
    bool skip_to_sync; /* an extended-protocol error happened */
    srv_client_info info;
    char user[64], database[64];
    char options[256]; /* the startup parameter: -c name=value ... */
    srv_stmt *stmts;
    srv_portal *portals;

    /* COPY through CopyData messages (the session's rackdb_copy_io). */
    bool copy_out;            /* CopyOutResponse sent: CopyDone follows success */
    bool copy_in_ended;       /* CopyDone received */
    const char *copy_pending; /* unread part of the last CopyData (into in) */
    size_t copy_pending_len;
    char copy_fail[256]; /* the client's CopyFail message */
};

/* TLS (server_tls.c). srv_tls_load reads a PEM certificate chain and its
 * key; srv_tls_accept runs the handshake on c->fd and sets c->tls (false
 * with the reason in why); send/recv return bytes moved, 0 at the client's
 * close_notify, -1 on error; srv_tls_end sends close_notify and frees c->tls. */
sto_status srv_tls_load(const char *cert_file, const char *key_file, SSL_CTX **out);
void srv_tls_free(SSL_CTX *ctx);
bool srv_tls_accept(srv_conn *c, char *why, size_t cap);
long srv_tls_send(srv_conn *c, const void *data, size_t len);
long srv_tls_recv(srv_conn *c, void *buf, size_t cap);
void srv_tls_end(srv_conn *c);

/* Runs one accepted connection to its end and frees it (a thread body). */
void *srv_conn_main(void *arg);

#endif
