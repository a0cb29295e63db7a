/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Transport security (RPC-with-TLS, RFC 9289): the security a connection
 * has, set by its transport, and the set of them an export admits, its
 * exports(5) option xprtsec= spelled as Linux nfsd spells it: "none",
 * "tls", "mtls", or a colon-separated list of them.
 *
 * A connection has exactly one of the GW_XPRTSEC_* values:
 *   NONE  plain TCP or RDMA;
 *   TLS   a TLS session whose client presented no certificate;
 *   MTLS  a TLS session whose client presented a certificate that
 *         verified against tls_ca.
 * An export admits a set of them (a bit mask). As nfsd's
 * check_nfsd_access() does, a TLS session with a verified client
 * certificate is admitted only where "mtls" is listed and one without
 * only where "tls" is: "tls" alone refuses a client that authenticated.
 *
 * Shared by the configuration layer (the option, its defaults), the
 * transports (which set a connection's value) and the NFSv4 layer (which
 * checks it); nothing here depends on a TLS library.
 */
#ifndef LACUNA_GW_XPRTSEC_H
#define LACUNA_GW_XPRTSEC_H

#include <stddef.h>
#include <stdint.h>

#define GW_XPRTSEC_NONE 1
#define GW_XPRTSEC_TLS 2
#define GW_XPRTSEC_MTLS 4
#define GW_XPRTSEC_ALL (GW_XPRTSEC_NONE | GW_XPRTSEC_TLS | GW_XPRTSEC_MTLS)

/* "none:tls:mtls" and its NUL: room for any formatted set */
#define GW_XPRTSEC_STR_MAX 16
/* room for the message of a failed gw_xprtsec_parse() */
#define GW_XPRTSEC_WHY_MAX 128

/*
 * Parse "none", "tls", "mtls" or a colon-separated list of them (each
 * once; lower case, as nfsd writes them) into a set in *out. Returns 0,
 * or -EINVAL with a message in why (GW_XPRTSEC_WHY_MAX bytes) for an
 * empty list or word, an unknown word or a word given twice.
 */
int gw_xprtsec_parse(const char *s, uint8_t *out, char *why);

/*
 * A set written as the option takes it, in the order none, tls, mtls
 * ("none:tls:mtls"); "" for the empty set. Returns buf
 * (GW_XPRTSEC_STR_MAX bytes).
 */
const char *gw_xprtsec_format(uint8_t set, char *buf);

/* The name of one connection's security ("none", "tls", "mtls"), "?" for others. */
const char *gw_xprtsec_name(uint8_t mode);

#endif
