/*
 * scram.h — the server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as
 * PostgreSQL speaks it inside SASL authentication messages.
 *
 * Flow: the server announces the mechanism; the client's first message
 * (gs2 header, user name, client nonce) goes to pgw_scram_server_first,
 * which answers with the combined nonce, the salt and the iteration count;
 * the client's final message (channel binding, nonce, proof) goes to
 * pgw_scram_server_final, which verifies the proof and answers with the
 * server signature. The password file holds plain passwords, so each login
 * derives the keys from the password with a fresh random salt (4096 PBKDF2
 * iterations, as PostgreSQL). An unknown user gets random keys, so the
 * exchange looks the same and fails only at the proof, with the same error
 * as a wrong password. Passwords are used as given (no SASLprep).
 */
#ifndef RACKDB_NET_PGWIRE_SCRAM_H
#define RACKDB_NET_PGWIRE_SCRAM_H

#include <stdbool.h>
#include <stddef.h>

#include "net/pgwire/protocol.h"
#include "storage/status.h"

#define PGW_SCRAM_MECHANISM  "SCRAM-SHA-256"
#define PGW_SCRAM_ITERATIONS 4096

typedef struct pgw_scram {
    char user[128]; /* for the error message */
    bool known;     /* false: keys are random, the proof can never match */
    unsigned char salt[16];
    unsigned char stored_key[32], server_key[32];
    char *client_first_bare, *server_first, *nonce;
} pgw_scram;

/* Prepares an exchange for user, whose password is `password` (NULL: the
 * user is unknown). */
sto_status pgw_scram_begin(pgw_scram *s, const char *user, const char *password);
void pgw_scram_end(pgw_scram *s);

/* client-first-message -> server-first-message appended to out. */
sto_status pgw_scram_server_first(pgw_scram *s, const char *msg, size_t len, pgw_buf *out);

/* client-final-message -> server-final-message appended to out; a wrong proof
 * (or an unknown user) is 28P01. */
sto_status pgw_scram_server_final(pgw_scram *s, const char *msg, size_t len, pgw_buf *out);

/* The client's side, for tests: the client-final-message for the given
 * messages and password (malloc'd). */
char *pgw_scram_client_final(const char *client_first_bare, const char *server_first,
                             const char *password);

#endif
