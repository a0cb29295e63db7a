/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Socket addresses as lacunad's layers see a client: a printable
 * "ADDR:PORT" for logs, whether the port is reserved (exports' `secure`),
 * and a 16-byte key naming the host (the per-address limits).
 */
#ifndef LACUNA_NETADDR_H
#define LACUNA_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of @ss into @buf, for logs; returns @buf. */
const char *net_addr_str(const struct sockaddr_storage *ss, char *buf, size_t size);

/* Is the source port of @ss reserved (below 1024), as bindresvport(3) picks? */
bool net_port_reserved(const struct sockaddr_storage *ss);

/* The host of @ss (@len bytes; 0: none) as 16 bytes, IPv4 as IPv4-mapped IPv6. */
void net_addr_key(const struct sockaddr_storage *ss, socklen_t len, uint8_t key[16]);

#endif
