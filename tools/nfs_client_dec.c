// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nfsc, the untrusted side: decoders of what a server sends back (RPC
 * reply headers, READ_PLUS, READ and SEEK results), the names of NFSv4
 * status codes, and the nfs:// URL parser. Everything here is pure (no
 * I/O, no allocation) so the unit tests and a fuzz harness can call it
 * directly. The checks made on a READ_PLUS reply are listed in
 * nfs_client.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nfs4.h"
#include "nfs_client.h"
#include "rpc.h"
#include "rpcrdma.h"

/* the fixed part of a data or hole segment: type, offset, length word */
#define NFSC_SEG_MIN 16

static int derr(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int derr(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ------------------------------------------------------------ status names */

/* clang-format off */
#define S(x) { x, #x }
static const struct {
	uint32_t st;
	const char *name;
} stat_names[] = {
	S(NFS4_OK), S(NFS4ERR_PERM), S(NFS4ERR_NOENT), S(NFS4ERR_IO), S(NFS4ERR_NXIO),
	S(NFS4ERR_ACCESS), S(NFS4ERR_EXIST), S(NFS4ERR_XDEV), S(NFS4ERR_NOTDIR),
	S(NFS4ERR_ISDIR), S(NFS4ERR_INVAL), S(NFS4ERR_FBIG), S(NFS4ERR_NOSPC), S(NFS4ERR_ROFS),
	S(NFS4ERR_MLINK), S(NFS4ERR_NAMETOOLONG), S(NFS4ERR_NOTEMPTY), S(NFS4ERR_DQUOT),
	S(NFS4ERR_STALE), S(NFS4ERR_BADHANDLE), S(NFS4ERR_BAD_COOKIE), S(NFS4ERR_NOTSUPP),
	S(NFS4ERR_TOOSMALL), S(NFS4ERR_SERVERFAULT), S(NFS4ERR_BADTYPE), S(NFS4ERR_DELAY),
	S(NFS4ERR_SAME), S(NFS4ERR_DENIED), S(NFS4ERR_EXPIRED), S(NFS4ERR_LOCKED),
	S(NFS4ERR_GRACE), S(NFS4ERR_FHEXPIRED), S(NFS4ERR_SHARE_DENIED), S(NFS4ERR_WRONGSEC),
	S(NFS4ERR_CLID_INUSE), S(NFS4ERR_RESOURCE), S(NFS4ERR_MOVED), S(NFS4ERR_NOFILEHANDLE),
	S(NFS4ERR_MINOR_VERS_MISMATCH), S(NFS4ERR_STALE_CLIENTID), S(NFS4ERR_STALE_STATEID),
	S(NFS4ERR_OLD_STATEID), S(NFS4ERR_BAD_STATEID), S(NFS4ERR_BAD_SEQID),
	S(NFS4ERR_NOT_SAME), S(NFS4ERR_LOCK_RANGE), S(NFS4ERR_SYMLINK), S(NFS4ERR_RESTOREFH),
	S(NFS4ERR_LEASE_MOVED), S(NFS4ERR_ATTRNOTSUPP), S(NFS4ERR_NO_GRACE),
	S(NFS4ERR_RECLAIM_BAD), S(NFS4ERR_RECLAIM_CONFLICT), S(NFS4ERR_BADXDR),
	S(NFS4ERR_LOCKS_HELD), S(NFS4ERR_OPENMODE), S(NFS4ERR_BADOWNER), S(NFS4ERR_BADCHAR),
	S(NFS4ERR_BADNAME), S(NFS4ERR_BAD_RANGE), S(NFS4ERR_LOCK_NOTSUPP),
	S(NFS4ERR_OP_ILLEGAL), S(NFS4ERR_DEADLOCK), S(NFS4ERR_FILE_OPEN),
	S(NFS4ERR_ADMIN_REVOKED), S(NFS4ERR_CB_PATH_DOWN), S(NFS4ERR_BADIOMODE),
	S(NFS4ERR_BADLAYOUT), S(NFS4ERR_BAD_SESSION_DIGEST), S(NFS4ERR_BADSESSION),
	S(NFS4ERR_BADSLOT), S(NFS4ERR_COMPLETE_ALREADY), S(NFS4ERR_CONN_NOT_BOUND_TO_SESSION),
	S(NFS4ERR_DELEG_ALREADY_WANTED), S(NFS4ERR_BACK_CHAN_BUSY), S(NFS4ERR_LAYOUTTRYLATER),
	S(NFS4ERR_LAYOUTUNAVAILABLE), S(NFS4ERR_NOMATCHING_LAYOUT), S(NFS4ERR_RECALLCONFLICT),
	S(NFS4ERR_UNKNOWN_LAYOUTTYPE), S(NFS4ERR_SEQ_MISORDERED), S(NFS4ERR_SEQUENCE_POS),
	S(NFS4ERR_REQ_TOO_BIG), S(NFS4ERR_REP_TOO_BIG), S(NFS4ERR_REP_TOO_BIG_TO_CACHE),
	S(NFS4ERR_RETRY_UNCACHED_REP), S(NFS4ERR_UNSAFE_COMPOUND), S(NFS4ERR_TOO_MANY_OPS),
	S(NFS4ERR_OP_NOT_IN_SESSION), S(NFS4ERR_HASH_ALG_UNSUPP), S(NFS4ERR_CLIENTID_BUSY),
	S(NFS4ERR_PNFS_IO_HOLE), S(NFS4ERR_SEQ_FALSE_RETRY), S(NFS4ERR_BAD_HIGH_SLOT),
	S(NFS4ERR_DEADSESSION), S(NFS4ERR_ENCR_ALG_UNSUPP), S(NFS4ERR_PNFS_NO_LAYOUT),
	S(NFS4ERR_NOT_ONLY_OP), S(NFS4ERR_WRONG_CRED), S(NFS4ERR_WRONG_TYPE),
	S(NFS4ERR_DIRDELEG_UNAVAIL), S(NFS4ERR_REJECT_DELEG), S(NFS4ERR_RETURNCONFLICT),
	S(NFS4ERR_DELEG_REVOKED), S(NFS4ERR_PARTNER_NOTSUPP), S(NFS4ERR_PARTNER_NO_AUTH),
	S(NFS4ERR_UNION_NOTSUPP), S(NFS4ERR_OFFLOAD_DENIED), S(NFS4ERR_WRONG_LFS),
	S(NFS4ERR_BADLABEL), S(NFS4ERR_OFFLOAD_NO_REQS),
};
#undef S
/* clang-format on */

const char *nfsc_stat_name(uint32_t st)
{
	static __thread char other[32];
	size_t i;

	for (i = 0; i < sizeof(stat_names) / sizeof(stat_names[0]); i++)
		if (stat_names[i].st == st)
			return stat_names[i].name;
	snprintf(other, sizeof(other), "nfsstat4 %" PRIu32, st);
	return other;
}

int nfsc_stat_errno(uint32_t st)
{
	switch (st) {
	case NFS4ERR_PERM:
		return EPERM;
	case NFS4ERR_NOENT:
		return ENOENT;
	case NFS4ERR_IO:
		return EIO;
	case NFS4ERR_NXIO:
		return ENXIO;
	case NFS4ERR_ACCESS:
		return EACCES;
	case NFS4ERR_NOTDIR:
		return ENOTDIR;
	case NFS4ERR_ISDIR:
		return EISDIR;
	case NFS4ERR_INVAL:
		return EINVAL;
	case NFS4ERR_NAMETOOLONG:
		return ENAMETOOLONG;
	case NFS4ERR_STALE:
		return ESTALE;
	case NFS4ERR_SYMLINK:
		return ELOOP;
	case NFS4ERR_NOTSUPP:
		return EOPNOTSUPP;
	}
	return 0;
}

/* ------------------------------------------------------------ RPC */

static const char *accept_name(uint32_t v)
{
	switch (v) {
	case RPC_PROG_UNAVAIL:
		return "PROG_UNAVAIL (the server does not serve NFS)";
	case RPC_PROG_MISMATCH:
		return "PROG_MISMATCH";
	case RPC_PROC_UNAVAIL:
		return "PROC_UNAVAIL";
	case RPC_GARBAGE_ARGS:
		return "GARBAGE_ARGS (the server could not decode the call)";
	case RPC_SYSTEM_ERR:
		return "SYSTEM_ERR";
	}
	return "unknown accept_stat";
}

static const char *auth_name(uint32_t v)
{
	static const char *const n[] = {
		[RPC_AUTH_OK] = "AUTH_OK",
		[RPC_AUTH_BADCRED] = "AUTH_BADCRED",
		[RPC_AUTH_REJECTEDCRED] = "AUTH_REJECTEDCRED",
		[RPC_AUTH_BADVERF] = "AUTH_BADVERF",
		[RPC_AUTH_REJECTEDVERF] = "AUTH_REJECTEDVERF",
		[RPC_AUTH_TOOWEAK] = "AUTH_TOOWEAK",
		[RPC_AUTH_INVALIDRESP] = "AUTH_INVALIDRESP",
		[RPC_AUTH_FAILED] = "AUTH_FAILED",
	};

	return v < sizeof(n) / sizeof(n[0]) ? n[v] : "unknown auth_stat";
}

int nfsc_dec_rpc_reply(struct xdr_in *x, uint32_t *xid, char *err, size_t errlen)
{
	uint32_t mtype, stat, v, lo, hi;
	const uint8_t *verf;

	if (xdr_dec_u32(x, xid) || xdr_dec_u32(x, &mtype) || xdr_dec_u32(x, &stat))
		return derr(err, errlen, -EBADMSG, "RPC reply truncated in its header");
	if (mtype != RPC_REPLY)
		return derr(err, errlen, -EPROTO, "RPC message of type %" PRIu32 ", not a reply",
			    mtype);
	if (stat == RPC_MSG_DENIED) {
		if (xdr_dec_u32(x, &v))
			return derr(err, errlen, -EBADMSG, "RPC reply truncated in reject_stat");
		if (v == RPC_MISMATCH && !xdr_dec_u32(x, &lo) && !xdr_dec_u32(x, &hi))
			return derr(err, errlen, -EPROTO,
				    "RPC call denied: RPC_MISMATCH (server speaks RPC %" PRIu32
				    " to %" PRIu32 ")",
				    lo, hi);
		if (v == RPC_AUTH_ERROR && !xdr_dec_u32(x, &lo))
			return derr(err, errlen, -EPROTO, "RPC call denied: AUTH_ERROR %s",
				    auth_name(lo));
		return derr(err, errlen, -EPROTO, "RPC call denied (reject_stat %" PRIu32 ")", v);
	}
	if (stat != RPC_MSG_ACCEPTED)
		return derr(err, errlen, -EPROTO, "RPC reply_stat %" PRIu32 " unknown", stat);
	if (xdr_dec_u32(x, &v) || xdr_dec_opaque(x, &verf, &v, NFSC_VERF_MAX) ||
	    xdr_dec_u32(x, &stat))
		return derr(err, errlen, -EBADMSG,
			    "RPC reply truncated or malformed in its verifier");
	if (stat == RPC_PROG_MISMATCH && !xdr_dec_u32(x, &lo) && !xdr_dec_u32(x, &hi))
		return derr(err, errlen, -EPROTO,
			    "RPC call not executed: PROG_MISMATCH (server has NFS versions %" PRIu32
			    " to %" PRIu32 ")",
			    lo, hi);
	if (stat != RPC_SUCCESS)
		return derr(err, errlen, -EPROTO, "RPC call not executed: %s", accept_name(stat));
	return 0;
}

/* ------------------------------------------------------------ I/O results */

static const char *kind_name(uint32_t kind)
{
	return kind == NFSC_CONTENT_DATA ? "data" : "hole";
}

/* One read_plus_content: type, offset, and the data or the hole's length. */
static int dec_content(struct xdr_in *x, uint32_t i, uint64_t offset, uint32_t count,
		       struct nfsc_seg *s, char *err, size_t errlen)
{
	uint32_t len;

	if (xdr_dec_u32(x, &s->kind) || xdr_dec_u64(x, &s->offset))
		return derr(err, errlen, -EBADMSG,
			    "READ_PLUS at %" PRIu64 ": reply truncated in segment %" PRIu32, offset,
			    i);
	s->data = NULL;
	switch (s->kind) {
	case NFSC_CONTENT_DATA:
		if (xdr_dec_u32(x, &len))
			return derr(err, errlen, -EBADMSG,
				    "READ_PLUS at %" PRIu64 ": reply truncated in segment %" PRIu32,
				    offset, i);
		if (len > count)
			return derr(err, errlen, -EPROTO,
				    "READ_PLUS at %" PRIu64 ": segment %" PRIu32
				    " (data at %" PRIu64 ") holds %" PRIu32
				    " bytes, more than the %" PRIu32 " asked",
				    offset, i, s->offset, len, count);
		if (xdr_dec_opaque_fixed(x, &s->data, len))
			return derr(err, errlen, -EBADMSG,
				    "READ_PLUS at %" PRIu64 ": reply truncated in the %" PRIu32
				    " bytes of segment %" PRIu32,
				    offset, len, i);
		s->length = len;
		return 0;
	case NFSC_CONTENT_HOLE:
		if (xdr_dec_u64(x, &s->length))
			return derr(err, errlen, -EBADMSG,
				    "READ_PLUS at %" PRIu64 ": reply truncated in segment %" PRIu32,
				    offset, i);
		return 0;
	}
	return derr(err, errlen, -EPROTO,
		    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " has content type %" PRIu32
		    " (neither DATA nor HOLE)",
		    offset, i, s->kind);
}

/* Where segment @i may lie, given where the previous one ended (@next). */
static int check_seg(const struct nfsc_seg *s, uint32_t i, uint64_t next, uint64_t offset,
		     uint64_t end, char *err, size_t errlen)
{
	const char *k = kind_name(s->kind);

	if (!s->length)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " (%s at %" PRIu64
			    ") is empty",
			    offset, i, k, s->offset);
	if (s->length > UINT64_MAX - s->offset)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " (%s at %" PRIu64
			    ", %" PRIu64 " bytes) ends past 2^64",
			    offset, i, k, s->offset, s->length);
	if (i == 0 && s->offset > offset)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": the first segment (%s at %" PRIu64
			    ") starts after the offset asked",
			    offset, k, s->offset);
	if (i == 0 && s->offset < offset && s->kind == NFSC_CONTENT_DATA)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": the first segment is data at %" PRIu64
			    ", before the offset asked (only a hole may start before it)",
			    offset, s->offset);
	if (i == 0 && s->offset + s->length <= offset)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": the first segment (%s at %" PRIu64
			    ", %" PRIu64 " bytes) ends before the offset asked",
			    offset, k, s->offset, s->length);
	if (i > 0 && s->offset < next)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " (%s at %" PRIu64
			    ") overlaps the previous one, which ends at %" PRIu64,
			    offset, i, k, s->offset, next);
	if (i > 0 && s->offset > next)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " (%s at %" PRIu64
			    ") leaves a gap after the previous one, which ends at %" PRIu64,
			    offset, i, k, s->offset, next);
	if (s->offset >= end)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " (%s at %" PRIu64
			    ") starts past the range asked, which ends at %" PRIu64,
			    offset, i, k, s->offset, end);
	if (s->kind == NFSC_CONTENT_DATA && s->offset + s->length > end)
		return derr(err, errlen, -EPROTO,
			    "READ_PLUS at %" PRIu64 ": segment %" PRIu32 " (data at %" PRIu64
			    ", %" PRIu64
			    " bytes) runs past the range asked, which ends at %" PRIu64,
			    offset, i, s->offset, s->length, end);
	return 0;
}

