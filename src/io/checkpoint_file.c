/* Checkpoint files (checkpoint_file.h). */
#include "io/checkpoint_file.h"

#include <stdint.h>
#include <string.h>

#include "core/error.h"

static const char k_magic[8] = {'P', 'D', 'C', 'K', 'P', 'T', '\r', '\n'};

pd_status pd_ckpt_create(pd_ckpt_writer* w, const char* path, pd_error* err) {
    w->failed = 0;
    pd_status st = pd_atomic_open(&w->af, path, err);
    if (st != PD_OK)
        return st;
    uint32_t version = PD_CHECKPOINT_FORMAT;
    w->failed |= fwrite(k_magic, 1, sizeof k_magic, w->af.f) != sizeof k_magic;
    w->failed |= fwrite(&version, sizeof version, 1, w->af.f) != 1;
    return PD_OK;
}

void pd_ckpt_put(pd_ckpt_writer* w, const char* name, const void* data, size_t bytes) {
    uint32_t len = (uint32_t)strlen(name);
    uint64_t size = bytes;
    w->failed |= fwrite(&len, sizeof len, 1, w->af.f) != 1;
    w->failed |= fwrite(name, 1, len, w->af.f) != len;
    w->failed |= fwrite(&size, sizeof size, 1, w->af.f) != 1;
    if (bytes)
        w->failed |= fwrite(data, 1, bytes, w->af.f) != bytes;
}

pd_status pd_ckpt_commit(pd_ckpt_writer* w, pd_error* err) {
    if (w->failed && !ferror(w->af.f)) { /* a short write the stream did not flag */
        pd_atomic_abort(&w->af);
        return pd_fail(err, PD_ERR_IO, "", "cannot write the checkpoint %s", w->af.path);
    }
    return pd_atomic_commit(&w->af, err);
}

static pd_status corrupt(pd_ckpt_reader* r, pd_error* err, const char* what) {
    return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: %s", r->path, what);
}

pd_status pd_ckpt_open(pd_ckpt_reader* r, const char* path, pd_error* err) {
    snprintf(r->path, sizeof r->path, "%s", path);
    r->f = fopen(path, "rb");
    if (!r->f)
        return pd_fail(err, PD_ERR_IO, "", "cannot open the checkpoint %s", path);
    char magic[8];
    uint32_t version = 0;
    if (fread(magic, 1, sizeof magic, r->f) != sizeof magic ||
        memcmp(magic, k_magic, sizeof magic) != 0)
        return corrupt(r, err, "not a peridot checkpoint");
    if (fread(&version, sizeof version, 1, r->f) != 1 || version != PD_CHECKPOINT_FORMAT)
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "%s: checkpoint format %u; this peridot reads format %d", path, version,
                       PD_CHECKPOINT_FORMAT);
    return PD_OK;
}

pd_status pd_ckpt_next(pd_ckpt_reader* r, const char* name, size_t* bytes, pd_error* err) {
    uint32_t len = 0;
    char got[128];
    uint64_t size = 0;
    if (fread(&len, sizeof len, 1, r->f) != 1 || len >= sizeof got ||
        fread(got, 1, len, r->f) != len || fread(&size, sizeof size, 1, r->f) != 1)
        return corrupt(r, err, "cut short");
    got[len] = '\0';
    if (strcmp(got, name) != 0)
        return pd_fail(err, PD_ERR_BAD_SCENE, "", "%s: expected the record '%s', found '%s'",
                       r->path, name, got);
    *bytes = (size_t)size;
    return PD_OK;
}

pd_status pd_ckpt_read(pd_ckpt_reader* r, void* data, size_t bytes, pd_error* err) {
    if (bytes && fread(data, 1, bytes, r->f) != bytes)
        return corrupt(r, err, "cut short");
    return PD_OK;
}

pd_status pd_ckpt_get(pd_ckpt_reader* r, const char* name, void* data, size_t bytes,
                      pd_error* err) {
    size_t got = 0;
    pd_status st = pd_ckpt_next(r, name, &got, err);
    if (st != PD_OK)
        return st;
    if (got != bytes)
        return pd_fail(err, PD_ERR_BAD_SCENE, "",
                       "%s: the record '%s' holds %zu bytes; this scene needs %zu", r->path, name,
                       got, bytes);
    return pd_ckpt_read(r, data, bytes, err);
}

void pd_ckpt_close(pd_ckpt_reader* r) {
    if (r->f)
        fclose(r->f);
    r->f = NULL;
}
