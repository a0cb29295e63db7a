// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lt_fsops: one system call per invocation, for the integration tests.
 *
 * The shell cannot make renameat2 with flags, utimensat with nanoseconds,
 * xattr calls, non-blocking flock/fcntl locks held across processes, or
 * copy_file_range, and the errors of coreutils are not stable enough to
 * compare. Each subcommand makes one call (or a short, fixed sequence) on
 * the paths it is given and reports the outcome in a form a test can
 * compare between a native filesystem and a lacunafs mount:
 *
 *   success: exit 0, results (if any) on stdout;
 *   failure: "error: <call>: <strerror>" on stderr, the errno name
 *            (ENOENT, EACCES, ...) alone on stdout, exit 1;
 *   bad arguments: usage on stderr, exit 2.
 *
 * Options before the subcommand: -m MASK sets the umask first.
 * Lock subcommands given "hold" print "locked" once they hold the lock and
 * keep it until their standard input reaches end of file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#define LT_XATTR_MAX 65536
#define LT_IO_MAX (16 << 20)

struct lt_cmd {
	const char *name;
	int min_args;
	int max_args;
	const char *usage;
	int (*fn)(int argc, char **argv);
};

static const struct lt_cmd lt_cmds[];

/* Report a failed call: message on stderr, errno name on stdout, exit 1. */
static int lt_fail(const char *call, int err)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr, "error: %s: %s\n", call, strerror(err));
	if (name)
		printf("%s\n", name);
	else
		printf("E%d\n", err);
	fflush(stdout);
	return 1;
}

static void lt_usage(void)
{
	const struct lt_cmd *c;

	fprintf(stderr, "usage: lt_fsops [-m UMASK] COMMAND ARGS...\n");
	for (c = lt_cmds; c->name; c++)
		fprintf(stderr, "  %s %s\n", c->name, c->usage);
}

static int lt_bad(const char *what, const char *arg)
{
	fprintf(stderr, "lt_fsops: bad %s '%s'\n", what, arg);
	lt_usage();
	return 2;
}

/* Parse an unsigned or signed integer (base 0); false on junk. */
static bool lt_parse_ll(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	return errno == 0 && end != s && *end == '\0';
}

/* Octal mode such as 0644 or 4755. */
static bool lt_parse_mode(const char *s, mode_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || end == s || *end || v > 07777)
		return false;
	*out = (mode_t)v;
	return true;
}

/* An id; -1 means "leave unchanged" for chown. */
static bool lt_parse_id(const char *s, unsigned int *out)
{
	long long v;

	if (!lt_parse_ll(s, &v) || v < -1 || v > UINT32_MAX)
		return false;
	*out = (unsigned int)v;
	return true;
}

/* Offsets and lengths accept a K/M/G/T binary suffix. */
static bool lt_parse_size(const char *s, long long *out)
{
	char buf[64];
	size_t n = strlen(s);
	int shift = 0;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n + 1);
	switch (toupper((unsigned char)buf[n - 1])) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	}
	if (shift)
		buf[n - 1] = '\0';
	if (!lt_parse_ll(buf, out) || *out < 0 || *out > (LLONG_MAX >> shift))
		return false;
	*out <<= shift;
	return true;
}

/*
 * A timestamp: "now", "omit", SEC.NSEC (9 fractional digits at most) or
 * a plain integer count of nanoseconds. SEC.NSEC are the two timespec
 * fields, as stat prints them: "-1.5" is tv_sec -1, tv_nsec 500000000.
 */
static bool lt_parse_time(const char *s, struct timespec *ts)
{
	const char *dot = strchr(s, '.');
	long long v;

	if (!strcmp(s, "now")) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_NOW;
		return true;
	}
	if (!strcmp(s, "omit")) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_OMIT;
		return true;
	}
	if (dot) {
		char sec[32], frac[10] = "000000000";
		size_t sl = dot - s, fl = strlen(dot + 1);

		if (sl == 0 || sl >= sizeof(sec) || fl == 0 || fl > 9)
			return false;
		memcpy(sec, s, sl);
		sec[sl] = '\0';
		memcpy(frac, dot + 1, fl);
		if (!lt_parse_ll(sec, &v))
			return false;
		ts->tv_sec = v;
		if (!lt_parse_ll(frac, &v) || v < 0)
			return false;
		ts->tv_nsec = v;
		return true;
	}
	if (!lt_parse_ll(s, &v))
		return false;
	ts->tv_sec = v / 1000000000LL;
	ts->tv_nsec = v % 1000000000LL;
	if (ts->tv_nsec < 0) {
		ts->tv_sec--;
		ts->tv_nsec += 1000000000LL;
	}
	return true;
}

