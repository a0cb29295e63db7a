/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lacunafs sparse-read ioctl ABI, shared by lacunafs, lacunad,
 * liblacuna, the tools and the tests.
 *
 * Operation
 * ---------
 * A FUSE filesystem only gets "restricted" ioctls: the kernel copies
 * exactly _IOC_SIZE(cmd) bytes (at most 16383) in and out and the daemon
 * cannot follow pointers. So every struct here has a fixed layout
 * (uint64_t fields, explicit padding, no pointers) and a size and version
 * the daemon checks, and the data of a sparse read travels one of three
 * ways (the request's mode):
 *
 *   LACUNA_SR_MAP     segments only, no data.
 *   LACUNA_SR_INLINE  data inside the ioctl reply (LACUNA_IOC_SPARSE_READ_INLINE,
 *                     at most LACUNA_INLINE_MAX bytes): small ranges and tools.
 *   LACUNA_SR_ARENA   data written by the daemon, under the range lock,
 *                     straight into a shared memory arena the caller
 *                     registered on the daemon's control socket (a memfd
 *                     passed with SCM_RIGHTS). One copy, from the backing
 *                     file's page cache into memory the caller sends from.
 *
 * The reply's segment table covers [offset, next_offset) contiguously;
 * a hole may begin before offset and end after next_offset (READ_PLUS
 * allows both). Data segments are clipped to the requested range, and
 * their bytes lie in the arena (or inline buffer) back to back, in table
 * order, each at its seg.data_off. A reply can be short (the table or the
 * data buffer filled up): continue at next_offset. LACUNA_SR_EOF says
 * next_offset reached the end of the file.
 *
 * Every change made through the mount is excluded while the table and the
 * data are taken. LACUNA_IOC_WRITE is the counterpart: a write of any size
 * applied from the arena under one exclusive hold of the lock, which a
 * write(2) through the mount is only up to the mount's write unit
 * (struct lacuna_info). Changes made to the backing file outside the mount are
 * detected (change time and size compared before and after, bounded
 * retries) and flagged LACUNA_SR_UNSTABLE rather than hidden.
 *
 * Control socket protocol (SOCK_SEQPACKET, path from LACUNA_IOC_INFO):
 * the client sends struct lacuna_ctl_msg REGISTER with a memfd attached;
 * the daemon maps it and answers with a random 128-bit token. Only the
 * process that registered (by its peer credentials) can name the token in
 * an ioctl. Closing the connection releases every registration made on it.
 */
#ifndef LACUNA_IOCTL_H
#define LACUNA_IOCTL_H

#include <linux/ioctl.h>
#include <stdint.h>

#define LACUNA_ABI_VERSION 1

/* data_content4 of RFC 7862 uses the same numbers */
#define LACUNA_SEG_DATA 0
#define LACUNA_SEG_HOLE 1

struct lacuna_seg {
	uint64_t offset;
	uint64_t length;
	uint32_t kind; /* LACUNA_SEG_DATA or LACUNA_SEG_HOLE */
	uint32_t pad;
	uint64_t data_off; /* DATA: where its bytes start in the arena/inline buffer */
};

/* request modes */
#define LACUNA_SR_MAP 0
#define LACUNA_SR_INLINE 1
#define LACUNA_SR_ARENA 2

/* reply flags */
#define LACUNA_SR_EOF (1u << 0)	     /* next_offset is at (or past) the end of file */
#define LACUNA_SR_UNSTABLE (1u << 1) /* changed outside the mount while being read */
#define LACUNA_SR_SHORT (1u << 2)    /* stopped before offset+length: continue at next_offset */
#define LACUNA_SR_DENSE (1u << 3)    /* no hole search was needed: allocation covers the file */

struct lacuna_sr_hdr {
	/* in */
	uint32_t size;	   /* sizeof the whole ioctl struct */
	uint32_t version;  /* LACUNA_ABI_VERSION */
	uint32_t mode;	   /* LACUNA_SR_* mode */
	uint32_t in_flags; /* must be 0 */
	uint64_t offset;
	uint64_t length;
	uint64_t token[2];  /* ARENA: registration token */
	uint64_t arena_off; /* ARENA: where in the arena to put the data */
	uint64_t arena_len; /* ARENA: room there */
	/* out */
	uint64_t file_size;
	uint64_t next_offset;
	uint64_t data_bytes; /* bytes of data delivered */
	uint64_t hole_bytes; /* bytes of holes in the table (whole holes) */
	uint32_t nsegs;
	uint32_t flags;	  /* LACUNA_SR_EOF ... */
	uint32_t retries; /* rereads caused by outside changes */
	uint32_t pad;
	uint64_t reserved[3];
};

