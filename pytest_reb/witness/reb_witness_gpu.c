/*
 * reb_witness_gpu.c: the witness's GPU launch attribution (strict C3/C4), part of
 * reb_witness.c's one compilation unit (included at its end: it shares the record, the
 * state the host reads and the checkout root).  Not compiled on its own.
 */
/* ------------------------------------------------------------------ GPU launch attribution
 *
 * Strict C3/C4 ask that GPU work was launched *by the entrypoint's code*, not by code a
 * startup hook (.pth, sitecustomize), an import hook or an exec'd string injected.  Every
 * thread keeps a stack, maintained by a C profile function from the main program's start:
 * for each Python frame, the class of the innermost frame that is not library code
 *   CHECKOUT  a file under REB_WITNESS_ROOT (not a site-/dist-packages folder inside it)
 *   FOREIGN   code with no file ("<string>", "<stdin>"), a file that does not exist, a module
 *             imported before the main program started (startup code) other than the
 *             standard library's, or a module first executed while foreign code was running
 *   IMPORT    the import machinery (importlib._bootstrap): work done during an import
 * and library frames inherit their caller's.  The CUDA runtime's and driver's launch entry
 * points (interposed here: libraries call them through the PLT) count launches by the
 * launching thread's class; a thread starts with its creator's class (pthread_create).
 * Lines: "launch checkout" at the first launch from the checkout's code path, "launch
 * foreign <file>" at the first other one, "launches <checkout> <other>" at the end.
 */
typedef struct _frame PyFrameObject;
typedef int (*Py_tracefunc)(PyObject *, PyFrameObject *, int, PyObject *);
extern void PyEval_SetProfile(Py_tracefunc, PyObject *) __attribute__((weak));
extern void PyEval_SetProfileAllThreads(Py_tracefunc, PyObject *) __attribute__((weak));
extern PyObject *PyFrame_GetCode(PyFrameObject *) __attribute__((weak));
extern PyObject *PyImport_GetModuleDict(void) __attribute__((weak));
extern int PyDict_Next(PyObject *, ssize_t *, PyObject **, PyObject **) __attribute__((weak));
extern void Py_IncRef(PyObject *) __attribute__((weak));
extern void PyErr_Fetch(PyObject **, PyObject **, PyObject **) __attribute__((weak));
extern void PyErr_Restore(PyObject *, PyObject *, PyObject *) __attribute__((weak));

enum { C_LIB = 0, C_CHECKOUT = 1, C_FOREIGN = 2, C_IMPORT = 3 };
#define STACK_MAX 1024
#define CACHE_SIZE 65536 /* code objects classified, kept alive so their address is theirs */
#define NAMES_MAX 4096
#define FOREIGN_MAX 256

struct where {
    unsigned char cls;    /* innermost non-library class: what a launch here counts as */
    unsigned char origin; /* innermost class other than library and import machinery */
    const char *file;     /* the file that made ``cls`` so (a cache entry's copy) */
    const char *by;       /* and ``origin`` */
};
struct cached {
    PyObject *code;
    unsigned char cls;
    const char *file;
};

static __thread struct where stack[STACK_MAX];
static __thread int depth;             /* frames seen entered and not left */
static __thread struct where base = {C_FOREIGN, C_FOREIGN, "startup code", "startup code"};
static struct cached cache[CACHE_SIZE];
struct foreign {
    char *file;
    char *by; /* what made it foreign: startup, or the foreign code that first ran it */
};
static struct foreign foreign_files[FOREIGN_MAX];
static int n_foreign;
static char stdlib_dir[PATH_MAX];
/* -c: the class of the first frame, the command: the host's (checked by the host against
 * its own text), or multiprocessing's bootstrap, library code that runs its parent's work */
static int main_command = -1;
static int profile_on;
static uint64_t launches[2];           /* checkout, other */
static int said_checkout, said_foreign, said_total;
static char first_other[512]; /* where the first launch not from the entrypoint came from */

static const struct where *top(void) {
    if (depth <= 0)
        return &base;
    return &stack[(depth > STACK_MAX ? STACK_MAX : depth) - 1];
}

