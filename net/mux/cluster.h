/*
 * cluster.h — who the servers of a cluster are: the cluster file.
 *
 * A cluster file has one "host:port" line per server; line k (counting only
 * non-empty, non-comment lines) is rank k, which listens on that port. '#'
 * starts a comment; IPv6 hosts are written in brackets ("[::1]:7000"). The
 * cluster id, a checksum of the normalized list, is exchanged in the hello
 * handshake so that servers started with different files refuse each other.
 */
#ifndef RACKDB_NET_MUX_CLUSTER_H
#define RACKDB_NET_MUX_CLUSTER_H

#include "storage/status.h"
#include <stdint.h>

#define MUX_MAX_SERVERS 1024

typedef struct mux_endpoint {
    char host[256];
    char port[16];
} mux_endpoint;

typedef struct mux_cluster {
    int n;            /* number of servers */
    mux_endpoint *ep; /* ep[rank] */
    uint64_t id;      /* checksum of the list */
} mux_cluster;

/* Parses cluster-file text. Errors name the offending line. */
sto_status mux_cluster_parse(const char *text, mux_cluster *out);

/* Reads and parses a cluster file. */
sto_status mux_cluster_load(const char *path, mux_cluster *out);

void mux_cluster_free(mux_cluster *c);

#endif