int nfsc_dec_read_plus(struct xdr_in *x, uint64_t offset, uint32_t count, struct nfsc_seg *segs,
		       uint32_t cap, uint32_t *nsegs, bool *eof, char *err, size_t errlen)
{
	uint64_t end = count > UINT64_MAX - offset ? UINT64_MAX : offset + count;
	uint64_t next = offset;
	uint32_t n, i;
	int rc;

	*nsegs = 0;
	if (xdr_dec_bool(x, eof) || xdr_dec_u32(x, &n))
		return derr(err, errlen, -EBADMSG,
			    "READ_PLUS at %" PRIu64
			    ": reply truncated or malformed before its segments",
			    offset);
	if (n > cap)
		return derr(err, errlen, -E2BIG,
			    "READ_PLUS at %" PRIu64 ": %" PRIu32 " segments, more than the %" PRIu32
			    " this client accepts in one reply",
			    offset, n, cap);
	if (n > xdr_in_left(x) / NFSC_SEG_MIN)
		return derr(err, errlen, -EBADMSG,
			    "READ_PLUS at %" PRIu64 ": %" PRIu32
			    " segments cannot fit in the %zu bytes left in the reply",
			    offset, n, xdr_in_left(x));
	for (i = 0; i < n; i++) {
		rc = dec_content(x, i, offset, count, &segs[i], err, errlen);
		if (!rc)
			rc = check_seg(&segs[i], i, next, offset, end, err, errlen);
		if (rc)
			return rc;
		next = segs[i].offset + segs[i].length;
	}
	*nsegs = n;
	return 0;
}

