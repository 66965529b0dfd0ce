/*
 * reb_witness_identity.c: which code objects are the checkout's, part of reb_witness.c's one
 * compilation unit (included at its end, before reb_witness_gpu.c).  Not compiled on its own.
 *
 * A code object's co_filename is a name anyone can choose: compile(src, "<checkout>/train.py"),
 * marshal.loads of bytes an image carries, types.CodeType or code.replace(), a sourceless .pyc
 * compiled with dfile=<checkout>/train.py, an installed library that compiles its own code under
 * a checkout name.  So a code object is the checkout's only if it *is* what the checkout's file
 * compiles to: at each "exec" event (the interpreter running the main file, importlib running a
 * module, runpy, a spawn worker's __mp_main__), when the code names a file of the checkout (or
 * an installed file whose package-relative path the checkout holds: ``pip install .``), the
 * witness reads that file itself, compiles its bytes with the interpreter's own compiler (no
 * inherited flags, the interpreter's optimisation level: what SourceFileLoader and the main run
 * do) and compares the two code objects (CPython compares name, flags, arguments, bytecode,
 * constants (nested code objects recursively), names, line and exception tables).  Only an equal
 * one is admitted, with every code object nested in it (functions, classes, comprehensions),
 * each kept alive so its address stays its own.  Everything else is foreign, whatever it says.
 *
 * What the bytes are is the host's to check: the file at that path is the pinned commit's
 * before the stage and after it (integrity), and an edit made and undone within the stage is
 * the host's layer check's to see.  The witness compares code with the file as it is at load.
 */
extern PyObject *Py_CompileStringExFlags(const char *, const char *, int, void *, int)
    __attribute__((weak));
extern int PyObject_RichCompareBool(PyObject *, PyObject *, int) __attribute__((weak));
extern PyObject *PyObject_Type(PyObject *) __attribute__((weak));
extern void PyErr_Fetch(PyObject **, PyObject **, PyObject **) __attribute__((weak));
extern void PyErr_Restore(PyObject *, PyObject *, PyObject *) __attribute__((weak));
extern void Py_IncRef(PyObject *) __attribute__((weak));

#define PY_FILE_INPUT 257 /* Py_file_input */
#define PY_EQ 2           /* Py_EQ */
#define OWN_SLOTS (1 << 17)
#define SOURCE_MAX (64 << 20)

static PyObject *own_codes[OWN_SLOTS];
static int verifying; /* our own compile: its events are not the target's */
static unsigned own_files, foreign_claims;

static int identity_symbols(void) {
    return Py_CompileStringExFlags && PyObject_RichCompareBool && PyObject_Type &&
           PyErr_Fetch && PyErr_Restore && Py_IncRef && PyObject_GetAttrString && Py_DecRef;
}

/* The slot of ``code`` in the set: found (1), added when ``add`` (1), or absent / full (0). */
static int own_slot(PyObject *code, int add) {
    size_t h = ((uintptr_t)code >> 4) & (OWN_SLOTS - 1);
    for (int i = 0; i < 512; i++) {
        PyObject **slot = &own_codes[(h + i) & (OWN_SLOTS - 1)];
        if (*slot == code)
            return 1;
        if (!*slot) {
            if (!add)
                return 0;
            Py_IncRef(code);
            *slot = code;
            return 1;
        }
    }
    return 0; /* full: not the checkout's (fails closed) */
}

/* Whether ``code`` is a code object the checkout's files compile to. */
static int code_is_own(PyObject *code) {
    return code && own_slot(code, 0);
}

/* ``code`` and every code object among its constants, recursively. */
static void admit_tree(PyObject *code, PyObject *code_type, int depth) {
    PyObject *consts;
    ssize_t n;
    if (depth > 100 || !own_slot(code, 1))
        return;
    consts = PyObject_GetAttrString(code, "co_consts");
    n = consts ? PyTuple_Size(consts) : -1;
    for (ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GetItem(consts, i), *type;
        if (!item)
            continue;
        type = PyObject_Type(item);
        if (type == code_type)
            admit_tree(item, code_type, depth + 1);
        if (type)
            Py_DecRef(type);
    }
    if (consts)
        Py_DecRef(consts);
    PyErr_Clear();
}

/* The checkout's file that a code object named ``file`` stands for (into ``out``): the file
 * itself when it is in the checkout, or the checkout's copy of an installed package file. */
