// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Replay driver for the fuzz harnesses: linked with one fuzz_<thing>.c
 * instead of libFuzzer, it feeds every file named on the command line,
 * or every file of every directory named, to LLVMFuzzerTestOneInput().
 * Without arguments it replays the corpus directory compiled in as
 * FUZZ_CORPUS, so that `make check` runs the seed corpus with any
 * compiler. A harness finding a bug aborts, failing the test.
 *
 * Exit: 0 when at least one input ran, 99 on an unreadable path or an
 * empty corpus (a test that ran nothing must not pass).
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_INPUT_MAX (16 << 20)

static unsigned long replay_runs;

static int replay_file(const char *path)
{
	uint8_t *buf;
	size_t len;
	FILE *f;
	long sz = 0;

	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: fopen %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || sz > REPLAY_INPUT_MAX ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: size of %s: %s\n", path,
			sz > REPLAY_INPUT_MAX ? "too large" : strerror(errno));
		fclose(f);
		return -1;
	}
	/* exactly the input's size, so that ASan sees any read past it */
	buf = malloc(sz ? (size_t)sz : 1);
	if (!buf) {
		fprintf(stderr, "replay: malloc %ld: %s\n", sz, strerror(errno));
		fclose(f);
		return -1;
	}
	len = fread(buf, 1, (size_t)sz, f);
	fclose(f);
	if (len != (size_t)sz) {
		fprintf(stderr, "replay: fread %s: short read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	replay_runs++;
	return 0;
}

static int replay_path(const char *path)
{
	struct dirent *de;
	struct stat st;
	char sub[4096];
	int rc = 0;
	DIR *d;

	if (stat(path, &st)) {
		fprintf(stderr, "replay: stat %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "replay: opendir %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (replay_path(sub))
			rc = -1;
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

#ifdef FUZZ_CORPUS
	if (argc < 2)
		rc = replay_path(FUZZ_CORPUS);
#endif
	for (i = 1; i < argc; i++)
		if (replay_path(argv[i]))
			rc = -1;
	printf("replay: %lu input(s)\n", replay_runs);
	return rc || replay_runs == 0 ? 99 : 0;
}