static int under(const char *path, const char *dir) {
    size_t n = strlen(dir);
    return n && !strncmp(path, dir, n) && path[n] == '/';
}

/* The entry of a file of foreign code, or NULL. */
static const struct foreign *foreign_of(const char *file) {
    for (int i = 0; i < n_foreign; i++)
        if (!strcmp(foreign_files[i].file, file))
            return &foreign_files[i];
    return NULL;
}

static void add_foreign_file(const char *file, const char *by) {
    if (n_foreign < FOREIGN_MAX && !foreign_of(file)) {
        char *copy = strdup(file), *why = strdup(by);
        if (copy && why) {
            foreign_files[n_foreign].file = copy;
            foreign_files[n_foreign++].by = why;
        } else {
            free(copy);
            free(why);
        }
    }
}

static int is_stdlib(const char *file) {
    return stdlib_dir[0] && under(file, stdlib_dir) && !strstr(file, "-packages/");
}

static int classify_file(const char *file) {
    if (file[0] == '<') {
        if (!strncmp(file, "<frozen importlib._bootstrap", 28))
            return C_IMPORT;
        /* frozen standard modules, and the framework's generated code (torch.fx) */
        if (!strncmp(file, "<frozen ", 8) || !strncmp(file, "<eval_with_key>", 15))
            return C_LIB;
        return C_FOREIGN;
    }
    if (strstr(file, "importlib/_bootstrap") && is_stdlib(file))
        return C_IMPORT;
    if (foreign_of(file))
        return C_FOREIGN;
    /* the checkout's code is known by identity (code_is_own, before this): a code object that
     * only names a checkout file is someone else's, dressed up */
    if (root[0] && under(file, root) && !strstr(file + strlen(root), "-packages/"))
        return C_FOREIGN;
    if (access(file, F_OK) != 0)
        return C_FOREIGN; /* compiled from a string under a name that is no file */
    return C_LIB;
}

/* The code object's file, as a new string (the caller frees it), or NULL. */
static char *code_file(PyObject *code) {
    PyObject *file, *t, *v, *tb;
    const char *name;
    char *copy = NULL;
    PyErr_Fetch(&t, &v, &tb);
    file = PyObject_GetAttrString(code, "co_filename");
    name = file ? PyUnicode_AsUTF8(file) : NULL;
    if (name)
        copy = strdup(name);
    if (file)
        Py_DecRef(file);
    PyErr_Clear();
    PyErr_Restore(t, v, tb);
    return copy;
}

/* A lasting copy of ``text`` (file names are few; the frames that name them are many). */
static const char *intern(const char *text) {
    static char *names[NAMES_MAX];
    static int n_names;
    for (int i = 0; i < n_names; i++)
        if (!strcmp(names[i], text))
            return names[i];
    if (n_names < NAMES_MAX) {
        char *copy = strdup(text);
        if (copy)
            return names[n_names++] = copy;
    }
    return "(a file among too many)";
}

/* Bytecode that types.CodeType or code.replace() made under a checkout file's name while the
 * checkout's own code path ran (a framework rewriting the checkout's functions: torch.compile's
 * dynamo makes its frames so): such code runs as library code on its caller's behalf.  Kept as
 * the bytes themselves, compared exactly: no other code is taken for it. */
#define MADE_MAX 8192
static PyObject *made[MADE_MAX];
static int n_made;

static void made_on_path(PyObject *bytecode) {
    if (bytecode && n_made < MADE_MAX && PyBytes_AsString) {
        Py_IncRef(bytecode);
        made[n_made++] = bytecode;
    }
}

/* Whether ``code``'s bytecode is one made on the checkout's path. */
static int made_by_checkout(PyObject *code) {
    PyObject *bytecode, *t, *v, *tb;
    int found = 0;
    if (!n_made || !PyObject_RichCompareBool)
        return 0;
    PyErr_Fetch(&t, &v, &tb);
    bytecode = PyObject_GetAttrString(code, "co_code");
    for (int i = 0; bytecode && i < n_made && !found; i++)
        found = PyObject_RichCompareBool(bytecode, made[i], PY_EQ) == 1;
    if (bytecode)
        Py_DecRef(bytecode);
    PyErr_Clear();
    PyErr_Restore(t, v, tb);
    return found;
}