static const struct {
	const char *name;
	int flag;
} lt_open_flags[] = {
	{ "rdonly", O_RDONLY },	    { "wronly", O_WRONLY },	{ "rdwr", O_RDWR },
	{ "creat", O_CREAT },	    { "excl", O_EXCL },		{ "trunc", O_TRUNC },
	{ "append", O_APPEND },	    { "direct", O_DIRECT },	{ "sync", O_SYNC },
	{ "dsync", O_DSYNC },	    { "nofollow", O_NOFOLLOW }, { "directory", O_DIRECTORY },
	{ "noatime", O_NOATIME },   { "path", O_PATH },		{ "tmpfile", O_TMPFILE },
	{ "nonblock", O_NONBLOCK }, { "cloexec", O_CLOEXEC },
};

/*
 * Parse open flag words; "mode=NNNN" sets the creation mode (default 0644).
 * Returns 0, or 2 after printing usage for an unknown word.
 */
static int lt_parse_open(int argc, char **argv, int *flags, mode_t *mode)
{
	int i;
	size_t j;

	*flags = 0;
	*mode = 0644;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mode=", 5)) {
			if (!lt_parse_mode(argv[i] + 5, mode))
				return lt_bad("mode", argv[i]);
			continue;
		}
		for (j = 0; j < sizeof(lt_open_flags) / sizeof(lt_open_flags[0]); j++)
			if (!strcmp(argv[i], lt_open_flags[j].name))
				break;
		if (j == sizeof(lt_open_flags) / sizeof(lt_open_flags[0]))
			return lt_bad("open flag", argv[i]);
		*flags |= lt_open_flags[j].flag;
	}
	return 0;
}

/* Write all of buf at off (or at the file position when off < 0). */
static int lt_write_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

/* Block until standard input reaches end of file. */
static void lt_wait_stdin(void)
{
	char buf[256];
	ssize_t n;

	do {
		n = read(STDIN_FILENO, buf, sizeof(buf));
	} while (n > 0 || (n < 0 && errno == EINTR));
}

/* ------------------------------------------------------------ names */

static int cmd_rename2(int argc, char **argv)
{
	unsigned int flags;

	(void)argc;
	if (!strcmp(argv[2], "none"))
		flags = 0;
	else if (!strcmp(argv[2], "noreplace"))
		flags = RENAME_NOREPLACE;
	else if (!strcmp(argv[2], "exchange"))
		flags = RENAME_EXCHANGE;
	else if (!strcmp(argv[2], "whiteout"))
		flags = RENAME_WHITEOUT;
	else
		return lt_bad("rename flag", argv[2]);
	if (renameat2(AT_FDCWD, argv[0], AT_FDCWD, argv[1], flags) < 0)
		return lt_fail("renameat2", errno);
	return 0;
}

static int cmd_rename(int argc, char **argv)
{
	(void)argc;
	if (rename(argv[0], argv[1]) < 0)
		return lt_fail("rename", errno);
	return 0;
}

static int cmd_link(int argc, char **argv)
{
	(void)argc;
	if (link(argv[0], argv[1]) < 0)
		return lt_fail("link", errno);
	return 0;
}

static int cmd_symlink(int argc, char **argv)
{
	(void)argc;
	if (symlink(argv[0], argv[1]) < 0)
		return lt_fail("symlink", errno);
	return 0;
}

static int cmd_readlink(int argc, char **argv)
{
	char buf[PATH_MAX + 1];
	ssize_t n;

	(void)argc;
	n = readlink(argv[0], buf, sizeof(buf) - 1);
	if (n < 0)
		return lt_fail("readlink", errno);
	buf[n] = '\0';
	printf("%s\n", buf);
	return 0;
}

