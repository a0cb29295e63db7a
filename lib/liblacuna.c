// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * liblacuna: client of the lacunafs sparse-read ioctl (see
 * include/lacuna/lacuna.h and include/lacuna/ioctl.h), with the
 * SEEK_DATA/SEEK_HOLE + pread fallback for other filesystems.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lacuna/lacuna.h"
#include "srwalk.h"

struct lacuna_client {
	struct lacuna_info info;
	int sock; /* control socket, -1 without an arena */
	uint8_t *arena;
	size_t arena_len;
	bool own_arena; /* mapped here (else the caller's) */
	uint64_t token[2];
};

bool lacuna_is_lacunafs(int fd, struct lacuna_info *info)
{
	struct lacuna_info i = { .size = sizeof(i) };

	if (ioctl(fd, LACUNA_IOC_INFO, &i) < 0 || i.size != sizeof(i) ||
	    i.version != LACUNA_ABI_VERSION)
		return false;
	if (info)
		*info = i;
	return true;
}

static int lacuna_ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	if (path[0] == '@')
		sa.sun_path[0] = '\0'; /* abstract */
	else
		len++;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}

static int lacuna_ctl_register(struct lacuna_client *c, int memfd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf;
	struct lacuna_ctl_msg m = { .size = sizeof(m),
				    .version = LACUNA_ABI_VERSION,
				    .op = LACUNA_CTL_REGISTER,
				    .arena_len = c->arena_len };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	ssize_t n;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
	if (sendmsg(c->sock, &mh, MSG_NOSIGNAL) != sizeof(m))
		return -errno;
	n = recv(c->sock, &m, sizeof(m), 0);
	if (n != sizeof(m))
		return n < 0 ? -errno : -EPROTO;
	if (m.status)
		return m.status;
	c->token[0] = m.token[0];
	c->token[1] = m.token[1];
	return 0;
}

/* The INFO check and the client, without an arena yet. */
static int lacuna_client_new(int fd, struct lacuna_client **out)
{
	struct lacuna_client *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->sock = -1;
	if (!lacuna_is_lacunafs(fd, &c->info)) {
		free(c);
		return -ENOTTY;
	}
	*out = c;
	return 0;
}

/* Register memfd, already mapped at c->arena for c->arena_len bytes. */
static int lacuna_client_attach(struct lacuna_client *c, int memfd)
{
	c->sock = lacuna_ctl_connect(c->info.ctl_path);
	if (c->sock < 0)
		return c->sock;
	return lacuna_ctl_register(c, memfd);
}

