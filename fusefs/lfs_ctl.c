// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lacunafs control socket and arena registry.
 *
 * Operation
 * ---------
 * One thread serves an abstract AF_UNIX SOCK_SEQPACKET socket named
 * "lacunafs.<pid>.<random>" (LACUNA_IOC_INFO tells clients the name).
 * A client connects and sends LACUNA_CTL_REGISTER with a memfd attached.
 * The daemon insists that the memfd is sealed against shrinking (else the
 * client could truncate it and make the daemon's stores fault), maps it
 * shared, and answers with a 128-bit token from getrandom(). The
 * registration remembers the client's process id from SO_PEERCRED.
 *
 * The sparse-read ioctl names a token. FUSE tells the daemon the id of
 * the calling thread, not of its process, so the first use from each
 * thread is checked against /proc/<tid>/status (Tgid) and remembered (up
 * to 32 threads; more are checked every time). A thread id recycled by
 * another process while the registration lives would pass that check,
 * but would still have to know the 128-bit token.
 *
 * The thread serves every client, so it never blocks on one: sockets are
 * non-blocking and a client whose answer cannot be queued is dropped.
 * A token used from any other process gets EPERM; an unknown one EACCES.
 *
 * When the connection closes (the client exits, crashes or closes it)
 * every registration made on it is unlinked from the registry; the
 * mapping goes away when the last ioctl still using it drops its
 * reference. Limits per connection (count and bytes) and on the number of
 * connections keep one client from exhausting the daemon: a uid other
 * than root holds at most LFS_CTL_CONNS_PER_UID connections, and the
 * last LFS_CTL_CONNS_ROOT are root's alone, so that unprivileged users
 * cannot keep lacunad from registering.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lfs_ctl.h"
#include "lfs_metrics.h"
#include "list.h"
#include "log.h"

#define LFS_CTL_TIDS 32

struct lfs_conn;

struct lfs_reg {
	struct list_head link; /* on ctl.regs, or a list of regs to free */
	struct lfs_conn *conn; /* NULL once unlinked */
	uint64_t token[2];
	pid_t pid; /* registering process */
	void *base;
	size_t len;
	int memfd; /* kept for splicing from it (lfs_ioctl_write) */
	unsigned int refs;	  /* registry link + pinned ioctls */
	pid_t tids[LFS_CTL_TIDS]; /* threads checked to belong to pid */
	unsigned int ntids;
};

struct lfs_conn {
	int fd;
	pid_t pid;
	uid_t uid;
	unsigned int nregs;
	uint64_t bytes;
};

static struct {
	pthread_mutex_t lock; /* leaf: the registry below */
	struct list_head regs; /* every registration */
	int listen_fd;
	int wake[2]; /* pipe: stop the thread */
	pthread_t thread;
	bool running;
	struct lfs_conn conns[LFS_CTL_CONNS_MAX];
	unsigned int nconns;
} ctl = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.regs = LIST_HEAD_INIT(ctl.regs),
	.listen_fd = -1,
	.wake = { -1, -1 },
};

static void lfs_reg_free(struct lfs_reg *reg)
{
	munmap(reg->base, reg->len);
	if (reg->memfd >= 0)
		close(reg->memfd);
	free(reg);
}

int lfs_reg_memfd(const struct lfs_reg *reg)
{
	return reg->memfd;
}

void lfs_ctl_put(struct lfs_reg *reg)
{
	bool last;

	pthread_mutex_lock(&ctl.lock);
	last = --reg->refs == 0;
	pthread_mutex_unlock(&ctl.lock);
	if (last)
		lfs_reg_free(reg);
}

/* Does thread tid belong to process pid? From /proc, since FUSE gives tids. */
static bool lfs_tid_in_process(pid_t tid, pid_t pid)
{
	char path[64], line[128];
	bool match = false;
	FILE *f;

	if (tid == pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		int tgid;

		if (sscanf(line, "Tgid: %d", &tgid) == 1) {
			match = tgid == pid;
			break;
		}
	}
	fclose(f);
	return match;
}

int lfs_ctl_get(const uint64_t token[2], pid_t tid, struct lfs_reg **out, void **base, size_t *len)
{
	struct lfs_reg *reg;
	unsigned int i;
	pid_t pid;
	bool known = false;

	pthread_mutex_lock(&ctl.lock);
	list_for_each_entry(reg, &ctl.regs, link)
		if (reg->token[0] == token[0] && reg->token[1] == token[1])
			break;
	if (&reg->link == &ctl.regs) {
		pthread_mutex_unlock(&ctl.lock);
		return -EACCES;
	}
	reg->refs++;
	pid = reg->pid;
	for (i = 0; i < reg->ntids; i++)
		known |= reg->tids[i] == tid;
	pthread_mutex_unlock(&ctl.lock);

	if (!known) {
		if (!lfs_tid_in_process(tid, pid)) {
			log_warn("arena token of pid %d used by thread %d of another process",
				 (int)pid, (int)tid);
			lfs_ctl_put(reg);
			return -EPERM;
		}
		pthread_mutex_lock(&ctl.lock);
		if (reg->ntids < LFS_CTL_TIDS)
			reg->tids[reg->ntids++] = tid;
		pthread_mutex_unlock(&ctl.lock);
	}
	*out = reg;
	*base = reg->base;
	*len = reg->len;
	return 0;
}

