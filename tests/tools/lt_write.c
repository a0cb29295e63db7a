// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_write: lacunafs's atomic write (LACUNA_IOC_WRITE, lacuna_write()).
 *
 *   lt_write abi FILE               what the ioctls accept and refuse
 *   lt_write full FILE              a write larger than the free space
 *   lt_write torture [--plain] [--replies N] FILE
 *
 * FILE is created (or truncated) on a lacunafs mount.
 *
 * abi: writes from the arena (any size, any place in it, past the old
 * end of file), inline from ordinary memory, with the sync flags; the
 * mount's size and bytes right after (the kernel's cached attributes are
 * dropped by the daemon); EBADF on a read-only descriptor, EINVAL for a
 * bad size/flags/pad or an inline length over LACUNA_WRITE_INLINE_MAX,
 * EPROTO for another ABI version, EFBIG past 2^63-1, EACCES for an
 * unknown token, EPERM for the token of another process (a forked
 * child), E2BIG from lacuna_write for data neither in the arena nor
 * small (a window running off it); ENOTTY for an unknown ioctl
 * before any size check (FS_IOC_GETVERSION, as lsattr -v sends; lsattr's
 * FS_IOC_GETFLAGS is answered from the backing inode); the write
 * unit that LACUNA_IOC_INFO reports.
 *
 * full: on a filesystem with less free space than the write, a write of
 * more than that either writes a part (and says how much: written < len,
 * status 0) or fails with ENOSPC, and the mount stays usable.
 *
 * torture: one thread keeps replacing the range [R, R + L) of FILE (R =
 * 1 MiB + 100, unaligned) with one byte value, new each time, by one
 * lacuna_write() from the arena at an offset of every alignment class
 * (0, 1, 212, 511, 2048, 4095 into a page), and punching it again
 * (fallocate through the mount); another thread takes sparse reads of
 * the range and checks each: all of it one value, or all zeros. L runs
 * through 1 byte, 4 KiB, 64 KiB, 1 MiB - 4 KiB, 1 MiB and 2.5 MiB (more
 * than any write(2) through the mount can carry whole), --replies replies
 * (default 400) each. --plain writes with pwrite(2) through the mount
 * from the same arena addresses instead: writes up to the mount's write
 * unit (LACUNA_IOC_INFO) must still never be torn, and for each larger
 * one a torn reply must be seen within 50 times as many replies (the
 * kernel cuts the write on the buffer's pages): proof that the check
 * sees what the ioctl prevents.
 *
 * Exit 0 pass, 1 fail, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lacuna/lacuna.h"

#define MIB (1024 * 1024)
#define ARENA (16 * MIB)
#define WARENA 0	     /* the writer's part of the arena */
#define RARENA (8 * MIB) /* the reader's */
#define REGION (MIB + 100)

static int failures;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!ok)
		failures++;
}

