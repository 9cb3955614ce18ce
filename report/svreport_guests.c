// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's guests: the names events give (svtrace's egress ports, svsub's hosts or --guest names),
 * renamed by aliases, with the labels that say what each stands for.
 */
#include <errno.h>
#include <string.h>

#include "svreport_private.h"

int svr_add_alias(struct svr *r, const char *from, const char *to)
{
	if (r->naliases >= 32 || strlen(from) >= 128 || strlen(to) >= 64 || !*from || !*to)
		return -EINVAL;
	snprintf(r->alias_from[r->naliases], 128, "%s", from);
	snprintf(r->alias_to[r->naliases], 64, "%s", to);
	r->naliases++;
	return 0;
}

const char *svr_alias_unused(const struct svr *r, unsigned i)
{
	return i < r->naliases && !r->alias_used[i] ? r->alias_from[i] : NULL;
}

int svr_add_setup(struct svr *r, const char *line)
{
	if (strlen(line) >= SVR_SETUP_SIZE)
		return -EINVAL;
	if (r->nsetup >= SVR_MAX_SETUP)
		return -E2BIG;
	snprintf(r->setup[r->nsetup++], SVR_SETUP_SIZE, "%s", line);
	return 0;
}

const char *svr_setup(const struct svr *r, unsigned i)
{
	return i < r->nsetup ? r->setup[i] : NULL;
}

int svr_set_guest_label(struct svr *r, const char *guest, const char *label)
{
	unsigned i;

	if (!*guest || strlen(guest) >= 64 || strlen(label) >= SVR_LABEL_SIZE)
		return -EINVAL;
	for (i = 0; i < r->nlabels && strcmp(r->label_guest[i], guest); i++)
		;
	if (i == SVR_MAX_GUESTS)
		return -E2BIG;
	snprintf(r->label_guest[i], 64, "%s", guest);
	snprintf(r->label_text[i], SVR_LABEL_SIZE, "%s", label);
	if (i == r->nlabels)
		r->nlabels++;
	return 0;
}

const char *svr_guest_label(const struct svr *r, unsigned g)
{
	if (g >= r->nguests)
		return NULL;
	for (unsigned i = 0; i < r->nlabels; i++)
		if (!strcmp(r->label_guest[i], r->guests[g]))
			return r->label_text[i];
	return NULL;
}

/* Guest index of @name as the records of file @f give it (after aliases: HOST:NAME before a plain
 * NAME, so that two hypervisors' same-named ports can go to two guests; without one, svr_guest_by_host),
 * created on first use; -1 when the table is full. */
static int guest_idx(struct svr *r, const struct fileio *f, const char *name)
{
	const char *host = f->info.host;
	size_t hl = strlen(host);
	int hit = -1;

	for (unsigned i = 0; i < r->naliases && hit < 0; i++) {
		const char *a = r->alias_from[i];

		if (hl && !strncmp(a, host, hl) && a[hl] == ':' && !strcmp(a + hl + 1, name))
			hit = (int)i;
	}
	for (unsigned i = 0; i < r->naliases && hit < 0; i++)
		if (!strcmp(name, r->alias_from[i]))
			hit = (int)i;
	if (hit < 0)
		return svr_guest_by_host(r, f, name);
	r->alias_used[hit] = true;
	name = r->alias_to[hit];
	for (unsigned g = 0; g < r->nguests; g++)
		if (!strcmp(r->guests[g], name))
			return (int)g;
	return svr_guest_new(r, f, name);
}

int svr_file_guest(struct svr *r, struct fileio *f, unsigned ev_guest)
{
	const char *name;
	char buf[32];
	int g;

	if (f->info.guest[0] || ev_guest == SV_REC_GUEST_NONE) {
		if (f->file_guest == -2)
			f->file_guest = guest_idx(r, f, f->info.guest[0] ? f->info.guest : f->info.host);
		return f->file_guest;
	}
	if (ev_guest < 64 && f->gcache[ev_guest] != -2)
		return f->gcache[ev_guest];
	name = sv_record_reader_name(f->rd, SV_REC_NAME_GUEST, ev_guest, 0);
	if (!name) {
		snprintf(buf, sizeof(buf), "guest%u", ev_guest);
		name = buf;
	}
	g = guest_idx(r, f, name);
	if (ev_guest < 64)
		f->gcache[ev_guest] = (int16_t)g;
	return g;
}

unsigned svr_nguests(const struct svr *r)
{
	return r->nguests;
}

const char *svr_guest_name(const struct svr *r, unsigned g)
{
	return g < r->nguests ? r->guests[g] : NULL;
}
