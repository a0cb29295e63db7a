// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session's /dev/fuse I/O (libfuse's fuse_custom_io): requests and
 * replies pass through unchanged, except the reply to FUSE_INIT, to which
 * FUSE_DIRECT_IO_ALLOW_MMAP is added when the kernel offers it.
 *
 * Why: writable opens are direct_io, so that each write(2) reaches the
 * daemon as the caller made it (docs/sparse-read.md), and without that
 * flag the kernel refuses a shared writable mmap of a direct_io file
 * with ENODEV. With it (kernels 6.6 and later) the mapping uses the
 * mount's page cache and its dirty pages come back as FUSE writes, which
 * take the range lock like any other. libfuse 3.14 cannot ask for it: its
 * capability word has 32 bits and the flag is bit 36 of the INIT flags
 * (flags2 bit 4). Where the kernel does not offer it nothing changes.
 *
 * Requests are always read with read(2), never spliced (lacunafs does not
 * ask for FUSE_CAP_SPLICE_READ), so the INIT request is seen here.
 *
 * Operation: the INIT request is read by one worker before any other
 * request is served; its unique id and the kernel's flags are kept, and
 * the one reply with that id is rewritten on its way out. Every other
 * request and reply costs one comparison.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lfs.h"

/* from the kernel's include/uapi/linux/fuse.h */
#define LFS_FUSE_INIT 26
#define LFS_FUSE_INIT_EXT (1u << 30)
#define LFS_FUSE_DIRECT_IO_ALLOW_MMAP_HI (1u << (36 - 32)) /* in flags2 */
#define LFS_IN_HDR_LEN 40				   /* struct fuse_in_header */
#define LFS_OUT_HDR_LEN 16				   /* struct fuse_out_header */
#define LFS_INIT_FLAGS_OFF 12				   /* fuse_init_in/out.flags */
#define LFS_INIT_IN_FLAGS2_OFF 16			   /* fuse_init_in.flags2 */
#define LFS_INIT_OUT_FLAGS2_OFF 32			   /* fuse_init_out.flags2 */

static struct {
	uint64_t init_unique; /* __atomic; 0: no INIT seen yet */
	bool offered;	      /* the kernel offers DIRECT_IO_ALLOW_MMAP */
	bool granted;	      /* and we asked for it */
} lfs_devio;

static uint32_t lfs_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void lfs_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static ssize_t lfs_devio_read(int fd, void *buf, size_t len, void *userdata)
{
	const uint8_t *in = buf;
	ssize_t n = read(fd, buf, len);
	uint64_t unique;

	(void)userdata;
	if (n >= LFS_IN_HDR_LEN + LFS_INIT_IN_FLAGS2_OFF + 4 &&
	    lfs_get32(in + 4) == LFS_FUSE_INIT &&
	    !__atomic_load_n(&lfs_devio.init_unique, __ATOMIC_ACQUIRE)) {
		const uint8_t *arg = in + LFS_IN_HDR_LEN;
		uint32_t flags = lfs_get32(arg + LFS_INIT_FLAGS_OFF);

		lfs_devio.offered =
			(flags & LFS_FUSE_INIT_EXT) && (lfs_get32(arg + LFS_INIT_IN_FLAGS2_OFF) &
							LFS_FUSE_DIRECT_IO_ALLOW_MMAP_HI);
		memcpy(&unique, in + 8, sizeof(unique));
		__atomic_store_n(&lfs_devio.init_unique, unique, __ATOMIC_RELEASE);
	}
	return n;
}

static ssize_t lfs_devio_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	uint64_t unique, want = __atomic_load_n(&lfs_devio.init_unique, __ATOMIC_ACQUIRE);
	uint8_t out[LFS_INIT_OUT_FLAGS2_OFF + 4];

	(void)userdata;
	if (!want || !lfs_devio.offered || lfs_devio.granted || count < 2 ||
	    iov[0].iov_len < LFS_OUT_HDR_LEN || iov[1].iov_len < sizeof(out))
		return writev(fd, iov, count);
	memcpy(&unique, (uint8_t *)iov[0].iov_base + 8, sizeof(unique));
	if (unique != want || lfs_get32((uint8_t *)iov[0].iov_base + 4) != 0)
		return writev(fd, iov, count);
	/* the INIT reply: ask for mmap of direct_io files */
	memcpy(out, iov[1].iov_base, sizeof(out));
	lfs_put32(out + LFS_INIT_FLAGS_OFF,
		  lfs_get32(out + LFS_INIT_FLAGS_OFF) | LFS_FUSE_INIT_EXT);
	lfs_put32(out + LFS_INIT_OUT_FLAGS2_OFF,
		  lfs_get32(out + LFS_INIT_OUT_FLAGS2_OFF) | LFS_FUSE_DIRECT_IO_ALLOW_MMAP_HI);
	memcpy(iov[1].iov_base, out, sizeof(out));
	lfs_devio.granted = true;
	return writev(fd, iov, count);
}

static ssize_t lfs_devio_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
				unsigned int flags, void *userdata)
{
	(void)userdata;
	return splice(fdin, offin, fdout, offout, len, flags);
}

int lfs_devio_setup(struct fuse_session *se)
{
	static const struct fuse_custom_io io = {
		.read = lfs_devio_read,
		.writev = lfs_devio_writev,
		.splice_send = lfs_devio_splice,
	};

	return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

bool lfs_devio_mmap_offered(void)
{
	return lfs_devio.offered;
}