#define LACUNA_SR_MAX_SEGS 504
#define LACUNA_INLINE_SEGS 32
#define LACUNA_INLINE_MAX (14 * 1024)

/* LACUNA_SR_MAP and LACUNA_SR_ARENA */
struct lacuna_sparse_read {
	struct lacuna_sr_hdr h;
	struct lacuna_seg segs[LACUNA_SR_MAX_SEGS];
};

/* LACUNA_SR_INLINE */
struct lacuna_sparse_read_inline {
	struct lacuna_sr_hdr h;
	struct lacuna_seg segs[LACUNA_INLINE_SEGS];
	uint8_t data[LACUNA_INLINE_MAX];
};

#define LACUNA_CTL_PATH_MAX 108

struct lacuna_info {
	uint32_t size;	     /* in: sizeof(struct lacuna_info) */
	uint32_t version;    /* out: LACUNA_ABI_VERSION */
	uint64_t features;   /* out: reserved, 0 */
	uint64_t max_segs;   /* out: LACUNA_SR_MAX_SEGS */
	uint64_t inline_max; /* out: LACUNA_INLINE_MAX */
	uint64_t arena_max;  /* out: largest arena one client may register */
	uint64_t regs_max;   /* out: registrations per client connection */
	uint64_t daemon_pid;
	char ctl_path[LACUNA_CTL_PATH_MAX]; /* out: control socket; '@' = abstract */
	uint64_t conn_bytes_max;	    /* out: arena bytes per client connection */
	uint64_t conns_max;		    /* out: client connections at once */
	/*
	 * out: the largest write(2) through the mount that reaches the daemon
	 * as one request, hence is applied under one hold of the range lock,
	 * from a buffer at any address (write_unit) and from a page-aligned
	 * one (write_unit_aligned). Larger writes are atomic per piece.
	 * LACUNA_IOC_WRITE has no such unit: it is one hold whatever its size.
	 */
	uint32_t write_unit;
	uint32_t write_unit_aligned;
	/*
	 * out: the granularity of LACUNA_IOC_CLONE_RANGE (the backing
	 * filesystem's block size), 0 when the backing filesystem cannot
	 * reflink (ext4, XFS made without reflink=1): then the ioctl answers
	 * EOPNOTSUPP. A daemon older than the clone ioctl leaves it 0.
	 */
	uint64_t clone_blksize;
};

/*
 * The atomic write: LACUNA_IOC_WRITE applies length bytes of the caller's
 * registered arena (token, arena_off) at offset of the file, and
 * LACUNA_IOC_WRITE_INLINE the bytes carried in the ioctl itself (at most
 * LACUNA_WRITE_INLINE_MAX), each under ONE exclusive hold of the inode's
 * range lock over [offset, offset + length): a concurrent sparse read sees
 * all of the write or none of it, whatever its size or the alignment of
 * the data. The data is written from the arena straight to the backing
 * file (no copy through /dev/fuse). A short write (a full disk) reports
 * what was written; nothing written reports the error.
 */
#define LACUNA_WR_DSYNC (1u << 0) /* fdatasync before the reply (NFS DATA_SYNC4) */
#define LACUNA_WR_SYNC (1u << 1)  /* fsync before the reply (NFS FILE_SYNC4) */

struct lacuna_write {
	/* in */
	uint32_t size;	   /* sizeof the whole ioctl struct */
	uint32_t version;  /* LACUNA_ABI_VERSION */
	uint32_t flags;	   /* LACUNA_WR_* */
	uint32_t in_pad;   /* must be 0 */
	uint64_t offset;   /* where in the file (at most 2^63-1, as is offset + length) */
	uint64_t length;   /* bytes to write */
	uint64_t token[2]; /* LACUNA_IOC_WRITE: registration token */
	uint64_t arena_off; /* LACUNA_IOC_WRITE: where the data starts in the arena */
	/* out */
	uint64_t written;   /* bytes written */
	uint64_t file_size; /* the file's size right after the write, under the lock */
	uint64_t reserved[3];
};

#define LACUNA_WRITE_INLINE_MAX (16 * 1024 - 256)

