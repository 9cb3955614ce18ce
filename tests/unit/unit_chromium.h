/* SPDX-License-Identifier: Apache-2.0 */
/* svreport's HTML laid out by headless Chromium (test_report_html.c, test_report_soak.c): a probe appended to the
 * document writes each <svg>'s laid-out size and drawn element count into it; chromium_svgs() renders the file
 * and counts the plots. Include after cmocka.h. */
#ifndef UNIT_CHROMIUM_H
#define UNIT_CHROMIUM_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline bool chromium_present(void)
{
	return !system("command -v chromium >/dev/null 2>&1");
}

/* The probe, after the report's last element. */
static inline void chromium_probe(FILE *f)
{
	fputs("<pre id=\"probe\"></pre><script>var o='';document.querySelectorAll('svg').forEach(function(s){"
	      "var b=s.getBoundingClientRect();o+='SVG '+Math.round(b.width)+' '+Math.round(b.height)+' '+"
	      "s.querySelectorAll('polyline,rect,line').length+'\\n';});"
	      "document.getElementById('probe').textContent=o+'END';</script>\n", f);
}

struct chromium_svgs {
	unsigned n, sized, drawn;	/* plots; with a size; with more than 3 lines, rectangles or polylines */
};

/* Renders @path (with the probe) and counts its plots. */
static inline void chromium_svgs(const char *path, struct chromium_svgs *c)
{
	char cmd[1024], line[512];
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd),
		 "d=$(mktemp -d) && timeout 60 chromium --headless --no-sandbox --disable-gpu "
		 "--disable-background-networking --disable-component-update --no-first-run --user-data-dir=$d "
		 "--window-size=1200,900 --dump-dom file://%s 2>/dev/null; rm -rf $d",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned w, h, els;
		char *s = strstr(line, "SVG ");

		if (line[0] == '<' && !s)
			continue;
		while (s && sscanf(s, "SVG %u %u %u", &w, &h, &els) == 3) {
			c->n++;
			c->sized += w > 0 && h > 0;
			c->drawn += els > 3;
			s = strstr(s + 4, "SVG ");
		}
	}
	pclose(p);
}

#endif /* UNIT_CHROMIUM_H */