static int cmd_unlink(int argc, char **argv)
{
	(void)argc;
	if (unlink(argv[0]) < 0)
		return lt_fail("unlink", errno);
	return 0;
}

static int cmd_mkdir(int argc, char **argv)
{
	mode_t mode = 0777;

	if (argc > 1 && !lt_parse_mode(argv[1], &mode))
		return lt_bad("mode", argv[1]);
	if (mkdir(argv[0], mode) < 0)
		return lt_fail("mkdir", errno);
	return 0;
}

static int cmd_rmdir(int argc, char **argv)
{
	(void)argc;
	if (rmdir(argv[0]) < 0)
		return lt_fail("rmdir", errno);
	return 0;
}

static int cmd_mknod(int argc, char **argv)
{
	long long maj = 0, min = 0;
	mode_t type, mode = 0644;

	if (!strcmp(argv[1], "fifo"))
		type = S_IFIFO;
	else if (!strcmp(argv[1], "char"))
		type = S_IFCHR;
	else if (!strcmp(argv[1], "block"))
		type = S_IFBLK;
	else if (!strcmp(argv[1], "reg"))
		type = S_IFREG;
	else if (!strcmp(argv[1], "sock"))
		type = S_IFSOCK;
	else
		return lt_bad("node type", argv[1]);
	if (argc > 2 && (!lt_parse_ll(argv[2], &maj) || maj < 0))
		return lt_bad("major", argv[2]);
	if (argc > 3 && (!lt_parse_ll(argv[3], &min) || min < 0))
		return lt_bad("minor", argv[3]);
	if (argc > 4 && !lt_parse_mode(argv[4], &mode))
		return lt_bad("mode", argv[4]);
	if (mknod(argv[0], type | mode, makedev(maj, min)) < 0)
		return lt_fail("mknod", errno);
	return 0;
}

/* Directory entries, one name a line, in the order readdir gives them. */
static int cmd_readdir(int argc, char **argv)
{
	struct dirent *de;
	bool ino = argc > 1 && !strcmp(argv[1], "ino");
	DIR *d;

	if (argc > 1 && !ino)
		return lt_bad("readdir option", argv[1]);
	d = opendir(argv[0]);
	if (!d)
		return lt_fail("opendir", errno);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (ino)
			printf("%llu %s\n", (unsigned long long)de->d_ino, de->d_name);
		else
			printf("%s\n", de->d_name);
	}
	if (errno) {
		int err = errno;

		closedir(d);
		return lt_fail("readdir", err);
	}
	closedir(d);
	return 0;
}

/* ------------------------------------------------------------ attributes */

static const char *lt_type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "reg";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "lnk";
	case S_IFIFO:
		return "fifo";
	case S_IFCHR:
		return "chr";
	case S_IFBLK:
		return "blk";
	case S_IFSOCK:
		return "sock";
	}
	return "unknown";
}

/* Print one stat field into buf; false for an unknown field name. */
static bool lt_stat_field(const struct stat *st, const char *f, char *buf, size_t len)
{
	if (!strcmp(f, "mode"))
		snprintf(buf, len, "%o", st->st_mode);
	else if (!strcmp(f, "perm"))
		snprintf(buf, len, "%04o", st->st_mode & 07777);
	else if (!strcmp(f, "type"))
		snprintf(buf, len, "%s", lt_type_name(st->st_mode));
	else if (!strcmp(f, "uid"))
		snprintf(buf, len, "%u", st->st_uid);
	else if (!strcmp(f, "gid"))
		snprintf(buf, len, "%u", st->st_gid);
	else if (!strcmp(f, "size"))
		snprintf(buf, len, "%lld", (long long)st->st_size);
	else if (!strcmp(f, "nlink"))
		snprintf(buf, len, "%lu", (unsigned long)st->st_nlink);
	else if (!strcmp(f, "ino"))
		snprintf(buf, len, "%llu", (unsigned long long)st->st_ino);
	else if (!strcmp(f, "dev"))
		snprintf(buf, len, "%u:%u", major(st->st_dev), minor(st->st_dev));
	else if (!strcmp(f, "rdev"))
		snprintf(buf, len, "%u:%u", major(st->st_rdev), minor(st->st_rdev));
	else if (!strcmp(f, "blocks"))
		snprintf(buf, len, "%lld", (long long)st->st_blocks);
	else if (!strcmp(f, "blksize"))
		snprintf(buf, len, "%ld", (long)st->st_blksize);
	else if (!strcmp(f, "atime"))
		snprintf(buf, len, "%lld.%09ld", (long long)st->st_atim.tv_sec,
			 st->st_atim.tv_nsec);
	else if (!strcmp(f, "mtime"))
		snprintf(buf, len, "%lld.%09ld", (long long)st->st_mtim.tv_sec,
			 st->st_mtim.tv_nsec);
	else if (!strcmp(f, "ctime"))
		snprintf(buf, len, "%lld.%09ld", (long long)st->st_ctim.tv_sec,
			 st->st_ctim.tv_nsec);
	else
		return false;
	return true;
}

