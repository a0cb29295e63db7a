// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs: a FUSE passthrough filesystem over a directory on ext4 or
 * XFS, the first half of Lacuna. This file parses the command line, opens
 * the backing directory, negotiates the FUSE connection and runs the
 * multi-threaded session loop until unmount or SIGTERM/SIGINT/SIGHUP.
 *
 * Mount options always added: allow_other (lacunad and other users reach
 * the files) and default_permissions (the kernel checks access with the
 * caller's full credentials; see lfs_cred.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lfs.h"
#include "lfs_cred.h"
#include "lfs_fdcache.h"
#include "lfs_metrics.h"
#include "log.h"

#define LFS_MAX_WRITE (1024 * 1024)
/*
 * Reads are capped a little below 1 MiB so that a reply and its header
 * fit the 1 MiB pipe libfuse splices through (fs.pipe-max-size, which it
 * cannot raise without CAP_SYS_RESOURCE): otherwise it falls back to
 * copying every read through a freshly mapped buffer.
 */
#define LFS_MAX_READ 1032192 /* 1 MiB - 16 KiB: reply + libfuse's 3-page margin */

#define LFS_STR2(x) #x
#define LFS_STR(x) LFS_STR2(x)

struct lfs lfs = {
	.proc_fd = -1,
	.entry_timeout = 1.0,
	.attr_timeout = 1.0,
	.cache = LFS_CACHE_AUTO,
};

struct lfs_cmdline {
	char *backing;
	char *cache;
	unsigned long fd_cache;
	int fd_cache_set;
	int stack;
	char *metrics;
	double timeout;
	int timeout_set;
	int show_help;
	int show_version;
};

#define LFS_OPT(t, p)                                 \
	{                                             \
		t, offsetof(struct lfs_cmdline, p), 1 \
	}
static const struct fuse_opt lfs_opts[] = {
	LFS_OPT("cache=%s", cache),
	LFS_OPT("timeout=%lf", timeout),
	{ "timeout=", offsetof(struct lfs_cmdline, timeout_set), 1 },
	LFS_OPT("fd_cache=%lu", fd_cache),
	{ "fd_cache=", offsetof(struct lfs_cmdline, fd_cache_set), 1 },
	LFS_OPT("stack", stack),
	LFS_OPT("metrics=%s", metrics),
	FUSE_OPT_END
};

static void lfs_usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [options] BACKING_DIR MOUNTPOINT\n"
		"\n"
		"Serve BACKING_DIR (on ext4 or XFS) at MOUNTPOINT through FUSE.\n"
		"\n"
		"lacunafs options:\n"
		"    -o cache=auto|none     auto: read-only opens use the page cache,\n"
		"                           writable and O_DIRECT opens are direct_io (default)\n"
		"                           none: every open is direct_io\n"
		"    -o timeout=SECONDS     attribute and entry cache timeout (default 1.0)\n"
		"    -o fd_cache=N          at most N inode path fds open (default: RLIMIT_NOFILE\n"
		"                           minus a reserve of a quarter of it, at least 256)\n"
		"    -o stack               mount even where MOUNTPOINT already is a lacunafs\n"
		"                           mount of BACKING_DIR (refused otherwise, exit 2)\n"
		"    -o metrics=ADDR:PORT   serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		"    -h, --help             this help, then libfuse's options\n"
		"    -V, --version          print versions and exit\n"
		"\n",
		prog);
}

static int lfs_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct lfs_cmdline *cl = data;

	if (key == FUSE_OPT_KEY_NONOPT && !cl->backing) {
		cl->backing = strdup(arg);
		return 0;
	}
	if (key == FUSE_OPT_KEY_OPT) {
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
			cl->show_help = 1;
		else if (!strcmp(arg, "-V") || !strcmp(arg, "--version"))
			cl->show_version = 1;
	}
	return 1;
}