/* Unlink the registrations of conn (all of them, or the one with token). */
static int lfs_ctl_unlink(struct lfs_conn *conn, const uint64_t *token)
{
	struct list_head dead = LIST_HEAD_INIT(dead);
	struct lfs_reg *reg, *tmp;
	int found = -ENOENT;

	pthread_mutex_lock(&ctl.lock);
	list_for_each_entry_safe(reg, tmp, &ctl.regs, link) {
		if (reg->conn != conn ||
		    (token && (reg->token[0] != token[0] || reg->token[1] != token[1])))
			continue;
		list_del(&reg->link);
		reg->conn = NULL;
		conn->nregs--;
		conn->bytes -= reg->len;
		found = 0;
		if (--reg->refs == 0)
			list_add(&reg->link, &dead);
	}
	pthread_mutex_unlock(&ctl.lock);
	list_for_each_entry_safe(reg, tmp, &dead, link)
		lfs_reg_free(reg);
	return found;
}

static int lfs_ctl_register(struct lfs_conn *conn, const struct lacuna_ctl_msg *m, int memfd,
			    uint64_t token[2])
{
	struct lfs_reg *reg;
	struct stat st;
	int seals;

	if (memfd < 0)
		return -EBADF;
	if (m->arena_len == 0 || m->arena_len > LFS_CTL_ARENA_MAX)
		return -EINVAL;
	if (conn->nregs >= LFS_CTL_REGS_MAX)
		return -EMFILE;
	if (conn->bytes + m->arena_len > LFS_CTL_CONN_BYTES_MAX)
		return -EDQUOT;
	seals = fcntl(memfd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EPERM; /* must be a memfd sealed against shrinking */
	if (fstat(memfd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size < m->arena_len)
		return -ERANGE;
	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	reg->len = m->arena_len;
	reg->base = mmap(NULL, reg->len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (reg->base == MAP_FAILED) {
		int err = errno;

		free(reg);
		log_warn("mmap of a %zu-byte arena: %s", (size_t)m->arena_len, strerror(err));
		return -err;
	}
	reg->memfd = fcntl(memfd, F_DUPFD_CLOEXEC, 0);
	if (reg->memfd < 0) {
		int err = errno;

		lfs_reg_free(reg);
		return -err;
	}
	if (getrandom(reg->token, sizeof(reg->token), 0) != sizeof(reg->token)) {
		lfs_reg_free(reg);
		return -EIO;
	}
	reg->conn = conn;
	reg->pid = conn->pid;
	reg->refs = 1;
	pthread_mutex_lock(&ctl.lock);
	list_add(&reg->link, &ctl.regs);
	conn->nregs++;
	conn->bytes += reg->len;
	pthread_mutex_unlock(&ctl.lock);
	token[0] = reg->token[0];
	token[1] = reg->token[1];
	return 0;
}

/* One message from a client. Returns false when the connection must close. */
static bool lfs_ctl_serve(struct lfs_conn *conn)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cbuf;
	struct lacuna_ctl_msg m = { 0 }, ans = { 0 };
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	struct cmsghdr *c;
	int memfd = -1, rc;
	ssize_t n;

	n = recvmsg(conn->fd, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return false;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int *fds = (int *)CMSG_DATA(c);
			size_t i, nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (i = 0; i < nfd; i++) {
				if (memfd < 0)
					memfd = fds[i];
				else
					close(fds[i]); /* only one fd is expected */
			}
		}
	}
	ans.size = sizeof(ans);
	ans.version = LACUNA_ABI_VERSION;
	ans.op = m.op;
	if ((size_t)n != sizeof(m) || m.size != sizeof(m) ||
	    (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)))
		rc = -EINVAL;
	else if (m.version != LACUNA_ABI_VERSION)
		rc = -EPROTO;
	else if (m.op == LACUNA_CTL_REGISTER)
		rc = lfs_mx_arena(conn->pid, m.arena_len,
				  lfs_ctl_register(conn, &m, memfd, ans.token));
	else if (m.op == LACUNA_CTL_UNREGISTER)
		rc = lfs_ctl_unlink(conn, m.token);
	else
		rc = -EOPNOTSUPP;
	if (memfd >= 0)
		close(memfd);
	ans.status = rc;
	/* a client that does not read its answers is dropped, not waited for */
	return send(conn->fd, &ans, sizeof(ans), MSG_NOSIGNAL | MSG_DONTWAIT) == sizeof(ans);
}