/*
 * stat PATH [FIELD...]: with fields, their values space separated; without,
 * every field as key=value on one line.
 */
static int lt_do_stat(int argc, char **argv, bool follow)
{
	static const char *const all[] = { "type", "mode",   "uid",  "gid",   "size",  "nlink",
					   "ino",  "blocks", "rdev", "atime", "mtime", "ctime" };
	struct stat st = { 0 };
	char buf[64];
	size_t i;
	int j;

	for (j = 1; j < argc; j++)
		if (!lt_stat_field(&st, argv[j], buf, sizeof(buf)))
			return lt_bad("stat field", argv[j]);
	if ((follow ? stat(argv[0], &st) : lstat(argv[0], &st)) < 0)
		return lt_fail(follow ? "stat" : "lstat", errno);
	if (argc == 1) {
		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
			lt_stat_field(&st, all[i], buf, sizeof(buf));
			printf("%s%s=%s", i ? " " : "", all[i], buf);
		}
		printf("\n");
		return 0;
	}
	for (j = 1; j < argc; j++) {
		lt_stat_field(&st, argv[j], buf, sizeof(buf));
		printf("%s%s", j > 1 ? " " : "", buf);
	}
	printf("\n");
	return 0;
}

static int cmd_stat(int argc, char **argv)
{
	return lt_do_stat(argc, argv, true);
}

static int cmd_lstat(int argc, char **argv)
{
	return lt_do_stat(argc, argv, false);
}

static int cmd_statfs(int argc, char **argv)
{
	struct statvfs sv;

	(void)argc;
	if (statvfs(argv[0], &sv) < 0)
		return lt_fail("statvfs", errno);
	printf("bsize=%lu frsize=%lu blocks=%llu bfree=%llu bavail=%llu files=%llu ffree=%llu "
	       "namemax=%lu\n",
	       sv.f_bsize, sv.f_frsize, (unsigned long long)sv.f_blocks,
	       (unsigned long long)sv.f_bfree, (unsigned long long)sv.f_bavail,
	       (unsigned long long)sv.f_files, (unsigned long long)sv.f_ffree, sv.f_namemax);
	return 0;
}

static int cmd_access(int argc, char **argv)
{
	int how = 0;
	const char *p;

	(void)argc;
	for (p = argv[1]; *p; p++) {
		switch (*p) {
		case 'r':
			how |= R_OK;
			break;
		case 'w':
			how |= W_OK;
			break;
		case 'x':
			how |= X_OK;
			break;
		case 'f':
			break;
		default:
			return lt_bad("access mode", argv[1]);
		}
	}
	if (access(argv[0], how) < 0)
		return lt_fail("access", errno);
	return 0;
}

static int cmd_chmod(int argc, char **argv)
{
	mode_t mode;

	(void)argc;
	if (!lt_parse_mode(argv[1], &mode))
		return lt_bad("mode", argv[1]);
	if (chmod(argv[0], mode) < 0)
		return lt_fail("chmod", errno);
	return 0;
}

static int lt_do_chown(char **argv, bool follow)
{
	unsigned int uid, gid;

	if (!lt_parse_id(argv[1], &uid))
		return lt_bad("uid", argv[1]);
	if (!lt_parse_id(argv[2], &gid))
		return lt_bad("gid", argv[2]);
	if ((follow ? chown(argv[0], uid, gid) : lchown(argv[0], uid, gid)) < 0)
		return lt_fail(follow ? "chown" : "lchown", errno);
	return 0;
}

