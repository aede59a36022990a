/*
 * scram.c — SCRAM-SHA-256 with OpenSSL's libcrypto (see scram.h).
 *
 *   SaltedPassword  = PBKDF2-HMAC-SHA-256(password, salt, iterations)
 *   ClientKey       = HMAC(SaltedPassword, "Client Key")
 *   StoredKey       = SHA-256(ClientKey)
 *   ServerKey       = HMAC(SaltedPassword, "Server Key")
 *   AuthMessage     = client-first-bare "," server-first "," client-final-without-proof
 *   ClientSignature = HMAC(StoredKey, AuthMessage);  proof = ClientKey XOR ClientSignature
 *   ServerSignature = HMAC(ServerKey, AuthMessage)
 * The server checks SHA-256(proof XOR ClientSignature) == StoredKey.
 */
#include "net/pgwire/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_LEN 32

static sto_status auth_failed(const pgw_scram *s)
{
    return sto_error("28P01", "password authentication failed for user \"%s\"", s->user);
}

static sto_status malformed(const char *what)
{
    return sto_error(STO_PROTOCOL_VIOLATION, "malformed SCRAM message (%s)", what);
}

static bool hmac(const unsigned char *key, size_t key_len, const void *data, size_t len,
                 unsigned char out[KEY_LEN])
{
    unsigned int n = KEY_LEN;
    return HMAC(EVP_sha256(), key, (int)key_len, data, len, out, &n) != NULL;
}

/* base64 of data (malloc'd, NUL-terminated). */
static char *b64_encode(const unsigned char *data, size_t len)
{
    char *out = malloc(4 * ((len + 2) / 3) + 1);
    if (out) EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    return out;
}

/* Decodes base64 text[0, len) into out (cap bytes); -1 when malformed. */
static int b64_decode(const char *text, size_t len, unsigned char *out, size_t cap)
{
    if (len % 4 || len / 4 * 3 > cap + 2 || len == 0) return -1;
    unsigned char tmp[256];
    if (len / 4 * 3 > sizeof(tmp)) return -1;
    int n = EVP_DecodeBlock(tmp, (const unsigned char *)text, (int)len);
    if (n < 0) return -1;
    if (text[len - 1] == '=') n--;
    if (text[len - 2] == '=') n--;
    if ((size_t)n > cap) return -1;
    memcpy(out, tmp, (size_t)n);
    return n;
}

static bool derive(const char *password, const unsigned char *salt, size_t salt_len,
                   unsigned char stored[KEY_LEN], unsigned char server[KEY_LEN],
                   unsigned char client_key[KEY_LEN])
{
    unsigned char salted[KEY_LEN];
    if (!PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)salt_len,
                           PGW_SCRAM_ITERATIONS, EVP_sha256(), KEY_LEN, salted))
        return false;
    bool ok = hmac(salted, KEY_LEN, "Client Key", 10, client_key) &&
              hmac(salted, KEY_LEN, "Server Key", 10, server) &&
              SHA256(client_key, KEY_LEN, stored) != NULL;
    OPENSSL_cleanse(salted, sizeof(salted));
    return ok;
}

sto_status pgw_scram_begin(pgw_scram *s, const char *user, const char *password)
{
    *s = (pgw_scram){0};
    snprintf(s->user, sizeof(s->user), "%s", user);
    s->known = password != NULL;
    if (RAND_bytes(s->salt, sizeof(s->salt)) != 1)
        return sto_error(STO_INTERNAL_ERROR, "could not generate a random salt");
    unsigned char client_key[KEY_LEN];
    if (password) {
        if (!derive(password, s->salt, sizeof(s->salt), s->stored_key, s->server_key, client_key))
            return sto_error(STO_INTERNAL_ERROR, "SCRAM key derivation failed");
        OPENSSL_cleanse(client_key, sizeof(client_key));
    } else if (RAND_bytes(s->stored_key, KEY_LEN) != 1 || RAND_bytes(s->server_key, KEY_LEN) != 1) {
        return sto_error(STO_INTERNAL_ERROR, "could not generate random keys");
    }
    return STO_OK;
}

void pgw_scram_end(pgw_scram *s)
{
    free(s->client_first_bare);
    free(s->server_first);
    free(s->nonce);
    OPENSSL_cleanse(s->stored_key, KEY_LEN);
    OPENSSL_cleanse(s->server_key, KEY_LEN);
    s->client_first_bare = s->server_first = s->nonce = NULL;
}

/* The value of attribute `a` ("r=...") within a comma-separated message
 * part [p, end): returns the start and sets *vlen, or NULL. */
static const char *attr(const char *p, const char *end, char a, size_t *vlen)
{
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if (stop - p >= 2 && p[0] == a && p[1] == '=') {
            *vlen = (size_t)(stop - p - 2);
            return p + 2;
        }
        p = comma ? comma + 1 : end;
    }
    return NULL;
}

