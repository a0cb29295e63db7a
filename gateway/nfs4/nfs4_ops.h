/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every NFSv4 operation lacunad implements: an argument decoder
 * (nfs4_dec_NAME, into a zeroed buffer of NFS4_ARGS_MAX bytes; 0 or
 * -EBADMSG) and a handler (nfs4_run_NAME, returns an nfsstat4 and encodes
 * its results into c->out), listed in the table of nfs4_ops.c. One file
 * per op or small family of ops (nfs4_op_*.c).
 */
#ifndef LACUNA_NFS4_OPS_H
#define LACUNA_NFS4_OPS_H

#include "nfs4_compound.h"

#define NFS4_OP(name)                                  \
	int nfs4_dec_##name(struct xdr_in *x, void *args); \
	uint32_t nfs4_run_##name(struct nfs4_compound *c, void *args)
/* ops without arguments have no decoder */
#define NFS4_OP_NOARGS(name) uint32_t nfs4_run_##name(struct nfs4_compound *c, void *args)

/* nfs4_ops.c */
NFS4_OP_NOARGS(notsupp);

/* nfs4_op_fh.c: file handles and names */
NFS4_OP_NOARGS(putrootfh);
NFS4_OP_NOARGS(putpubfh);
NFS4_OP(putfh);
NFS4_OP_NOARGS(getfh);
NFS4_OP_NOARGS(savefh);
NFS4_OP_NOARGS(restorefh);
NFS4_OP(lookup);
NFS4_OP_NOARGS(lookupp);
NFS4_OP(secinfo);
NFS4_OP(secinfo_no_name);

/* nfs4_op_dir.c: the namespace */
NFS4_OP(create);
NFS4_OP(remove);
NFS4_OP(rename);
NFS4_OP(link);
NFS4_OP_NOARGS(readlink);
/* nfs4_op_readdir.c */
NFS4_OP(readdir);

/* nfs4_op_attr.c */
NFS4_OP(getattr);
NFS4_OP(setattr);
NFS4_OP(verify);
NFS4_OP(nverify);
NFS4_OP(access);

/* nfs4_op_io.c */
NFS4_OP(read);
NFS4_OP(write);
NFS4_OP(commit);

/* nfs4_op_sparse.c, nfs4_op_alloc.c (4.2) */
NFS4_OP(read_plus);
NFS4_OP(seek);
NFS4_OP(allocate);
NFS4_OP(deallocate);
/* nfs4_op_copy.c (4.2) */
NFS4_OP(copy);
NFS4_OP(offload_status);
NFS4_OP(offload_cancel);
/* nfs4_op_clone.c (4.2) */
NFS4_OP(clone);

/* nfs4_op_xattr.c (4.2, RFC 8276) */
NFS4_OP(getxattr);
NFS4_OP(setxattr);
NFS4_OP(listxattrs);
NFS4_OP(removexattr);

/* nfs4_op_session.c (4.1) */
NFS4_OP(exchange_id);
NFS4_OP(create_session);
NFS4_OP(sequence);
NFS4_OP(destroy_session);
NFS4_OP(destroy_clientid);
NFS4_OP(bind_conn_to_session);
NFS4_OP(reclaim_complete);
NFS4_OP(test_stateid);
NFS4_OP(free_stateid);

/* nfs4_op_clientid.c (4.0) */
NFS4_OP(setclientid);
NFS4_OP(setclientid_confirm);
NFS4_OP(renew);

/* nfs4_op_open.c */
NFS4_OP(open);
NFS4_OP(open_confirm);
NFS4_OP(open_downgrade);
NFS4_OP(close);

/* nfs4_op_lock.c */
NFS4_OP(lock);
NFS4_OP(lockt);
NFS4_OP(locku);
NFS4_OP(release_lockowner);

#endif