/* The class of ``code`` (named ``file``), and the name a report gives it. */
static int classify_named(PyObject *code, const char *file, const char **name) {
    const struct foreign *why = file ? foreign_of(file) : NULL;
    char both[PATH_MAX * 2 + 16];
    int cls;
    if (!file) {
        *name = "(code without a file name)";
        return C_FOREIGN;
    }
    if (code_is_own(code)) {
        *name = intern(file);
        return C_CHECKOUT;
    }
    cls = classify_file(file);
    if (cls == C_FOREIGN && !why && file[0] == '/' && root[0] && under(file, root) &&
        made_by_checkout(code)) {
        *name = intern(file);
        return C_LIB;
    }
    if (why) { /* say who brought it in: the hook, not the module it used */
        snprintf(both, sizeof both, "%s (loaded by %s)", file, why->by);
        *name = intern(both);
    } else if (cls == C_FOREIGN && file[0] == '/' && root[0] && under(file, root)) {
        snprintf(both, sizeof both, "%s (code that names the checkout's file but is not what "
                 "it compiles to)", file);
        *name = intern(both);
    } else {
        *name = intern(file);
    }
    return cls;
}

static struct cached *lookup(PyObject *code) {
    size_t h = ((uintptr_t)code >> 4) & (CACHE_SIZE - 1);
    for (int i = 0; i < 128; i++) {
        struct cached *c = &cache[(h + i) & (CACHE_SIZE - 1)];
        if (c->code == code)
            return c;
        if (!c->code) {
            char *file = code_file(code);
            c->cls = classify_named(code, file, &c->file);
            free(file);
            if (main_command >= 0) {
                c->cls = (unsigned char)main_command;
                main_command = -1;
            }
            Py_IncRef(code);
            c->code = code;
            return c;
        }
    }
    return NULL; /* full: classified on every call */
}

static struct where enter(PyObject *code) {
    const struct where *up = top();
    struct where w = *up;
    struct cached *c = lookup(code);
    struct cached tmp;
    if (!c) {
        char *file = code_file(code);
        tmp.cls = classify_named(code, file, &tmp.file);
        free(file);
        c = &tmp;
    }
    if (c->cls == C_IMPORT) {
        w.cls = C_IMPORT;
        w.file = "the import machinery";
    } else if (c->cls != C_LIB) {
        w.cls = w.origin = c->cls;
        w.file = w.by = c->file;
    }
    return w;
}

static void finish_call(PyObject *code, int at);
static void finish_return(int at, int raised);
static void finish_c_event(void);

static int profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    (void)obj;
    if (what == 0) { /* PyTrace_CALL */
        /* PyFrame_GetCode is 3.9+; on 3.8 the attribute gives the same new reference */
        PyObject *code = PyFrame_GetCode ? PyFrame_GetCode(frame)
                                         : PyObject_GetAttrString((PyObject *)frame, "f_code");
        struct where w = code ? enter(code) : *top();
        if (depth < STACK_MAX)
            stack[depth] = w;
        if (code) {
            finish_call(code, depth); /* reb_witness_finish.c: the main program's frame */
            Py_DecRef(code);
        }
        depth++;
    } else if (what == 3 && depth > 0) { /* PyTrace_RETURN: arg NULL when an exception leaves */
        finish_return(depth - 1, arg == NULL);
        depth--;
    } else if (what >= 4 && what <= 6) { /* PyTrace_C_CALL, C_EXCEPTION, C_RETURN */
        finish_c_event();
    }
    return 0;
}

static int profile_symbols(void) {
    return PyEval_SetProfile && PyImport_GetModuleDict && PyDict_Next &&
           Py_IncRef && Py_DecRef && PyErr_Fetch && PyErr_Restore && PyObject_GetAttrString;
}

/* Modules imported before the main program: the standard library's are library code, all
 * others are startup code (a .pth's or sitecustomize's imports). */
