// The interpreter's functions, looked up once; the text of Python strings.
#include "python.h"

#include <dlfcn.h>

#include <cstring>
#include <string>

namespace graphscope::capture::origin_internal {

Python::Python() {
  find(IsInitialized, "Py_IsInitialized");
  if (!IsInitialized) return;
  find(IsFinalizing, "Py_IsFinalizing");
  if (!IsFinalizing) find(IsFinalizing, "_Py_IsFinalizing");
  find(ThisThreadState, "PyGILState_GetThisThreadState");
  find(CurrentThreadState, "PyThreadState_GetUnchecked");  // 3.13
  if (!CurrentThreadState) find(CurrentThreadState, "_PyThreadState_UncheckedGet");
  find(SaveThread, "PyEval_SaveThread");
  find(RestoreThread, "PyEval_RestoreThread");
  find(ThreadFrame, "PyThreadState_GetFrame");
  find(Ensure, "PyGILState_Ensure");
  find(Release, "PyGILState_Release");
  find(GetFrame, "PyEval_GetFrame");
  find(FrameBack, "PyFrame_GetBack");
  find(FrameCode, "PyFrame_GetCode");
  find(FrameLine, "PyFrame_GetLineNumber");
  find(FrameLasti, "PyFrame_GetLasti");
  find(FrameVar, "PyFrame_GetVar");
  find(FrameLocals, "PyFrame_GetLocals");
  find(GetAttr, "PyObject_GetAttrString");
  find(GetAttrObj, "PyObject_GetAttr");
  find(DictGet, "PyDict_GetItem");
  find(Intern, "PyUnicode_InternFromString");
  find(IsInstance, "PyObject_IsInstance");
  find(TypeOf, "PyObject_Type");
  find(Utf8, "PyUnicode_AsUTF8");
  find(Str, "PyUnicode_FromString");
  find(DecRef, "Py_DecRef");
  find(IncRef, "Py_IncRef");
  find(ErrFetch, "PyErr_Fetch");
  find(ErrRestore, "PyErr_Restore");
  find(ErrClear, "PyErr_Clear");
  find(DictNext, "PyDict_Next");
  find(MappingItem, "PyMapping_GetItemString");
  find(GetModule, "PyImport_GetModule");
  find(WeakRef, "PyWeakref_NewRef");
  find(WeakGetRef, "PyWeakref_GetRef");
  if (!WeakGetRef) find(WeakGetObject, "PyWeakref_GetObject");
  find(GcDisable, "PyGC_Disable");
  find(GcEnable, "PyGC_Enable");
  find(Addr2Line, "PyCode_Addr2Line");
  find(IsSubtype, "PyType_IsSubtype");
  find(TupleSize, "PyTuple_Size");
  find(TupleItem, "PyTuple_GetItem");
  dict_type = dlsym(RTLD_DEFAULT, "PyDict_Type");
  code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
  cell_type = dlsym(RTLD_DEFAULT, "PyCell_Type");
  const auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
  // Py_TRACE_REFS builds put two more pointers in every object's header.
  const bool plain_header = !dlsym(RTLD_DEFAULT, "_Py_ForgetReference");
  if (version && plain_header && Addr2Line && IsSubtype && TupleSize && TupleItem && code_type && cell_type) {
    const unsigned long minor = (*version >> 16) & 0xff;  // PY_VERSION_HEX: 0x030C....
    if ((*version >> 24) == 3 && minor == 11) frames = FrameLayout{32, 48, 56, 69, 72, -1, 56, 8};
    if ((*version >> 24) == 3 && minor == 12) frames = FrameLayout{0, 8, 56, 70, 72, 3, 56, 0};
    // PyTypeObject's public layout: the variable header, tp_name, tp_basicsize.
    code_header = size_t(*reinterpret_cast<const ssize_t*>(static_cast<const char*>(code_type) + 32));
    if (code_header < 64 || code_header > 4096) frames.reset();
  }
  usable = IsFinalizing && ThisThreadState && Ensure && Release && GetFrame && FrameBack && FrameCode && FrameLine &&
           (FrameVar || (FrameLocals && MappingItem)) && GetAttr && GetAttrObj && DictGet && Intern && IsInstance && TypeOf && Utf8 && Str &&
           DecRef && IncRef && ErrFetch && ErrRestore && ErrClear && DictNext && GetModule && dict_type;
}

const Python& python() {
  static const Python p;
  return p;
}

std::string utf8(const Python& py, PyObj* s) {
  if (!s) return "";
  const char* c = py.Utf8(s);
  if (!c) {
    py.ErrClear();
    return "";
  }
  return std::string(c, strnlen(c, 4096));
}

std::string attr_text(const Python& py, PyObj* o, const char* name) {
  PyObj* a = py.GetAttr(o, name);
  if (!a) {
    py.ErrClear();
    return "";
  }
  std::string s = utf8(py, a);
  py.DecRef(a);
  return s;
}

}  // namespace graphscope::capture::origin_internal
