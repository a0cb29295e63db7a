// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File handles no client can forge: the layout (gw.h), the tag every
 * handle carries, and the key the tags are made with.
 *
 * Operation
 * ---------
 * A handle's tag is SipHash-2-4-128 (common/siphash.h) under the
 * server's handle key of every byte of the handle but the tag itself:
 * version, kind, export id or pseudo node, handle type and the backing
 * handle. gw_fh_check() compares it in constant time before anything of
 * the handle is believed: a handle with a wrong tag is
 * NFS4ERR_BADHANDLE without a cache lookup, an open_by_handle_at(2) or
 * any other look at the filesystem. The backing handles of ext4 and XFS
 * are little more than an inode number and a generation, which anyone
 * can guess; without the key no one can make a tag for them.
 *
 * The key is 16 random bytes (getrandom(2)) in the file GW_FH_KEY_FILE of
 * the state directory, made at the first start and read at every later
 * one, so that handles outlive restarts and reboots as long as the state
 * directory does. It is written to a temporary file (mode 0600), synced,
 * and renamed into place without replacing one that exists (another
 * lacunad starting at the same moment: its key is then read), and the
 * directory synced. The file holds a magic, the key and a check word; a
 * file of another size, another magic or a wrong check word, one other
 * users may read, or one that cannot be read is an error that stops
 * lacunad: a new key would turn every handle clients hold stale.
 *
 * Version 1 handles (before tags) are refused as NFS4ERR_STALE, or, with
 * legacy_handles = accept, resolved as before, with the containment
 * checks of gw_obj.c and lacunafs only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gw.h"
#include "log.h"

#define KEY_MAGIC "LCNFHK01"
#define KEY_MAGIC_LEN 8
#define KEY_CHECK_LEN 4
#define KEY_FILE_LEN (KEY_MAGIC_LEN + SIPHASH_KEY_BYTES + KEY_CHECK_LEN)

/* The tag of @fh (its bytes but the tag's) under @key */
static void fh_tag(const uint8_t *key, const uint8_t *fh, size_t len, uint8_t tag[GW_FH_TAG_LEN])
{
	uint8_t buf[NFS4_FHSIZE];

	memcpy(buf, fh, GW_FH_TAG_OFF);
	memcpy(buf + GW_FH_TAG_OFF, fh + GW_FH_HDR, len - GW_FH_HDR);
	siphash24_128(key, buf, len - GW_FH_TAG_LEN, tag);
}

void gw_fh_make(const uint8_t *key, struct gw_fh *fh, uint8_t kind, uint32_t id, uint32_t type,
		const void *handle, size_t n)
{
	fh->data[0] = GW_FH_VERSION;
	fh->data[1] = kind;
	fh->data[2] = fh->data[3] = 0;
	xdr_put_u32(fh->data + 4, id);
	xdr_put_u32(fh->data + 8, type);
	if (n)
		memcpy(fh->data + GW_FH_HDR, handle, n);
	fh->len = (uint32_t)(GW_FH_HDR + n);
	fh_tag(key, fh->data, fh->len, fh->data + GW_FH_TAG_OFF);
}

int gw_fh_check(const uint8_t *key, bool legacy, const uint8_t *fh, size_t len)
{
	uint8_t tag[GW_FH_TAG_LEN];

	if (len < GW_FH_HDR_V1 || len > NFS4_FHSIZE || fh[2] || fh[3])
		return -EBADF;
	if (fh[0] == GW_FH_VERSION_V1)
		return legacy ? 1 : -ESTALE;
	if (fh[0] != GW_FH_VERSION || len < GW_FH_HDR)
		return -EBADF;
	fh_tag(key, fh, len, tag);
	return siphash_equal(tag, fh + GW_FH_TAG_OFF, GW_FH_TAG_LEN) ? 0 : -EBADF;
}

static void key_check(const uint8_t *key, uint8_t check[KEY_CHECK_LEN])
{
	static const uint8_t zero[SIPHASH_KEY_BYTES];
	uint8_t buf[KEY_MAGIC_LEN + SIPHASH_KEY_BYTES], tag[SIPHASH128_BYTES];

	memcpy(buf, KEY_MAGIC, KEY_MAGIC_LEN);
	memcpy(buf + KEY_MAGIC_LEN, key, SIPHASH_KEY_BYTES);
	siphash24_128(zero, buf, sizeof(buf), tag);
	memcpy(check, tag, KEY_CHECK_LEN);
}