struct lacuna_write_inline {
	struct lacuna_write h;
	uint8_t data[LACUNA_WRITE_INLINE_MAX];
};

#define LACUNA_IOC_MAGIC 0xAC
#define LACUNA_IOC_INFO _IOWR(LACUNA_IOC_MAGIC, 1, struct lacuna_info)
#define LACUNA_IOC_SPARSE_READ _IOWR(LACUNA_IOC_MAGIC, 2, struct lacuna_sparse_read)
#define LACUNA_IOC_SPARSE_READ_INLINE _IOWR(LACUNA_IOC_MAGIC, 3, struct lacuna_sparse_read_inline)
#define LACUNA_IOC_WRITE _IOWR(LACUNA_IOC_MAGIC, 4, struct lacuna_write)
#define LACUNA_IOC_WRITE_INLINE _IOWR(LACUNA_IOC_MAGIC, 5, struct lacuna_write_inline)

/*
 * Lookup by file handle: in any directory of the mount, root (and only
 * root) may look up LACUNA_FH_NAME followed by the backing filesystem's
 * handle of a file (name_to_handle_at(2)) in lower-case hex: the 8 hex
 * digits of handle_type, then the f_handle bytes, at most
 * LACUNA_FH_NAME_BYTES of them. The entry is that file (not a
 * directory), whatever its name or whether the kernel has it cached: an
 * NFS server finds files from their handles after a reboot through it.
 * The name never appears in a directory listing.
 */
#define LACUNA_FH_NAME ".lacuna-fh-"
#define LACUNA_FH_NAME_BYTES 112

/*
 * The clone: LACUNA_IOC_CLONE_RANGE, issued on the destination (open for
 * writing), makes [dst_offset, dst_offset + length) of it share the
 * backing blocks of [src_offset, src_offset + length) of the source
 * (FICLONERANGE on the backing files: a reflink, no data copied), length
 * 0 meaning "to the end of the source". The source is named by its backing
 * filesystem's handle (name_to_handle_at(2): handle_type, handle_bytes and
 * the f_handle bytes), as the LACUNA_FH_NAME lookup names files; the
 * caller must be allowed to read it (the daemon opens it with the
 * caller's identity). Both ranges are held under the inodes' range locks
 * (the source shared, the destination exclusive; one exclusive range over
 * both when they are one file), so a sparse read of either sees the clone
 * whole or not at all, and no write through the mount lands in the source
 * range while it is cloned.
 *
 * Offsets and length must be multiples of lacuna_info.clone_blksize,
 * except a length reaching the source's end; anything else is EINVAL, as
 * FICLONERANGE has it. EOPNOTSUPP: the backing filesystem cannot reflink;
 * EACCES: the caller may not read the source; ENOENT/ESTALE: no such file;
 * EINVAL: the source is not a regular file, or the ranges overlap in one file.
 */
struct lacuna_clone {
	/* in */
	uint32_t size;	  /* sizeof(struct lacuna_clone) */
	uint32_t version; /* LACUNA_ABI_VERSION */
	uint32_t flags;	  /* must be 0 */
	uint32_t handle_type;
	uint32_t handle_bytes; /* at most LACUNA_FH_NAME_BYTES */
	uint32_t in_pad;       /* must be 0 */
	uint8_t handle[LACUNA_FH_NAME_BYTES];
	uint64_t src_offset;
	uint64_t dst_offset;
	uint64_t length; /* 0: to the end of the source */
	/* out */
	uint64_t cloned;    /* bytes cloned (the whole range) */
	uint64_t file_size; /* the destination's size right after, under the lock */
	uint64_t reserved[4];
};

#define LACUNA_IOC_CLONE_RANGE _IOWR(LACUNA_IOC_MAGIC, 6, struct lacuna_clone)

/* Control socket messages */
#define LACUNA_CTL_REGISTER 1 /* memfd attached; answer carries the token */
#define LACUNA_CTL_UNREGISTER 2

struct lacuna_ctl_msg {
	uint32_t size;	    /* sizeof(struct lacuna_ctl_msg) */
	uint32_t version;   /* LACUNA_ABI_VERSION */
	uint32_t op;	    /* LACUNA_CTL_* */
	int32_t status;	    /* answer: 0 or a negative errno */
	uint64_t arena_len; /* REGISTER: bytes of the memfd to map */
	uint64_t token[2];  /* answer to REGISTER; UNREGISTER: which */
	uint64_t reserved[2];
};

#endif
