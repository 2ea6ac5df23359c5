/* Recording an op's backward Node in C: the common case of the Autograd kernel that
 * engine/ops/registry.py generates for each op (_make_autograd_kernel), statement for statement.
 *
 * record(plan, out, args) runs where the generated kernel would start collecting the edges of the
 * op's differentiable inputs, after the backend kernel made `out`:
 * - each input's edge: its grad_fn and output_nr, a leaf's AccumulateGrad (made by grad_accumulator
 *   where it has none yet, as the Python kernel makes it), or no edge;
 * - none needs a gradient: nothing recorded, True;
 * - else the Node (of the plan's class, without a constructor call), its sequence_nr, next_fns and
 *   next_nrs, topological_nr and input_metadata; `out`'s AutogradMeta pointing at it; then what the
 *   formulas of the inputs needing a gradient use, saved as the generated savers save it: True.
 * Anything else returns False before changing anything but a leaf's AccumulateGrad (which the Python
 * would make too), and the generated Python kernel, which is the reference, records the op: anomaly
 * mode, saved-tensor hooks, a view's metadata among the inputs, an output that is not one plain
 * Tensor, a saved shape, options or geometry. The Python savers (save_input_value, ...) are called
 * where the Python kernel calls them.
 *
 * Why C: recording was half of a small op's forward time through the library (W1: 2.2 of 4.4 µs),
 * all of it attribute stores and comparisons that the interpreter runs a bytecode at a time.
 * Slots are read and written at their offsets (found once, from the classes' member descriptors),
 * as the interpreter's specialised STORE_ATTR_SLOT does. The Python kernel runs wherever this module
 * was not built, with AGRAD_PURE_PYTHON=1, and beside it in the tests (tests/engine/recordings.py).
 */
#include "slots.h"

#define MAX_INPUTS 4            /* ops with more differentiable inputs record in Python */

/* configure(): the classes and functions of the engine the recording uses */
static PyTypeObject *TENSOR, *AUTOGRAD_META, *NODE, *VARIABLE_VERSION;
static PyObject *ANOMALY, *HOOKS_IN_USE, *NEXT_SEQUENCE_NR, *GRAD_ACCUMULATOR, *METADATA, *METADATA_OF, *ZEROS,
    *AUTOGRAD_KEY, *SAVE_INPUT, *SAVE_VALUE, *SAVE_OUTPUT;
static int configured = 0;

static PyObject *s_enabled, *s_count, *s_shape, *s_dtype, *s_version, *s_detached, *s_topological_nr;

/* the slots' offsets */
static Py_ssize_t t_data, t_device, t_keys, t_meta, t_version;
static Py_ssize_t m_requires_grad, m_grad, m_grad_fn, m_output_nr, m_retains_grad, m_grad_accumulator, m_hooks,
    m_post_acc_grad_hooks;
static Py_ssize_t n_next_fns, n_next_nrs, n_sequence_nr, n_topological_nr, n_input_metadata, n_hooks, n_metadata;
static Py_ssize_t v_version, v_detached;

/* `var` = the offset of `type`'s slot `name` (a C string) */
static Py_ssize_t
named_slot_offset(PyTypeObject *type, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL)
        return -1;
    Py_ssize_t offset = slot_offset(type, key);
    Py_DECREF(key);
    return offset;
}

#define OFFSET(var, type, name) if ((var = named_slot_offset(type, name)) < 0) return NULL