static int cmd_chown(int argc, char **argv)
{
	(void)argc;
	return lt_do_chown(argv, true);
}

static int cmd_lchown(int argc, char **argv)
{
	(void)argc;
	return lt_do_chown(argv, false);
}

static int cmd_truncate(int argc, char **argv)
{
	long long len;

	(void)argc;
	if (!lt_parse_size(argv[1], &len))
		return lt_bad("length", argv[1]);
	if (truncate(argv[0], len) < 0)
		return lt_fail("truncate", errno);
	return 0;
}

static int cmd_ftruncate(int argc, char **argv)
{
	long long len;
	int fd;

	(void)argc;
	if (!lt_parse_size(argv[1], &len))
		return lt_bad("length", argv[1]);
	fd = open(argv[0], O_WRONLY);
	if (fd < 0)
		return lt_fail("open", errno);
	if (ftruncate(fd, len) < 0) {
		int err = errno;

		close(fd);
		return lt_fail("ftruncate", err);
	}
	close(fd);
	return 0;
}

static int cmd_utimens(int argc, char **argv)
{
	struct timespec ts[2];
	int flags = 0;

	if (!lt_parse_time(argv[1], &ts[0]))
		return lt_bad("atime", argv[1]);
	if (!lt_parse_time(argv[2], &ts[1]))
		return lt_bad("mtime", argv[2]);
	if (argc > 3) {
		if (strcmp(argv[3], "nofollow"))
			return lt_bad("utimens option", argv[3]);
		flags = AT_SYMLINK_NOFOLLOW;
	}
	if (utimensat(AT_FDCWD, argv[0], ts, flags) < 0)
		return lt_fail("utimensat", errno);
	return 0;
}

/* ------------------------------------------------------------ xattrs */

static int cmd_setxattr(int argc, char **argv)
{
	int flags = 0;

	if (argc > 3) {
		if (!strcmp(argv[3], "create"))
			flags = XATTR_CREATE;
		else if (!strcmp(argv[3], "replace"))
			flags = XATTR_REPLACE;
		else
			return lt_bad("setxattr flag", argv[3]);
	}
	if (setxattr(argv[0], argv[1], argv[2], strlen(argv[2]), flags) < 0)
		return lt_fail("setxattr", errno);
	return 0;
}

static int cmd_getxattr(int argc, char **argv)
{
	static char buf[LT_XATTR_MAX];
	ssize_t n;

	(void)argc;
	n = getxattr(argv[0], argv[1], buf, sizeof(buf));
	if (n < 0)
		return lt_fail("getxattr", errno);
	fwrite(buf, 1, n, stdout);
	printf("\n");
	return 0;
}

/* Names one a line, in the order the filesystem gives them. */
static int cmd_listxattr(int argc, char **argv)
{
	static char buf[LT_XATTR_MAX];
	ssize_t n, i;

	(void)argc;
	n = listxattr(argv[0], buf, sizeof(buf));
	if (n < 0)
		return lt_fail("listxattr", errno);
	for (i = 0; i < n; i += strlen(buf + i) + 1)
		printf("%s\n", buf + i);
	return 0;
}

static int cmd_removexattr(int argc, char **argv)
{
	(void)argc;
	if (removexattr(argv[0], argv[1]) < 0)
		return lt_fail("removexattr", errno);
	return 0;
}

/* ------------------------------------------------------------ data */

/* open PATH FLAGS...: open and close; prints nothing on success. */
static int cmd_open(int argc, char **argv)
{
	mode_t mode;
	int flags, rc, fd;

	rc = lt_parse_open(argc - 1, argv + 1, &flags, &mode);
	if (rc)
		return rc;
	fd = open(argv[0], flags, mode);
	if (fd < 0)
		return lt_fail("open", errno);
	if (close(fd) < 0)
		return lt_fail("close", errno);
	return 0;
}

/*
 * pwrite PATH OFFSET DATA [FLAGS...]: open (default wronly) and write DATA;
 * OFFSET "end" writes at the file position (use with append).
 */
