/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lacunad's resource limits: the settings that bound what clients can
 * make it hold (connections, requests, replies waiting to be sent,
 * partly received records, time spent idle or stuck), their defaults
 * and ranges (the settings table, config/gw_settings.c, declares them
 * as settings, also given as --set KEY=VALUE) and what those set to
 * auto come to. Each one is described in docs/lacunad.conf.5.md, LIMITS.
 *
 * A struct gw_limits lives inside struct gw_config and, like it, is
 * never changed once built; the transports read it when they start and
 * on every reload.
 */
#ifndef LACUNA_GW_LIMITS_H
#define LACUNA_GW_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The fd budget of RLIMIT_NOFILE (docs/lacunad.conf.5.md, LIMITS), each
 * "auto" taking its share of what the ones before it leave:
 *
 *   reserve           GW_FD_RESERVE: pools, exports, logs, listeners and
 *                     the fds an op holds only while it runs (READDIR,
 *                     COMMIT, I/O without an open)
 *   max_connections   (nofile - reserve) / 2, one fd each
 *   max_cached_files  left / 4, where left = nofile - reserve -
 *                     max_connections: up to two fds each, so half of left
 *   max_opens         (left - 2 * max_cached_files) / 3, three fds each
 *
 * so that connections + 2 x cached files + 3 x opens <= nofile - reserve
 * when the three are auto and not raised by their minimums.
 */
#define GW_FD_RESERVE 512
/* max_connections = auto: this share of the fds left after the reserve */
#define GW_CONNS_AUTO_DIV 2
#define GW_CONNS_MIN 4
#define GW_CONNS_MAX 1000000

#define GW_CONNS_CLIENT_DEFAULT 256
#define GW_RDMA_CONNS_DEFAULT 64 /* each pins 0.8 to 2.3 MiB of buffers */
#define GW_RDMA_CONNS_CLIENT_DEFAULT 16
#define GW_IDLE_TIMEOUT_DEFAULT 360 /* seconds; nfsd drops idle connections after 6 min */
#define GW_RECORD_TIMEOUT_DEFAULT 30
#define GW_SEND_TIMEOUT_DEFAULT 60
#define GW_STOP_TIMEOUT_DEFAULT 5 /* seconds replies may take to go out at stop */
#define GW_TIMEOUT_MAX 86400
#define GW_CONN_REQUESTS_DEFAULT 128
#define GW_CONN_REQUESTS_MAX 4096
#define GW_CONN_REPLY_BYTES_DEFAULT (16u * 1024 * 1024)
#define GW_CONN_REPLY_BYTES_MIN (64u * 1024)
#define GW_CONN_REPLY_BYTES_MAX (1024u * 1024 * 1024)
#define GW_CLIENT_RECORDS_DEFAULT 16
#define GW_CLIENT_RECORDS_MAX 65536
#define GW_CLIENT_REQUESTS_DEFAULT 128
#define GW_CLIENT_REQUESTS_MAX 65536
/*
 * max_clients = auto: GW_CLIENTS_PER_GIB per GiB of RAM (Linux nfsd's
 * rule), at least GW_CLIENTS_AUTO_MIN; max_sessions = auto: as many as
 * max_clients (a 4.1 client needs one); max_clients_per_address = auto:
 * max_clients / GW_CLIENTS_ADDR_AUTO_DIV, so one address never holds the
 * table (docs/lacunad.conf.5.md, LIMITS).
 */