/* May a client of @uid have one more connection? */
static bool lfs_ctl_admit(uid_t uid)
{
	unsigned int i, mine = 0;

	if (ctl.nconns >= LFS_CTL_CONNS_MAX)
		return false;
	if (uid == 0)
		return true;
	if (ctl.nconns >= LFS_CTL_CONNS_MAX - LFS_CTL_CONNS_ROOT)
		return false;
	for (i = 0; i < ctl.nconns; i++)
		mine += ctl.conns[i].uid == uid;
	return mine < LFS_CTL_CONNS_PER_UID;
}

static void lfs_ctl_accept(void)
{
	static time_t logged;
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t clen = sizeof(cred);
	int fd = accept4(ctl.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct lfs_conn *conn;
	time_t now;

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || !lfs_ctl_admit(cred.uid)) {
		now = time(NULL);
		if (now - logged >= LFS_CTL_REFUSE_LOG_SEC) {
			logged = now;
			log_warn("control socket: refusing a connection of uid %d (%u open; at "
				 "most %d per uid but root's, %d kept for root; logged once a "
				 "minute)",
				 (int)cred.uid, ctl.nconns, LFS_CTL_CONNS_PER_UID,
				 LFS_CTL_CONNS_ROOT);
		}
		close(fd);
		return;
	}
	conn = &ctl.conns[ctl.nconns++];
	memset(conn, 0, sizeof(*conn));
	conn->fd = fd;
	conn->pid = cred.pid;
	conn->uid = cred.uid;
}

static void lfs_ctl_close(unsigned int i)
{
	struct lfs_conn *conn = &ctl.conns[i];
	struct lfs_reg *reg;

	lfs_ctl_unlink(conn, NULL);
	close(conn->fd);
	/* move the last connection into the hole; fix its registrations */
	if (i != --ctl.nconns) {
		pthread_mutex_lock(&ctl.lock);
		ctl.conns[i] = ctl.conns[ctl.nconns];
		list_for_each_entry(reg, &ctl.regs, link)
			if (reg->conn == &ctl.conns[ctl.nconns])
				reg->conn = &ctl.conns[i];
		pthread_mutex_unlock(&ctl.lock);
	}
}

static void *lfs_ctl_main(void *arg)
{
	struct pollfd pfd[LFS_CTL_CONNS_MAX + 2];
	unsigned int i, n;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = ctl.wake[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = ctl.listen_fd, .events = POLLIN };
		n = ctl.nconns;
		for (i = 0; i < n; i++)
			pfd[i + 2] = (struct pollfd){ .fd = ctl.conns[i].fd, .events = POLLIN };
		if (poll(pfd, n + 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_err("control socket: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		/* serve from the end so closing (which moves the last) is safe */
		for (i = n; i-- > 0;) {
			if (!pfd[i + 2].revents)
				continue;
			if ((pfd[i + 2].revents & (POLLERR | POLLHUP | POLLNVAL)) &&
			    !(pfd[i + 2].revents & POLLIN)) {
				lfs_ctl_close(i);
				continue;
			}
			if (!lfs_ctl_serve(&ctl.conns[i]))
				lfs_ctl_close(i);
		}
		if (pfd[1].revents & POLLIN)
			lfs_ctl_accept();
	}
	while (ctl.nconns)
		lfs_ctl_close(ctl.nconns - 1);
	return NULL;
}

int lfs_ctl_start(char *path, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint32_t rnd;
	socklen_t salen;
	int rc;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint32_t)getpid() * 2654435761u;
	/* abstract name: sun_path[0] is NUL */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "lacunafs.%d.%08x", (int)getpid(), rnd);
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
	ctl.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ctl.listen_fd < 0) {
		rc = -errno;
		log_err("control socket: socket: %s", strerror(-rc));
		return rc;
	}
	if (bind(ctl.listen_fd, (struct sockaddr *)&sa, salen) < 0 ||
	    listen(ctl.listen_fd, 16) < 0) {
		rc = -errno;
		log_err("control socket: bind/listen @%s: %s", sa.sun_path + 1, strerror(-rc));
		goto out_close;
	}
	if (pipe2(ctl.wake, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out_close;
	}
	rc = -pthread_create(&ctl.thread, NULL, lfs_ctl_main, NULL);
	if (rc) {
		log_err("control socket: pthread_create: %s", strerror(-rc));
		goto out_pipe;
	}
	ctl.running = true;
	snprintf(path, len, "@%s", sa.sun_path + 1);
	return 0;
out_pipe:
	close(ctl.wake[0]);
	close(ctl.wake[1]);
out_close:
	close(ctl.listen_fd);
	ctl.listen_fd = -1;
	return rc;
}

void lfs_ctl_stop(void)
{
	if (!ctl.running)
		return;
	if (write(ctl.wake[1], "x", 1) != 1)
		log_warn("control socket: cannot wake its thread");
	pthread_join(ctl.thread, NULL);
	ctl.running = false;
	close(ctl.wake[0]);
	close(ctl.wake[1]);
	close(ctl.listen_fd);
	ctl.listen_fd = -1;
}