static void startup_modules(void) {
    PyObject *modules = PyImport_GetModuleDict(), *key, *mod, *file, *t, *v, *tb;
    ssize_t pos = 0;
    const char *name;
    char real[PATH_MAX];
    if (!modules)
        return;
    PyErr_Fetch(&t, &v, &tb);
    mod = NULL;
    while (PyDict_Next(modules, &pos, &key, &mod)) {
        if (!strcmp(PyUnicode_AsUTF8(key) ? PyUnicode_AsUTF8(key) : "", "os")) {
            file = PyObject_GetAttrString(mod, "__file__");
            name = file ? PyUnicode_AsUTF8(file) : NULL;
            if (name && strlen(name) < sizeof real) {
                char *slash;
                strcpy(real, name);
                slash = strrchr(real, '/');
                if (slash) {
                    *slash = 0;
                    snprintf(stdlib_dir, sizeof stdlib_dir, "%s", real);
                }
            }
            if (file)
                Py_DecRef(file);
        }
    }
    pos = 0;
    while (PyDict_Next(modules, &pos, &key, &mod)) {
        file = PyObject_GetAttrString(mod, "__file__");
        name = file ? PyUnicode_AsUTF8(file) : NULL;
        /* our shims are mounted in the checkout; the checkout's own files are its code */
        if (name && name[0] == '/' && !is_stdlib(name) && !(root[0] && under(name, root)))
            add_foreign_file(name, "startup code");
        if (file)
            Py_DecRef(file);
    }
    PyErr_Clear();
    PyErr_Restore(t, v, tb);
}

/* At the main program's start (the interpreter's own event, main thread). */
static void attribution_start(const char *how) {
    if (profile_on || !profile_symbols())
        return;
    startup_modules();
    if (S.main == REB_MAIN_BOOT) { /* a worker: its work is the target it was given */
        main_command = C_LIB;
        base.cls = base.origin = C_LIB;
        base.file = base.by = "multiprocessing's bootstrap";
    } else if (!strcmp(how, "run_command")) {
        main_command = C_CHECKOUT;
    }
    profile_on = 1;
    if (PyEval_SetProfileAllThreads)
        PyEval_SetProfileAllThreads(profile, NULL);
    else
        PyEval_SetProfile(profile, NULL);
}

/* An audit event the attribution reads: a module executed while foreign code ran becomes
 * foreign itself; code made under the checkout's name by foreign code is a taint, unless it is
 * the file's own bytes compiled (runpy.run_path from a driver outside the checkout). */
static void attribution_event(const char *event, PyObject *args) {
    const struct where *w;
    if (!profile_on)
        return;
    w = top();
    if (!strcmp(event, "exec")) {
        if (w->origin == C_FOREIGN && args && PyTuple_Size(args) >= 1) {
            char *file = code_file(PyTuple_GetItem(args, 0));
            if (file && file[0] == '/' && !is_stdlib(file) &&
                !(root[0] && under(file, root)))
                add_foreign_file(file, w->by ? w->by : "foreign code");
            free(file);
        }
        return;
    }
    if (!strcmp(event, "compile") || !strcmp(event, "code.__new__")) {
        PyObject *name;
        const char *file;
        /* depth 0: the interpreter compiling the main file itself, no Python frame */
        if (depth <= 0 || !root[0] || !args || PyTuple_Size(args) < 2)
            return;
        name = PyTuple_GetItem(args, 1); /* (source, filename) and (code, filename, ...) */
        file = name ? PyUnicode_AsUTF8(name) : NULL;
        if (!file)
            PyErr_Clear();
        else if (under(file, root) && w->cls == C_FOREIGN &&
                 !(!strcmp(event, "compile") && source_is_file(PyTuple_GetItem(args, 0), file)))
            taint("code made under the checkout's name by foreign code", file);
        else if (under(file, root) && w->cls == C_CHECKOUT && !strcmp(event, "code.__new__"))
            made_on_path(PyTuple_GetItem(args, 0));
        return;
    }
}