/*
 * What one write(2) through the mount can be and still reach us as one
 * FUSE write (docs/sparse-read.md). Writable opens are direct_io: the
 * kernel pins the caller's buffer and sends at most max_pages of it per
 * request, max_pages being libfuse's max_write in pages, lowered to the
 * kernel's max_pages_limit where it has one. A buffer that does not start
 * on a page boundary spends one page on its first partial page.
 */
static void lfs_write_units(uint32_t max_write)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long pages = (max_write - 1) / (unsigned long)page + 1, limit;
	FILE *f = fopen("/proc/sys/fs/fuse/max_pages_limit", "re");

	if (f) {
		if (fscanf(f, "%lu", &limit) == 1 && limit && limit < pages)
			pages = limit;
		fclose(f);
	}
	lfs.write_unit_aligned = (uint32_t)(pages * (unsigned long)page < max_write ?
						    pages * (unsigned long)page :
						    max_write);
	lfs.write_unit = (uint32_t)((pages - 1) * (unsigned long)page + 1 < max_write ?
					    (pages - 1) * (unsigned long)page + 1 :
					    max_write);
}

static void lfs_init(void *userdata, struct fuse_conn_info *conn)
{
	/*
	 * Splice read replies, but never move pages: a moved page is stolen
	 * from the backing file's page cache, which then has to be read from
	 * disk again.
	 */
	const unsigned int want =
		FUSE_CAP_SPLICE_WRITE | FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_DONT_MASK |
		FUSE_CAP_POSIX_ACL | FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_READDIRPLUS |
		FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_PARALLEL_DIROPS | FUSE_CAP_CACHE_SYMLINKS |
		FUSE_CAP_ASYNC_READ | FUSE_CAP_IOCTL_DIR;

	conn->want |= want & conn->capable;
	/*
	 * Every write must reach the daemon while the writer waits (the
	 * sparse-read lock orders them), so no writeback cache. POSIX locks
	 * are left to the kernel, which enforces them among all users of the
	 * mount; flock goes to the backing file.
	 */
	conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_POSIX_LOCKS | FUSE_CAP_HANDLE_KILLPRIV |
			FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_SPLICE_MOVE);
	conn->max_write = LFS_MAX_WRITE;
	conn->max_read = LFS_MAX_READ;
	conn->max_readahead = LFS_MAX_READ;
	lfs_write_units(conn->max_write);
	if (!lfs_devio_mmap_offered())
		log_warn("kernel lacks FUSE_DIRECT_IO_ALLOW_MMAP: shared writable mmap of files "
			 "open for writing fails with ENODEV");
	if (!(conn->want & FUSE_CAP_DONT_MASK))
		log_warn("kernel applies the umask itself: default ACLs may not be honoured");
}

static const struct fuse_lowlevel_ops lfs_ops = {
	.init = lfs_init,
	.lookup = lfs_op_lookup,
	.forget = lfs_op_forget,
	.forget_multi = lfs_op_forget_multi,
	.getattr = lfs_op_getattr,
	.setattr = lfs_op_setattr,
	.readlink = lfs_op_readlink,
	.mknod = lfs_op_mknod,
	.mkdir = lfs_op_mkdir,
	.symlink = lfs_op_symlink,
	.link = lfs_op_link,
	.unlink = lfs_op_unlink,
	.rmdir = lfs_op_rmdir,
	.rename = lfs_op_rename,
	.statfs = lfs_op_statfs,
	.access = lfs_op_access,
	.opendir = lfs_op_opendir,
	.readdir = lfs_op_readdir,
	.readdirplus = lfs_op_readdirplus,
	.releasedir = lfs_op_releasedir,
	.fsyncdir = lfs_op_fsyncdir,
	.open = lfs_op_open,
	.create = lfs_op_create,
	.read = lfs_op_read,
	.write_buf = lfs_op_write_buf,
	.flush = lfs_op_flush,
	.release = lfs_op_release,
	.fsync = lfs_op_fsync,
	.fallocate = lfs_op_fallocate,
	.lseek = lfs_op_lseek,
	.copy_file_range = lfs_op_copy_file_range,
	.flock = lfs_op_flock,
	.setxattr = lfs_op_setxattr,
	.getxattr = lfs_op_getxattr,
	.listxattr = lfs_op_listxattr,
	.removexattr = lfs_op_removexattr,
	.ioctl = lfs_op_ioctl,
};

