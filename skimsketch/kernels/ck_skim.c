/* skimsketch.kernels._ckernels, the skim's scan (skimsketch/sketch/skim/skimdense.py): candidates in hot
 * buckets, and the table estimates of chosen keys. */
#include "ckernels.h"

/* Candidates (not excluded) that sit in a hot bucket in at least ``need`` tables. ``counts``
 * (uint8, one per candidate) must be all zero; it holds the counts on return.
 * ``order`` (depth, n) and ``starts`` (depth, width + 1) index each table's buckets: the
 * candidates of bucket b of table p are order[p, starts[p, b] : starts[p, b + 1]]. Only hot
 * buckets are visited; returns how many indices were written to ``out`` (unsorted: the
 * caller sorts). */
PyObject *hot_candidates(PyObject *self, PyObject *args) {
    PyObject *order_o, *starts_o, *hot_o, *exclude_o, *counts_o, *out_o;
    Py_ssize_t depth, width, n;
    int need;
    if (!PyArg_ParseTuple(args, "OOOOnnniOO", &order_o, &starts_o, &hot_o, &exclude_o, &depth, &width, &n, &need,
                          &counts_o, &out_o))
        return NULL;
    Buffers bufs = {.n = 0};
    Py_ssize_t norder, nstarts, nhot, nexcl, ncounts, nout, written = 0;
    const int64_t *order = get_buffer(&bufs, order_o, 8, 0, &norder, "order");
    const int64_t *starts = order ? get_buffer(&bufs, starts_o, 8, 0, &nstarts, "starts") : NULL;
    const uint8_t *hot = starts ? get_buffer(&bufs, hot_o, 1, 0, &nhot, "hot") : NULL;
    const uint8_t *excl = hot ? get_buffer(&bufs, exclude_o, 1, 0, &nexcl, "exclude") : NULL;
    uint8_t *counts = excl ? get_buffer(&bufs, counts_o, 1, 1, &ncounts, "counts") : NULL;
    int64_t *out = counts ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    if (!out) goto fail;
    if (norder != depth * n || nstarts != depth * (width + 1) || nhot != depth * width || nexcl != n ||
        ncounts != n || nout != n || need < 1 || need > 255 || depth > 255) {
        PyErr_SetString(PyExc_ValueError, "hot_candidates: array sizes do not match");
        goto fail;
    }
    for (Py_ssize_t p = 0; p < depth; p++) { /* the index must stay inside the candidates */
        const int64_t *st = starts + p * (width + 1);
        if (st[0] < 0 || st[width] > n) goto bad_index;
        for (Py_ssize_t b = 0; b < width; b++)
            if (st[b] > st[b + 1]) goto bad_index;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t p = 0; p < depth; p++) { /* count, emitting a key when its count reaches need */
        const int64_t *ord = order + p * n, *st = starts + p * (width + 1);
        const uint8_t *h = hot + p * width;
        for (Py_ssize_t b = 0; b < width; b++) {
            if (!h[b]) continue;
            for (int64_t k = st[b]; k < st[b + 1]; k++) {
                int64_t i = ord[k];
                if (++counts[i] == need && !excl[i]) out[written++] = i;
            }
        }
    }
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    return PyLong_FromSsize_t(written);
bad_index:
    PyErr_SetString(PyExc_ValueError, "hot_candidates: starts is not an index of the candidates");
fail:
    release_all(&bufs);
    return NULL;
}

/* out[p, i] = residual[p, buckets[p, idx[i]]] * signs[p, idx[i]]: the table estimates of the keys idx.
 * ``buckets`` and ``signs`` are (depth, n) arrays whose element (p, j) sits at p * sp + j * sj of
 * their C-contiguous buffers (sp, sj = n, 1 for C order; 1, depth for a transposed array). */
PyObject *gather_estimates(PyObject *self, PyObject *args) {
    PyObject *res_o, *buckets_o, *signs_o, *idx_o, *out_o;
    Py_ssize_t depth, width, n, sp, sj;
    if (!PyArg_ParseTuple(args, "OOOOnnnnnO", &res_o, &buckets_o, &signs_o, &idx_o, &depth, &width, &n, &sp, &sj,
                          &out_o))
        return NULL;
    Buffers bufs = {.n = 0};
    Py_ssize_t nres, nb, ns, k, nout;
    const double *res = get_buffer(&bufs, res_o, 8, 0, &nres, "residual");
    const int64_t *buckets = res ? get_buffer(&bufs, buckets_o, 8, 0, &nb, "buckets") : NULL;
    const double *signs = buckets ? get_buffer(&bufs, signs_o, 8, 0, &ns, "signs") : NULL;
    const int64_t *idx = signs ? get_buffer(&bufs, idx_o, 8, 0, &k, "idx") : NULL;
    double *out = idx ? get_buffer(&bufs, out_o, 8, 1, &nout, "out") : NULL;
    if (!out) goto fail;
    if (nres != depth * width || nb != depth * n || ns != depth * n || nout != depth * k ||
        !((sp == n && sj == 1) || (sp == 1 && sj == depth))) {
        PyErr_SetString(PyExc_ValueError, "gather_estimates: array sizes do not match");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (idx[i] < 0 || idx[i] >= n) {
            PyErr_Format(PyExc_IndexError, "gather_estimates: index %lld outside [0, %zd)", (long long)idx[i], n);
            goto fail;
        }
        for (Py_ssize_t p = 0; p < depth; p++) {
            int64_t b = buckets[p * sp + idx[i] * sj];
            if (b < 0 || b >= width) {
                PyErr_Format(PyExc_IndexError, "gather_estimates: bucket %lld outside [0, %zd)", (long long)b, width);
                goto fail;
            }
        }
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < k; i++) {
        Py_ssize_t j = idx[i] * sj;
        for (Py_ssize_t p = 0; p < depth; p++)
            out[p * k + i] = res[p * width + buckets[p * sp + j]] * signs[p * sp + j];
    }
    Py_END_ALLOW_THREADS
    release_all(&bufs);
    Py_RETURN_NONE;
fail:
    release_all(&bufs);
    return NULL;
}
