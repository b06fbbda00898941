/* The shared part of skimsketch.kernels._ckernels (one extension module compiled from the .c files beside
 * this header, setup.py): the buffer helpers, the splitmix finaliser and the module's entry points.
 * The entry points have hidden visibility: only the module's method table (_ckernels.c) names them. */
#ifndef SKIMSKETCH_CKERNELS_H
#define SKIMSKETCH_CKERNELS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define CK_INTERNAL __attribute__((visibility("hidden")))

/* -- buffers -------------------------------------------------------------------------- */

typedef struct {
    Py_buffer views[8];
    int n;
} Buffers;

static inline void release_all(Buffers *b) {
    for (int i = 0; i < b->n; i++) PyBuffer_Release(&b->views[i]);
    b->n = 0;
}

/* A C-contiguous buffer of items of ``itemsize`` bytes (``writable``: for output). */
static inline void *get_buffer(Buffers *b, PyObject *obj, Py_ssize_t itemsize, int writable, Py_ssize_t *count,
                               const char *what) {
    Py_buffer *v = &b->views[b->n];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, v, flags) < 0) return NULL;
    b->n++;
    if (v->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes, got %zd", what, itemsize, v->itemsize);
        return NULL;
    }
    *count = v->len / itemsize;
    return v->buf;
}

/* -- the splitmix64 finaliser (virtual ids, heavy buckets and draws) -------------------------- */

static inline uint64_t splitmix_fin(uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ULL;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* -- the entry points (their arguments: the list in _ckernels.c) ------------------------------- */

/* ck_update.c: sketch update */
CK_INTERNAL PyObject *hash_counts(PyObject *self, PyObject *args);
CK_INTERNAL PyObject *hash_float_cells(PyObject *self, PyObject *args);
CK_INTERNAL PyObject *virtual_counts(PyObject *self, PyObject *args);
/* ck_keys.c: string fingerprints */
CK_INTERNAL PyObject *fingerprints(PyObject *self, PyObject *args);
CK_INTERNAL PyObject *object_fingerprints(PyObject *self, PyObject *args);
/* ck_skim.c: the skim's scan */
CK_INTERNAL PyObject *hot_candidates(PyObject *self, PyObject *args);
CK_INTERNAL PyObject *gather_estimates(PyObject *self, PyObject *args);
/* ck_heavy.c: the heavy-key table's admission */
CK_INTERNAL PyObject *heavy_admit(PyObject *self, PyObject *args);

#endif
