/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Intrusive doubly linked circular lists, as the Linux kernel's
 * <linux/list.h>: a struct list_head inside each element, one as the
 * list's head; O(1) insert and remove, no allocation. Used for every LRU
 * and every queue of lacunad and lacunafs. No locking: the owner's lock
 * guards the list and its elements' links.
 */
#ifndef LACUNA_LIST_H
#define LACUNA_LIST_H

#include <stdbool.h>
#include <stddef.h>

#ifndef container_of
/* The struct of type @type whose member @member is at @ptr */
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

struct list_head {
	struct list_head *prev, *next;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }

static inline void list_init(struct list_head *h)
{
	h->prev = h->next = h;
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void list_insert_(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

/* Add @n at the front of @h */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	list_insert_(n, h, h->next);
}

/* Add @n at the back of @h */
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	list_insert_(n, h->prev, h);
}

/* Take @n off its list; it is then an empty list of its own (list_empty() is true). */
static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_init(n);
}

/* Move @n to the front of @h (from the list it is on) */
static inline void list_move(struct list_head *n, struct list_head *h)
{
	list_del(n);
	list_add(n, h);
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
/* The first / last element of a non-empty list */
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)
#define list_last_entry(h, type, member) list_entry((h)->prev, type, member)

/* Every element @pos (a pointer to the element type) of @h, front to back */
#define list_for_each_entry(pos, h, member)                                  \
	for (pos = list_entry((h)->next, __typeof__(*pos), member);          \
	     &pos->member != (h); pos = list_entry(pos->member.next, __typeof__(*pos), member))

/* The same, where the loop may remove @pos (@tmp: the next one) */
#define list_for_each_entry_safe(pos, tmp, h, member)                                \
	for (pos = list_entry((h)->next, __typeof__(*pos), member),                  \
	    tmp = list_entry(pos->member.next, __typeof__(*pos), member);            \
	     &pos->member != (h);                                                    \
	     pos = tmp, tmp = list_entry(tmp->member.next, __typeof__(*tmp), member))

/* Back to front, where the loop may remove @pos */
#define list_for_each_entry_safe_reverse(pos, tmp, h, member)                        \
	for (pos = list_entry((h)->prev, __typeof__(*pos), member),                  \
	    tmp = list_entry(pos->member.prev, __typeof__(*pos), member);            \
	     &pos->member != (h);                                                    \
	     pos = tmp, tmp = list_entry(tmp->member.prev, __typeof__(*tmp), member))

#endif
