/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the state layer is told of the call it acts for: the stateids as
 * the wire carries them, and the caller (struct nfs4_caller): the server
 * whose state table it uses, the configuration in force, the caller's
 * address, principal and credentials, the minor version, and the client
 * and session a 4.1 SEQUENCE found. The COMPOUND engine fills one per
 * COMPOUND (nfs4_set_caller(), nfs4_compound.c) and passes it down; the
 * state layer knows nothing of the COMPOUND itself nor of its reply.
 */
#ifndef LACUNA_NFS4_CALLER_H
#define LACUNA_NFS4_CALLER_H

#include <stdint.h>
#include <sys/socket.h>

#include "nfs4.h"

struct gw_config;
struct gw_cred;
struct gw_srv;
struct nfs4_client;
struct nfs4_session;

struct nfs4_stateid {
	uint32_t seqid;
	uint8_t other[NFS4_OTHER_SIZE];
};

struct nfs4_caller {
	struct gw_srv *srv;	     /* its state table (srv->state) and counters */
	const struct gw_config *cfg; /* the COMPOUND's (c->snap, held to its end); NULL: none */
	/* the address the call came from and its connection; NULL: no connection (unit tests) */
	const struct sockaddr_storage *peer;
	uint64_t conn_id;
	uint32_t minor;
	/* the principal (RPC flavor and credentials as sent), and who does the I/O (squashed) */
	uint32_t flavor;
	const struct gw_cred *wire_cred;
	const struct gw_cred *cred;
	/* 4.1: the session SEQUENCE found and its client (held until nfs4_slot_done) */
	struct nfs4_client *clp;
	struct nfs4_session *ses;
};

#endif