static int cmd_pwrite(int argc, char **argv)
{
	long long off = -1;
	mode_t mode;
	int flags, rc, fd;

	if (strcmp(argv[1], "end") && !lt_parse_size(argv[1], &off))
		return lt_bad("offset", argv[1]);
	rc = lt_parse_open(argc - 3, argv + 3, &flags, &mode);
	if (rc)
		return rc;
	if (!(flags & O_ACCMODE))
		flags |= O_WRONLY;
	fd = open(argv[0], flags, mode);
	if (fd < 0)
		return lt_fail("open", errno);
	rc = lt_write_all(fd, argv[2], strlen(argv[2]), off);
	if (rc) {
		close(fd);
		return lt_fail("pwrite", -rc);
	}
	if (close(fd) < 0)
		return lt_fail("close", errno);
	return 0;
}

/* pread PATH OFFSET LEN [FLAGS...]: bytes read go to stdout verbatim. */
static int cmd_pread(int argc, char **argv)
{
	long long off, len;
	mode_t mode;
	char *buf;
	ssize_t n;
	int flags, rc, fd;

	if (!lt_parse_size(argv[1], &off))
		return lt_bad("offset", argv[1]);
	if (!lt_parse_size(argv[2], &len) || len > LT_IO_MAX)
		return lt_bad("length", argv[2]);
	rc = lt_parse_open(argc - 3, argv + 3, &flags, &mode);
	if (rc)
		return rc;
	buf = aligned_alloc(4096, len ? (len + 4095) & ~4095LL : 4096);
	if (!buf)
		return lt_fail("aligned_alloc", ENOMEM);
	fd = open(argv[0], flags, mode);
	if (fd < 0) {
		rc = lt_fail("open", errno);
		goto out_free;
	}
	n = pread(fd, buf, len, off);
	if (n < 0) {
		rc = lt_fail("pread", errno);
		goto out_close;
	}
	fwrite(buf, 1, n, stdout);
	rc = 0;
out_close:
	close(fd);
out_free:
	free(buf);
	return rc;
}

/* cat PATH: the whole file to stdout (open O_RDONLY, read to EOF). */
static int cmd_cat(int argc, char **argv)
{
	char buf[65536];
	ssize_t n;
	int fd;

	(void)argc;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return lt_fail("open", errno);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	if (n < 0) {
		int err = errno;

		close(fd);
		return lt_fail("read", err);
	}
	close(fd);
	return 0;
}

/*
 * copy_range SRC DST [SRC_OFF DST_OFF LEN]: copy_file_range until LEN bytes
 * (default: the size of SRC) are copied or the source ends; prints the
 * number of bytes copied. DST is created if missing.
 */
static int cmd_copy_range(int argc, char **argv)
{
	long long soff = 0, doff = 0, len = -1, done = 0;
	struct stat st;
	int in, out, rc;
	ssize_t n;

	if (argc > 2 && !lt_parse_size(argv[2], &soff))
		return lt_bad("source offset", argv[2]);
	if (argc > 3 && !lt_parse_size(argv[3], &doff))
		return lt_bad("destination offset", argv[3]);
	if (argc > 4 && !lt_parse_size(argv[4], &len))
		return lt_bad("length", argv[4]);
	if (argc != 2 && argc != 5)
		return lt_bad("argument count for", "copy_range");
	in = open(argv[0], O_RDONLY);
	if (in < 0)
		return lt_fail("open source", errno);
	out = open(argv[1], O_WRONLY | O_CREAT, 0644);
	if (out < 0) {
		rc = lt_fail("open destination", errno);
		goto out_close_in;
	}
	if (len < 0) {
		if (fstat(in, &st) < 0) {
			rc = lt_fail("fstat", errno);
			goto out_close_out;
		}
		len = st.st_size;
	}
	while (done < len) {
		loff_t so = soff + done, dof = doff + done;

		n = copy_file_range(in, &so, out, &dof, len - done, 0);
		if (n < 0) {
			rc = lt_fail("copy_file_range", errno);
			goto out_close_out;
		}
		if (n == 0)
			break;
		done += n;
	}
	printf("%lld\n", done);
	rc = 0;
out_close_out:
	if (close(out) < 0 && rc == 0)
		rc = lt_fail("close", errno);
out_close_in:
	close(in);
	return rc;
}

/* ------------------------------------------------------------ locks */

