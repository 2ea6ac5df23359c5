/* The backward engine's two loops over Nodes in C, statement for statement as their Python originals
 * in engine.py:
 * - evaluate_function: the common case of Engine._evaluate_function, for the owning thread of a
 *   GraphTask that runs every Node it reaches (no exec_info), a dry run (`inspect`'s order) too;
 * - compute_dependencies: GraphTask.compute_dependencies, whole.
 *
 * Why C: a backward pass of small ops spent more time in these loops than in the Nodes it runs
 * (W1: 3.8 of 6.2 µs an op), and they are all dictionary, attribute and comparison work that the
 * interpreter dispatches a bytecode at a time. Everything it calls stays Python: each Node's apply,
 * the hooks and watchers (`Engine._call_function`), validate_outputs' slow path (`_conform`), the
 * queue's push, GraphTask.set_error; release_variables and InputBuffer accumulation (`sum_into`) stay
 * Python but for their commonest cases, which W1's backward spent a fifth of its time calling: the
 * generated Nodes' release (`release_saved`, registry._make_release's statements) and a sum made in
 * place (`summed`). So this file holds no autograd semantics of its own; `engine.py` keeps the
 * Python loop, which is the reference, runs wherever this module was not built, and is tested beside
 * it (AGRAD_PURE_PYTHON=1 selects it).
 *
 * Reference counts matter here as they do in Python: AccumulateGrad keeps a gradient as .grad only
 * if nobody else holds it, and sum_into sums in place only into a gradient only its buffer holds.
 * At each call this loop holds no reference the Python loop would not hold (see the NOTE lines).
 */
#include "slots.h"

/* configure(): objects of engine.py this loop calls or compares with */
static PyObject *ACCUMULATE_GRAD, *CPU, *SUM_INTO, *CONFORM, *WRONG_COUNT, *CHECK_OUTPUTS, *BUFFER_DEVICE,
    *PLANNED_OUTPUTS, *TENSOR, *NDARRAY, *GRAD_MODE_TLS, *WATCHERS, *SAVED_VARIABLE, *RELEASED;
static PyObject *RELEASES;      /* register_release(): a generated Node class -> its saved slots' offsets */

static PyObject *s_hooks, *s_apply, *s_call_function, *s_release_variables, *s_anomaly, *s_next_fns,
    *s_next_nrs, *s_input_metadata, *s_data, *s_dtype, *s_shape, *s_device, *s_on_devices, *s_threaded,
    *s_push, *s_has_error, *s_sequence_nr, *s_push_unlocked, *s_set_error, *s_dependencies, *s_not_ready,
    *s_plain, *s_keep_graph, *s_cpu_ready_queue, *s_heap, *s_reentrant_depth, *s_topological_nr, *s_order,
    *s_autograd_meta, *s_grad_enabled, *s_recorder, *s_base;

