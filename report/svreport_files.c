// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's input files: opening a record file (or a rotated run's parts as one), refusing the same
 * record twice, times to TAI, and the file list the outputs show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "svreport_private.h"

void svr_fileio_free(struct fileio *f)
{
	if (f->rd)
		sv_record_reader_close(f->rd);
	for (unsigned k = 0; k < f->nparts; k++)
		free(f->parts[k]);
	free(f->parts);
	free(f);
}

/* The same record given twice would join every frame with itself (duplicates everywhere); two runs under
 * one guest name would mix two guests, unless they are one tool on one host restarted. Same path, same
 * inode, or the same (run, part, tool): one file. A part already read with its rotated run (svreport trace.rec*): 1, skipped. */
static int check_twice(struct svr *r, struct fileio *f, const struct sv_rec_file_header *h)
{
	for (unsigned i = 0; i + 1 < r->nfiles; i++) {
		const struct fileio *o = r->f[i];
		const struct sv_rec_file_header *oh;

		if (!o->rd)
			continue;
		oh = sv_record_reader_header(o->rd);
		if (o->nparts > 1 && o->run_id == h->run_id && h->part >= o->part && h->part <= o->last_part &&
		    !strcmp(o->info.tool, f->info.tool) && !strcmp(o->info.host, f->info.host) &&
		    (!f->info.guest[0] || !strcmp(o->info.guest, f->info.guest)))
			return 1;
		if (!strcmp(o->info.path, f->info.path) || (o->dev == f->dev && o->ino == f->ino && f->ino) ||
		    (oh->run_id == h->run_id && oh->part == h->part && !strcmp(o->info.tool, f->info.tool))) {
			snprintf(f->info.errmsg, sizeof(f->info.errmsg),
				 "%.80s: the same record as %.80s (%.15s run %016" PRIx64 " part %u) given twice", f->info.path,
				 o->info.path, f->info.tool, h->run_id, h->part);
			return -EEXIST;
		}
		/* another host's guest of that name is another guest (HOST:NAME, svreport_hosts.c); another run of
		 * the same tool on the same host is the guest's tool restarted (a gap) */
		if (f->info.guest[0] && !strcmp(o->info.guest, f->info.guest) && !strcmp(o->info.host, f->info.host) &&
		    strcmp(o->info.tool, f->info.tool)) {
			snprintf(f->info.errmsg, sizeof(f->info.errmsg),
				 "%.70s: guest %.40s already has the records of %.70s (another run): one guest, one run",
				 f->info.path, f->info.guest, o->info.path);
			return -EEXIST;
		}
	}
	return 0;
}

#define SVR_MAX_PARTS 100000	/* parts of one rotated run read as one file */

/* Which run and part a record file is (its header), or the open error. */
struct rec_id {
	uint64_t run_id;
	uint32_t part;
	char tool[16], host[64];	/* as svr_file_info's */
};

static int rec_id_of(const char *path, struct rec_id *id)
{
	struct sv_record_reader *rd = NULL;
	int err = sv_record_reader_open(&rd, path);

	if (!err) {
		const struct sv_rec_file_header *h = sv_record_reader_header(rd);

		id->run_id = h->run_id;
		id->part = h->part;
		snprintf(id->tool, sizeof(id->tool), "%.15s", h->tool);
		snprintf(id->host, sizeof(id->host), "%.63s", h->host);
	}
	if (rd)
		sv_record_reader_close(rd);
	return err;
}

/* A file that is part P > 0 of its run (a writer rotated it: svtrace's FILE -> FILE.1 -> FILE.2 ...):
 * the run's earlier parts beside it, FILE.1 (part P - 1) onwards while they are there, become f's parts,
 * oldest first, so that the run reads as one file. Returns how many were found, or -ENOMEM. */