/*
 * flock PATH ex|sh|un [hold]: a non-blocking flock; prints "locked" or the
 * errno name (EWOULDBLOCK is reported as EAGAIN, its value on Linux).
 */
static int cmd_flock(int argc, char **argv)
{
	bool hold = false;
	int op, fd;

	if (!strcmp(argv[1], "ex"))
		op = LOCK_EX;
	else if (!strcmp(argv[1], "sh"))
		op = LOCK_SH;
	else if (!strcmp(argv[1], "un"))
		op = LOCK_UN;
	else
		return lt_bad("flock type", argv[1]);
	if (argc > 2) {
		if (strcmp(argv[2], "hold"))
			return lt_bad("flock option", argv[2]);
		hold = true;
	}
	fd = open(argv[0], O_RDONLY);
	if (fd < 0)
		return lt_fail("open", errno);
	if (flock(fd, op | LOCK_NB) < 0) {
		int err = errno;

		close(fd);
		return lt_fail("flock", err);
	}
	printf("locked\n");
	fflush(stdout);
	if (hold)
		lt_wait_stdin();
	close(fd);
	return 0;
}

/* Parse "rd|wr|un START LEN" into a struct flock. */
static int lt_parse_flock(char **argv, struct flock *fl)
{
	long long start, len;

	memset(fl, 0, sizeof(*fl));
	if (!strcmp(argv[0], "rd"))
		fl->l_type = F_RDLCK;
	else if (!strcmp(argv[0], "wr"))
		fl->l_type = F_WRLCK;
	else if (!strcmp(argv[0], "un"))
		fl->l_type = F_UNLCK;
	else
		return lt_bad("lock type", argv[0]);
	if (!lt_parse_size(argv[1], &start))
		return lt_bad("lock start", argv[1]);
	if (!lt_parse_size(argv[2], &len))
		return lt_bad("lock length", argv[2]);
	fl->l_whence = SEEK_SET;
	fl->l_start = start;
	fl->l_len = len;
	return 0;
}

/*
 * fcntl-lock PATH rd|wr START LEN [hold] [ofd]: a non-blocking F_SETLK
 * (F_OFD_SETLK with ofd); prints "locked" or the errno name.
 */
static int cmd_fcntl_lock(int argc, char **argv)
{
	bool hold = false, ofd = false;
	struct flock fl;
	int i, rc, fd;

	rc = lt_parse_flock(argv + 1, &fl);
	if (rc)
		return rc;
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "hold"))
			hold = true;
		else if (!strcmp(argv[i], "ofd"))
			ofd = true;
		else
			return lt_bad("fcntl-lock option", argv[i]);
	}
	fd = open(argv[0], fl.l_type == F_WRLCK ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return lt_fail("open", errno);
	if (fcntl(fd, ofd ? F_OFD_SETLK : F_SETLK, &fl) < 0) {
		int err = errno;

		close(fd);
		return lt_fail(ofd ? "fcntl(F_OFD_SETLK)" : "fcntl(F_SETLK)", err);
	}
	printf("locked\n");
	fflush(stdout);
	if (hold)
		lt_wait_stdin();
	close(fd);
	return 0;
}

/*
 * fcntl-getlk PATH rd|wr START LEN: F_GETLK; prints "unlocked" or
 * "TYPE START LEN PID" of the conflicting lock.
 */
