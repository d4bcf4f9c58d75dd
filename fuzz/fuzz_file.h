/*
 * fuzz_file.h - for the libFuzzer targets that read a capture from a file: the input's bytes
 * written to a temporary file.
 */
#ifndef SIPNAB_FUZZ_FILE_H
#define SIPNAB_FUZZ_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Write the @p size bytes at @p data to a new file named from @p path, a mkstemp() template
 * that receives the name; false (and no file left) when that fails. The caller unlinks it. */
static inline bool fuzz_write_file(char *path, const uint8_t *data, size_t size)
{
	int fd = mkstemp(path);

	if (fd < 0) {
		return false;
	}
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return false;
	}
	close(fd);
	return true;
}

#endif
