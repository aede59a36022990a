/*
 * cluster.c — parsing the cluster file (see cluster.h).
 */
#include "net/mux/cluster.h"
#include "storage/crc32c.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits one trimmed line into host and port. */
static sto_status parse_endpoint(const char *s, size_t len, int lineno, mux_endpoint *ep)
{
    const char *colon;
    const char *host = s;
    size_t hostlen;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close || close + 1 >= s + len || close[1] != ':')
            return sto_error(STO_INVALID_PARAMETER_VALUE,
                             "cluster file line %d: expected [host]:port", lineno);
        host = s + 1;
        hostlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = NULL;
        for (size_t i = 0; i < len; i++)
            if (s[i] == ':') colon = s + i;
        if (!colon)
            return sto_error(STO_INVALID_PARAMETER_VALUE,
                             "cluster file line %d: expected host:port", lineno);
        hostlen = (size_t)(colon - s);
    }
    size_t portlen = (size_t)(s + len - colon - 1);
    if (hostlen == 0 || hostlen >= sizeof ep->host || portlen == 0 || portlen >= sizeof ep->port)
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "cluster file line %d: host or port missing or too long", lineno);
    long port = 0;
    for (size_t i = 0; i < portlen; i++) {
        if (!isdigit((unsigned char)colon[1 + i]))
            return sto_error(STO_INVALID_PARAMETER_VALUE,
                             "cluster file line %d: port is not a number", lineno);
        port = port * 10 + (colon[1 + i] - '0');
        if (port > 65535) break;
    }
    if (port < 1 || port > 65535)
        return sto_error(STO_INVALID_PARAMETER_VALUE,
                         "cluster file line %d: port out of range 1..65535", lineno);
    memcpy(ep->host, host, hostlen);
    ep->host[hostlen] = 0;
    memcpy(ep->port, colon + 1, portlen);
    ep->port[portlen] = 0;
    return STO_OK;
}

sto_status mux_cluster_parse(const char *text, mux_cluster *out)
{
    memset(out, 0, sizeof *out);
    int cap = 0, lineno = 0;
    uint32_t crc = 0;
    sto_status st = STO_OK;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        lineno++;
        const char *s = line, *e = end;
        const char *hash = memchr(s, '#', (size_t)(e - s));
        if (hash) e = hash;
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
        if (e > s) {
            if (out->n == MUX_MAX_SERVERS) {
                st = sto_error(STO_INVALID_PARAMETER_VALUE, "cluster file: more than %d servers",
                               MUX_MAX_SERVERS);
                goto fail;
            }
            if (out->n == cap) {
                cap = cap ? 2 * cap : 8;
                mux_endpoint *ep = realloc(out->ep, (size_t)cap * sizeof *ep);
                if (!ep) {
                    st = sto_error_oom();
                    goto fail;
                }
                out->ep = ep;
            }
            st = parse_endpoint(s, (size_t)(e - s), lineno, &out->ep[out->n]);
            if (st) goto fail;
            crc = sto_crc32c(crc, s, (size_t)(e - s));
            crc = sto_crc32c(crc, "\n", 1);
            out->n++;
        }
        line = *end ? end + 1 : end;
    }
    if (out->n == 0) {
        st = sto_error(STO_INVALID_PARAMETER_VALUE, "cluster file names no server");
        goto fail;
    }
    out->id = (uint64_t)crc << 32 | (uint32_t)out->n;
    return STO_OK;
fail:
    mux_cluster_free(out);
    return st;
}

sto_status mux_cluster_load(const char *path, mux_cluster *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return sto_error(STO_UNDEFINED_FILE, "cluster file %s: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return sto_error_oom();
            }
            text = t;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(text);
        return sto_error(STO_IO_ERROR, "cluster file %s: read error", path);
    }
    text[len] = 0;
    sto_status st = mux_cluster_parse(text, out);
    free(text);
    return st ? sto_status_wrap(st, "%s", path) : STO_OK;
}

void mux_cluster_free(mux_cluster *c)
{
    free(c->ep);
    c->ep = NULL;
    c->n = 0;
}