int nfsc_dec_read(struct xdr_in *x, uint64_t offset, uint32_t count, struct nfsc_seg *seg,
		  uint32_t *nsegs, bool *eof, char *err, size_t errlen)
{
	uint32_t len;

	*nsegs = 0;
	if (xdr_dec_bool(x, eof) || xdr_dec_u32(x, &len))
		return derr(err, errlen, -EBADMSG, "READ at %" PRIu64 ": reply truncated", offset);
	if (len > count)
		return derr(err, errlen, -EPROTO,
			    "READ at %" PRIu64 ": %" PRIu32 " bytes, more than the %" PRIu32
			    " asked",
			    offset, len, count);
	if (xdr_dec_opaque_fixed(x, &seg->data, len))
		return derr(err, errlen, -EBADMSG,
			    "READ at %" PRIu64 ": reply truncated in its %" PRIu32 " bytes", offset,
			    len);
	seg->offset = offset;
	seg->length = len;
	seg->kind = NFSC_CONTENT_DATA;
	*nsegs = len ? 1 : 0;
	return 0;
}

int nfsc_dec_seek(struct xdr_in *x, bool *eof, uint64_t *offset, char *err, size_t errlen)
{
	if (xdr_dec_bool(x, eof) || xdr_dec_u64(x, offset))
		return derr(err, errlen, -EBADMSG, "SEEK: reply truncated or malformed");
	return 0;
}