static PyObject *
configure(PyObject *self, PyObject *args)
{
    PyObject *tensor, *meta, *node, *version;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOOOO!OO!OOOO", &PyType_Type, &tensor, &PyType_Type, &meta, &PyType_Type,
                          &node, &PyType_Type, &version, &ANOMALY, &HOOKS_IN_USE, &NEXT_SEQUENCE_NR,
                          &GRAD_ACCUMULATOR, &PyDict_Type, &METADATA, &METADATA_OF, &PyTuple_Type, &ZEROS,
                          &AUTOGRAD_KEY, &SAVE_INPUT, &SAVE_VALUE, &SAVE_OUTPUT))
        return NULL;
    TENSOR = (PyTypeObject *)tensor;
    AUTOGRAD_META = (PyTypeObject *)meta;
    NODE = (PyTypeObject *)node;
    VARIABLE_VERSION = (PyTypeObject *)version;
    PyObject *kept[] = {tensor, meta, node, version, ANOMALY, HOOKS_IN_USE, NEXT_SEQUENCE_NR, GRAD_ACCUMULATOR,
                        METADATA, METADATA_OF, ZEROS, AUTOGRAD_KEY, SAVE_INPUT, SAVE_VALUE, SAVE_OUTPUT};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
        Py_INCREF(kept[i]);         /* held for the life of the process */
    OFFSET(t_data, TENSOR, "_data");
    OFFSET(t_device, TENSOR, "_device");
    OFFSET(t_keys, TENSOR, "_keys");
    OFFSET(t_meta, TENSOR, "_autograd_meta");
    OFFSET(t_version, TENSOR, "_version_counter");
    OFFSET(m_requires_grad, AUTOGRAD_META, "requires_grad");
    OFFSET(m_grad, AUTOGRAD_META, "grad");
    OFFSET(m_grad_fn, AUTOGRAD_META, "grad_fn");
    OFFSET(m_output_nr, AUTOGRAD_META, "output_nr");
    OFFSET(m_retains_grad, AUTOGRAD_META, "retains_grad");
    OFFSET(m_grad_accumulator, AUTOGRAD_META, "grad_accumulator");
    OFFSET(m_hooks, AUTOGRAD_META, "hooks");
    OFFSET(m_post_acc_grad_hooks, AUTOGRAD_META, "post_acc_grad_hooks");
    OFFSET(n_next_fns, NODE, "next_fns");
    OFFSET(n_next_nrs, NODE, "next_nrs");
    OFFSET(n_sequence_nr, NODE, "sequence_nr");
    OFFSET(n_topological_nr, NODE, "topological_nr");
    OFFSET(n_input_metadata, NODE, "input_metadata");
    OFFSET(n_hooks, NODE, "hooks");
    OFFSET(n_metadata, NODE, "_metadata");
    OFFSET(v_version, VARIABLE_VERSION, "version");
    OFFSET(v_detached, VARIABLE_VERSION, "detached");
    configured = 1;
    Py_RETURN_NONE;
}

/* ---- plans ------------------------------------------------------------------------------ */

enum { SAVE_RESULT = 0, SAVE_ARGUMENT = 2 };     /* registry.py's _SAVE_RESULT, _SAVE_ARGUMENT */

typedef struct {
    Py_ssize_t offset;      /* of the Node's saved_<name> slot */
    int kind;
    Py_ssize_t index;       /* of the argument saved */
} SaveStep;

typedef struct {
    Py_ssize_t count;       /* -1: this mask's savers save what only the Python kernel saves */
    SaveStep *steps;
} MaskSaves;

typedef struct {
    PyObject_HEAD
    PyTypeObject *node_class;
    int n;                              /* differentiable inputs */
    Py_ssize_t positions[MAX_INPUTS];   /* their argument positions */
    Py_ssize_t result_vc;               /* offset of saved_result_vc, or -1 */
    MaskSaves saves[1 << MAX_INPUTS];   /* by mask */
} Plan;

static void
plan_dealloc(Plan *plan)
{
    for (int m = 0; m < (1 << MAX_INPUTS); m++)
        PyMem_Free(plan->saves[m].steps);
    Py_XDECREF(plan->node_class);
    Py_TYPE(plan)->tp_free((PyObject *)plan);
}

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "agrad.autograd._native_recording.Plan",
    .tp_basicsize = sizeof(Plan),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "What record() needs of one op: its Node class, its differentiable inputs, its savers by mask.",
};

/* make_plan(node_class, positions, saves): `saves[mask - 1]` is the (name, kind, index) steps of
 * registry._save_steps for that mask, or None where the Python kernel must save. */
