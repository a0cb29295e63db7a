/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RPC-over-RDMA version 1 (RFC 8166) transport headers and the RFC 8797
 * connection private data: decoding and encoding, shared by lacunad's
 * RDMA transport, the lacuna client's RDMA mode and the test peers.
 * No verbs here: this is bytes in, structs out, and back.
 *
 * Operation
 * ---------
 * Every RPC-over-RDMA message starts with a transport header:
 *
 *   xid, vers (1), credits, proc,
 *   read list   (a list of {position, handle, length, offset}),
 *   write list  (a list of chunks, each a counted array of
 *                {handle, length, offset}),
 *   reply chunk (optional: one counted array of segments),
 *
 * then, for RDMA_MSG, the RPC message itself (possibly with DDP-eligible
 * items reduced out of it). RDMA_NOMSG has no inline message: the call
 * is in a position-zero read chunk, or the reply in the reply chunk.
 * RDMA_ERROR carries an error code (and, for ERR_VERS, the versions
 * supported) in place of the chunk lists.
 *
 * rpcrdma_dec_hdr() decodes a received header through the bounded XDR
 * cursor (xdr.h) into fixed arrays: every list has a named maximum and
 * one longer than that is refused (-E2BIG) before anything is stored, so
 * a hostile peer can neither overrun the struct nor make the decoder
 * loop for long. It also checks what makes a header unusable whatever
 * the peer registered: zero-length read segments, positions that go
 * backwards or are not XDR-aligned, chunks whose total length overflows.
 * Write and reply chunk segments may be zero-length (a reply echoes a
 * segment nothing was written into with length 0). The caller
 * maps the result to its answer: -EPROTONOSUPPORT -> RDMA_ERROR
 * ERR_VERS; -EBADMSG, -E2BIG, -EINVAL -> RDMA_ERROR ERR_CHUNK (RFC 8166
 * §5.3.2, §4.5).
 *
 * Read segments that share a position form one read chunk; the decoder
 * groups them (struct rpcrdma_read_chunk) in the order they came, which
 * must be non-decreasing position.
 *
 * Encoding writes into a caller buffer and returns the length, or
 * -EMSGSIZE when the buffer is too small (nothing is written past it),
 * or -EINVAL for a proc or error code the header cannot carry.
 */
#ifndef LACUNA_RPCRDMA_H
#define LACUNA_RPCRDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RPCRDMA_VERSION 1

enum rpcrdma_proc {
	RDMA_MSG = 0,
	RDMA_NOMSG = 1,
	RDMA_MSGP = 2, /* obsolete (RFC 8166 §4.4): refused */
	RDMA_DONE = 3, /* obsolete: refused */
	RDMA_ERROR = 4,
};

enum rpcrdma_errcode {
	ERR_VERS = 1,
	ERR_CHUNK = 2,
};

/* RFC 8166: inline threshold when the peer says nothing (bytes) */
#define RPCRDMA_INLINE_DEFAULT 1024
/* smallest inline threshold we accept from a peer (RFC 8166 §3.3.2) */
#define RPCRDMA_INLINE_MIN 1024
/* largest we use; RFC 8797 can express up to 256 KiB */
#define RPCRDMA_INLINE_MAX (256 * 1024)

/* bounds on what one header may carry */
#define RPCRDMA_READ_SEGS_MAX 64   /* segments in the read list */
#define RPCRDMA_READ_CHUNKS_MAX 8  /* distinct positions */
#define RPCRDMA_WRITE_CHUNKS_MAX 8 /* chunks in the write list */
#define RPCRDMA_CHUNK_SEGS_MAX 64  /* segments in one write or reply chunk */
#define RPCRDMA_SEGS_MAX 128	   /* segments in all write chunks and the reply chunk together */

/* fixed part of every header: xid, vers, credits, proc */
#define RPCRDMA_HDR_FIXED 16
/* smallest RDMA_MSG/RDMA_NOMSG header: fixed part + three empty lists */
#define RPCRDMA_HDR_MIN 28

struct rpcrdma_seg {
	uint32_t handle; /* the peer's rkey */
	uint32_t length;
	uint64_t offset; /* the peer's address */
};

/* A read chunk: the segments of the read list at one position. */
struct rpcrdma_read_chunk {
	uint32_t position;
	unsigned int first; /* index of its first segment in hdr->read_segs */
	unsigned int nsegs;
	uint64_t length; /* sum of its segments' lengths */
};

/* A write chunk or the reply chunk. */
struct rpcrdma_chunk {
	unsigned int first; /* index of its first segment in hdr->segs */
	unsigned int nsegs;
	uint64_t length; /* sum of its segments' lengths */
};