int lacuna_client_open(int fd, size_t arena_len, struct lacuna_client **out)
{
	struct lacuna_client *c;
	int memfd = -1, rc;

	rc = lacuna_client_new(fd, &c);
	if (rc)
		return rc;
	if (arena_len) {
		c->arena_len = arena_len;
		memfd = memfd_create("lacuna-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (memfd < 0 || ftruncate(memfd, (off_t)arena_len) < 0 ||
		    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
			rc = -errno;
			goto out_free;
		}
		c->arena = mmap(NULL, arena_len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
		if (c->arena == MAP_FAILED) {
			rc = -errno;
			c->arena = NULL;
			goto out_free;
		}
		c->own_arena = true;
		rc = lacuna_client_attach(c, memfd);
		if (rc)
			goto out_free;
		close(memfd);
	}
	*out = c;
	return 0;
out_free:
	if (memfd >= 0)
		close(memfd);
	lacuna_client_close(c);
	return rc;
}

int lacuna_client_open_arena(int fd, int memfd, void *base, size_t len, struct lacuna_client **out)
{
	struct lacuna_client *c;
	int rc;

	if (memfd < 0 || !base || !len)
		return -EINVAL;
	rc = lacuna_client_new(fd, &c);
	if (rc)
		return rc;
	c->arena = base;
	c->arena_len = len;
	rc = lacuna_client_attach(c, memfd);
	if (rc) {
		lacuna_client_close(c);
		return rc;
	}
	*out = c;
	return 0;
}

void lacuna_client_close(struct lacuna_client *c)
{
	if (!c)
		return;
	if (c->sock >= 0)
		close(c->sock); /* the daemon drops the registration */
	if (c->arena && c->own_arena)
		munmap(c->arena, c->arena_len);
	free(c);
}

void *lacuna_client_arena(struct lacuna_client *c, size_t *len)
{
	if (len)
		*len = c && c->arena ? c->arena_len : 0;
	return c ? c->arena : NULL;
}

static void lacuna_copy_result(struct lacuna_result *res, const struct lacuna_sr_hdr *h,
			       const struct lacuna_seg *segs, const uint8_t *data)
{
	unsigned int i;

	res->file_size = h->file_size;
	res->next_offset = h->next_offset;
	res->data_bytes = h->data_bytes;
	res->hole_bytes = h->hole_bytes;
	res->flags = h->flags;
	res->retries = h->retries;
	res->atomic = true;
	res->nsegs = h->nsegs;
	for (i = 0; i < h->nsegs && i < LACUNA_SR_MAX_SEGS; i++) {
		res->segs[i].offset = segs[i].offset;
		res->segs[i].length = segs[i].length;
		res->segs[i].kind = segs[i].kind;
		res->segs[i].data =
			data && segs[i].kind == LACUNA_SEG_DATA ? data + segs[i].data_off : NULL;
	}
}

static void lacuna_hdr_init(struct lacuna_sr_hdr *h, uint32_t size, uint32_t mode, uint64_t off,
			    uint64_t len)
{
	memset(h, 0, sizeof(*h));
	h->size = size;
	h->version = LACUNA_ABI_VERSION;
	h->mode = mode;
	h->offset = off;
	h->length = len;
}

/*
 * The inline reply carries up to LACUNA_INLINE_MAX bytes whatever the
 * caller's room: keep the segments whose data fits in room bytes, cut
 * the first that does not, and make the reply short there.
 */
static int lacuna_clip(struct lacuna_sr_hdr *h, struct lacuna_seg *segs, uint64_t room)
{
	uint32_t i;

	h->data_bytes = h->hole_bytes = 0;
	for (i = 0; i < h->nsegs; i++) {
		struct lacuna_seg *s = &segs[i];

		if (s->kind == LACUNA_SEG_DATA) {
			if (s->data_off >= room)
				break;
			if (s->length > room - s->data_off) {
				s->length = room - s->data_off;
				h->data_bytes += s->length;
				i++; /* cut here: what follows is not contiguous */
				break;
			}
			h->data_bytes += s->length;
		} else {
			h->hole_bytes += s->length;
		}
	}
	if (i == 0)
		return -ENOBUFS;
	h->nsegs = i;
	h->next_offset = segs[i - 1].offset + segs[i - 1].length;
	if (h->next_offset < h->file_size) {
		h->flags &= ~LACUNA_SR_EOF;
		h->flags |= LACUNA_SR_SHORT;
	}
	return 0;
}

/* Data into memory outside the arena, without an arena: the inline ioctl. */
static int lacuna_read_inline(int fd, uint64_t off, uint64_t len, uint8_t *buf, size_t buflen,
			      struct lacuna_result *res)
{
	struct lacuna_sparse_read_inline *sr = malloc(sizeof(*sr));
	int rc = 0;

	if (!sr)
		return -ENOMEM;
	lacuna_hdr_init(&sr->h, sizeof(*sr), LACUNA_SR_INLINE, off, len);
	if (ioctl(fd, LACUNA_IOC_SPARSE_READ_INLINE, sr) < 0) {
		rc = -errno;
		goto out;
	}
	if (sr->h.data_bytes > buflen) {
		rc = lacuna_clip(&sr->h, sr->segs, buflen);
		if (rc)
			goto out;
	}
	memcpy(buf, sr->data, sr->h.data_bytes);
	lacuna_copy_result(res, &sr->h, sr->segs, buf);
out:
	free(sr);
	return rc;
}

static int lacuna_read_ioctl(struct lacuna_client *c, int fd, uint64_t off, uint64_t len,
			     unsigned int how, uint8_t *buf, size_t buflen,
			     struct lacuna_result *res)
{
	struct lacuna_sparse_read *sr;
	bool in_arena, staged = false;
	int rc = 0;

	if (how == LACUNA_READ_DATA && !c->arena)
		return lacuna_read_inline(fd, off, len, buf, buflen, res);
	sr = malloc(sizeof(*sr));
	if (!sr)
		return -ENOMEM;
	lacuna_hdr_init(&sr->h, sizeof(*sr),
			how == LACUNA_READ_DATA ? LACUNA_SR_ARENA : LACUNA_SR_MAP, off, len);
	if (how == LACUNA_READ_DATA) {
		in_arena = buf >= c->arena && buf + buflen <= c->arena + c->arena_len;
		sr->h.token[0] = c->token[0];
		sr->h.token[1] = c->token[1];
		if (in_arena) {
			sr->h.arena_off = (uint64_t)(buf - c->arena);
			sr->h.arena_len = buflen;
		} else {
			/* stage through the arena, then copy */
			staged = true;
			sr->h.arena_off = 0;
			sr->h.arena_len = buflen < c->arena_len ? buflen : c->arena_len;
		}
	}
	if (ioctl(fd, LACUNA_IOC_SPARSE_READ, sr) < 0) {
		rc = -errno;
		goto out;
	}
	if (staged)
		memcpy(buf, c->arena, sr->h.data_bytes);
	lacuna_copy_result(res, &sr->h, sr->segs, how == LACUNA_READ_DATA ? buf : NULL);
out:
	free(sr);
	return rc;
}

/* Not lacunafs: the daemon's walk (common/srwalk.c), without the lock. */
static int lacuna_read_fallback(int fd, uint64_t off, uint64_t len, unsigned int how,
				uint8_t *buf, size_t buflen, struct lacuna_result *res)
{
	struct srw_dest dst = { how == LACUNA_READ_DATA ? buf : NULL, buflen };
	struct lacuna_sparse_read *sr;
	struct stat st;
	bool unstable = false;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	sr = malloc(sizeof(*sr));
	if (!sr)
		return -ENOMEM;
	lacuna_hdr_init(&sr->h, sizeof(*sr), LACUNA_SR_MAP, off, len);
	rc = srw_walk(fd, &st, &sr->h, sr->segs, LACUNA_SR_MAX_SEGS, &dst, &unstable);
	if (!rc) {
		lacuna_copy_result(res, &sr->h, sr->segs, dst.buf);
		res->atomic = false;
		if (unstable)
			res->flags |= LACUNA_SR_UNSTABLE;
	}
	free(sr);
	return rc;
}

int lacuna_sparse_read(struct lacuna_client *c, int fd, uint64_t off, uint64_t len,
		       unsigned int how, void *buf, size_t buflen, struct lacuna_result *res)
{
	if (how != LACUNA_READ_MAP && how != LACUNA_READ_DATA)
		return -EINVAL;
	if (how == LACUNA_READ_DATA && (!buf || !buflen))
		return -ENOBUFS;
	if (off > (uint64_t)INT64_MAX)
		return -EINVAL;
	memset(res, 0, offsetof(struct lacuna_result, segs));
	if (c)
		return lacuna_read_ioctl(c, fd, off, len, how, buf, buflen, res);
	return lacuna_read_fallback(fd, off, len, how, buf, buflen, res);
}

/* Not lacunafs: pwrite until done or an error, then the sync asked for. */
static int lacuna_write_plain(int fd, uint64_t off, const uint8_t *buf, size_t len,
			      unsigned int flags, struct lacuna_wresult *res)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !done)
			return -errno;
		if (n <= 0)
			break; /* a short write is reported as such */
		done += (size_t)n;
	}
	res->written = done;
	if ((flags & LACUNA_WR_SYNC) && fsync(fd) < 0)
		return -errno;
	if ((flags & LACUNA_WR_DSYNC) && fdatasync(fd) < 0)
		return -errno;
	return 0;
}