static int checkout_file(const char *file, char *out) {
    char real[PATH_MAX];
    const char *rel;
    if (!file || file[0] == '<' || !root[0] || !realpath(file, real))
        return 0;
    if (in_checkout(real)) {
        strcpy(out, real);
        return 1;
    }
    rel = strstr(real, "-packages/");
    if (!rel || !strchr(rel + 10, '/'))
        return 0; /* a top-level module file could be anyone's: only package files count */
    rel += 10;
    if (snprintf(out, PATH_MAX, "%s/%s", root, rel) < PATH_MAX && access(out, F_OK) == 0)
        return 1;
    return snprintf(out, PATH_MAX, "%s/src/%s", root, rel) < PATH_MAX && access(out, F_OK) == 0;
}

/* ``path``'s whole contents (at most SOURCE_MAX bytes), NUL-terminated, its length in
 * ``len``; NULL when it cannot be read whole.  The caller frees it. */
static char *read_whole(const char *path, ssize_t *len) {
    char *buf;
    ssize_t got = 0, n;
    off_t size;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size = lseek(fd, 0, SEEK_END);
    if (size < 0 || size > SOURCE_MAX || lseek(fd, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)size + 1))) {
        close(fd);
        return NULL;
    }
    while (got < size && (n = read(fd, buf + got, (size_t)(size - got))) > 0)
        got += n;
    close(fd);
    if (got != size) {
        free(buf);
        return NULL;
    }
    buf[got] = 0;
    *len = got;
    return buf;
}

/* Whether ``src``, the source a ``compile()`` was given (bytes or text), is exactly the bytes
 * of the checkout file ``file`` names: runpy or a driver compiling the file itself, whose code
 * the comparison at its ``exec`` then admits.  Other source under that name (a burst, an AST)
 * is not the file's. */
static int source_is_file(PyObject *src, const char *file) {
    char path[PATH_MAX], *buf;
    const char *data = NULL;
    ssize_t len = -1, got = 0;
    int same;
    if (!src || !checkout_file(file, path))
        return 0;
    if (PyBytes_Size && PyBytes_AsString && (len = PyBytes_Size(src)) >= 0)
        data = PyBytes_AsString(src);
    else if (PyUnicode_AsUTF8AndSize) {
        PyErr_Clear();
        data = PyUnicode_AsUTF8AndSize(src, &len);
    }
    if (!data || len < 0) {
        PyErr_Clear();
        return 0;
    }
    if (!(buf = read_whole(path, &got)))
        return 0;
    same = got == len && memcmp(buf, data, (size_t)len) == 0;
    free(buf);
    return same;
}

/* Whether ``code`` (named ``name``) equals what ``path``'s bytes compile to. */
static int compiles_to(const char *path, const char *name, PyObject *code) {
    PyObject *made, *t, *v, *tb;
    ssize_t got = 0;
    char *buf = read_whole(path, &got);
    int same = 0;
    if (!buf)
        return 0;
    if (memchr(buf, 0, (size_t)got)) {
        free(buf);
        return 0;
    }
    PyErr_Fetch(&t, &v, &tb);
    verifying = 1;
    made = Py_CompileStringExFlags(buf, name, PY_FILE_INPUT, NULL, -1);
    verifying = 0;
    free(buf);
    if (made) {
        same = PyObject_RichCompareBool(code, made, PY_EQ) == 1;
        Py_DecRef(made);
    }
    PyErr_Clear();
    PyErr_Restore(t, v, tb);
    return same;
}

/* At an "exec" event: admit the code (and its nested code) when it is what the checkout file it
 * names compiles to; a claim on the checkout that is not is counted (the host reads it). */
static void identity_exec(PyObject *args) {
    PyObject *code, *type;
    PyObject *file;
    const char *name;
    char path[PATH_MAX];
    if (!identity_symbols() || !args || PyTuple_Size(args) < 1)
        return;
    code = PyTuple_GetItem(args, 0);
    file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
    name = file ? PyUnicode_AsUTF8(file) : NULL;
    if (name && checkout_file(name, path)) {
        if (compiles_to(path, name, code)) {
            type = PyObject_Type(code);
            admit_tree(code, type, 0);
            if (type)
                Py_DecRef(type);
            own_files++;
        } else {
            foreign_claims++;
        }
    }
    if (file)
        Py_DecRef(file);
    PyErr_Clear();
}

/* Whether the innermost Python frame runs the checkout's own code (an _exit() from there is
 * the program's own way to finish); 0 without a frame or the GIL (native code). */
static int caller_is_own(void) {
    PyObject *frame, *code;
    int own;
    if (!PyGILState_Check || !PyGILState_Check() || !PyObject_GetAttrString || !Py_DecRef)
        return 0;
    frame = (PyObject *)PyEval_GetFrame();
    code = frame ? PyObject_GetAttrString(frame, "f_code") : NULL;
    own = code_is_own(code);
    if (code)
        Py_DecRef(code);
    PyErr_Clear();
    return own;
}