/* Open the backing directory as the root inode. Returns 0 or -errno. */
static int lfs_open_backing(const char *path)
{
	struct stat st;
	int fd;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		fprintf(stderr, "lacunafs: backing directory '%s': %s\n", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		int err = errno;

		fprintf(stderr, "lacunafs: fstat '%s': %s\n", path, strerror(err));
		close(fd);
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "lacunafs: backing directory '%s': not a directory\n", path);
		close(fd);
		return -ENOTDIR;
	}
	lfs.root.fd = fd;
	lfs.root.dev = st.st_dev;
	lfs.root.ino = st.st_ino;
	lfs.root.type = S_IFDIR;
	pthread_mutex_init(&lfs.root.cache_lock, NULL);
	lfs.backing_dev = st.st_dev;
	lfs.backing_real = realpath(path, NULL);
	return 0;
}

/* -o fsname=PATH, with commas and backslashes in PATH escaped. */
static int lfs_add_fsname(struct fuse_args *args, const char *path)
{
	char *raw = NULL, *opt = NULL, *arg = NULL;
	int rc = -1;

	if (asprintf(&raw, "fsname=%s", path) < 0)
		return -1;
	if (fuse_opt_add_opt_escaped(&opt, raw) == 0 && asprintf(&arg, "-o%s", opt) >= 0) {
		rc = fuse_opt_add_arg(args, arg);
		free(arg);
	}
	free(opt);
	free(raw);
	return rc;
}

/* Undo mountinfo's octal escapes (\040 for a space...) in place. */
static void lfs_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/*
 * Is mountpoint already a lacunafs mount of the backing directory? Read
 * from /proc/self/mountinfo, whose source field is lacunafs's fsname (the
 * backing directory's real path).
 */
static bool lfs_already_mounted(const char *mountpoint, const char *backing)
{
	char *real = realpath(mountpoint, NULL), *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *f;

	if (!real || !backing) {
		free(real);
		return false;
	}
	f = fopen("/proc/self/mountinfo", "re");
	while (f && !found && getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX], src[PATH_MAX], *sep;

		/* id parent maj:min root mountpoint opts [optional...] - type source ... */
		sep = strstr(line, " - fuse.lacunafs ");
		if (!sep || sscanf(line, "%*u %*u %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep, " - fuse.lacunafs %4095s", src) != 1)
			continue;
		lfs_unescape(mnt);
		lfs_unescape(src);
		found = !strcmp(mnt, real) && !strcmp(src, backing);
	}
	if (f)
		fclose(f);
	free(line);
	free(real);
	return found;
}

/*
 * Sequential reads through the page cache are paced by the mount's
 * readahead window; FUSE gives its bdi 128 KiB. Ask for as much as one
 * FUSE request carries. Best effort: only root may, and only on Linux.
 */
static void lfs_tune_readahead(const char *mountpoint)
{
	char *real = realpath(mountpoint, NULL), *line = NULL;
	unsigned int maj = 0, min = 0;
	bool found = false;
	char path[96];
	size_t cap = 0;
	FILE *f;

	/* not stat(): the mount would ask this very daemon, not yet serving */
	f = real ? fopen("/proc/self/mountinfo", "r") : NULL;
	while (f && getline(&line, &cap, f) > 0) {
		char mnt[PATH_MAX];

		/* id parent maj:min root mountpoint ... */
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
		    !strcmp(mnt, real) && strstr(line, " - fuse.lacunafs "))
			found = true;
	}
	if (f)
		fclose(f);
	free(line);
	free(real);
	if (!found)
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%d\n", LFS_MAX_READ / 1024);
	if (fclose(f) != 0)
		log_debug("%s: %s", path, strerror(errno));
}