static void die(const char *what)
{
	fprintf(stderr, "lt_write: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((seed * 131 + i * 7) % 251 + 1);
}

/* an ioctl's errno, or 0 */
static int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

static void wr_init(struct lacuna_write *w, size_t size, uint64_t off, uint64_t len)
{
	memset(w, 0, sizeof(*w));
	w->size = (uint32_t)size;
	w->version = LACUNA_ABI_VERSION;
	w->offset = off;
	w->length = len;
}

static int abi(const char *path)
{
	struct lacuna_write_inline *wi = calloc(1, sizeof(*wi));
	uint8_t *buf = malloc(4 * MIB), *back = malloc(4 * MIB);
	struct lacuna_info info;
	struct lacuna_wresult res;
	struct lacuna_client *c;
	struct lacuna_write w;
	struct stat st;
	uint8_t *arena;
	size_t alen;
	int fd, rfd, rc, flags;
	long version = 0;
	pid_t pid;

	if (!wi || !buf || !back)
		die("malloc");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	rfd = open(path, O_RDONLY);
	if (fd < 0 || rfd < 0)
		die("open");
	check(lacuna_is_lacunafs(fd, &info), "the file is on lacunafs");
	check(info.write_unit == MIB - 4095 && info.write_unit_aligned == MIB,
	      "LACUNA_IOC_INFO: write unit %u from any buffer, %u from a page-aligned one",
	      info.write_unit, info.write_unit_aligned);
	rc = lacuna_client_open(fd, ARENA, &c);
	if (rc) {
		errno = -rc;
		die("lacuna_client_open");
	}
	arena = lacuna_client_arena(c, &alen);

	/* from the arena: 3 MiB + 5 at an odd place, past the end of file */
	if (fstat(rfd, &st) < 0) /* the kernel caches the size 0 now */
		die("fstat");
	fill(arena + 212, 3 * MIB + 5, 1);
	rc = lacuna_write(c, fd, 12345, arena + 212, 3 * MIB + 5, 0, &res);
	check(rc == 0 && res.written == 3 * MIB + 5 && res.atomic,
	      "arena write of 3 MiB + 5 bytes from arena + 212: %s, %llu written, atomic %d",
	      strerror(-rc), (unsigned long long)res.written, res.atomic);
	check(res.file_size == 12345 + 3 * MIB + 5, "the size after the write is %llu",
	      (unsigned long long)res.file_size);
	if (fstat(rfd, &st) < 0)
		die("fstat");
	check(st.st_size == 12345 + 3 * MIB + 5,
	      "the mount's size right after (the kernel's cached size was dropped): %lld",
	      (long long)st.st_size);
	check(pread(rfd, back, 3 * MIB + 5, 12345) == 3 * MIB + 5 &&
		      !memcmp(back, arena + 212, 3 * MIB + 5),
	      "the bytes read back through the mount are those written");

	/* inline, from ordinary memory, with each sync flag */
	for (flags = 0; flags <= (int)LACUNA_WR_SYNC; flags++) {
		fill(buf, 1000, 10 + flags);
		rc = lacuna_write(c, fd, 7 + flags * 1000, buf, 1000, (unsigned int)flags, &res);
		check(rc == 0 && res.written == 1000 && res.atomic &&
			      pread(rfd, back, 1000, 7 + flags * 1000) == 1000 &&
			      !memcmp(back, buf, 1000),
		      "inline write of 1000 bytes, flags %d: %s", flags, strerror(-rc));
	}
	fill(buf, LACUNA_WRITE_INLINE_MAX, 20);
	rc = lacuna_write(c, fd, 4 * MIB, buf, LACUNA_WRITE_INLINE_MAX, 0, &res);
	check(rc == 0 && res.written == LACUNA_WRITE_INLINE_MAX,
	      "inline write of LACUNA_WRITE_INLINE_MAX bytes: %s", strerror(-rc));
	rc = lacuna_write(c, fd, 0, buf, LACUNA_WRITE_INLINE_MAX + 1, 0, &res);
	check(rc == -E2BIG, "lacuna_write of more than the inline maximum outside the arena: %s",
	      strerror(-rc));
	rc = lacuna_write(c, fd, 0, arena, 0, 0, &res);
	check(rc == 0 && res.written == 0, "a write of 0 bytes: %s", strerror(-rc));
	rc = lacuna_write(c, rfd, 0, arena, 10, 0, &res);
	check(rc == -EBADF, "a descriptor open for reading only: %s", strerror(-rc));
	rc = lacuna_write(c, fd, 0, arena, 10, 4, &res);
	check(rc == -EINVAL, "unknown flags: %s", strerror(-rc));
	rc = lacuna_write(NULL, fd, 20, arena + 1, 10, 0, &res);
	check(rc == 0 && res.written == 10 && !res.atomic, "without a client: plain pwrite");

	/* the raw ioctls */
	wr_init(&w, sizeof(w), 0, 10);
	w.token[0] = 1;
	check(ioc(fd, LACUNA_IOC_WRITE, &w) == EACCES, "an unknown token: EACCES");
	wr_init(&w, sizeof(w) - 8, 0, 10);
	check(ioc(fd, LACUNA_IOC_WRITE, &w) == EINVAL, "a wrong size: EINVAL");
	wr_init(&w, sizeof(w), 0, 10);
	w.version = LACUNA_ABI_VERSION + 1;
	check(ioc(fd, LACUNA_IOC_WRITE, &w) == EPROTO, "another ABI version: EPROTO");
	wr_init(&w, sizeof(w), 0, 10);
	w.in_pad = 1;
	check(ioc(fd, LACUNA_IOC_WRITE, &w) == EINVAL, "a non-zero pad: EINVAL");
	wr_init(&w, sizeof(w), (uint64_t)1 << 63, 1);
	check(ioc(fd, LACUNA_IOC_WRITE, &w) == EFBIG, "an offset of 2^63: EFBIG");
	wr_init(&w, sizeof(w), ((uint64_t)1 << 63) - 5, 10);
	check(ioc(fd, LACUNA_IOC_WRITE, &w) == EFBIG, "a range ending past 2^63-1: EFBIG");
	wr_init(&wi->h, sizeof(*wi), 0, LACUNA_WRITE_INLINE_MAX + 1);
	check(ioc(fd, LACUNA_IOC_WRITE_INLINE, wi) == EINVAL,
	      "an inline length over LACUNA_WRITE_INLINE_MAX: EINVAL");
	check(ioc(fd, FS_IOC_GETVERSION, &version) == ENOTTY,
	      "an ioctl lacunafs does not know (FS_IOC_GETVERSION): ENOTTY");

	/* a window running off the arena is data outside it, too large to go inline */
	rc = lacuna_write(c, fd, 0, arena + alen - 1, 1, 0, &res);
	check(rc == 0 && res.written == 1, "a write of the arena's last byte: %s", strerror(-rc));
	rc = lacuna_write(c, fd, 0, arena + alen - 100, LACUNA_WRITE_INLINE_MAX + 1, 0, &res);
	check(rc == -E2BIG, "a window running off the arena: %s", strerror(-rc));
	pid = fork();
	if (pid == 0) {
		/* the child inherits the client and its token, not the registration */
		rc = lacuna_write(c, fd, 0, arena, 10, 0, &res);
		_exit(rc == -EPERM ? 0 : 1);
	}
	check(pid > 0 && waitpid(pid, &rc, 0) == pid && WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
	      "the parent's arena token from a forked child: EPERM");
	lacuna_client_close(c);
	close(rfd);
	close(fd);
	free(wi);
	free(buf);
	free(back);
	return failures ? 1 : 0;
}

static int full(const char *path)
{
	struct lacuna_wresult res;
	struct lacuna_client *c;
	uint8_t *arena;
	uint64_t total = 0;
	int fd, rc, i;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open");
	rc = lacuna_client_open(fd, ARENA, &c);
	if (rc) {
		errno = -rc;
		die("lacuna_client_open");
	}
	arena = lacuna_client_arena(c, NULL);
	fill(arena, ARENA, 3);
	for (i = 0; i < 4096; i++) {
		rc = lacuna_write(c, fd, total, arena, ARENA, 0, &res);
		if (rc || res.written < ARENA)
			break;
		total += res.written;
	}
	check(rc == -ENOSPC || (rc == 0 && res.written < ARENA),
	      "a write past the free space: %s, %llu of %d bytes written (after %llu)",
	      strerror(-rc), (unsigned long long)(rc ? 0 : res.written), ARENA,
	      (unsigned long long)total);
	if (!rc)
		total += res.written;
	rc = lacuna_write(c, fd, total, arena, ARENA, 0, &res);
	check(rc == -ENOSPC, "the next write: ENOSPC (%s)", strerror(-rc));
	check(ftruncate(fd, 0) == 0, "the file is truncated through the mount afterwards");
	rc = lacuna_write(c, fd, 0, arena, MIB, LACUNA_WR_SYNC, &res);
	check(rc == 0 && res.written == MIB, "with space again, a 1 MiB write: %s",
	      strerror(-rc));
	lacuna_client_close(c);
	close(fd);
	return failures ? 1 : 0;
}

/* ---------------------------------------------------------------- torture */

static struct {
	int fd;
	struct lacuna_client *c;
	uint8_t *arena;
	bool plain;
	size_t len;
	atomic_bool stop;
	atomic_ulong writes;
} t;

static const size_t align_class[] = { 0, 1, 212, 511, 2048, 4095 };

static void *writer(void *arg)
{
	struct lacuna_wresult res;
	uint64_t g = (uint64_t)(uintptr_t)arg;
	unsigned int k = 0;
	int rc;

	while (!atomic_load(&t.stop)) {
		uint8_t *src = t.arena + WARENA + align_class[k++ % 6];

		memset(src, (int)(g++ % 255) + 1, t.len);
		if (t.plain) {
			rc = pwrite(t.fd, src, t.len, REGION) == (ssize_t)t.len ? 0 : -errno;
		} else {
			rc = lacuna_write(t.c, t.fd, REGION, src, t.len, 0, &res);
			if (!rc && res.written != t.len)
				rc = -EIO;
		}
		if (rc) {
			errno = -rc;
			die("write");
		}
		if (fallocate(t.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, REGION,
			      (off_t)t.len) < 0)
			die("fallocate");
		atomic_fetch_add(&t.writes, 1);
	}
	return NULL;
}

/* Is [REGION, REGION + len) in @res one value throughout (zero counts)? */
static bool uniform(const struct lacuna_result *res, size_t len, int *first, int *other,
		    uint64_t *at)
{
	int v = -1;
	unsigned int i;

	for (i = 0; i < res->nsegs; i++) {
		const struct lacuna_extent *e = &res->segs[i];
		uint64_t a = e->offset < REGION ? REGION : e->offset;
		uint64_t b = e->offset + e->length > REGION + len ? REGION + len :
								    e->offset + e->length;
		uint64_t x;

		for (x = a; x < b; x++) {
			int c = e->kind == LACUNA_SEG_HOLE ? 0 : e->data[x - e->offset];

			if (v < 0)
				v = c;
			if (c != v) {
				*first = v;
				*other = c;
				*at = x;
				return false;
			}
		}
	}
	return true;
}

static int torture(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 4096, 65536, MIB - 4096, MIB, 5 * MIB / 2 };
	struct lacuna_result *res = malloc(sizeof(*res));
	unsigned long replies = 400;
	struct lacuna_info info;
	const char *path = NULL;
	unsigned int s;
	int i, rc;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--plain"))
			t.plain = true;
		else if (!strcmp(argv[i], "--replies") && i + 1 < argc)
			replies = strtoul(argv[++i], NULL, 0);
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			return 2;
	}
	if (!path || !res || !replies)
		return 2;
	t.fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (t.fd < 0)
		die("open");
	if (ftruncate(t.fd, REGION + 4 * MIB) < 0)
		die("ftruncate");
	rc = lacuna_client_open(t.fd, ARENA, &t.c);
	if (rc) {
		errno = -rc;
		die("lacuna_client_open");
	}
	t.arena = lacuna_client_arena(t.c, NULL);
	if (!lacuna_is_lacunafs(t.fd, &info) || !info.write_unit) {
		fprintf(stderr, "lt_write: %s: no write unit from LACUNA_IOC_INFO\n", path);
		return 1;
	}
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		pthread_t th;
		unsigned long n, ntorn = 0, w0;
		bool expect;

		t.len = sizes[s];
		/* pwrite through the mount is whole up to the unit, cut beyond */
		expect = t.plain && t.len > info.write_unit;
		atomic_store(&t.stop, false);
		w0 = atomic_load(&t.writes);
		if (pthread_create(&th, NULL, writer, (void *)(uintptr_t)(s * 1000003)))
			die("pthread_create");
		/* a negative control reads until it sees a tear, within bounds */
		for (n = 0; n < (expect ? 50 * replies : replies); n++) {
			int a = 0, b = 0;
			uint64_t at = 0;

			rc = lacuna_sparse_read(t.c, t.fd, REGION, t.len, LACUNA_READ_DATA,
						t.arena + RARENA, ARENA - RARENA, res);
			if (rc) {
				errno = -rc;
				die("lacuna_sparse_read");
			}
			if (!res->atomic || (res->flags & LACUNA_SR_SHORT)) {
				check(false, "a reply not atomic or short");
				break;
			}
			if (!uniform(res, t.len, &a, &b, &at)) {
				if (!ntorn++)
					printf("# %zu-byte writes: torn reply: %#x then %#x at +%llu\n",
					       t.len, a, b, (unsigned long long)(at - REGION));
				if (expect)
					break;
			}
		}
		atomic_store(&t.stop, true);
		pthread_join(th, NULL);
		printf("# %zu-byte writes%s: %lu replies, %lu writes, %lu torn\n", t.len,
		       t.plain ? " (pwrite through the mount)" : "", n, atomic_load(&t.writes) - w0,
		       ntorn);
		if (expect)
			check(ntorn > 0, "%zu-byte pwrites through the mount, over the unit of %u: "
					 "the check saw one torn (after %lu replies)",
			      t.len, info.write_unit, n + 1);
		else
			check(ntorn == 0, "%zu-byte %s from every alignment class are never torn",
			      t.len, t.plain ? "pwrites through the mount" : "atomic writes");
	}
	lacuna_client_close(t.c);
	close(t.fd);
	free(res);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "abi"))
		return abi(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "full"))
		return full(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "torture")) {
		int rc = torture(argc, argv);

		if (rc != 2)
			return rc;
	}
	fprintf(stderr, "usage: lt_write abi FILE | full FILE | "
			"torture [--plain] [--replies N] FILE\n");
	return 2;
}
