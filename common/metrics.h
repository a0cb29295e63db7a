/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Metrics for lacunad and lacunafs: latency histograms cheap enough for
 * the I/O path, and a small HTTP responder that serves them at /metrics
 * in the Prometheus text exposition format (version 0.0.4).
 *
 * Operation
 * ---------
 * A histogram is an array of relaxed atomic counters, one per bucket
 * (not cumulative: the writer adds to one bucket and the sum, no lock),
 * written out cumulatively by mx_hist_write(). A reader may see a bucket
 * and the sum of slightly different moments; Prometheus takes that.
 *
 * The responder runs on a thread of its own with poll(2): at most
 * MX_CONNS_MAX connections, a request line and headers of at most
 * MX_REQ_MAX bytes, MX_TIMEOUT_MS to send the request and to take the
 * reply, one request per connection (the reply closes it). It answers
 * GET /metrics (HTTP/1.0 or 1.1) with 200 and whatever the render
 * callback writes, 404 for any other path or method, 400 for what is
 * not an HTTP request, 431 when the request is too large; nothing else
 * of HTTP. The render callback runs on the responder's thread.
 */
#ifndef LACUNA_METRICS_H
#define LACUNA_METRICS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#define MX_BUCKETS 20 /* finite upper bounds; one more bucket for +Inf */
#define MX_CONNS_MAX 16
#define MX_REQ_MAX 4096
#define MX_TIMEOUT_MS 5000

/* Upper bounds of the buckets, in nanoseconds (5 µs .. 10 s). */
extern const uint64_t mx_bounds_ns[MX_BUCKETS];

struct mx_hist {
	atomic_ullong b[MX_BUCKETS + 1];
	atomic_ullong sum_ns;
};

static inline uint64_t mx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void mx_add(atomic_ullong *c, unsigned long long n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline void mx_hist_add(struct mx_hist *h, uint64_t ns)
{
	unsigned int i = 0;

	while (i < MX_BUCKETS && ns > mx_bounds_ns[i])
		i++;
	mx_add(&h->b[i], 1);
	mx_add(&h->sum_ns, ns);
}

/* The number of observations of @h. */
unsigned long long mx_hist_count(const struct mx_hist *h);

/*
 * Write @h as NAME_bucket{LABELS,le="..."}, NAME_sum (seconds) and
 * NAME_count; @labels is "" or 'k="v",...' without braces.
 */
void mx_hist_write(FILE *f, const char *name, const char *labels, const struct mx_hist *h);

/* # HELP and # TYPE lines of a metric. */
void mx_header(FILE *f, const char *name, const char *type, const char *help);
/* A metric of one sample without labels (@type "counter" or "gauge"). */
void mx_one(FILE *f, const char *name, const char *type, const char *help, unsigned long long v);
/* A metric of two samples, @label="@a" and @label="@b". */
void mx_two(FILE *f, const char *name, const char *type, const char *help, const char *label,
	    const char *a, unsigned long long va, const char *b, unsigned long long vb);

/* Writes the whole metrics page. */
typedef void mx_render_fn(FILE *f, void *arg);

struct mx_http;

/*
 * Listen on @sa and serve /metrics from a thread of its own. 0 and the
 * server in *out, or -errno (of socket, bind, listen or pthread_create).
 */
int mx_http_start(const struct sockaddr *sa, socklen_t len, mx_render_fn *render, void *arg,
		  struct mx_http **out);
/* Stop the thread and close every socket. */
void mx_http_stop(struct mx_http *h);

#endif