/* A Node's `next_fns` or `next_nrs`, as a list or tuple (PySequence_Fast) */
static PyObject *
sequence_attr(PyObject *fn, PyObject *name)
{
    PyObject *value = slot_attr(fn, name);
    if (value == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(value, "a Node's next_fns and next_nrs are sequences");
    Py_DECREF(value);
    return seq;
}

/* Does `grad` (flowing into input `nr_o` of `nxt`) differ from that input's metadata, in shape,
 * dtype or device? (validate_outputs' three comparisons) 1: it does, 0: it does not, -1: error.
 * The metadata are returned (new references) for _conform. */
static int
differs(PyObject *nxt, PyObject *nr_o, PyObject *grad, PyObject **shape, PyObject **dtype, PyObject **dev)
{
    PyObject *all = slot_attr(nxt, s_input_metadata);
    if (all == NULL)
        return -1;
    PyObject *md = PyObject_GetItem(all, nr_o);
    Py_DECREF(all);
    if (md == NULL)
        return -1;
    if (!PyTuple_CheckExact(md) || PyTuple_GET_SIZE(md) != 3) {
        PyErr_SetString(PyExc_TypeError, "input_metadata entries are (shape, dtype, device) tuples");
        Py_DECREF(md);
        return -1;
    }
    *shape = PyTuple_GET_ITEM(md, 0);
    *dtype = PyTuple_GET_ITEM(md, 1);
    *dev = PyTuple_GET_ITEM(md, 2);
    Py_INCREF(*shape);
    Py_INCREF(*dtype);
    Py_INCREF(*dev);
    Py_DECREF(md);

    int result = -1;
    PyObject *data = slot_attr(grad, s_data), *d = NULL, *data_shape = NULL, *gdev = NULL;
    if (data == NULL || (d = PyObject_GetAttr(data, s_dtype)) == NULL ||
        (data_shape = PyObject_GetAttr(data, s_shape)) == NULL)
        goto done;
    int ne = PyObject_RichCompareBool(data_shape, *shape, Py_NE);
    if (ne != 0) {
        result = ne;
        goto done;
    }
    if (d != *dtype) {
        ne = PyObject_RichCompareBool(d, *dtype, Py_NE);
        if (ne != 0) {
            result = ne;
            goto done;
        }
    }
    if ((gdev = slot_attr(grad, s_device)) == NULL)
        goto done;
    result = gdev != *dev;
done:
    Py_XDECREF(data);
    Py_XDECREF(d);
    Py_XDECREF(data_shape);
    Py_XDECREF(gdev);
    return result;
}

/* The heap's next task would run before `ready` (ReadyQueue.priority: (2, -depth, -sequence_nr)), or
 * ties with it: the one queued first runs first, as the queue pops them. */
static int
queued_first(PyObject *heap, PyObject *neg_depth, PyObject *ready)
{
    if (!PyList_Check(heap) || PyList_GET_SIZE(heap) == 0)
        return 0;
    PyObject *top = PySequence_GetItem(PyList_GET_ITEM(heap, 0), 0);
    if (top == NULL)
        return -1;
    PyObject *seq = slot_attr(ready, s_sequence_nr);
    PyObject *neg = seq == NULL ? NULL : PyNumber_Negative(seq);
    Py_XDECREF(seq);
    if (neg == NULL) {
        Py_DECREF(top);
        return -1;
    }
    PyObject *two = PyLong_FromLong(2);
    PyObject *key = two == NULL ? NULL : PyTuple_Pack(3, two, neg_depth, neg);
    Py_XDECREF(two);
    Py_DECREF(neg);
    if (key == NULL) {
        Py_DECREF(top);
        return -1;
    }
    int r = PyObject_RichCompareBool(key, top, Py_GE);
    Py_DECREF(key);
    Py_DECREF(top);
    return r;
}

/* gradient_sum.sum_into(buffer, pos, grad): its common case here, where it sums in place (a gradient
 * only the buffer holds, whose array only that gradient holds, of the same shape and dtype, on the
 * same device, outside grad mode and recording: `old._data += grad._data`), else the Python function,
 * which is the reference. `old` is borrowed from the buffer: the caller holds no reference of its own
 * (the counts below are the buffer's, and ours of the array). */
static PyObject *
summed(PyObject *buffer, PyObject *nr_o, PyObject *grad)
{
    if (!PyList_CheckExact(buffer) || !PyLong_CheckExact(nr_o) || !Py_IS_TYPE(grad, (PyTypeObject *)TENSOR))
        goto python;
    Py_ssize_t pos = PyLong_AsSsize_t(nr_o);
    if (pos < 0 || pos >= PyList_GET_SIZE(buffer)) {
        PyErr_Clear();
        goto python;
    }
    PyObject *old = PyList_GET_ITEM(buffer, pos);
    if (!Py_IS_TYPE(old, (PyTypeObject *)TENSOR) || Py_REFCNT(old) != 1)
        goto python;
    PyObject *meta = slot_attr(old, s_autograd_meta);
    if (meta == NULL)
        return NULL;
    Py_DECREF(meta);
    if (meta != Py_None)
        goto python;
    PyObject *dev = slot_attr(old, s_device), *gdev = dev == NULL ? NULL : slot_attr(grad, s_device);
    Py_XDECREF(dev);
    if (gdev == NULL)
        return NULL;
    Py_DECREF(gdev);
    if (dev != gdev)
        goto python;
    PyObject *flag = PyObject_GetAttr(GRAD_MODE_TLS, s_grad_enabled);
    if (flag == NULL)
        return NULL;
    int enabled = PyObject_IsTrue(flag);
    Py_DECREF(flag);
    if (enabled != 0)
        goto python_or_error;
    PyObject *recorder = PyObject_GetAttr(WATCHERS, s_recorder);
    if (recorder == NULL)
        return NULL;
    Py_DECREF(recorder);
    if (recorder != Py_None)
        goto python;            /* add_in_place tells the recorder */
    PyObject *data = slot_attr(old, s_data);
    if (data == NULL)
        return NULL;
    PyObject *other = slot_attr(grad, s_data), *base = NULL, *shape = NULL, *other_shape = NULL,
        *dtype = NULL, *other_dtype = NULL;
    int fits = -1;
    if (other == NULL)
        goto checked;
    if (!Py_IS_TYPE(data, (PyTypeObject *)NDARRAY) || !Py_IS_TYPE(other, (PyTypeObject *)NDARRAY)
            || Py_REFCNT(data) != 2) {           /* the tensor's and ours */
        fits = 0;
        goto checked;
    }
    if ((base = PyObject_GetAttr(data, s_base)) == NULL)
        goto checked;
    if (base != Py_None) {
        fits = 0;
        goto checked;
    }
    if ((shape = PyObject_GetAttr(data, s_shape)) == NULL || (other_shape = PyObject_GetAttr(other, s_shape)) == NULL)
        goto checked;
    if ((fits = PyObject_RichCompareBool(shape, other_shape, Py_EQ)) != 1)
        goto checked;
    if ((dtype = PyObject_GetAttr(data, s_dtype)) == NULL || (other_dtype = PyObject_GetAttr(other, s_dtype)) == NULL) {
        fits = -1;
        goto checked;
    }
    fits = dtype == other_dtype ? 1 : PyObject_RichCompareBool(dtype, other_dtype, Py_EQ);
checked:
    Py_XDECREF(base);
    Py_XDECREF(shape);
    Py_XDECREF(other_shape);
    Py_XDECREF(dtype);
    Py_XDECREF(other_dtype);
    if (fits == 1) {
        PyObject *r = PyNumber_InPlaceAdd(data, other);
        Py_DECREF(data);
        Py_DECREF(other);
        if (r != NULL) {
            Py_DECREF(r);
            return Py_NewRef(old);
        }
        if (!PyErr_ExceptionMatches(PyExc_ValueError))
            return NULL;
        PyErr_Clear();          /* a read-only array: summed out of place, as sum_into does */
        return PyNumber_Add(old, grad);
    }
    Py_DECREF(data);
    Py_XDECREF(other);
    if (fits < 0)
        return NULL;
python_or_error:
    if (PyErr_Occurred())
        return NULL;
python:
    return PyObject_CallFunctionObjArgs(SUM_INTO, buffer, nr_o, grad, NULL);
}

/* register_release(node_class, saved_names): what the class's generated release_variables
 * (registry._make_release) releases, for release_saved() below */
static PyObject *
register_release(PyObject *module, PyObject *args)
{
    PyObject *cls, *names;
    if (!PyArg_ParseTuple(args, "O!O!:register_release", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *spec = PyTuple_New(2 * n);
    if (spec == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        PyObject *slot = PyUnicode_FromFormat("saved_%U", name);
        Py_ssize_t offset = slot == NULL ? -1 : slot_offset((PyTypeObject *)cls, slot);
        Py_XDECREF(slot);
        Py_ssize_t vc = -2;      /* none */
        if (offset >= 0 && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "result") == 0) {
            PyObject *vc_slot = PyUnicode_FromString("saved_result_vc");
            vc = vc_slot == NULL ? -1 : slot_offset((PyTypeObject *)cls, vc_slot);
            Py_XDECREF(vc_slot);
        }
        if (offset < 0 || vc == -1) {
            Py_DECREF(spec);
            return NULL;
        }
        PyTuple_SET_ITEM(spec, 2 * i, PyLong_FromSsize_t(offset));
        PyTuple_SET_ITEM(spec, 2 * i + 1, PyLong_FromSsize_t(vc));
    }
    if (RELEASES == NULL && (RELEASES = PyDict_New()) == NULL) {
        Py_DECREF(spec);
        return NULL;
    }
    int r = PyDict_SetItem(RELEASES, cls, spec);
    Py_DECREF(spec);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* fn.release_variables(): a generated class's in C (registry._make_release, statement for
 * statement: each saved tensor replaced by RELEASED; numbers and shapes kept), else the method. */
static int
release_saved(PyObject *fn)
{
    PyObject *spec = RELEASES == NULL ? NULL : PyDict_GetItemWithError(RELEASES, (PyObject *)Py_TYPE(fn));
    if (spec == NULL) {
        if (PyErr_Occurred())
            return -1;
        PyObject *r = PyObject_CallMethodNoArgs(fn, s_release_variables);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
        return 0;
    }
    Py_INCREF(spec);
    for (Py_ssize_t i = 0; i + 1 < PyTuple_GET_SIZE(spec); i += 2) {
        Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, i));
        Py_ssize_t vc = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, i + 1));
        if (vc >= 0) {
            PyObject *counter = SLOT(fn, vc);
            if (counter != NULL && counter != Py_None) {
                set_slot(fn, offset, RELEASED);
                set_slot(fn, vc, Py_None);
            }
        }
        PyObject *v = SLOT(fn, offset);
        if (v == NULL)
            continue;
        PyTypeObject *c = Py_TYPE(v);
        if (c == (PyTypeObject *)TENSOR || c == (PyTypeObject *)SAVED_VARIABLE
                || (c == &PyList_Type && PyList_GET_SIZE(v) > 0
                    && Py_IS_TYPE(PyList_GET_ITEM(v, 0), (PyTypeObject *)SAVED_VARIABLE)))
            set_slot(fn, offset, RELEASED);
    }
    Py_DECREF(spec);
    return 0;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *acc, *cpu, *sum_into, *conform, *wrong_count, *check_outputs, *buffer_device, *planned_outputs,
        *tensor, *ndarray, *grad_mode_tls, *watchers, *saved_variable, *released;
    if (!PyArg_ParseTuple(args, "OOOOOOOOO!O!OOO!O:configure", &acc, &cpu, &sum_into, &conform, &wrong_count,
                          &check_outputs, &buffer_device, &planned_outputs, &PyType_Type, &tensor, &PyType_Type,
                          &ndarray, &grad_mode_tls, &watchers, &PyType_Type, &saved_variable, &released))
        return NULL;
    PyObject *kept[] = {tensor, ndarray, grad_mode_tls, watchers, saved_variable, released};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        Py_INCREF(kept[i]);
    Py_XSETREF(TENSOR, tensor);
    Py_XSETREF(NDARRAY, ndarray);
    Py_XSETREF(GRAD_MODE_TLS, grad_mode_tls);
    Py_XSETREF(WATCHERS, watchers);
    Py_XSETREF(SAVED_VARIABLE, saved_variable);
    Py_XSETREF(RELEASED, released);
    Py_INCREF(acc);
    Py_XSETREF(ACCUMULATE_GRAD, acc);
    Py_INCREF(cpu);
    Py_XSETREF(CPU, cpu);
    Py_INCREF(sum_into);
    Py_XSETREF(SUM_INTO, sum_into);
    Py_INCREF(conform);
    Py_XSETREF(CONFORM, conform);
    Py_INCREF(wrong_count);
    Py_XSETREF(WRONG_COUNT, wrong_count);
    Py_INCREF(check_outputs);
    Py_XSETREF(CHECK_OUTPUTS, check_outputs);
    Py_INCREF(buffer_device);
    Py_XSETREF(BUFFER_DEVICE, buffer_device);
    Py_INCREF(planned_outputs);
    Py_XSETREF(PLANNED_OUTPUTS, planned_outputs);
    Py_RETURN_NONE;
}

