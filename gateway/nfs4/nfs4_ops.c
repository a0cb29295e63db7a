// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The operation table: one entry per opcode from OP_ACCESS to the last
 * 4.2 opcode, designated initializers, no empty slot (operations lacunad
 * does not implement point at nfs4_run_notsupp). Opcodes 0-2 and any
 * above NFS4_OP_LAST are OP_ILLEGAL and never index it.
 *
 * reply_max bounds the results an op encodes beyond opcode and status;
 * ops whose results vary with the file (READ, READDIR, GETATTR) bound
 * themselves against nfs4_reply_room().
 */
#include "nfs4_ops.h"

uint32_t nfs4_run_notsupp(struct nfs4_compound *c, void *args)
{
	(void)c;
	(void)args;
	return NFS4ERR_NOTSUPP;
}

#define OP(...) OP_(__VA_ARGS__)
#define OP_NOARGS(...) OP_NOARGS_(__VA_ARGS__)
#define OP_(num, nm, fl, rmax, lo, hi)                                                           \
	[num] = { .name = #num, .dec = nfs4_dec_##nm, .run = nfs4_run_##nm, .flags = (fl),         \
		  .reply_max = (rmax), .minor_min = (lo), .minor_max = (hi) }
#define OP_NOARGS_(num, nm, fl, rmax, lo, hi)                                                    \
	[num] = { .name = #num, .dec = NULL, .run = nfs4_run_##nm, .flags = (fl),                 \
		  .reply_max = (rmax), .minor_min = (lo), .minor_max = (hi) }