/* ------------------------------------------------------------ URL */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode PATH's %XX escapes into u->path. */
static int url_path(const char *url, const char *p, struct nfsc_url *u, char *err, size_t errlen)
{
	size_t n = 0;

	for (; *p; p++) {
		int c = (unsigned char)*p;

		if (c == '?' || c == '#')
			return derr(err, errlen, -EINVAL,
				    "%s: queries and fragments are not supported (a '%c' in a name "
				    "is written %%%02X)",
				    url, c, c);
		if (c == '%') {
			int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);

			if (l < 0)
				return derr(err, errlen, -EINVAL, "%s: bad %% escape", url);
			c = h << 4 | l;
			if (!c)
				return derr(err, errlen, -EINVAL, "%s: %%00 in the path", url);
			p += 2;
		}
		if (n == NFSC_PATH_MAX)
			return derr(err, errlen, -EINVAL, "%s: path longer than %d bytes", url,
				    NFSC_PATH_MAX);
		u->path[n++] = (char)c;
	}
	u->path[n] = '\0';
	return 0;
}

int nfsc_path_split(const char *path, struct nfsc_name *n, unsigned int *count)
{
	const char *p = path;

	*count = 0;
	for (;;) {
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (len > NFSC_NAME_MAX)
			return -ENAMETOOLONG;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (*count == NFSC_COMPONENTS_MAX)
			return -E2BIG;
		n[*count].p = p;
		n[*count].len = (uint32_t)len;
		(*count)++;
		p += len;
	}
	return *count ? 0 : -ENOENT;
}