static PyObject *
make_plan(PyObject *self, PyObject *args)
{
    PyObject *cls, *positions, *saves;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &cls, &PyTuple_Type, &positions, &PyTuple_Type, &saves))
        return NULL;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "_native_recording.configure() was not called");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(positions);
    if (n < 1 || n > MAX_INPUTS || PyTuple_GET_SIZE(saves) != (1 << n) - 1) {
        PyErr_SetString(PyExc_ValueError, "make_plan: 1 to 4 inputs, and one entry of saves per mask");
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)cls, NODE)) {
        PyErr_SetString(PyExc_TypeError, "make_plan: the class is not a Node");
        return NULL;
    }
    Plan *plan = PyObject_New(Plan, &PlanType);
    if (plan == NULL)
        return NULL;
    Py_INCREF(cls);
    plan->node_class = (PyTypeObject *)cls;
    plan->n = (int)n;
    plan->result_vc = -1;
    for (int m = 0; m < (1 << MAX_INPUTS); m++) {
        plan->saves[m].count = -1;
        plan->saves[m].steps = NULL;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        plan->positions[j] = PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, j));
        if (plan->positions[j] < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "make_plan: a negative position");
            goto fail;
        }
    }
    for (Py_ssize_t m = 1; m < (1 << n); m++) {
        PyObject *steps = PyTuple_GET_ITEM(saves, m - 1);
        if (steps == Py_None)
            continue;
        if (!PyTuple_Check(steps)) {
            PyErr_SetString(PyExc_TypeError, "make_plan: each mask's saves are a tuple or None");
            goto fail;
        }
        Py_ssize_t count = PyTuple_GET_SIZE(steps);
        plan->saves[m].steps = PyMem_Calloc(count ? count : 1, sizeof(SaveStep));
        if (plan->saves[m].steps == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        for (Py_ssize_t k = 0; k < count; k++) {
            const char *name;
            int kind;
            Py_ssize_t index;
            if (!PyArg_ParseTuple(PyTuple_GET_ITEM(steps, k), "sin", &name, &kind, &index))
                goto fail;
            if (kind != SAVE_RESULT && kind != SAVE_ARGUMENT) {
                PyErr_SetString(PyExc_ValueError, "make_plan: only results and arguments are saved in C");
                goto fail;
            }
            PyObject *slot = PyUnicode_FromFormat("saved_%s", name);
            if (slot == NULL)
                goto fail;
            SaveStep *step = &plan->saves[m].steps[k];
            step->offset = slot_offset((PyTypeObject *)cls, slot);
            Py_DECREF(slot);
            if (step->offset < 0)
                goto fail;
            step->kind = kind;
            step->index = index;
            if (kind == SAVE_RESULT && plan->result_vc < 0
                    && (plan->result_vc = named_slot_offset((PyTypeObject *)cls, "saved_result_vc")) < 0)
                goto fail;
        }
        plan->saves[m].count = count;
    }
    return (PyObject *)plan;
fail:
    Py_DECREF(plan);
    return NULL;
}

/* ---- record ----------------------------------------------------------------------------- */

/* Python's truth of a slot's value; an unset slot counts as "not the common case" (-2). */
static inline int
slot_truth(PyObject *obj, Py_ssize_t offset)
{
    PyObject *v = SLOT(obj, offset);
    if (v == NULL)
        return -2;
    if (v == Py_False || v == Py_None)
        return 0;
    if (v == Py_True)
        return 1;
    return PyObject_IsTrue(v);
}

/* The Python kernel's save_input_value inline: the Tensor itself while nobody changed it in place */
static PyObject *
saved_argument(PyObject *v)
{
    if (Py_IS_TYPE(v, TENSOR)) {
        PyObject *c = SLOT(v, t_version);
        if (c == NULL)
            return PyObject_GetAttrString(v, "_version_counter");   /* raises as Python does */
        int changed;
        if (c == Py_None)
            changed = 0;
        else if (Py_IS_TYPE(c, VARIABLE_VERSION)) {
            changed = slot_truth(c, v_version);
            if (changed == 0)
                changed = slot_truth(c, v_detached);
            if (changed == -2) {
                PyErr_SetString(PyExc_AttributeError, "a VariableVersion without its version");
                return NULL;
            }
        }
        else {
            changed = truth_of(c, s_version);
            if (changed == 0)
                changed = truth_of(c, s_detached);
        }
        if (changed < 0)
            return NULL;
        if (!changed) {
            Py_INCREF(v);
            return v;
        }
        return PyObject_CallOneArg(SAVE_INPUT, v);
    }
    if (PyLong_CheckExact(v) || PyFloat_CheckExact(v)) {
        Py_INCREF(v);
        return v;
    }
    return PyObject_CallOneArg(SAVE_VALUE, v);
}

