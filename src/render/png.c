/* PNG output through libpng's simplified API (png_image, libpng >= 1.6), which reports
 * errors in the image struct instead of longjmp. */
#include "render/png.h"

#include <png.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/output.h"

pd_status pd_write_png(const char* path, int width, int height, const uint8_t* rgb, pd_error* err) {
    if (!path || !rgb || width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16))
        return pd_fail(err, PD_ERR_INVALID_ARGUMENT, "", "bad PNG size %dx%d for %s", width, height,
                       path ? path : "(no path)");
    pd_atomic_file af;
    pd_status s = pd_atomic_open(&af, path, err);
    if (s != PD_OK)
        return s;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_RGB;
    if (!png_image_write_to_stdio(&image, af.f, 0, rgb, width * 3, NULL)) {
        pd_atomic_abort(&af);
        return pd_fail(err, PD_ERR_IO, "", "cannot write PNG %s: %s", path, image.message);
    }
    png_image_free(&image);
    return pd_atomic_commit(&af, err);
}

pd_status pd_read_png(const char* path, int* width, int* height, uint8_t** rgb, pd_error* err) {
    *rgb = NULL;
    *width = *height = 0;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&image, path))
        return pd_fail(err, PD_ERR_IO, "", "cannot read PNG %s: %s", path, image.message);
    image.format = PNG_FORMAT_RGB;
    size_t bytes = (size_t)image.width * image.height * 3;
    uint8_t* buf = pd_alloc(bytes);
    if (!buf) {
        png_image_free(&image);
        return pd_fail(err, PD_ERR_OUT_OF_MEMORY, "", "no memory for PNG %s", path);
    }
    if (!png_image_finish_read(&image, NULL, buf, (png_int_32)image.width * 3, NULL)) {
        pd_free(buf, bytes);
        return pd_fail(err, PD_ERR_IO, "", "cannot decode PNG %s: %s", path, image.message);
    }
    *rgb = buf;
    *width = (int)image.width;
    *height = (int)image.height;
    return PD_OK;
}
