/* Reading and writing the __slots__ of agrad's Python classes (Tensor, AutogradMeta, Node …) from C,
 * at their offsets: what CPython's specialised LOAD_ATTR_SLOT / STORE_ATTR_SLOT do, which a generic
 * PyObject_GetAttr (a lookup through the class's MRO each time) does not. Shared by
 * _native_engine.c and _native_recording.c. */
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

#endif