/* input_metadata of a Node whose one output is `out` (node.py's metadata_of, through its cache) */
static PyObject *
output_metadata(PyObject *out)
{
    PyObject *data = SLOT(out, t_data), *device = SLOT(out, t_device);
    if (data == NULL || device == NULL) {
        PyErr_SetString(PyExc_AttributeError, "a Tensor without its data or device");
        return NULL;
    }
    PyObject *shape = PyObject_GetAttr(data, s_shape);
    if (shape == NULL)
        return NULL;
    PyObject *md = PyDict_GetItemWithError(METADATA, shape);     /* borrowed */
    Py_DECREF(shape);
    if (md == NULL && PyErr_Occurred())
        return NULL;
    if (md != NULL && PyTuple_CheckExact(md) && PyTuple_GET_SIZE(md) >= 1) {
        PyObject *first = PyTuple_GET_ITEM(md, 0);
        if (PyTuple_CheckExact(first) && PyTuple_GET_SIZE(first) == 3 && PyTuple_GET_ITEM(first, 2) == device) {
            PyObject *dtype = PyObject_GetAttr(data, s_dtype);
            if (dtype == NULL)
                return NULL;
            int same = PyTuple_GET_ITEM(first, 1) == dtype;
            Py_DECREF(dtype);
            if (same) {
                Py_INCREF(md);
                return md;
            }
        }
    }
    return PyObject_CallFunctionObjArgs(METADATA_OF, data, device, NULL);
}

