/*
 * server_tls.c — TLS for `rackdb server` (--tls-cert/--tls-key) through
 * OpenSSL's libssl.
 *
 * The server holds one SSL_CTX (certificate chain and key loaded once at
 * start, TLS 1.2 or newer); a connection whose SSLRequest is answered 'S'
 * gets its own SSL object over its socket, and from then on every byte of
 * the connection goes through srv_tls_send/srv_tls_recv. The handshake runs
 * under the startup timeout that the socket already carries, so a client
 * that stalls mid-handshake cannot hold its thread forever.
 */
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

#include "cli/server.h"

/* The oldest queued OpenSSL error as text (the queue is per thread). */
static void last_error(char *buf, size_t cap)
{
    unsigned long code = ERR_get_error();
    if (code)
        ERR_error_string_n(code, buf, cap);
    else
        snprintf(buf, cap, "unknown TLS error");
    ERR_clear_error();
}

sto_status srv_tls_load(const char *cert_file, const char *key_file, SSL_CTX **out)
{
    *out = NULL;
    char why[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        last_error(why, sizeof(why));
        return sto_error(STO_INTERNAL_ERROR, "cannot create a TLS context: %s", why);
    }
    /* PostgreSQL 15 servers default to TLS 1.2 as the minimum too. */
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* A connection is closed without a session cache lookup ever mattering:
     * clients reconnect rarely, and a cache would be shared mutable state. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    sto_status st = STO_OK;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
        last_error(why, sizeof(why));
        st = sto_error(STO_IO_ERROR, "cannot load the TLS certificate \"%s\": %s", cert_file, why);
    } else if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
        last_error(why, sizeof(why));
        st = sto_error(STO_IO_ERROR, "cannot load the TLS key \"%s\": %s", key_file, why);
    } else if (SSL_CTX_check_private_key(ctx) != 1) {
        last_error(why, sizeof(why));
        st = sto_error(STO_IO_ERROR, "the TLS key \"%s\" does not match the certificate: %s",
                       key_file, why);
    }
    if (st) {
        SSL_CTX_free(ctx);
        return st;
    }
    *out = ctx;
    return STO_OK;
}

void srv_tls_free(SSL_CTX *ctx)
{
    SSL_CTX_free(ctx);
}

bool srv_tls_accept(srv_conn *c, char *why, size_t cap)
{
    ERR_clear_error();
    SSL *ssl = SSL_new(c->srv->tls);
    if (!ssl || SSL_set_fd(ssl, c->fd) != 1) {
        last_error(why, cap);
        SSL_free(ssl);
        return false;
    }
    int rc = SSL_accept(ssl);
    if (rc != 1) {
        int kind = SSL_get_error(ssl, rc);
        if (kind == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
            snprintf(why, cap, "the client closed the connection during the TLS handshake");
        else
            last_error(why, cap);
        SSL_free(ssl);
        return false;
    }
    c->tls = ssl;
    return true;
}

long srv_tls_send(srv_conn *c, const void *data, size_t len)
{
    ERR_clear_error();
    size_t done = 0;
    int rc = SSL_write_ex(c->tls, data, len, &done);
    return rc == 1 ? (long)done : -1;
}

long srv_tls_recv(srv_conn *c, void *buf, size_t cap)
{
    ERR_clear_error();
    size_t got = 0;
    int rc = SSL_read_ex(c->tls, buf, cap, &got);
    if (rc == 1) return (long)got;
    /* close_notify is an orderly end, like recv() returning 0 */
    return SSL_get_error(c->tls, rc) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

void srv_tls_end(srv_conn *c)
{
    if (!c->tls) return;
    /* One close_notify, without waiting for the client's: the socket is
     * closed right after, as PostgreSQL's backend does. */
    ERR_clear_error();
    SSL_shutdown(c->tls);
    ERR_clear_error();
    SSL_free(c->tls);
    c->tls = NULL;
}