/* evaluate_function(engine, graph_task, fn, inputs): Engine._evaluate_function(graph_task, fn,
 * inputs, direct=True) for a GraphTask without exec_info. */
static PyObject *
evaluate_function(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "evaluate_function(engine, graph_task, fn, inputs)");
        return NULL;
    }
    if (ACCUMULATE_GRAD == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "evaluate_function before configure()");
        return NULL;
    }
    PyObject *engine = args[0], *gt = args[1];
    PyObject *fn = args[2], *inputs = args[3];
    Py_INCREF(fn);
    Py_INCREF(inputs);
    PyObject *dependencies = NULL, *not_ready = NULL, *queue = NULL, *heap = NULL, *neg_depth = NULL;
    PyObject *outputs = NULL, *fns = NULL, *nrs = NULL, *grad = NULL, *buffer = NULL, *count = NULL;
    PyObject *ready = NULL, *ready_buffer = NULL, *one = NULL, *order = NULL;
    int plain, release, failed = 0;

    if ((dependencies = PyObject_GetAttr(gt, s_dependencies)) == NULL ||
        (not_ready = PyObject_GetAttr(gt, s_not_ready)) == NULL ||
        (queue = PyObject_GetAttr(gt, s_cpu_ready_queue)) == NULL ||
        (heap = PyObject_GetAttr(queue, s_heap)) == NULL)
        goto error;
    if (!PyDict_CheckExact(dependencies) || !PyDict_CheckExact(not_ready)) {
        PyErr_SetString(PyExc_TypeError, "GraphTask.dependencies and not_ready are dicts");
        goto error;
    }
    {
        PyObject *depth = PyObject_GetAttr(gt, s_reentrant_depth);
        if (depth == NULL)
            goto error;
        neg_depth = PyNumber_Negative(depth);
        Py_DECREF(depth);
        if (neg_depth == NULL)
            goto error;
    }
    if ((plain = truth_of(gt, s_plain)) < 0 || (release = truth_of(gt, s_keep_graph)) < 0)
        goto error;
    release = !release;
    if ((one = PyLong_FromLong(1)) == NULL || (order = PyObject_GetAttr(gt, s_order)) == NULL)
        goto error;
    if (order == Py_None)
        Py_CLEAR(order);        /* not a dry run */
    else if (!PyList_Check(order)) {
        PyErr_SetString(PyExc_TypeError, "GraphTask.order is a list or None");
        goto error;
    }

    for (;;) {
        int validate = 0;
        if (order != NULL) {
            /* a dry run: the Node is listed, and each edge gets a stand-in on its Node's device */
            if (PyList_Append(order, fn) < 0 || (outputs = PyObject_CallOneArg(PLANNED_OUTPUTS, fn)) == NULL)
                goto error;
        } else {
            PyObject *hooks = slot_attr(fn, s_hooks);
            if (hooks == NULL)
                goto error;
            int common = hooks == Py_None && plain && (PyObject *)Py_TYPE(fn) != ACCUMULATE_GRAD;
            Py_DECREF(hooks);
            if (common) {
                /* _call_function without hooks or watchers; the outputs are validated as they are handed on */
                outputs = PyObject_CallMethodOneArg(fn, s_apply, inputs);
                validate = 1;
            } else {
                outputs = PyObject_CallMethodObjArgs(engine, s_call_function, gt, fn, inputs, NULL);
            }
            if (outputs == NULL)
                goto error;
            if (release && release_saved(fn) < 0)
                goto error;
            int anomaly = truth_of(gt, s_anomaly);
            if (anomaly < 0)
                goto error;
            if (anomaly) {
                PyObject *r = PyObject_CallFunctionObjArgs(CHECK_OUTPUTS, fn, outputs, NULL);
                if (r == NULL)
                    goto error;
                Py_DECREF(r);
            }
        }
        /* NOTE: empty the buffer, not only our name for it (engine.py says why) */
        if (PyList_CheckExact(inputs) && PyList_SetSlice(inputs, 0, PY_SSIZE_T_MAX, NULL) < 0)
            goto error;
        Py_CLEAR(inputs);

        if ((fns = sequence_attr(fn, s_next_fns)) == NULL)
            goto error;
        PyObject *out_seq = PySequence_Fast(outputs, "a Node's apply returns a sequence of gradients");
        if (out_seq == NULL)
            goto error;
        Py_SETREF(outputs, out_seq);
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fns);
        if (PySequence_Fast_GET_SIZE(outputs) != n) {
            PyObject *r = PyObject_CallFunctionObjArgs(WRONG_COUNT, fns, outputs, fn, NULL);
            if (r == NULL)
                goto error;
            Py_DECREF(r);
            /* zip() stops at the shorter */
            if (PySequence_Fast_GET_SIZE(outputs) < n)
                n = PySequence_Fast_GET_SIZE(outputs);
        }
        if ((nrs = sequence_attr(fn, s_next_nrs)) == NULL)
            goto error;
        if (PySequence_Fast_GET_SIZE(nrs) < n)
            n = PySequence_Fast_GET_SIZE(nrs);

        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *nxt = PySequence_Fast_GET_ITEM(fns, i);
            if (nxt == Py_None)
                continue;
            PyObject *nr_o = PySequence_Fast_GET_ITEM(nrs, i);
            grad = PySequence_Fast_GET_ITEM(outputs, i);
            Py_INCREF(grad);
            if (grad != Py_None) {
                if (validate) {
                    PyObject *shape = NULL, *dtype = NULL, *dev = NULL;
                    int bad = differs(nxt, nr_o, grad, &shape, &dtype, &dev);
                    if (bad > 0) {
                        PyObject *index = PyLong_FromSsize_t(i);
                        PyObject *conformed = index == NULL ? NULL :
                            PyObject_CallFunctionObjArgs(CONFORM, grad, shape, dtype, dev, index, fn, NULL);
                        Py_XDECREF(index);
                        if (conformed != NULL)
                            Py_SETREF(grad, conformed);
                        else
                            bad = -1;
                    }
                    Py_XDECREF(shape);
                    Py_XDECREF(dtype);
                    Py_XDECREF(dev);
                    if (bad < 0)
                        goto error;
                }
                /* (a dry run's queues are all the CPU's: its stand-ins take the CPU's path) */
                PyObject *gdev = slot_attr(grad, s_device);
                if (gdev == NULL)
                    goto error;
                Py_DECREF(gdev);
                if (gdev != CPU && order == NULL && PyObject_SetAttr(gt, s_on_devices, Py_True) < 0)
                    goto error;
            }
            PyObject *before = PyDict_GetItemWithError(dependencies, nxt);
            if (before == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, nxt);
                goto error;
            }
            if ((count = PyNumber_Subtract(before, one)) == NULL)
                goto error;
            int waiting = PyObject_IsTrue(count);
            if (waiting < 0)
                goto error;
            if (waiting) {
                if (PyDict_SetItem(dependencies, nxt, count) < 0)
                    goto error;
                buffer = PyDict_GetItemWithError(not_ready, nxt);
                if (buffer == NULL && PyErr_Occurred())
                    goto error;
                Py_XINCREF(buffer);
            } else {
                if (PyDict_DelItem(dependencies, nxt) < 0)
                    goto error;
                buffer = PyDict_GetItemWithError(not_ready, nxt);
                if (buffer == NULL && PyErr_Occurred())
                    goto error;
                if (buffer != NULL) {
                    Py_INCREF(buffer);
                    if (PyDict_DelItem(not_ready, nxt) < 0)
                        goto error;
                }
            }
            Py_CLEAR(count);
            if (buffer == NULL) {
                /* a fresh buffer (input_buffer.add without the call) */
                PyObject *md = slot_attr(nxt, s_input_metadata);
                if (md == NULL)
                    goto error;
                Py_ssize_t slots = PyObject_Length(md);
                Py_DECREF(md);
                if (slots < 0 || (buffer = PyList_New(slots)) == NULL)
                    goto error;
                for (Py_ssize_t k = 0; k < slots; k++) {
                    Py_INCREF(Py_None);
                    PyList_SET_ITEM(buffer, k, Py_None);
                }
                if (PyObject_SetItem(buffer, nr_o, grad) < 0)
                    goto error;
                if (waiting) {
                    if (PyDict_SetItem(not_ready, nxt, buffer) < 0)
                        goto error;
                    Py_CLEAR(buffer);
                    Py_CLEAR(grad);
                    continue;
                }
            } else {
                if (grad != Py_None) {
                    PyObject *old = PyObject_GetItem(buffer, nr_o);
                    if (old == NULL)
                        goto error;
                    Py_DECREF(old);     /* NOTE: before sum_into, which counts who holds it */
                    if (old == Py_None) {
                        if (PyObject_SetItem(buffer, nr_o, grad) < 0)
                            goto error;
                    } else {
                        PyObject *sum = summed(buffer, nr_o, grad);
                        if (sum == NULL)
                            goto error;
                        int r = PyObject_SetItem(buffer, nr_o, sum);
                        Py_DECREF(sum);
                        if (r < 0)
                            goto error;
                    }
                }
                if (waiting) {
                    Py_CLEAR(buffer);
                    Py_CLEAR(grad);
                    continue;
                }
            }
            Py_CLEAR(grad);
            /* ready: _push's common case (every gradient on the CPU, no device worker) inline */
            int threaded = truth_of(gt, s_threaded);
            if (threaded < 0)
                goto error;
            int elsewhere = 0;
            if (!threaded) {
                int on_devices = truth_of(gt, s_on_devices);
                if (on_devices < 0)
                    goto error;
                if (on_devices) {
                    PyObject *d = PyObject_CallOneArg(BUFFER_DEVICE, buffer);
                    if (d == NULL)
                        goto error;
                    elsewhere = d != Py_None;
                    Py_DECREF(d);
                }
            }
            if (threaded || elsewhere) {
                PyObject *r = PyObject_CallMethodObjArgs(engine, s_push, gt, nxt, buffer, NULL);
                if (r == NULL)
                    goto error;
                Py_DECREF(r);
                Py_CLEAR(buffer);
            } else {
                if (ready != NULL) {
                    PyObject *r = PyObject_CallMethodObjArgs(engine, s_push, gt, ready, ready_buffer, NULL);
                    if (r == NULL)
                        goto error;
                    Py_DECREF(r);
                    Py_CLEAR(ready);
                    Py_CLEAR(ready_buffer);
                }
                Py_INCREF(nxt);
                ready = nxt;
                ready_buffer = buffer;
                buffer = NULL;
            }
        }
        /* NOTE: drop our references: AccumulateGrad keeps a gradient as .grad only if nobody else holds it */
        Py_CLEAR(outputs);
        Py_CLEAR(fns);
        Py_CLEAR(nrs);
        if (ready == NULL)
            break;
        int threaded = truth_of(gt, s_threaded);
        if (threaded < 0)
            goto error;
        int to_queue = threaded;
        if (!to_queue) {
            /* runs next when nothing queued would run before it (ReadyQueue.priority's order) */
            if ((to_queue = truth_of(gt, s_has_error)) < 0)
                goto error;
            if (!to_queue && (to_queue = queued_first(heap, neg_depth, ready)) < 0)
                goto error;
        }
        if (to_queue) {
            PyObject *r = threaded ?
                PyObject_CallMethodObjArgs(engine, s_push, gt, ready, ready_buffer, NULL) :
                PyObject_CallMethodObjArgs(queue, s_push_unlocked, gt, ready, ready_buffer, NULL);
            if (r == NULL)
                goto error;
            Py_DECREF(r);
            break;
        }
        Py_SETREF(fn, ready);
        inputs = ready_buffer;
        ready = ready_buffer = NULL;
    }
    goto done;