static PyObject *
record(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 3 || !Py_IS_TYPE(argv[0], &PlanType)) {
        PyErr_SetString(PyExc_TypeError, "record(plan, out, args)");
        return NULL;
    }
    Plan *plan = (Plan *)argv[0];
    PyObject *out = argv[1], *args = argv[2];
    if (!PyList_CheckExact(args) && !PyTuple_CheckExact(args))
        Py_RETURN_FALSE;
    PyObject **items = PySequence_Fast_ITEMS(args);
    Py_ssize_t nargs = PySequence_Fast_GET_SIZE(args);
    int n = plan->n, mask = 0;
    PyObject *fns[MAX_INPUTS] = {NULL}, *nrs[MAX_INPUTS] = {NULL};    /* new references */
    PyObject *result = NULL;

    /* the edges (a leaf's AccumulateGrad made where it has none, as the Python kernel makes it) */
    for (int j = 0; j < n; j++) {
        if (plan->positions[j] >= nargs)
            goto python;
        PyObject *a = items[plan->positions[j]];
        /* a Tensor subclass (a Parameter) as gradient_edge reads it, where the Python kernel calls that */
        if (!PyObject_TypeCheck(a, TENSOR)) {
            fns[j] = Py_NewRef(Py_None);    /* a number, None: no edge (gradient_edge's INVALID_EDGE) */
            continue;
        }
        PyObject *m = SLOT(a, t_meta);
        if (m == Py_None) {
            fns[j] = Py_NewRef(Py_None);
            continue;
        }
        if (m == NULL || !Py_IS_TYPE(m, AUTOGRAD_META))
            goto python;
        PyObject *grad_fn = SLOT(m, m_grad_fn);
        if (grad_fn == NULL)
            goto python;
        if (grad_fn != Py_None) {
            PyObject *nr = SLOT(m, m_output_nr);
            if (nr == NULL)
                goto python;
            fns[j] = Py_NewRef(grad_fn);
            nrs[j] = Py_NewRef(nr);
            mask |= 1 << j;
            continue;
        }
        int requires_grad = slot_truth(m, m_requires_grad);
        if (requires_grad == -1)
            goto error;
        if (requires_grad == -2)
            goto python;
        if (requires_grad == 0) {
            fns[j] = Py_NewRef(Py_None);    /* gradient_edge's INVALID_EDGE */
            continue;
        }
        PyObject *ref = SLOT(m, m_grad_accumulator), *acc = NULL;
        if (ref != NULL && ref != Py_None) {
            if (!PyWeakref_CheckRef(ref))
                goto python;
            acc = PyWeakref_GetObject(ref);     /* borrowed; None once it died */
            if (acc == NULL)
                goto error;
        }
        if (acc != NULL && acc != Py_None)
            fns[j] = Py_NewRef(acc);
        else if ((fns[j] = PyObject_CallOneArg(GRAD_ACCUMULATOR, a)) == NULL)
            goto error;
        mask |= 1 << j;
    }
    if (!mask) {
        result = Py_True;
        goto done;
    }

    /* what only the Python kernel records */
    int t = truth_of(ANOMALY, s_enabled);
    if (t != 0)
        goto python_or_error;
    t = truth_of(HOOKS_IN_USE, s_count);
    if (t != 0)
        goto python_or_error;
    if (!Py_IS_TYPE(out, TENSOR) || SLOT(out, t_keys) == NULL || SLOT(out, t_version) == NULL)
        goto python;
    PyObject *out_meta = SLOT(out, t_meta);
    if (out_meta == NULL || (out_meta != Py_None && !Py_IS_TYPE(out_meta, AUTOGRAD_META)))
        goto python;
    MaskSaves *saves = &plan->saves[mask];
    if (saves->count < 0)
        goto python;

    /* the Node */
    PyObject *node = plan->node_class->tp_alloc(plan->node_class, 0);
    if (node == NULL)
        goto error;
    PyObject *seq = PyObject_CallNoArgs(NEXT_SEQUENCE_NR);
    if (seq == NULL) {
        Py_DECREF(node);
        goto error;
    }
    put_slot(node, n_sequence_nr, seq);
    set_slot(node, n_hooks, Py_None);
    set_slot(node, n_metadata, Py_None);
    PyObject *next_fns = PyTuple_New(n);
    if (next_fns == NULL) {
        Py_DECREF(node);
        goto error;
    }
    int any_nr = 0;
    long topo = 0;
    for (int j = 0; j < n; j++) {
        PyTuple_SET_ITEM(next_fns, j, Py_NewRef(fns[j]));
        if (nrs[j] != NULL) {
            int nonzero = PyObject_IsTrue(nrs[j]);
            if (nonzero < 0) {
                Py_DECREF(next_fns);
                Py_DECREF(node);
                goto error;
            }
            any_nr |= nonzero;
        }
        if (fns[j] != Py_None) {
            PyObject *fn_topo = PyObject_TypeCheck(fns[j], NODE) ? SLOT(fns[j], n_topological_nr) : NULL;
            long value = fn_topo != NULL && PyLong_CheckExact(fn_topo) ? PyLong_AsLong(fn_topo) : -1;
            if (fn_topo == NULL || !PyLong_CheckExact(fn_topo)) {      /* as Python reads it */
                PyObject *v = PyObject_GetAttr(fns[j], s_topological_nr);
                value = v == NULL ? -1 : PyLong_AsLong(v);
                Py_XDECREF(v);
            }
            if (value == -1 && PyErr_Occurred()) {
                Py_DECREF(next_fns);
                Py_DECREF(node);
                goto error;
            }
            if (value >= topo)
                topo = value + 1;
        }
    }
    put_slot(node, n_next_fns, next_fns);
    PyObject *next_nrs;
    if (any_nr) {
        if ((next_nrs = PyTuple_New(n)) == NULL) {
            Py_DECREF(node);
            goto error;
        }
        for (int j = 0; j < n; j++)
            PyTuple_SET_ITEM(next_nrs, j, nrs[j] != NULL ? Py_NewRef(nrs[j]) : PyLong_FromLong(0));
    }
    else
        next_nrs = Py_NewRef(PyTuple_GET_ITEM(ZEROS, n));
    put_slot(node, n_next_nrs, next_nrs);
    PyObject *topo_nr = PyLong_FromLong(topo);
    if (topo_nr == NULL) {
        Py_DECREF(node);
        goto error;
    }
    put_slot(node, n_topological_nr, topo_nr);
    PyObject *md = output_metadata(out);
    if (md == NULL) {
        Py_DECREF(node);
        goto error;
    }
    put_slot(node, n_input_metadata, md);

    /* the output's history: AutogradMeta(False, node, 0) */
    PyObject *zero = PyLong_FromLong(0);
    if (out_meta == Py_None) {
        PyObject *m = AUTOGRAD_META->tp_alloc(AUTOGRAD_META, 0);
        if (m == NULL) {
            Py_DECREF(zero);
            Py_DECREF(node);
            goto error;
        }
        set_slot(m, m_requires_grad, Py_False);
        set_slot(m, m_retains_grad, Py_False);
        set_slot(m, m_grad, Py_None);
        set_slot(m, m_grad_accumulator, Py_None);
        set_slot(m, m_hooks, Py_None);
        set_slot(m, m_post_acc_grad_hooks, Py_None);
        set_slot(m, m_grad_fn, node);
        set_slot(m, m_output_nr, zero);
        put_slot(out, t_meta, m);
    }
    else {
        Py_INCREF(out_meta);        /* held while its old grad_fn may be let go */
        set_slot(out_meta, m_grad_fn, node);
        set_slot(out_meta, m_output_nr, zero);
        set_slot(out_meta, m_requires_grad, Py_False);
        Py_DECREF(out_meta);
    }
    Py_DECREF(zero);
    PyObject *keys = PyNumber_Or(SLOT(out, t_keys), AUTOGRAD_KEY);
    if (keys == NULL) {
        Py_DECREF(node);
        goto error;
    }
    put_slot(out, t_keys, keys);

    /* what the formulas use */
    for (Py_ssize_t k = 0; k < saves->count; k++) {
        SaveStep *step = &saves->steps[k];
        PyObject *saved;
        if (step->kind == SAVE_ARGUMENT) {
            if (step->index >= nargs) {
                PyErr_SetString(PyExc_IndexError, "list index out of range");
                Py_DECREF(node);
                goto error;
            }
            saved = saved_argument(items[step->index]);
        }
        else if (SLOT(out, t_version) == Py_None) {     /* the output itself, with a version counter of its own */
            PyObject *vc = PyObject_CallNoArgs((PyObject *)VARIABLE_VERSION);
            if (vc == NULL) {
                Py_DECREF(node);
                goto error;
            }
            saved = Py_NewRef(SLOT(out, t_data));
            set_slot(node, plan->result_vc, vc);
            put_slot(out, t_version, vc);
        }
        else {
            saved = PyObject_CallOneArg(SAVE_OUTPUT, out);
            if (saved != NULL)
                set_slot(node, plan->result_vc, Py_None);
        }
        if (saved == NULL) {
            Py_DECREF(node);
            goto error;
        }
        put_slot(node, step->offset, saved);
    }
    Py_DECREF(node);        /* the output's AutogradMeta holds it */
    result = Py_True;
    goto done;