struct rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc;

	/* RDMA_MSG, RDMA_NOMSG */
	unsigned int nread_segs;
	struct rpcrdma_seg read_segs[RPCRDMA_READ_SEGS_MAX];
	unsigned int nread_chunks;
	struct rpcrdma_read_chunk read[RPCRDMA_READ_CHUNKS_MAX];
	unsigned int nwrite;
	struct rpcrdma_chunk write[RPCRDMA_WRITE_CHUNKS_MAX];
	bool has_reply;
	struct rpcrdma_chunk reply;
	unsigned int nsegs; /* used in segs[] */
	struct rpcrdma_seg segs[RPCRDMA_SEGS_MAX];

	/* RDMA_ERROR */
	uint32_t err;
	uint32_t vers_low, vers_high; /* ERR_VERS */

	size_t hdr_len; /* bytes of the transport header: the RPC message follows */
};

/*
 * Decode the transport header at the start of @buf (@len bytes). 0 and
 * *h filled (h->hdr_len tells where the RPC message starts), or:
 *   -EBADMSG          truncated or malformed (bad boolean, bad proc,
 *                     an RDMA_ERROR code other than ERR_VERS/ERR_CHUNK),
 *                     xid/vers/proc still filled when the fixed part was there
 *   -EPROTONOSUPPORT  vers is not 1 (the rest is not decoded)
 *   -E2BIG            a list longer than its maximum
 *   -EINVAL           a zero-length read segment, a position that goes
 *                     backwards or is not a multiple of 4, a total length
 *                     past UINT32_MAX
 * RDMA_ERROR headers decode too (err, vers_low/high), as do RDMA_MSGP and
 * RDMA_DONE as far as their fixed part (-EBADMSG, proc filled).
 */
int rpcrdma_dec_hdr(const void *buf, size_t len, struct rpcrdma_hdr *h);

/*
 * Encode an RDMA_MSG or RDMA_NOMSG header with empty lists: bytes written,
 * -EMSGSIZE, or -EINVAL for another @proc.
 */
int rpcrdma_enc_hdr_plain(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t proc);

/*
 * Encode a reply header: RDMA_MSG (the reply follows inline) or
 * RDMA_NOMSG (it went into the reply chunk). The write list echoes the
 * call's @nwrite write chunks (segments in @segs as in struct
 * rpcrdma_hdr), each segment's length replaced by what was written into
 * it: @written[i] bytes in all for write chunk i, filling its segments in
 * order (0 for a chunk not used; @written may be NULL when nothing was
 * written into any). The reply chunk is echoed when @reply is not NULL,
 * its segments' lengths likewise filled from @reply_written. No read
 * list. Bytes written, -EMSGSIZE, or -EINVAL when @proc is neither
 * RDMA_MSG nor RDMA_NOMSG.
 */
int rpcrdma_enc_reply_hdr(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t proc,
			  const struct rpcrdma_seg *segs, const struct rpcrdma_chunk *write,
			  unsigned int nwrite, const uint64_t *written,
			  const struct rpcrdma_chunk *reply, uint64_t reply_written);

/*
 * Encode a call header (the client side): a read list of @nread segments
 * (positions in @read_pos), a write list of @nwrite chunks (@wchunks
 * over @segs) and an optional reply chunk. Bytes written, -EMSGSIZE, or
 * -EINVAL when @proc is neither RDMA_MSG nor RDMA_NOMSG.
 */
int rpcrdma_enc_call_hdr(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t proc,
			 const struct rpcrdma_seg *read_segs, const uint32_t *read_pos,
			 unsigned int nread, const struct rpcrdma_seg *segs,
			 const struct rpcrdma_chunk *wchunks, unsigned int nwrite,
			 const struct rpcrdma_chunk *reply);

/*
 * Encode RDMA_ERROR: ERR_VERS (versions 1..1) or ERR_CHUNK. Bytes written,
 * -EMSGSIZE, or -EINVAL for another @err.
 */
int rpcrdma_enc_error(void *buf, size_t room, uint32_t xid, uint32_t credits, uint32_t err);

/* ------------------------------------------------ RFC 8797 private data */

#define RPCRDMA_CM_MAGIC 0xf6ab0e18u
#define RPCRDMA_CM_VERSION 1
#define RPCRDMA_CM_FLAG_REMOTE_INV 0x01 /* the sender may use Send With Invalidate */
#define RPCRDMA_CM_PRIV_LEN 8

struct rpcrdma_cm_priv {
	uint8_t flags;
	uint32_t send_max; /* the sender's largest inline Send, bytes */
	uint32_t recv_max; /* the sender's largest inline Receive, bytes */
};

/*
 * Decode a peer's private data. Absent, short, with another magic or
 * version: false and *p set to the RFC 8166 defaults (1024/1024, no
 * flags), which is what the peer then means. Sizes are (byte + 1) * 1024;
 * flags this version does not define are dropped.
 */
bool rpcrdma_cm_priv_dec(const void *buf, size_t len, struct rpcrdma_cm_priv *p);
/*
 * Encode into 8 bytes at @buf; sizes are rounded down to 1 KiB units,
 * clamped to 1..256 KiB; only defined flags are sent.
 */
void rpcrdma_cm_priv_enc(void *buf, const struct rpcrdma_cm_priv *p);

#endif