static int find_parts(struct fileio *f, const char *path, const struct sv_rec_file_header *h)
{
	size_t len = strlen(path) + 12;
	unsigned n = 0;
	char **p;

	p = calloc((h->part < SVR_MAX_PARTS ? h->part : SVR_MAX_PARTS) + 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint32_t k = 1; k <= h->part && k <= SVR_MAX_PARTS; k++) {
		struct rec_id id;

		p[n] = malloc(len);
		if (!p[n])
			goto nomem;
		sv_record_part_path(p[n], len, path, k);
		if (rec_id_of(p[n], &id) || id.run_id != h->run_id || id.part != h->part - k ||
		    strcmp(id.tool, f->info.tool) || strcmp(id.host, f->info.host)) {
			free(p[n]);
			p[n] = NULL;
			break;
		}
		n++;
	}
	if (!n) {
		free(p);
		return 0;
	}
	for (unsigned i = 0; i < n / 2; i++) {	/* oldest first */
		char *t = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = t;
	}
	p[n] = strdup(path);
	if (!p[n])
		goto nomem;
	f->parts = p;
	f->nparts = n + 1;
	return (int)n;
nomem:
	for (unsigned i = 0; i <= n; i++)
		free(p[i]);
	free(p);
	return -ENOMEM;
}

/* @f's reader could not open @path (@err): said in its info, and it ends there. */
static int open_failed(struct fileio *f, const char *path, int err)
{
	if (f->rd) {
		sv_record_reader_strerror(f->rd, f->info.errmsg, sizeof(f->info.errmsg));
		sv_record_reader_close(f->rd);
		f->rd = NULL;
	} else {
		snprintf(f->info.errmsg, sizeof(f->info.errmsg), "%s: %s", path, strerror(-err));
	}
	f->info.err = err;
	f->eof = true;
	return err;
}

int svr_add_file(struct svr *r, const char *path, const char *guest)
{
	const struct sv_rec_file_header *h;
	struct fileio *f;
	struct stat sb;
	uint32_t given_part;
	unsigned hi;
	int err;

	if (r->nfiles >= SVR_MAX_FILES)
		return -E2BIG;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	r->f[r->nfiles++] = f;
	snprintf(f->info.path, sizeof(f->info.path), "%s", path);
	if (guest)
		snprintf(f->info.guest, sizeof(f->info.guest), "%s", guest);
	if (!stat(path, &sb)) {
		f->dev = sb.st_dev;
		f->ino = sb.st_ino;
	}
	memset(f->smap, 0xff, sizeof(f->smap));
	for (unsigned i = 0; i < 64; i++)
		f->gcache[i] = -2;
	f->file_guest = -2;
	f->last_t = INT64_MIN;
	f->first_t = INT64_MAX;
	f->first_ev_t = INT64_MAX;
	f->last_ev_t = INT64_MIN;
	f->end_rec_t = INT64_MIN;
	err = sv_record_reader_open(&f->rd, path);
	if (err)
		return open_failed(f, path, err);
	h = sv_record_reader_header(f->rd);
	snprintf(f->info.tool, sizeof(f->info.tool), "%.15s", h->tool);
	snprintf(f->info.host, sizeof(f->info.host), "%.63s", h->host);
	err = check_twice(r, f, h);
	if (err == 1) {
		svr_fileio_free(f);	/* read with its run's other parts */
		r->nfiles--;
		return 0;
	}
	if (err) {
		sv_record_reader_close(f->rd);
		f->rd = NULL;
		f->info.err = err;
		f->eof = true;
		return err;
	}
	given_part = h->part;
	if (h->part) {
		err = find_parts(f, path, h);
		if (err > 0) {
			sv_record_reader_close(f->rd);
			f->rd = NULL;
			err = sv_record_reader_open(&f->rd, f->parts[0]);
			if (err)
				return open_failed(f, f->parts[0], err);
			h = sv_record_reader_header(f->rd);
		} else if (err < 0) {
			return err;
		}
		if (h->part)
			svr_add_warning(r, "%s: %s's records start at part %u of its run (%s): parts 0 to %u are not beside "
				    "it (rotated away, or moved), so the report misses the start of the run", f->info.path,
				    f->info.tool, (unsigned)h->part, f->nparts ? f->parts[0] : f->info.path,
				    (unsigned)h->part - 1);
	}
	f->run_id = h->run_id;
	f->part = h->part;
	f->last_part = given_part;
	for (hi = 0; hi + 1 < r->nfiles; hi++)
		if (r->f[hi]->rd && !strcmp(r->f[hi]->info.host, f->info.host))
			break;
	f->host_id = hi + 1 < r->nfiles ? r->f[hi]->host_id : r->nhosts++;
	f->info.parts = f->nparts ? f->nparts : 1;
	f->info.clock = (enum sv_clock_id)h->clock;
	f->info.to_tai = h->clock == SV_CLOCK_TAI || (h->flags & SV_REC_FH_TO_TAI);
	f->info.sync = h->sync;
	f->info.tai_unset = h->sync.tai_unset || (h->flags & SV_REC_FH_TAI_UNSET);
	f->info.sync_ok = !h->sync.unsync && !f->info.tai_unset && h->sync.state != 5 &&
			  !(h->flags & SV_REC_FH_UNSYNC);
	/* recording from the first part read: a run's parts rotated away were not read */
	f->info.start_tai_ns = h->part ? h->part_start_ns : h->start_ns;
	if (h->clock != SV_CLOCK_TAI && (h->flags & SV_REC_FH_TO_TAI))
		f->info.start_tai_ns += h->to_tai_ns;
	f->info.end_tai_ns = INT64_MAX;
	return 0;
}

