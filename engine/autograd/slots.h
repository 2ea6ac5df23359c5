/* Reading and writing the __slots__ of agrad's Python classes (Tensor, AutogradMeta, Node …) from C,
 * at their offsets: what CPython's specialised LOAD_ATTR_SLOT / STORE_ATTR_SLOT do, which a generic
 * PyObject_GetAttr (a lookup through the class's MRO each time) does not. Shared by
 * _native_engine.c and _native_recording.c (each has its own cache of slot_attr's offsets). */
#ifndef AGRAD_SLOTS_H
#define AGRAD_SLOTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* The offset of `type`'s slot `name` (a writable object slot of __slots__), or -1 with an error. */
static Py_ssize_t
slot_offset(PyTypeObject *type, PyObject *name)
{
    PyObject *descr = PyObject_GetAttr((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    Py_ssize_t offset = -1;
    if (Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type == T_OBJECT_EX && !(member->flags & READONLY))
            offset = member->offset;
    }
    Py_DECREF(descr);
    if (offset < 0)
        PyErr_Format(PyExc_TypeError, "%s.%U is not a writable object slot", type->tp_name, name);
    return offset;
}

/* obj's slot at `offset` set to `value` (a new reference taken) */
static inline void
set_slot(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject *old = SLOT(obj, offset);
    Py_INCREF(value);
    SLOT(obj, offset) = value;
    Py_XDECREF(old);
}

/* set_slot stealing the reference to `value` */
static inline void
put_slot(PyObject *obj, Py_ssize_t offset, PyObject *value)
{
    PyObject *old = SLOT(obj, offset);
    SLOT(obj, offset) = value;
    Py_XDECREF(old);
}

/* `obj.name` where the name is a __slots__ member of obj's class (a Node's next_fns, a Tensor's
 * _data, a GraphTask's flags): read at the slot's offset, as CPython's specialised LOAD_ATTR_SLOT
 * does, which a generic PyObject_GetAttr (a lookup through the class's MRO each time) is not. The
 * offsets are cached per (class, name) and hold while the class's version tag does (it changes
 * whenever the class or a base is modified); anything else — a property, an instance attribute,
 * a class with its own __getattribute__, an unset slot — is PyObject_GetAttr. */
typedef struct {
    PyTypeObject *type;         /* borrowed: a class whose version tag still matches is alive */
    PyObject *name;             /* interned */
    unsigned int version;
    Py_ssize_t offset;
} SlotCache;

static SlotCache slot_cache[256];

static PyObject *
slot_attr(PyObject *obj, PyObject *name)
{
    PyTypeObject *type = Py_TYPE(obj);
    SlotCache *entry = &slot_cache[(((uintptr_t)type >> 4) ^ ((uintptr_t)name >> 4)) & 255];
    if (entry->type == type && entry->name == name && entry->version != 0 && type->tp_version_tag == entry->version) {
        PyObject *v = SLOT(obj, entry->offset);
        if (v != NULL)
            return Py_NewRef(v);
    } else if (type->tp_getattro == PyObject_GenericGetAttr) {
        PyObject *descr = _PyType_Lookup(type, name);       /* borrowed; sets the version tag */
        if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type) && type->tp_version_tag != 0) {
            PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
            if (member->type == T_OBJECT_EX) {
                entry->type = type;
                entry->name = name;
                entry->version = type->tp_version_tag;
                entry->offset = member->offset;
                PyObject *v = SLOT(obj, member->offset);
                if (v != NULL)
                    return Py_NewRef(v);
            }
        }
    }
    return PyObject_GetAttr(obj, name);
}

static int
truth_of(PyObject *obj, PyObject *name)
{
    PyObject *v = slot_attr(obj, name);
    if (v == NULL)
        return -1;
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

#endif