static int url_names(const char *url, const char *path, char *err, size_t errlen)
{
	struct nfsc_name n[NFSC_COMPONENTS_MAX];
	unsigned int count;

	switch (nfsc_path_split(path, n, &count)) {
	case 0:
		return 0;
	case -ENAMETOOLONG:
		return derr(err, errlen, -EINVAL, "%s: a name longer than %d bytes", url,
			    NFSC_NAME_MAX);
	case -EINVAL:
		return derr(err, errlen, -EINVAL, "%s: '.' and '..' are not names in NFSv4", url);
	case -E2BIG:
		return derr(err, errlen, -EINVAL, "%s: more than %d names in the path", url,
			    NFSC_COMPONENTS_MAX);
	}
	return derr(err, errlen, -EINVAL, "%s: no file in the path", url);
}

int nfsc_url_parse(const char *s, struct nfsc_url *u, char *err, size_t errlen)
{
	const char *p, *h, *hend;
	unsigned long port = 2049;
	bool v6 = false;

	memset(u, 0, sizeof(*u));
	if (strncasecmp(s, "nfs://", 6))
		return derr(err, errlen, -EINVAL, "%s: not an nfs://HOST[:PORT]/PATH URL", s);
	p = s + 6;
	if (*p == '[') {
		h = ++p;
		hend = strchr(p, ']');
		if (!hend)
			return derr(err, errlen, -EINVAL, "%s: no ']' after the IPv6 address", s);
		for (p = h; p < hend; p++)
			if (!isxdigit((unsigned char)*p) && *p != ':' && *p != '.')
				return derr(err, errlen, -EINVAL, "%s: bad IPv6 address", s);
		if (!memchr(h, ':', (size_t)(hend - h)))
			return derr(err, errlen, -EINVAL, "%s: bad IPv6 address", s);
		p = hend + 1;
		v6 = true;
	} else {
		h = p;
		while (*p && *p != ':' && *p != '/') {
			if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_')
				return derr(err, errlen, -EINVAL,
					    "%s: bad character '%c' in the host", s, *p);
			p++;
		}
		hend = p;
	}
	if (hend == h)
		return derr(err, errlen, -EINVAL, "%s: no host", s);
	if ((size_t)(hend - h) > NFSC_HOST_MAX)
		return derr(err, errlen, -EINVAL, "%s: host longer than %d bytes", s,
			    NFSC_HOST_MAX);
	memcpy(u->host, h, (size_t)(hend - h));
	if (*p == ':') {
		const char *d = ++p;

		u->has_port = true;
		port = 0;
		while (isdigit((unsigned char)*p) && port <= 65535)
			port = port * 10 + (unsigned long)(*p++ - '0');
		if (p == d || port == 0 || port > 65535 || (*p && *p != '/'))
			return derr(err, errlen, -EINVAL, "%s: bad port", s);
	} else if (*p && *p != '/') {
		return derr(err, errlen, -EINVAL, "%s: %s", s,
			    v6 ? "junk after the IPv6 address" : "bad host");
	}
	if (*p != '/')
		return derr(err, errlen, -EINVAL, "%s: no path (nfs://HOST[:PORT]/PATH)", s);
	snprintf(u->port, sizeof(u->port), "%lu", port);
	if (url_path(s, p, u, err, errlen))
		return -EINVAL;
	return url_names(s, u->path, err, errlen);
}