static void counted(void) {
    const struct where *w = top();
    int mine = w->cls == C_CHECKOUT;
    __atomic_fetch_add(&launches[mine ? 0 : 1], 1, __ATOMIC_RELAXED);
    if (mine && !__atomic_exchange_n(&said_checkout, 1, __ATOMIC_RELAXED)) {
        record("launch", "checkout");
        /* the host reads the first one at once: a worker that is killed (a pool terminated, a
         * server the harness ends) never reaches an end of its own */
        if ((stop_at_finish || stop_at_reach) && S.started && S.pid == (int32_t)getpid())
            stop_for_host(REB_STOP_LAUNCH);
    }
    else if (!mine && !__atomic_exchange_n(&said_foreign, 1, __ATOMIC_RELAXED)) {
        char text[PATH_MAX + 32];
        one_line(text, sizeof text, "foreign", w->file ? w->file : "?");
        keep(first_other, sizeof first_other, w->file ? w->file : "?");
        record("launch", text);
    }
}

/* A compiled program of the checkout (a benchmark binary it built) is the checkout's code;
 * any other program's launches (a launcher, a shell) are nobody's. */
static void program_class(void) {
    char exe[PATH_MAX];
    if (root[0] && realpath("/proc/self/exe", exe) && under(exe, root)) {
        base.cls = base.origin = C_CHECKOUT;
        base.file = base.by = "the checkout's own program";
    }
}

/* A forked child (a DataLoader worker) starts its own count: the parent's launches are not its. */
static void launches_forked(void) {
    launches[0] = launches[1] = 0;
    first_other[0] = 0;
    said_checkout = said_foreign = said_total = 0;
}

/* The counts into the state the host reads at a stop (the page is writable here). */
static void launches_into_state(void) {
    S.launches_own = launches[0];
    S.launches_other = launches[1];
    keep(S.launch_other, sizeof S.launch_other, first_other);
}

static void launches_end(void) {
    char text[64];
    if ((launches[0] || launches[1]) && !__atomic_exchange_n(&said_total, 1, __ATOMIC_RELAXED)) {
        snprintf(text, sizeof text, "%llu %llu", (unsigned long long)launches[0],
                 (unsigned long long)launches[1]);
        record("launches", text);
    }
}

/* The real entry point ``name``: its default definition in the first loaded object other
 * than this library, found by reading the objects' dynamic symbol tables.  Not dlsym: that
 * moved into libc with a new symbol version (glibc 2.34), and the library must load under
 * any glibc; and a runtime loaded without RTLD_GLOBAL is found as well. */
struct find { const char *name; uint32_t hash; void *found; uintptr_t self; };

static uint32_t gnu_hash(const char *name) {
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    return h;
}

static uint32_t sysv_hash(const char *name) {
    uint32_t h = 0, g;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        h = (h << 4) + *c;
        g = h & 0xf0000000u;
        if (g)
            h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

static int sym_matches(const ElfW(Sym) *sym, const char *strtab, const uint16_t *versym,
                       uint32_t index, const char *name) {
    return sym->st_value && sym->st_shndx != SHN_UNDEF &&
           (ELF64_ST_TYPE(sym->st_info) == STT_FUNC ||
            ELF64_ST_TYPE(sym->st_info) == STT_GNU_IFUNC) &&
           !(versym && (versym[index] & 0x8000)) && !strcmp(strtab + sym->st_name, name);
}

static int find_in(struct dl_phdr_info *info, size_t size, void *data) {
    struct find *f = data;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    const uint16_t *versym = NULL;
    (void)size;
    if (info->dlpi_addr == f->self)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        /* the loader has relocated these to addresses, except in the vdso */
        uintptr_t v = dyn->d_un.d_ptr;
        if (v < info->dlpi_addr)
            v += info->dlpi_addr;
        if (dyn->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)v;
        else if (dyn->d_tag == DT_STRTAB)
            strtab = (const char *)v;
        else if (dyn->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)v;
        else if (dyn->d_tag == DT_HASH)
            sysv = (const uint32_t *)v;
        else if (dyn->d_tag == DT_VERSYM)
            versym = (const uint16_t *)v;
    }
    if (!symtab || !strtab)
        return 0;
    if (gnu) {
        uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
        const ElfW(Addr) *bloom = (const ElfW(Addr) *)&gnu[4];
        const uint32_t *buckets = (const uint32_t *)&bloom[bloom_size];
        const uint32_t *chain = &buckets[nbuckets];
        uint32_t i = nbuckets ? buckets[f->hash % nbuckets] : 0;
        if (i < symoffset)
            return 0;
        for (;; i++) {
            uint32_t h = chain[i - symoffset];
            if ((h | 1) == (f->hash | 1) &&
                sym_matches(&symtab[i], strtab, versym, i, f->name)) {
                f->found = (void *)(info->dlpi_addr + symtab[i].st_value);
                return 1;
            }
            if (h & 1)
                return 0;
        }
    }
    if (sysv) {
        uint32_t nbucket = sysv[0];
        const uint32_t *bucket = &sysv[2], *chain = &sysv[2 + nbucket];
        for (uint32_t i = bucket[sysv_hash(f->name) % nbucket]; i; i = chain[i])
            if (sym_matches(&symtab[i], strtab, versym, i, f->name)) {
                f->found = (void *)(info->dlpi_addr + symtab[i].st_value);
                return 1;
            }
    }
    return 0;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *data) {
    uintptr_t here = (uintptr_t)find_self;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && here >= start && here < start + ph->p_memsz) {
            *(uintptr_t *)data = info->dlpi_addr;
            return 1;
        }
    }
    return 0;
}