#define GW_CLIENTS_PER_GIB 1024
#define GW_CLIENTS_AUTO_MIN 4096
#define GW_CLIENTS_ADDR_AUTO_DIV 2
#define GW_UNCONFIRMED_DEFAULT 256
#define GW_UNCONFIRMED_TIMEOUT_DEFAULT 20 /* seconds an unconfirmed client is kept */
#define GW_REPLY_CACHE_DEFAULT (64u * 1024 * 1024)
#define GW_REPLY_CACHE_MIN (64u * 1024)
#define GW_REPLY_CACHE_MAX (1024u * 1024 * 1024)
#define GW_STATE_MAX 1000000
/* max_cached_files = auto: this share of the fds left after the reserve and connections */
#define GW_CACHED_FILES_AUTO_DIV 4
#define GW_CACHED_FILE_FDS 2 /* the most a cached file object holds */
#define GW_CACHED_FILES_MIN 16
#define GW_CACHED_FILES_MAX 8192 /* auto never goes past it */
/* max_opens = auto: the fds the cache leaves of those, by the most an open holds */
#define GW_OPEN_FDS 3
#define GW_OPENS_MIN 16
#define GW_OPENS_CLIENT_DEFAULT 16384
#define GW_LOCK_OWNERS_DEFAULT 65536
#define GW_LOCK_OWNERS_CLIENT_DEFAULT 4096
#define GW_LOCKS_DEFAULT 1000000
#define GW_LOCKS_CLIENT_DEFAULT 16384
#define GW_STATE_LOCKS_MAX 100000000

struct gw_limits {
	unsigned int max_conns;	       /* 0: auto, from RLIMIT_NOFILE */
	unsigned int max_conns_client; /* per client address */
	unsigned int max_rdma_conns;   /* RPC-over-RDMA connections in all */
	unsigned int max_rdma_conns_client;
	unsigned int idle_timeout;     /* seconds; 0: never */
	unsigned int record_timeout;   /* seconds a started record may take; 0: never */
	unsigned int send_timeout;     /* seconds replies may wait unsent; 0: never */
	unsigned int stop_timeout;     /* seconds to finish and send replies at stop */
	unsigned int conn_requests;    /* requests out per connection */
	uint32_t conn_reply_bytes;     /* bytes of replies queued per connection */
	unsigned int client_records;   /* large records being received per address */
	unsigned int client_requests;  /* requests out (reply not sent) per address */
	unsigned int max_clients;      /* NFSv4 client records; 0: auto, from RAM */
	unsigned int max_clients_addr; /* of them from one address; 0: auto */
	unsigned int max_unconfirmed;  /* NFSv4 client records not confirmed yet */
	unsigned int unconfirmed_timeout; /* seconds kept unconfirmed or without a session */
	unsigned int max_sessions;	  /* NFSv4.1+ sessions in all; 0: auto */
	uint32_t max_reply_cache;      /* bytes of session slots' reply caches in all */
	unsigned int max_cached_files; /* file objects kept open; 0: auto, from RLIMIT_NOFILE */
	unsigned int max_opens;	       /* open stateids in all; 0: auto, from RLIMIT_NOFILE */
	unsigned int max_opens_client; /* open stateids per client */
	unsigned int max_lock_owners;  /* lock-owners in all */
	unsigned int max_lock_owners_client;
	unsigned int max_locks;	       /* byte-range locks (ranges) in all */
	unsigned int max_locks_client;
};

/* max_connections in force for a process allowed @nofile fds. */
unsigned int gw_limits_max_conns(const struct gw_limits *l, uint64_t nofile);
/* max_cached_files in force for a process allowed @nofile fds. */
unsigned int gw_limits_max_cached_files(const struct gw_limits *l, uint64_t nofile);
/* max_opens in force for a process allowed @nofile fds. */
unsigned int gw_limits_max_opens(const struct gw_limits *l, uint64_t nofile);
/* max_clients in force on a machine of @ram bytes. */
unsigned int gw_limits_max_clients(const struct gw_limits *l, uint64_t ram);
/* max_clients_per_address in force on a machine of @ram bytes. */
unsigned int gw_limits_max_clients_addr(const struct gw_limits *l, uint64_t ram);
/* max_sessions in force on a machine of @ram bytes. */
unsigned int gw_limits_max_sessions(const struct gw_limits *l, uint64_t ram);
/* The machine's RAM in bytes (1 GiB if it cannot be told). */
uint64_t gw_limits_ram(void);
/* The RLIMIT_NOFILE soft limit lacunad runs with (GW_CONNS_MAX if unlimited). */
uint64_t gw_limits_nofile(void);

#endif
