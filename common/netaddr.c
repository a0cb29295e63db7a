// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Socket addresses as lacunad's layers see a client (netaddr.h).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "netaddr.h"

bool net_port_reserved(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;

	if (ss->ss_family == AF_INET6)
		return ntohs(s6->sin6_port) < IPPORT_RESERVED;
	if (ss->ss_family == AF_INET)
		return ntohs(s4->sin_port) < IPPORT_RESERVED;
	return false;
}

const char *net_addr_str(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, size, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else if (ss->ss_family == AF_INET) {
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, size, "%s:%u", a, ntohs(s4->sin_port));
	} else {
		snprintf(buf, size, "(family %d)", ss->ss_family);
	}
	return buf;
}

void net_addr_key(const struct sockaddr_storage *ss, socklen_t len, uint8_t key[16])
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	memset(key, 0, 16);
	if (len && ss->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &in->sin_addr, 4);
	} else if (len && ss->ss_family == AF_INET6) {
		memcpy(key, &in6->sin6_addr, 16);
	}
}