/* Adds the files in an order where a rotated run's newest part comes before its other parts given too
 * (svreport trace.rec.2 trace.rec.1 trace.rec): the newest finds the others beside it and reads them as
 * one file; the others are then skipped. Otherwise the order given. */
int svr_add_files(struct svr *r, const char *const *paths, const char *const *guests, unsigned n)
{
	struct rec_id *id = calloc(n ? n : 1, sizeof(*id));
	unsigned *order = calloc(n ? n : 1, sizeof(*order)), *group = calloc(n ? n : 1, sizeof(*group));
	bool *ok = calloc(n ? n : 1, sizeof(*ok));
	int err = 0;

	if (!id || !order || !group || !ok) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		ok[i] = !rec_id_of(paths[i], &id[i]);
		group[i] = i;	/* the first file given of its run */
		for (unsigned j = 0; ok[i] && j < i; j++)
			if (ok[j] && id[j].run_id == id[i].run_id && !strcmp(id[j].tool, id[i].tool) &&
			    !strcmp(id[j].host, id[i].host)) {
				group[i] = group[j];
				break;
			}
		/* insertion: by group, then newest part first; stable otherwise */
		unsigned k = i;

		while (k > 0) {
			unsigned p = order[k - 1];

			if (group[p] < group[i] || (group[p] == group[i] && (!ok[i] || id[p].part >= id[i].part)))
				break;
			order[k] = p;
			k--;
		}
		order[k] = i;
	}
	for (unsigned k = 0; k < n && !err; k++)
		err = svr_add_file(r, paths[order[k]], guests ? guests[order[k]] : NULL);
out:
	free(id);
	free(order);
	free(group);
	free(ok);
	return err;
}

/* @to += the earlier parts' @before; the first damage's details are the earliest part's. */
void svr_damage_add(struct sv_record_reader_damage *to, const struct sv_record_reader_damage *before)
{
	if (svr_damaged(before)) {
		if (!svr_damaged(to)) {
			to->last_err = before->last_err;
			to->last_offset = before->last_offset;
		}
		to->first_err = before->first_err;
		to->first_offset = before->first_offset;
	}
	to->blocks_skipped += before->blocks_skipped;
	to->octets_skipped += before->octets_skipped;
	to->records_lost += before->records_lost;
	to->skips_uncounted += before->skips_uncounted;
	to->records_orphaned += before->records_orphaned;
	to->records_invalid += before->records_invalid;
}

/* The part after a rotated part's end (its END(rotated) read): true when it is open. A part that cannot
 * be opened ends the file there, with its error. */
bool svr_file_next_part(struct fileio *f)
{
	struct sv_record_reader_damage d;
	const char *path = f->parts[++f->part_i];
	int err;

	sv_record_reader_get_damage(f->rd, &d);
	svr_damage_add(&d, &f->damage_before);
	f->damage_before = d;
	sv_record_reader_close(f->rd);
	f->rd = NULL;
	err = sv_record_reader_open(&f->rd, path);
	if (err) {
		open_failed(f, path, err);
		return false;
	}
	return true;
}

unsigned svr_nfiles(const struct svr *r)
{
	return r->nfiles;
}

const struct svr_file_info *svr_file(const struct svr *r, unsigned i)
{
	return i < r->nfiles ? &r->f[i]->info : NULL;
}