static void *real(const char *name, void **slot) {
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    struct find f = {name, gnu_hash(name), NULL, 0};
    if (fn)
        return fn;
    dl_iterate_phdr(find_self, &f.self);
    dl_iterate_phdr(find_in, &f);
    fn = f.found;
    if (fn)
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    return fn;
}

typedef struct { unsigned int x, y, z; } dim3;
#define NOT_LOADED 3 /* cudaErrorInitializationError / CUDA_ERROR_NOT_INITIALIZED */

#define LAUNCH6(name)                                                                       \
    int name(const void *f, dim3 g, dim3 b, void **a, size_t s, void *st) {                \
        static void *slot;                                                                  \
        int (*fn)(const void *, dim3, dim3, void **, size_t, void *) =                     \
            (int (*)(const void *, dim3, dim3, void **, size_t, void *))real(#name, &slot); \
        if (!fn)                                                                            \
            return NOT_LOADED;                                                              \
        counted();                                                                          \
        return fn(f, g, b, a, s, st);                                                       \
    }
LAUNCH6(cudaLaunchKernel)
LAUNCH6(cudaLaunchKernel_ptsz)
/* what nvcc's kernel stubs call since CUDA 13 (torch's own kernels): forwarded with the same
 * arguments, whatever of them the runtime reads */
LAUNCH6(__cudaLaunchKernel)
LAUNCH6(__cudaLaunchKernel_ptsz)
LAUNCH6(cudaLaunchCooperativeKernel)

#define LAUNCH3(name)                                                                       \
    int name(const void *c, const void *f, void **a) {                                      \
        static void *slot;                                                                  \
        int (*fn)(const void *, const void *, void **) =                                    \
            (int (*)(const void *, const void *, void **))real(#name, &slot);               \
        if (!fn)                                                                            \
            return NOT_LOADED;                                                              \
        counted();                                                                          \
        return fn(c, f, a);                                                                 \
    }
LAUNCH3(cudaLaunchKernelExC)
LAUNCH3(cudaLaunchKernelExC_ptsz)

int cudaGraphLaunch(void *graph, void *stream) {
    static void *slot;
    int (*fn)(void *, void *) = (int (*)(void *, void *))real("cudaGraphLaunch", &slot);
    if (!fn)
        return NOT_LOADED;
    counted();
    return fn(graph, stream);
}

#define DRIVER11(name)                                                                      \
    int name(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,      \
             unsigned bz, unsigned sh, void *st, void **p, void **e) {                      \
        static void *slot;                                                                  \
        int (*fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,       \
                  unsigned, void *, void **, void **) =                                     \
            (int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,    \
                     unsigned, void *, void **, void **))real(#name, &slot);                \
        if (!fn)                                                                            \
            return NOT_LOADED;                                                              \
        counted();                                                                          \
        return fn(f, gx, gy, gz, bx, by, bz, sh, st, p, e);                                 \
    }
DRIVER11(cuLaunchKernel)
DRIVER11(cuLaunchKernel_ptsz)

#define DRIVER4(name)                                                                       \
    int name(const void *c, void *f, void **p, void **e) {                                  \
        static void *slot;                                                                  \
        int (*fn)(const void *, void *, void **, void **) =                                 \
            (int (*)(const void *, void *, void **, void **))real(#name, &slot);            \
        if (!fn)                                                                            \
            return NOT_LOADED;                                                              \
        counted();                                                                          \
        return fn(c, f, p, e);                                                              \
    }
DRIVER4(cuLaunchKernelEx)
DRIVER4(cuLaunchKernelEx_ptsz)

/* Forward declarations of the run-time lookups below. */
static int get_proc_address(const char *symbol, void **pfn, int version, uint64_t flags);
static int get_proc_address_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                               void *status);
typedef int (*proc4)(const char *, void **, int, uint64_t);
typedef int (*proc5)(const char *, void **, int, uint64_t, void *);
static proc4 real_proc4;
static proc5 real_proc5;

/* Callers linked against the driver itself look these up through their PLT. */
int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags) {
    if (!real_proc4)
        real_proc4 = (proc4)real("cuGetProcAddress", (void **)&real_proc4);
    return real_proc4 ? get_proc_address(symbol, pfn, version, flags) : NOT_LOADED;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                        void *status) {
    if (!real_proc5)
        real_proc5 = (proc5)real("cuGetProcAddress_v2", (void **)&real_proc5);
    return real_proc5 ? get_proc_address_v2(symbol, pfn, version, flags, status) : NOT_LOADED;
}

/* A new thread starts with its creator's class: a thread the checkout's code started runs
 * the checkout's work, one a startup hook started runs the hook's. */
struct start { void *(*fn)(void *); void *arg; struct where from; };

static void *started_thread(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    base = s.from;
    return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    static void *slot;
    int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))real(
            "pthread_create", &slot);
    struct start *s;
    int rc;
    if (!create)
        return 11; /* EAGAIN */
    s = profile_on ? malloc(sizeof *s) : NULL;
    if (!s)
        return create(t, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->from = *top();
    rc = create(t, attr, started_thread, s);
    if (rc != 0)
        free(s);
    return rc;
}

