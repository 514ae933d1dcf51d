#include "png_io.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

int png_write_rgb(const char *path, const unsigned char *rgb, int w, int h, char *err, int err_size)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, (size_t)err_size, "%s: cannot write (%s)", path, strerror(errno));
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        snprintf(err, (size_t)err_size, "%s: libpng could not start (out of memory)", path);
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(err, (size_t)err_size, "%s: libpng failed while writing (disk full?)", path);
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(rgb + (size_t)y * 3 * (size_t)w));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) {
        snprintf(err, (size_t)err_size, "%s: cannot write (%s)", path, strerror(errno));
        return -1;
    }
    return 0;
}

int png_read_rgb(const char *path, unsigned char **out, int *w, int *h, char *err, int err_size)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, (size_t)err_size, "%s: cannot open (%s)", path, strerror(errno));
        return -1;
    }
    unsigned char sig[8];
    if (fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8)) {
        snprintf(err, (size_t)err_size, "%s: not a PNG file", path);
        fclose(f);
        return -1;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    unsigned char *rgb = NULL;
    if (!png || !info) {
        snprintf(err, (size_t)err_size, "%s: libpng could not start (out of memory)", path);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(f);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        snprintf(err, (size_t)err_size, "%s: corrupt or truncated PNG", path);
        png_destroy_read_struct(&png, &info, NULL);
        free(rgb);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_sig_bytes(png, 8);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_gray_to_rgb(png);
    png_read_update_info(png, info);
    int width = (int)png_get_image_width(png, info), height = (int)png_get_image_height(png, info);
    rgb = malloc((size_t)width * (size_t)height * 3);
    if (!rgb) png_error(png, "out of memory");
    for (int y = 0; y < height; y++) png_read_row(png, rgb + (size_t)y * 3 * (size_t)width, NULL);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    *out = rgb;
    *w = width;
    *h = height;
    return 0;
}