static int cmd_fcntl_getlk(int argc, char **argv)
{
	struct flock fl;
	int rc, fd;

	(void)argc;
	rc = lt_parse_flock(argv + 1, &fl);
	if (rc)
		return rc;
	fd = open(argv[0], fl.l_type == F_WRLCK ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return lt_fail("open", errno);
	if (fcntl(fd, F_GETLK, &fl) < 0) {
		int err = errno;

		close(fd);
		return lt_fail("fcntl(F_GETLK)", err);
	}
	close(fd);
	if (fl.l_type == F_UNLCK)
		printf("unlocked\n");
	else
		printf("%s %lld %lld %ld\n", fl.l_type == F_WRLCK ? "wr" : "rd",
		       (long long)fl.l_start, (long long)fl.l_len, (long)fl.l_pid);
	return 0;
}

static const struct lt_cmd lt_cmds[] = {
	{ "rename2", 3, 3, "OLD NEW noreplace|exchange|whiteout|none", cmd_rename2 },
	{ "rename", 2, 2, "OLD NEW", cmd_rename },
	{ "link", 2, 2, "OLD NEW", cmd_link },
	{ "symlink", 2, 2, "TARGET PATH", cmd_symlink },
	{ "readlink", 1, 1, "PATH", cmd_readlink },
	{ "unlink", 1, 1, "PATH", cmd_unlink },
	{ "mkdir", 1, 2, "PATH [MODE]", cmd_mkdir },
	{ "rmdir", 1, 1, "PATH", cmd_rmdir },
	{ "mknod", 2, 5, "PATH fifo|char|block|reg|sock [MAJ MIN [MODE]]", cmd_mknod },
	{ "readdir", 1, 2, "PATH [ino]", cmd_readdir },
	{ "stat", 1, 16,
	  "PATH [FIELD...]  (type mode perm uid gid size nlink ino dev rdev blocks blksize atime "
	  "mtime ctime)",
	  cmd_stat },
	{ "lstat", 1, 16, "PATH [FIELD...]", cmd_lstat },
	{ "statfs", 1, 1, "PATH", cmd_statfs },
	{ "access", 2, 2, "PATH [rwxf]+", cmd_access },
	{ "chmod", 2, 2, "PATH MODE", cmd_chmod },
	{ "chown", 3, 3, "PATH UID GID  (-1 keeps)", cmd_chown },
	{ "lchown", 3, 3, "PATH UID GID", cmd_lchown },
	{ "truncate", 2, 2, "PATH LEN", cmd_truncate },
	{ "ftruncate", 2, 2, "PATH LEN", cmd_ftruncate },
	{ "utimens", 3, 4, "PATH ATIME MTIME [nofollow]  (now|omit|SEC.NSEC|NS)", cmd_utimens },
	{ "setxattr", 3, 4, "PATH NAME VALUE [create|replace]", cmd_setxattr },
	{ "getxattr", 2, 2, "PATH NAME", cmd_getxattr },
	{ "listxattr", 1, 1, "PATH", cmd_listxattr },
	{ "removexattr", 2, 2, "PATH NAME", cmd_removexattr },
	{ "open", 1, 20,
	  "PATH [rdonly|wronly|rdwr|creat|excl|trunc|append|direct|nofollow|noatime|...] "
	  "[mode=NNNN]",
	  cmd_open },
	{ "pwrite", 3, 20, "PATH OFFSET|end DATA [FLAGS...]", cmd_pwrite },
	{ "pread", 3, 20, "PATH OFFSET LEN [FLAGS...]", cmd_pread },
	{ "cat", 1, 1, "PATH", cmd_cat },
	{ "copy_range", 2, 5, "SRC DST [SRC_OFF DST_OFF LEN]", cmd_copy_range },
	{ "flock", 2, 3, "PATH ex|sh|un [hold]", cmd_flock },
	{ "fcntl-lock", 4, 6, "PATH rd|wr|un START LEN [hold] [ofd]", cmd_fcntl_lock },
	{ "fcntl-getlk", 4, 4, "PATH rd|wr START LEN", cmd_fcntl_getlk },
	{ NULL, 0, 0, NULL, NULL },
};

int main(int argc, char **argv)
{
	const struct lt_cmd *c;
	int opt;

	while ((opt = getopt(argc, argv, "+m:h")) != -1) {
		mode_t mask;

		switch (opt) {
		case 'm':
			if (!lt_parse_mode(optarg, &mask) || mask > 0777)
				return lt_bad("umask", optarg);
			umask(mask);
			break;
		default:
			lt_usage();
			return 2;
		}
	}
	if (optind >= argc) {
		lt_usage();
		return 2;
	}
	for (c = lt_cmds; c->name; c++) {
		int n = argc - optind - 1;

		if (strcmp(c->name, argv[optind]))
			continue;
		if (n < c->min_args || n > c->max_args) {
			fprintf(stderr, "usage: lt_fsops %s %s\n", c->name, c->usage);
			return 2;
		}
		return c->fn(n, argv + optind + 1);
	}
	return lt_bad("command", argv[optind]);
}