#define NOTSUPP(num, lo) \
	[num] = { .name = #num, .run = nfs4_run_notsupp, .minor_min = (lo), .minor_max = NFS4_MINOR_MAX }

#define ALL 0, NFS4_MINOR_MAX
#define V40 0, 0
#define V41 1, NFS4_MINOR_MAX

/* the largest fixed results: LOCK4denied with a maximal owner, READLINK */
#define DENIED_MAX (8 + 8 + 4 + 8 + 4 + NFS4_OWNER_MAX)
#define FATTR_MAX 2048
/* READ_PLUS bounds its own reply; it needs room for eof, a count and one hole */
#define RP_MIN (8 + 20)
/* COPY: write_response4 with its callback stateid, copy_requirements4 */
#define COPY_RES (4 + 16 + 8 + 4 + NFS4_VERIFIER_SIZE + 8)

const struct nfs4_op_desc nfs4_ops[NFS4_OP_LAST + 1] = {
	[0] = { .name = "0", .run = nfs4_run_notsupp },
	[1] = { .name = "1", .run = nfs4_run_notsupp },
	[2] = { .name = "2", .run = nfs4_run_notsupp },
	OP(OP_ACCESS, access, OPF_CFH | OPF_PSEUDO_OK, 8, ALL),
	OP(OP_CLOSE, close, OPF_CFH, 16, ALL),
	OP(OP_COMMIT, commit, OPF_CFH, 8, ALL),
	OP(OP_CREATE, create, OPF_CFH | OPF_MODIFIES | OPF_SETS_CFH, 20 + 16, ALL),
	NOTSUPP(OP_DELEGPURGE, 0),
	NOTSUPP(OP_DELEGRETURN, 0),
	OP(OP_GETATTR, getattr, OPF_CFH | OPF_PSEUDO_OK, FATTR_MAX, ALL),
	OP_NOARGS(OP_GETFH, getfh, OPF_CFH | OPF_PSEUDO_OK, 4 + NFS4_FHSIZE, ALL),
	OP(OP_LINK, link, OPF_CFH | OPF_MODIFIES, 20, ALL),
	OP(OP_LOCK, lock, OPF_CFH, DENIED_MAX, ALL),
	OP(OP_LOCKT, lockt, OPF_CFH, DENIED_MAX, ALL),
	OP(OP_LOCKU, locku, OPF_CFH, 16, ALL),
	OP(OP_LOOKUP, lookup, OPF_CFH | OPF_SETS_CFH | OPF_PSEUDO_OK, 0, ALL),
	OP_NOARGS(OP_LOOKUPP, lookupp, OPF_CFH | OPF_SETS_CFH | OPF_PSEUDO_OK, 0, ALL),
	OP(OP_NVERIFY, nverify, OPF_CFH | OPF_PSEUDO_OK, 0, ALL),
	OP(OP_OPEN, open, OPF_CFH | OPF_SETS_CFH, 16 + 4 + 20 + 4 + 16 + 4 + 8, ALL),
	NOTSUPP(OP_OPENATTR, 0),
	[OP_OPEN_CONFIRM] = { .name = "OP_OPEN_CONFIRM", .dec = nfs4_dec_open_confirm,
			      .run = nfs4_run_open_confirm, .flags = OPF_CFH, .reply_max = 16,
			      .minor_min = 0, .minor_max = 0 },
	OP(OP_OPEN_DOWNGRADE, open_downgrade, OPF_CFH, 16, ALL),
	OP(OP_PUTFH, putfh, OPF_SETS_CFH, 0, ALL),
	OP_NOARGS(OP_PUTPUBFH, putpubfh, OPF_SETS_CFH, 0, ALL),
	OP_NOARGS(OP_PUTROOTFH, putrootfh, OPF_SETS_CFH, 0, ALL),
	OP(OP_READ, read, OPF_CFH, 8, ALL),
	OP(OP_READDIR, readdir, OPF_CFH | OPF_PSEUDO_OK, 16, ALL),
	OP_NOARGS(OP_READLINK, readlink, OPF_CFH | OPF_PSEUDO_OK, 4 + NFS4_LINKTEXT_MAX + 4, ALL),
	OP(OP_REMOVE, remove, OPF_CFH | OPF_MODIFIES, 20, ALL),
	OP(OP_RENAME, rename, OPF_CFH | OPF_MODIFIES, 40, ALL),
	OP(OP_RENEW, renew, 0, 0, V40),
	OP_NOARGS(OP_RESTOREFH, restorefh, OPF_SETS_CFH, 0, ALL),
	OP_NOARGS(OP_SAVEFH, savefh, OPF_CFH | OPF_PSEUDO_OK, 0, ALL),
	OP(OP_SECINFO, secinfo, OPF_CFH | OPF_PSEUDO_OK, 4 + NFS4_SECINFO_MAX * 4, ALL),
	OP(OP_SETATTR, setattr, OPF_CFH | OPF_MODIFIES, 4 + 4 * NFS4_BITMAP_MAX, ALL),
	OP(OP_SETCLIENTID, setclientid, 0, 8 + 8 + 8 + 2 * NFS4_OPAQUE_LIMIT, V40),
	OP(OP_SETCLIENTID_CONFIRM, setclientid_confirm, 0, 0, V40),
	OP(OP_VERIFY, verify, OPF_CFH | OPF_PSEUDO_OK, 0, ALL),
	OP(OP_WRITE, write, OPF_CFH | OPF_MODIFIES, 16, ALL),
	OP(OP_RELEASE_LOCKOWNER, release_lockowner, 0, 0, V40),
	/* 4.1 */
	NOTSUPP(OP_BACKCHANNEL_CTL, 1),
	OP(OP_BIND_CONN_TO_SESSION, bind_conn_to_session, OPF_NOSESSION | OPF_SOLO, 24, V41),
	OP(OP_EXCHANGE_ID, exchange_id, OPF_NOSESSION | OPF_SOLO, 4 * NFS4_OPAQUE_LIMIT, V41),
	OP(OP_CREATE_SESSION, create_session, OPF_NOSESSION | OPF_SOLO, 128, V41),
	OP(OP_DESTROY_SESSION, destroy_session, OPF_NOSESSION | OPF_SOLO, 0, V41),
	OP(OP_FREE_STATEID, free_stateid, 0, 0, V41),
	NOTSUPP(OP_GET_DIR_DELEGATION, 1),
	NOTSUPP(OP_GETDEVICEINFO, 1),
	NOTSUPP(OP_GETDEVICELIST, 1),
	NOTSUPP(OP_LAYOUTCOMMIT, 1),
	NOTSUPP(OP_LAYOUTGET, 1),
	NOTSUPP(OP_LAYOUTRETURN, 1),
	OP(OP_SECINFO_NO_NAME, secinfo_no_name, OPF_CFH | OPF_PSEUDO_OK, 4 + NFS4_SECINFO_MAX * 4,
	   V41),
	OP(OP_SEQUENCE, sequence, 0, 40, V41),
	NOTSUPP(OP_SET_SSV, 1),
	OP(OP_TEST_STATEID, test_stateid, 0, 4 + 4 * 64, V41),
	NOTSUPP(OP_WANT_DELEGATION, 1),
	OP(OP_DESTROY_CLIENTID, destroy_clientid, OPF_NOSESSION | OPF_SOLO, 0, V41),
	OP(OP_RECLAIM_COMPLETE, reclaim_complete, 0, 0, V41),
	/* 4.2 */
	OP(OP_ALLOCATE, allocate, OPF_CFH | OPF_MODIFIES, 0, 2, NFS4_MINOR_MAX),
	OP(OP_COPY, copy, OPF_CFH | OPF_MODIFIES, COPY_RES, 2, NFS4_MINOR_MAX),
	NOTSUPP(OP_COPY_NOTIFY, 2),
	OP(OP_DEALLOCATE, deallocate, OPF_CFH | OPF_MODIFIES, 0, 2, NFS4_MINOR_MAX),
	NOTSUPP(OP_IO_ADVISE, 2),
	NOTSUPP(OP_LAYOUTERROR, 2),
	NOTSUPP(OP_LAYOUTSTATS, 2),
	OP(OP_OFFLOAD_CANCEL, offload_cancel, OPF_CFH, 0, 2, NFS4_MINOR_MAX),
	OP(OP_OFFLOAD_STATUS, offload_status, OPF_CFH, 12, 2, NFS4_MINOR_MAX),
	OP(OP_READ_PLUS, read_plus, OPF_CFH, RP_MIN, 2, NFS4_MINOR_MAX),
	OP(OP_SEEK, seek, OPF_CFH, 12, 2, NFS4_MINOR_MAX),
	NOTSUPP(OP_WRITE_SAME, 2),
	OP(OP_CLONE, clone, OPF_CFH | OPF_MODIFIES, 0, 2, NFS4_MINOR_MAX),
	OP(OP_GETXATTR, getxattr, OPF_CFH, 0, 2, NFS4_MINOR_MAX),
	OP(OP_SETXATTR, setxattr, OPF_CFH | OPF_MODIFIES, 20, 2, NFS4_MINOR_MAX),
	OP(OP_LISTXATTRS, listxattrs, OPF_CFH, 16, 2, NFS4_MINOR_MAX),
	OP(OP_REMOVEXATTR, removexattr, OPF_CFH | OPF_MODIFIES, 20, 2, NFS4_MINOR_MAX),
};