error: {
        /* an error is the GraphTask's, named after the Node that raised it (set_error) */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb != NULL && value != NULL)
            PyException_SetTraceback(value, tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        /* what the Python loop would have dropped by now */
        Py_CLEAR(outputs);
        Py_CLEAR(grad);
        Py_CLEAR(buffer);
        Py_CLEAR(inputs);
        PyObject *r = value == NULL ? NULL : PyObject_CallMethodObjArgs(gt, s_set_error, value, fn, NULL);
        Py_XDECREF(value);
        failed = r == NULL;      /* set_error itself raised: that is the caller's */
        Py_XDECREF(r);
    }
done:
    Py_XDECREF(fn);
    Py_XDECREF(inputs);
    Py_XDECREF(dependencies);
    Py_XDECREF(not_ready);
    Py_XDECREF(queue);
    Py_XDECREF(heap);
    Py_XDECREF(neg_depth);
    Py_XDECREF(outputs);
    Py_XDECREF(fns);
    Py_XDECREF(nrs);
    Py_XDECREF(grad);
    Py_XDECREF(buffer);
    Py_XDECREF(count);
    Py_XDECREF(ready);
    Py_XDECREF(ready_buffer);
    Py_XDECREF(one);
    Py_XDECREF(order);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

/* compute_dependencies(dependencies, root, min_topo_nr): GraphTask.compute_dependencies. Iterative, as
 * the Python: a graph a million Nodes deep needs no recursion. */