python_or_error:
    if (PyErr_Occurred())
        goto error;
python:
    result = Py_False;
done:
    for (int j = 0; j < n; j++) {
        Py_XDECREF(fns[j]);
        Py_XDECREF(nrs[j]);
    }
    return Py_NewRef(result);
error:
    for (int j = 0; j < n; j++) {
        Py_XDECREF(fns[j]);
        Py_XDECREF(nrs[j]);
    }
    return NULL;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Tensor, AutogradMeta, Node, VariableVersion, anomaly, saved_hooks_in_use, next_sequence_nr, "
     "grad_accumulator, metadata cache, metadata_of, ZEROS, AUTOGRAD key, save_input_value, save_value, "
     "save_output)"},
    {"make_plan", make_plan, METH_VARARGS, "make_plan(node_class, positions, saves): one op's Plan"},
    {"record", (PyCFunction)(void (*)(void))record, METH_FASTCALL,
     "record(plan, out, args): record the op's Node (True), or leave it to the Python kernel (False)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_native_recording",
    "An op's backward Node recorded in C (engine/ops/registry.py generates the Python reference).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native_recording(void)
{
    if (PyType_Ready(&PlanType) < 0)
        return NULL;
    if ((s_enabled = PyUnicode_InternFromString("enabled")) == NULL
            || (s_count = PyUnicode_InternFromString("count")) == NULL
            || (s_shape = PyUnicode_InternFromString("shape")) == NULL
            || (s_dtype = PyUnicode_InternFromString("dtype")) == NULL
            || (s_version = PyUnicode_InternFromString("version")) == NULL
            || (s_detached = PyUnicode_InternFromString("detached")) == NULL
            || (s_topological_nr = PyUnicode_InternFromString("topological_nr")) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