/*
 * Inode path fds are a cache sized from RLIMIT_NOFILE, and each open file
 * costs two fds (its path fd + the open one): raise the soft limit.
 */
static void lfs_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	struct lfs_cmdline cl = { 0 };
	struct fuse_loop_config *loop_cfg = NULL;
	struct fuse_session *se;
	int ret = 1, dir_fd;

	if (fuse_opt_parse(&args, &cl, lfs_opts, lfs_opt_proc) == -1) {
		lfs_usage(stderr, argv[0]);
		return 2;
	}
	if (fuse_parse_cmdline(&args, &opts) != 0) {
		lfs_usage(stderr, argv[0]);
		return 2;
	}
	if (opts.show_help || cl.show_help) {
		lfs_usage(stdout, argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_args;
	}
	if (opts.show_version || cl.show_version) {
		/* ours first: libfuse runs fusermount3, which writes straight to fd 1 */
		printf("lacunafs %s\n", PACKAGE_VERSION);
		fflush(stdout);
		fuse_lowlevel_version();
		ret = 0;
		goto out_args;
	}
	if (!cl.backing || !opts.mountpoint) {
		fprintf(stderr, "lacunafs: %s\n",
			!cl.backing ? "missing BACKING_DIR and MOUNTPOINT" : "missing MOUNTPOINT");
		lfs_usage(stderr, argv[0]);
		ret = 2;
		goto out_args;
	}
	if (cl.cache) {
		if (!strcmp(cl.cache, "auto")) {
			lfs.cache = LFS_CACHE_AUTO;
		} else if (!strcmp(cl.cache, "none")) {
			lfs.cache = LFS_CACHE_NONE;
		} else {
			fprintf(stderr, "lacunafs: -o cache=%s: expected auto or none\n", cl.cache);
			ret = 2;
			goto out_args;
		}
	}
	if (cl.timeout_set) {
		if (cl.timeout < 0 || cl.timeout > 86400) {
			fprintf(stderr, "lacunafs: -o timeout=%g: expected 0..86400 seconds\n",
				cl.timeout);
			ret = 2;
			goto out_args;
		}
		lfs.entry_timeout = lfs.attr_timeout = cl.timeout;
	}

	log_init("lacunafs", false, opts.debug ? LOG_DEBUG : LOG_INFO);
	lfs.backing = cl.backing;
	if (lfs_open_backing(cl.backing))
		goto out_args;
	if (!cl.stack && lfs_already_mounted(opts.mountpoint, lfs.backing_real)) {
		fprintf(stderr,
			"lacunafs: %s is already a lacunafs mount of %s: not mounting it again "
			"(-o stack mounts over it)\n",
			opts.mountpoint, lfs.backing_real);
		ret = 2;
		goto out_root;
	}
	lfs.proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (lfs.proc_fd < 0) {
		fprintf(stderr, "lacunafs: open /proc/self/fd: %s\n", strerror(errno));
		goto out_root;
	}
	lfs.as_root = geteuid() == 0;
	if (lfs.as_root && lfs_cred_init())
		goto out_proc;
	umask(0);
	lfs_raise_nofile();
	if (cl.fd_cache_set && cl.fd_cache < LFS_FD_CACHE_MIN) {
		fprintf(stderr, "lacunafs: -o fd_cache=%lu: expected at least %d\n", cl.fd_cache,
			LFS_FD_CACHE_MIN);
		ret = 2;
		goto out_proc;
	}
	/* open_by_handle_at wants a real fd of the filesystem, not an O_PATH one */
	dir_fd = open(cl.backing, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		fprintf(stderr, "lacunafs: open '%s': %s\n", cl.backing, strerror(errno));
		goto out_proc;
	}
	if (lfs_fdcache_init(dir_fd, cl.fd_cache_set ? cl.fd_cache : 0)) {
		close(dir_fd);
		fprintf(stderr, "lacunafs: out of memory\n");
		goto out_proc;
	}
	if (lfs_itable_init(&lfs.itable)) {
		fprintf(stderr, "lacunafs: out of memory\n");
		goto out_fdcache;
	}
	lfs_itable_insert(&lfs.itable, &lfs.root, 1);
	lfs_clone_probe();

	if (fuse_opt_add_arg(&args, "-oallow_other,default_permissions,subtype=lacunafs") ||
	    fuse_opt_add_arg(&args, "-omax_read=" LFS_STR(LFS_MAX_READ)) ||
	    lfs_add_fsname(&args, lfs.backing_real ?: cl.backing)) {
		fprintf(stderr, "lacunafs: out of memory\n");
		goto out_itable;
	}

	se = fuse_session_new(&args, &lfs_ops, sizeof(lfs_ops), NULL);
	if (!se) {
		/* libfuse printed why (unknown option...) */
		ret = 2;
		goto out_itable;
	}
	lfs.se = se;
	/*
	 * A shell starts background jobs with SIGINT ignored, and libfuse
	 * leaves ignored signals alone; SIGINT must unmount all the same.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto out_signals;
	if (lfs_devio_setup(se) != 0) {
		log_err("fuse_session_custom_io failed");
		goto out_unmount;
	}
	lfs_tune_readahead(opts.mountpoint);
	log_info("serving %s at %s (cache=%s)", lfs.backing_real ?: cl.backing, opts.mountpoint,
		 lfs.cache == LFS_CACHE_AUTO ? "auto" : "none");
	if (fuse_daemonize(opts.foreground) != 0)
		goto out_unmount;
	if (!opts.foreground) {
		/* "self" was resolved in the parent, which fuse_daemonize()'s fork left */
		close(lfs.proc_fd);
		lfs.proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (lfs.proc_fd < 0) {
			log_err("open /proc/self/fd: %s", strerror(errno));
			goto out_unmount;
		}
	}
	/* after fuse_daemonize: its fork would leave the thread behind */
	if (lfs_sparse_init() != 0)
		goto out_unmount;
	if (cl.metrics && lfs_metrics_start(cl.metrics)) {
		lfs_sparse_exit();
		goto out_unmount;
	}
	if (!opts.foreground)
		log_set_syslog(true);

	if (opts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		loop_cfg = fuse_loop_cfg_create();
		if (!loop_cfg)
			goto out_unmount;
		fuse_loop_cfg_set_clone_fd(loop_cfg, opts.clone_fd);
		if (opts.max_idle_threads != UINT_MAX)
			fuse_loop_cfg_set_idle_threads(loop_cfg, opts.max_idle_threads);
		if (opts.max_threads && opts.max_threads != UINT_MAX)
			fuse_loop_cfg_set_max_threads(loop_cfg, opts.max_threads);
		ret = fuse_session_loop_mt(se, loop_cfg);
		fuse_loop_cfg_destroy(loop_cfg);
	}
	/* libfuse reports the signal that ended the loop: a clean stop */
	if (ret == SIGINT || ret == SIGTERM || ret == SIGHUP)
		ret = 0;
	ret = ret ? 1 : 0;
	log_info("unmounting %s", opts.mountpoint);
	lfs_metrics_stop();
	lfs_sparse_exit();
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_itable:
	lfs_itable_destroy(&lfs.itable, lfs_release_inode);
out_fdcache:
	lfs_fdcache_exit();
out_proc:
	if (lfs.proc_fd >= 0)
		close(lfs.proc_fd);
out_root:
	close(lfs.root.fd);
	free(lfs.backing_real);
out_args:
	free(cl.backing);
	free(cl.cache);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