static PyObject *
compute_dependencies(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "compute_dependencies(dependencies: dict, root, min_topo_nr)");
        return NULL;
    }
    PyObject *dependencies = args[0], *min_topo_nr = args[2];
    PyObject *stack = PyList_New(1), *one = PyLong_FromLong(1);
    if (stack == NULL || one == NULL)
        goto fail;
    Py_INCREF(args[1]);
    PyList_SET_ITEM(stack, 0, args[1]);
    Py_ssize_t top;
    while ((top = PyList_GET_SIZE(stack)) > 0) {
        PyObject *fn = PyList_GET_ITEM(stack, top - 1);
        Py_INCREF(fn);
        if (PyList_SetSlice(stack, top - 1, top, NULL) < 0) {
            Py_DECREF(fn);
            goto fail;
        }
        PyObject *topo = slot_attr(fn, s_topological_nr);
        int below = topo == NULL ? -1 : PyObject_RichCompareBool(topo, min_topo_nr, Py_LT);
        Py_XDECREF(topo);
        if (below != 0) {
            Py_DECREF(fn);
            if (below < 0)
                goto fail;
            continue;
        }
        PyObject *fns = sequence_attr(fn, s_next_fns);
        Py_DECREF(fn);
        if (fns == NULL)
            goto fail;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fns); i++) {
            PyObject *nxt = PySequence_Fast_GET_ITEM(fns, i);
            if (nxt == Py_None)
                continue;
            PyObject *count = PyDict_GetItemWithError(dependencies, nxt);
            int r;
            if (count == NULL) {
                r = PyErr_Occurred() ? -1 : PyDict_SetItem(dependencies, nxt, one);
                if (r == 0)
                    r = PyList_Append(stack, nxt);
            } else {
                PyObject *more = PyNumber_Add(count, one);
                r = more == NULL ? -1 : PyDict_SetItem(dependencies, nxt, more);
                Py_XDECREF(more);
            }
            if (r < 0) {
                Py_DECREF(fns);
                goto fail;
            }
        }
        Py_DECREF(fns);
    }
    Py_DECREF(stack);
    Py_DECREF(one);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(stack);
    Py_XDECREF(one);
    return NULL;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(AccumulateGrad, cpu, sum_into, _conform, _wrong_count, check_outputs, input_buffer.device, "
     "_planned_outputs, Tensor, numpy.ndarray, grad_mode.tls, watchers, SavedVariable, RELEASED)"},
    {"register_release", register_release, METH_VARARGS,
     "register_release(node_class, saved_names): release that generated class's saved tensors in C"},
    {"evaluate_function", (PyCFunction)(void (*)(void))evaluate_function, METH_FASTCALL,
     "evaluate_function(engine, graph_task, fn, inputs): Engine._evaluate_function's common case"},
    {"compute_dependencies", (PyCFunction)(void (*)(void))compute_dependencies, METH_FASTCALL,
     "compute_dependencies(dependencies, root, min_topo_nr): GraphTask.compute_dependencies"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_native_engine",
    "The backward engine's loops over Nodes in C (engine.py holds their Python references).", -1, methods,
    NULL, NULL, NULL, NULL,
};