sto_status pgw_scram_server_first(pgw_scram *s, const char *msg, size_t len, pgw_buf *out)
{
    if (!msg || memchr(msg, '\0', len)) return malformed("client-first-message");
    const char *end = msg + len;
    /* gs2 header: "n,," or "y,,"; "p=" asks for channel binding we do not offer */
    if (len < 3 || (msg[0] != 'n' && msg[0] != 'y') || msg[1] != ',')
        return msg[0] == 'p' ? sto_error(STO_PROTOCOL_VIOLATION, "channel binding is not supported")
                             : malformed("gs2 header");
    const char *comma = memchr(msg + 2, ',', len - 2);
    if (!comma) return malformed("gs2 header");
    const char *bare = comma + 1;
    size_t rlen;
    const char *r = attr(bare, end, 'r', &rlen);
    if (!r || rlen == 0 || rlen > 512) return malformed("client nonce");
    for (size_t i = 0; i < rlen; i++)
        if (r[i] < 0x21 || r[i] > 0x7e || r[i] == ',') return malformed("client nonce");
    unsigned char raw[18];
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return sto_error(STO_INTERNAL_ERROR, "could not generate a nonce");
    char *snonce = b64_encode(raw, sizeof(raw));
    char *salt = b64_encode(s->salt, sizeof(s->salt));
    s->client_first_bare = strndup(bare, (size_t)(end - bare));
    s->nonce = malloc(rlen + 32);
    s->server_first = malloc(rlen + 128);
    sto_status st = STO_OK;
    if (!snonce || !salt || !s->client_first_bare || !s->nonce || !s->server_first) {
        st = sto_error_oom();
    } else {
        snprintf(s->nonce, rlen + 32, "%.*s%s", (int)rlen, r, snonce);
        snprintf(s->server_first, rlen + 128, "r=%s,s=%s,i=%d", s->nonce, salt,
                 PGW_SCRAM_ITERATIONS);
        pgw_buf_append_str(out, s->server_first);
    }
    free(snonce);
    free(salt);
    return st;
}

sto_status pgw_scram_server_final(pgw_scram *s, const char *msg, size_t len, pgw_buf *out)
{
    if (!s->server_first) return malformed("unexpected client-final-message");
    if (!msg || memchr(msg, '\0', len)) return malformed("client-final-message");
    const char *end = msg + len;
    size_t clen, rlen, plen;
    const char *c = attr(msg, end, 'c', &clen);
    const char *r = attr(msg, end, 'r', &rlen);
    const char *p = attr(msg, end, 'p', &plen);
    if (!c || !r || !p || p < msg + 4 || p[-3] != ',') return malformed("client-final-message");
    /* c= is base64 of the gs2 header: "n,," or "y,," */
    if (!((clen == 4 && (memcmp(c, "biws", 4) == 0 || memcmp(c, "eSws", 4) == 0))))
        return malformed("channel binding");
    if (rlen != strlen(s->nonce) || memcmp(r, s->nonce, rlen) != 0) return malformed("nonce");
    unsigned char proof[KEY_LEN];
    if (b64_decode(p, plen, proof, sizeof(proof)) != KEY_LEN) return malformed("proof");

    /* client-final-message-without-proof ends before ",p=" */
    size_t without_proof = (size_t)(p - 3 - msg);
    size_t alen = strlen(s->client_first_bare) + strlen(s->server_first) + without_proof + 3;
    char *auth = malloc(alen);
    if (!auth) return sto_error_oom();
    int an = snprintf(auth, alen, "%s,%s,%.*s", s->client_first_bare, s->server_first,
                      (int)without_proof, msg);
    unsigned char sig[KEY_LEN], client_key[KEY_LEN], check[KEY_LEN], server_sig[KEY_LEN];
    bool ok = hmac(s->stored_key, KEY_LEN, auth, (size_t)an, sig) &&
              hmac(s->server_key, KEY_LEN, auth, (size_t)an, server_sig);
    free(auth);
    if (!ok) return sto_error(STO_INTERNAL_ERROR, "HMAC failed");
    for (int i = 0; i < KEY_LEN; i++)
        client_key[i] = proof[i] ^ sig[i];
    SHA256(client_key, KEY_LEN, check);
    if (!s->known || CRYPTO_memcmp(check, s->stored_key, KEY_LEN) != 0) return auth_failed(s);
    char *v = b64_encode(server_sig, KEY_LEN);
    if (!v) return sto_error_oom();
    pgw_buf_append_str(out, "v=");
    pgw_buf_append_str(out, v);
    free(v);
    return STO_OK;
}

char *pgw_scram_client_final(const char *client_first_bare, const char *server_first,
                             const char *password)
{
    const char *end = server_first + strlen(server_first);
    size_t rlen, slen, ilen;
    const char *r = attr(server_first, end, 'r', &rlen);
    const char *salt_b64 = attr(server_first, end, 's', &slen);
    const char *iters = attr(server_first, end, 'i', &ilen);
    unsigned char salt[64];
    int salt_len = salt_b64 ? b64_decode(salt_b64, slen, salt, sizeof(salt)) : -1;
    if (!r || salt_len < 0 || !iters || atoi(iters) != PGW_SCRAM_ITERATIONS) return NULL;
    unsigned char stored[KEY_LEN], server[KEY_LEN], client_key[KEY_LEN], sig[KEY_LEN];
    if (!derive(password, salt, (size_t)salt_len, stored, server, client_key)) return NULL;
    size_t cap = strlen(client_first_bare) + strlen(server_first) + rlen + 128;
    char *without_proof = malloc(cap), *auth = malloc(cap), *out = malloc(cap + 64);
    char *proof_b64 = NULL;
    if (!without_proof || !auth || !out) goto fail;
    int wn = snprintf(without_proof, cap, "c=biws,r=%.*s", (int)rlen, r);
    int an = snprintf(auth, cap, "%s,%s,%s", client_first_bare, server_first, without_proof);
    if (!hmac(stored, KEY_LEN, auth, (size_t)an, sig)) goto fail;
    for (int i = 0; i < KEY_LEN; i++)
        client_key[i] ^= sig[i];
    proof_b64 = b64_encode(client_key, KEY_LEN);
    if (!proof_b64) goto fail;
    snprintf(out, cap + 64, "%.*s,p=%s", wn, without_proof, proof_b64);
    free(proof_b64);
    free(without_proof);
    free(auth);
    return out;
fail:
    free(without_proof);
    free(auth);
    free(out);
    return NULL;
}