/* Launch entry points a library finds at run time rather than through its PLT: by dlsym on a
 * handle of the driver (Triton's launcher, XLA) or through cuGetProcAddress (the CUDA runtime,
 * cuBLAS).  Each real function handed out is wrapped by one of a few forwarders that count the
 * launch and call it with the caller's arguments: integer and pointer arguments only, in
 * registers and 8-byte stack slots, so one shape carries every launch signature (extra slots
 * are read from the caller's frame and ignored by the callee). */
#define WRAPPERS 12
typedef uintptr_t (*word_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                             uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
static word_fn wrapped[WRAPPERS];

#define FORWARDER(i)                                                                        \
    static uintptr_t forward_##i(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d,        \
                                 uintptr_t e, uintptr_t f, uintptr_t g, uintptr_t h,        \
                                 uintptr_t j, uintptr_t k, uintptr_t l) {                   \
        counted();                                                                          \
        return wrapped[i](a, b, c, d, e, f, g, h, j, k, l);                                 \
    }
FORWARDER(0) FORWARDER(1) FORWARDER(2) FORWARDER(3) FORWARDER(4) FORWARDER(5)
FORWARDER(6) FORWARDER(7) FORWARDER(8) FORWARDER(9) FORWARDER(10) FORWARDER(11)
static const word_fn forwarders[WRAPPERS] = {
    forward_0, forward_1, forward_2, forward_3, forward_4, forward_5,
    forward_6, forward_7, forward_8, forward_9, forward_10, forward_11};