#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC
PyInit__native_engine(void)
{
    INTERN(s_hooks, "hooks");
    INTERN(s_apply, "apply");
    INTERN(s_call_function, "_call_function");
    INTERN(s_release_variables, "release_variables");
    INTERN(s_anomaly, "anomaly");
    INTERN(s_next_fns, "next_fns");
    INTERN(s_next_nrs, "next_nrs");
    INTERN(s_input_metadata, "input_metadata");
    INTERN(s_data, "_data");
    INTERN(s_dtype, "dtype");
    INTERN(s_shape, "shape");
    INTERN(s_device, "_device");
    INTERN(s_on_devices, "on_devices");
    INTERN(s_threaded, "threaded");
    INTERN(s_push, "_push");
    INTERN(s_has_error, "has_error");
    INTERN(s_sequence_nr, "sequence_nr");
    INTERN(s_push_unlocked, "push_unlocked");
    INTERN(s_set_error, "set_error");
    INTERN(s_dependencies, "dependencies");
    INTERN(s_not_ready, "not_ready");
    INTERN(s_plain, "plain");
    INTERN(s_keep_graph, "keep_graph");
    INTERN(s_cpu_ready_queue, "cpu_ready_queue");
    INTERN(s_heap, "_heap");
    INTERN(s_reentrant_depth, "reentrant_depth");
    INTERN(s_topological_nr, "topological_nr");
    INTERN(s_order, "order");
    INTERN(s_autograd_meta, "_autograd_meta");
    INTERN(s_grad_enabled, "grad_enabled");
    INTERN(s_recorder, "recorder");
    INTERN(s_base, "base");
    return PyModule_Create(&module_def);
}
