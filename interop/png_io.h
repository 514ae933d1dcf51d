/* PNG files for the viewer's headless capture and for png_check (libpng).
 * Pixels are 8-bit RGB, rows top to bottom. */
#ifndef TW_PNG_IO_H
#define TW_PNG_IO_H

/* Writes w*h RGB pixels (rows top to bottom). Returns 0, or -1 with a
 * message naming the file in err. */
int png_write_rgb(const char *path, const unsigned char *rgb, int w, int h, char *err, int err_size);

/* Reads any 8/16-bit PNG as RGB (alpha dropped, palettes and grey expanded).
 * *rgb is malloc'd (caller frees). Returns 0, or -1 with a message in err. */
int png_read_rgb(const char *path, unsigned char **rgb, int *w, int *h, char *err, int err_size);

#endif