int lacuna_write(struct lacuna_client *c, int fd, uint64_t off, const void *buf, size_t len,
		 unsigned int flags, struct lacuna_wresult *res)
{
	const uint8_t *p = buf;
	struct lacuna_write_inline *wi = NULL;
	struct lacuna_write w, *h = &w;
	unsigned long cmd = LACUNA_IOC_WRITE;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	if (flags & ~(LACUNA_WR_DSYNC | LACUNA_WR_SYNC))
		return -EINVAL;
	if (!c)
		return lacuna_write_plain(fd, off, p, len, flags, res);
	if (c->arena && p >= c->arena && len <= c->arena_len &&
	    (size_t)(p - c->arena) <= c->arena_len - len) {
		memset(h, 0, sizeof(*h));
		h->size = sizeof(*h);
		h->token[0] = c->token[0];
		h->token[1] = c->token[1];
		h->arena_off = (uint64_t)(p - c->arena);
	} else if (len <= LACUNA_WRITE_INLINE_MAX) {
		wi = malloc(sizeof(*wi));
		if (!wi)
			return -ENOMEM;
		h = &wi->h;
		memset(h, 0, sizeof(*h));
		h->size = sizeof(*wi);
		memcpy(wi->data, p, len);
		cmd = LACUNA_IOC_WRITE_INLINE;
	} else {
		return -E2BIG;
	}
	h->version = LACUNA_ABI_VERSION;
	h->flags = flags;
	h->offset = off;
	h->length = len;
	if (ioctl(fd, cmd, h) < 0) {
		rc = -errno;
		goto out;
	}
	res->written = h->written;
	res->file_size = h->file_size;
	res->atomic = true;
out:
	free(wi);
	return rc;
}