static int key_read(const char *dir, int dfd, uint8_t *key)
{
	uint8_t buf[KEY_FILE_LEN + 1], check[KEY_CHECK_LEN];
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dfd, GW_FH_KEY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		log_err("state_dir %s: fstat %s: %s", dir, GW_FH_KEY_FILE, strerror(errno));
		goto out_close_fd;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		log_err("state_dir %s: %s must be a regular file of uid %u readable by it alone "
			"(it is uid %u, mode %04o)",
			dir, GW_FH_KEY_FILE, (unsigned int)geteuid(), (unsigned int)st.st_uid,
			(unsigned int)(st.st_mode & 07777));
		err = -EPERM;
		goto out_close_fd;
	}
	n = pread(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		err = -errno;
		log_err("state_dir %s: read %s: %s", dir, GW_FH_KEY_FILE, strerror(errno));
		goto out_close_fd;
	}
	if (n == KEY_FILE_LEN && !memcmp(buf, KEY_MAGIC, KEY_MAGIC_LEN)) {
		key_check(buf + KEY_MAGIC_LEN, check);
		if (!memcmp(check, buf + KEY_MAGIC_LEN + SIPHASH_KEY_BYTES, KEY_CHECK_LEN)) {
			memcpy(key, buf + KEY_MAGIC_LEN, SIPHASH_KEY_BYTES);
			goto out_close_fd;
		}
	}
	log_err("state_dir %s: %s is not a file handle key (%zd bytes, %d expected, or a bad "
		"magic or check word): restore it from a backup, or remove it to have a new key "
		"made, which makes every file handle clients hold stale",
		dir, GW_FH_KEY_FILE, n, KEY_FILE_LEN);
	err = -EINVAL;
out_close_fd:
	close(fd);
	return err;
}

/*
 * @tmp becomes GW_FH_KEY_FILE unless that exists: 0, -EEXIST, -errno.
 * Where the filesystem has no RENAME_NOREPLACE (9p, some FUSE ones), a
 * hard link does the same; the caller removes @tmp on failure.
 */
static int key_publish(int dfd, const char *tmp)
{
	if (!renameat2(dfd, tmp, dfd, GW_FH_KEY_FILE, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(dfd, tmp, dfd, GW_FH_KEY_FILE, 0) < 0)
		return -errno;
	unlinkat(dfd, tmp, 0);
	return 0;
}

/* A new key into GW_FH_KEY_FILE, unless another lacunad wrote one first: 0, -EEXIST, -errno */
static int key_create(const char *dir, int dfd, uint8_t *key)
{
	uint8_t buf[KEY_FILE_LEN];
	const char *tmp = GW_FH_KEY_FILE ".tmp";
	int fd, err;

	if (getrandom(key, SIPHASH_KEY_BYTES, 0) != SIPHASH_KEY_BYTES) {
		err = -errno;
		log_err("getrandom: %s: no file handle key", strerror(errno));
		return err;
	}
	memcpy(buf, KEY_MAGIC, KEY_MAGIC_LEN);
	memcpy(buf + KEY_MAGIC_LEN, key, SIPHASH_KEY_BYTES);
	key_check(key, buf + KEY_MAGIC_LEN + SIPHASH_KEY_BYTES);
	unlinkat(dfd, tmp, 0); /* left by a crash */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		log_err("state_dir %s: create %s: %s", dir, tmp, strerror(errno));
		return err;
	}
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || fsync(fd) < 0) {
		err = errno ? -errno : -EIO;
		log_err("state_dir %s: write %s: %s", dir, tmp, strerror(-err));
		close(fd);
		goto out_unlink;
	}
	close(fd);
	err = key_publish(dfd, tmp);
	if (err) {
		if (err != -EEXIST)
			log_err("state_dir %s: rename %s: %s", dir, tmp, strerror(-err));
		goto out_unlink;
	}
	if (fsync(dfd) < 0) {
		err = -errno;
		log_err("state_dir %s: fsync: %s", dir, strerror(errno));
		return err;
	}
	log_info("state_dir %s: new file handle key %s", dir, GW_FH_KEY_FILE);
	return 0;

out_unlink:
	unlinkat(dfd, tmp, 0);
	return err;
}

int gw_fh_key_load(const char *dir, uint8_t *key)
{
	struct stat st;
	int dfd, err;

	if (!dir) {
		log_warn("no state_dir: file handles do not outlive this run of lacunad");
		return getrandom(key, SIPHASH_KEY_BYTES, 0) == SIPHASH_KEY_BYTES ? 0 : -EIO;
	}
	if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
		/* its parent first (one-export mode: /var/lib/lacunad/ADDR-PORT) */
		char *parent = strdup(dir), *slash = parent ? strrchr(parent, '/') : NULL;

		if (slash && slash != parent) {
			*slash = '\0';
			mkdir(parent, 0700);
		}
		free(parent);
		mkdir(dir, 0700);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0) {
		err = -errno;
		log_err("state_dir %s: open: %s: no file handle key", dir, strerror(errno));
		return err;
	}
	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0022)) {
		log_err("state_dir %s: must be owned by uid %u and writable by it alone", dir,
			(unsigned int)geteuid());
		close(dfd);
		return -EPERM;
	}
	err = key_read(dir, dfd, key);
	if (err == -ENOENT) {
		err = key_create(dir, dfd, key);
		if (err == -EEXIST)
			err = key_read(dir, dfd, key);
	} else if (err && err != -EINVAL && err != -EPERM) {
		log_err("state_dir %s: open %s: %s", dir, GW_FH_KEY_FILE, strerror(-err));
	}
	close(dfd);
	return err;
}