static int watched(const char *name) {
    static const char *names[] = {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                                  "cuLaunchKernelEx_ptsz", "cuLaunchCooperativeKernel",
                                  "cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch",
                                  "cuGraphLaunch_ptsz", NULL};
    for (int i = 0; name && names[i]; i++)
        if (!strcmp(name, names[i]))
            return 1;
    return 0;
}

/* A counting forwarder for ``fn`` (the same one for the same function), or ``fn`` itself
 * when all are taken. */
static int in_self(struct dl_phdr_info *info, size_t size, void *data) {
    uintptr_t fn = *(uintptr_t *)data, here = (uintptr_t)in_self;
    int mine = 0, has = 0;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (ph->p_type != PT_LOAD)
            continue;
        mine |= here >= start && here < end;
        has |= fn >= start && fn < end;
    }
    if (mine)
        *(uintptr_t *)data = has; /* 1: the function is one of ours, already counting */
    return mine;
}

static void *wrap(void *fn) {
    uintptr_t probe = (uintptr_t)fn;
    if (fn && dl_iterate_phdr(in_self, &probe) && probe == 1)
        return fn;
    for (int i = 0; fn && i < WRAPPERS; i++) {
        word_fn seen = __atomic_load_n(&wrapped[i], __ATOMIC_ACQUIRE);
        if (seen == (word_fn)fn)
            return (void *)forwarders[i];
        if (!seen) {
            word_fn none = NULL;
            if (__atomic_compare_exchange_n(&wrapped[i], &none, (word_fn)fn, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE) ||
                none == (word_fn)fn)
                return (void *)forwarders[i];
        }
    }
    return fn;
}

static int get_proc_address(const char *symbol, void **pfn, int version, uint64_t flags) {
    int rc = real_proc4(symbol, pfn, version, flags);
    if (rc == 0 && pfn && *pfn && watched(symbol))
        *pfn = wrap(*pfn);
    return rc;
}

static int get_proc_address_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                               void *status) {
    int rc = real_proc5(symbol, pfn, version, flags, status);
    if (rc == 0 && pfn && *pfn && watched(symbol))
        *pfn = wrap(*pfn);
    return rc;
}

#if defined(__x86_64__)
typedef void *(*dlsym_fn)(void *, const char *);
__attribute__((used)) static dlsym_fn real_dlsym;

/* dlsym on a library's handle is the same from any caller, so it is answered here; the
 * caller-relative forms (RTLD_DEFAULT 0, RTLD_NEXT -1) jump to the real dlsym with the
 * caller's return address untouched, so they find what they found before. */
__attribute__((used, visibility("hidden"))) void *reb_dlsym_handle(void *handle,
                                                                   const char *name) {
    void *found;
    if (!real_dlsym)
        real_dlsym = (dlsym_fn)real("dlsym", (void **)&real_dlsym);
    found = real_dlsym ? real_dlsym(handle, name) : NULL;
    if (!found || !name || name[0] != 'c' || name[1] != 'u')
        return found;
    if (!strcmp(name, "cuGetProcAddress")) {
        real_proc4 = (proc4)found;
        return (void *)get_proc_address;
    }
    if (!strcmp(name, "cuGetProcAddress_v2")) {
        real_proc5 = (proc5)found;
        return (void *)get_proc_address_v2;
    }
    return watched(name) ? wrap(found) : found;
}

__attribute__((used, visibility("hidden"))) void *reb_dlsym_resolve(void) {
    if (!real_dlsym)
        real_dlsym = (dlsym_fn)real("dlsym", (void **)&real_dlsym);
    return (void *)real_dlsym;
}

static void lookups_ready(void) {
    reb_dlsym_resolve();
}

__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    cmpq $0, %rdi\n"
        "    je 1f\n"
        "    cmpq $-1, %rdi\n"
        "    je 1f\n"
        "    jmp reb_dlsym_handle\n"
        "1:  movq real_dlsym(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "    jmp *%rax\n"
        "2:  pushq %rdi\n" /* first use before the constructor found it: find it, then go */
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call reb_dlsym_resolve\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 3f\n"
        "    jmp *%rax\n"
        "3:  ret\n"
        ".size dlsym, .-dlsym\n");
#else
static void lookups_ready(void) {}
#endif