/* ------------------------------------------------------------ RPC-over-RDMA replies */

int nfsc_rdma_reply(const struct rpcrdma_hdr *h, const uint8_t *msg, size_t len,
		    const uint8_t *rbuf, size_t rlen, uint8_t *wbuf, size_t wlen, size_t headroom,
		    const uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
	const uint8_t *body;
	size_t blen;
	uint64_t w = 0;

	if (h->proc == RDMA_ERROR && h->err == ERR_VERS)
		return derr(err, errlen, -EPROTO,
			    "the server answered RDMA_ERROR ERR_VERS (it speaks RPC-over-RDMA "
			    "versions %" PRIu32 " to %" PRIu32 ")",
			    h->vers_low, h->vers_high);
	if (h->proc == RDMA_ERROR)
		return derr(err, errlen, -EPROTO,
			    "the server answered RDMA_ERROR ERR_CHUNK: it could not use the "
			    "call's chunks");
	if (h->proc != RDMA_MSG && h->proc != RDMA_NOMSG)
		return derr(err, errlen, -EPROTO, "a reply of RPC-over-RDMA procedure %" PRIu32,
			    h->proc);
	if (h->nread_segs)
		return derr(err, errlen, -EPROTO, "a reply with a read list");
	if (h->nwrite > (wbuf ? 1U : 0U))
		return derr(err, errlen, -EPROTO, "a reply with %u write chunks, %u offered",
			    h->nwrite, wbuf ? 1U : 0U);
	if (h->nwrite)
		w = h->write[0].length;
	if (w > wlen)
		return derr(err, errlen, -EPROTO,
			    "a reply saying %" PRIu64 " bytes went into a write chunk of %zu", w,
			    wlen);
	if (h->proc == RDMA_MSG) {
		if (h->hdr_len > len)
			return derr(err, errlen, -EPROTO, "a reply shorter than its header");
		body = msg + h->hdr_len;
		blen = len - h->hdr_len;
	} else {
		if (!h->has_reply || !rbuf)
			return derr(err, errlen, -EPROTO, "an RDMA_NOMSG reply without a reply chunk");
		if (h->reply.length > rlen)
			return derr(err, errlen, -EPROTO,
				    "a reply saying %" PRIu64 " bytes went into a reply chunk of %zu",
				    h->reply.length, rlen);
		body = rbuf;
		blen = (size_t)h->reply.length;
	}
	if (!w) {
		*out = body;
		*outlen = blen;
		return 0;
	}
	if (blen < XDR_UNIT || xdr_get_u32(body + blen - XDR_UNIT) != w)
		return derr(err, errlen, -EPROTO,
			    "%" PRIu64 " bytes of READ data in the write chunk, but the reply's "
			    "last word is not their length",
			    w);
	if (blen > headroom)
		return derr(err, errlen, -EPROTO,
			    "a reply of %zu bytes besides its READ data (at most %zu)", blen,
			    headroom);
	memmove(wbuf - blen, body, blen);
	memset(wbuf + w, 0, XDR_PAD(w));
	*out = wbuf - blen;
	*outlen = blen + XDR_ALIGN((size_t)w);
	return 0;
}
