/*
 * reb_witness: the host's witness inside every process of a run (LD_PRELOAD).
 *
 * Why a preloaded library and not Python code: a .pth file, sitecustomize,
 * usercustomize or a PYTHONPATH module all run before any Python code we could
 * inject, so they could end the process first or imitate our code.  The dynamic
 * loader runs this library's constructor before the interpreter's main(), and
 * PEP 578 lets an embedder add a C audit hook before Py_Initialize: the
 * runtime keeps it across initialisation, Python code cannot remove it, and it
 * sees every audited event from the first one.
 *
 * What it records (one line per event, appended to the file named by
 * REB_WITNESS, with a plain write(2), so nothing of it is a Python event):
 *   py      a Python interpreter loaded us (pid, ppid)
 *   prog    any other program loaded us (its command line): a shell driver, a launcher
 *   end     that program ended through exit() or _exit(), with its status (a kill
 *           leaves no line)
 *   start   the interpreter itself began the main program: cpython.run_file,
 *           run_module or run_command, raised by C with no Python frame on
 *           the stack and on the main thread.  sys.audit() from Python code
 *           can raise an event of the same name, but always with a frame.
 *   reach   code of the entrypoint ran: a code object that is what the entrypoint file
 *           compiles to (reb_witness_identity.c) executed after the main program started
 *           (the main file itself, an import of it, runpy, a spawn worker);
 *           REB_WITNESS_ENTRY lists the entrypoint's path and its package-relative
 *           suffixes, ':'-separated
 *   finish  the main program ended as a finish (reb_witness_finish.c: its outermost frame
 *           returned, or the checkout's SystemExit(0)), seen at finalisation
 *   raised  it ended otherwise (an uncaught exception, a SystemExit from elsewhere)
 *   exit    the program ended itself with _exit() (os._exit) after start: its status, and
 *           "from <file>" unless the innermost Python frame is the checkout's own code
 *           (identity, not a name): only then is it the program's own way to finish
 *   taint   what a forger would have to do from Python: open this witness
 *           file (by a str or a bytes path), or, before the main program started, spawn a process, load a
 *           library with ctypes or read another process's memory or environment
 * The host reads the file after the command; only the host decides what it means.
 *
 * The file is the target's to write, so nothing in it grants a pass (issue 25, class 1).
 * What does is the state below, in this library's own memory: at the end of each process of
 * the run (its main program's end, an _exit(), a program's end), at its first GPU launch from
 * the checkout's code, or on reaching the entrypoint where the run is not expected to end,
 * the witness fills it and stops its process (SIGSTOP); the host, polling the command's processes,
 * sees it stopped, checks from outside what runs there (its executable, its mappings),
 * reads the state through /proc/<pid>/mem at the offset of the symbol in the library it
 * built, and continues it (SIGCONT).  REB_WITNESS_STOP names the moments to stop at
 * ("reach", "finish", "prog"); unset, the witness never stops.  Python code cannot write
 * the state: ctypes' ways to an address (a symbol of ours by name, from_address, a
 * foreign call with one of our addresses, /proc/<pid>/mem) are refused by the hook.
 * Built by pytest_reb/witness.py with the host's C compiler; it uses only old
 * libc symbols and weak references to the Python C API, so one build loads in
 * any glibc image and in processes that are not Python at all.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <limits.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>


typedef struct _object PyObject;
typedef int (*audit_hook)(const char *, PyObject *, void *);

extern int PySys_AddAuditHook(audit_hook, void *) __attribute__((weak));
extern void *PyEval_GetFrame(void) __attribute__((weak));
extern ssize_t PyTuple_Size(PyObject *) __attribute__((weak));
extern PyObject *PyTuple_GetItem(PyObject *, ssize_t) __attribute__((weak));
extern const char *PyUnicode_AsUTF8(PyObject *) __attribute__((weak));
extern void PyErr_Clear(void) __attribute__((weak));
extern PyObject *PyObject_GetAttrString(PyObject *, const char *) __attribute__((weak));
extern void Py_DecRef(PyObject *) __attribute__((weak));
extern char *PyBytes_AsString(PyObject *) __attribute__((weak));
extern ssize_t PyBytes_Size(PyObject *) __attribute__((weak));
extern const char *PyUnicode_AsUTF8AndSize(PyObject *, ssize_t *) __attribute__((weak));
extern int PyGILState_Check(void) __attribute__((weak));
extern void *PyLong_AsVoidPtr(PyObject *) __attribute__((weak));
extern void PyErr_SetString(PyObject *, const char *) __attribute__((weak));
extern PyObject *PyExc_PermissionError __attribute__((weak));

#define MAX_ENTRIES 8

static char record_path[PATH_MAX];
static char root[PATH_MAX]; /* the checkout, resolved: where an os._exit() may finish from */
static char entries[MAX_ENTRIES][PATH_MAX];
static int n_entries;
static int started;
static int reached;
static int finished;
static int taints;
static int is_prog;

static void attribution_start(const char *how);
static void attribution_event(const char *event, PyObject *args);
static void launches_forked(void);
static void launches_end(void);
static void lookups_ready(void);
static void program_class(void);
static void launches_into_state(void);
static int code_is_own(PyObject *code);
static void identity_exec(PyObject *args);
static int caller_is_own(void);
static int verifying;
static void finish_exec(PyObject *args, int frameless);
static void finish_excepthook(int frameless);
static void finish_at_finalisation(void);
static int finish_decide(int status);
static int main_over(void);
static int main_is_module;
/* What the host reads from this process's memory while it is stopped for it.  Layout v1,
 * mirrored by pytest_reb/witness/observe.py: fields are only ever appended, ``size`` says
 * how many bytes this build has, so a newer host reads an older library and the reverse. */
#define REB_STATE_VERSION 3
#define REB_STOP_REACH 1
#define REB_STOP_FINISH 2
#define REB_STOP_LAUNCH 3 /* its first GPU launch from the checkout's code */
#define REB_HOW_FINALISED 1 /* interpreter finalisation, no frame: the main program ended */
#define REB_HOW_EXIT 2      /* _exit() whose innermost Python frame is the checkout's code */
#define REB_HOW_PROGRAM 3   /* a program that is not Python ended through exit() / _exit() */
#define REB_HOW_EXIT_OTHER 4 /* _exit() from code that is not the checkout's: an end, no finish */
#define REB_HOW_RAISED 5     /* the main program ended by an exception that is no finish, or its
                              * end was not seen; status 1 uncaught, -2 SystemExit from code not
                              * the checkout's, -1 unseen, else the checkout's SystemExit(status) */
/* Whose code a process's main program is (version 3): what makes its work the run's. */
#define REB_MAIN_CHECKOUT 1 /* a file of the checkout, or a module that resolves to one */
#define REB_MAIN_COMMAND 2  /* a -c command: the host's own only if its text is the host's */
#define REB_MAIN_BOOT 3     /* multiprocessing's own bootstrap (spawn, forkserver, tracker) */
#define REB_MAIN_OTHER 4    /* anything else: a launcher, a tool, a file outside the checkout */
struct reb_witness_state {
    char magic[16];   /* "reb-witness" */
    uint32_t version; /* REB_STATE_VERSION */
    uint32_t size;    /* sizeof(struct reb_witness_state) */
    int32_t pid;      /* the process that began the main program (a fork of it inherits) */
    uint32_t stop;    /* why it is stopped for the host now: REB_STOP_*, 0 when running */
    uint32_t stops;   /* how many times it stopped for the host */
    uint32_t started;
    uint32_t reached;
    uint32_t how; /* REB_HOW_*, 0: no end yet */
    int32_t status;
    uint32_t taints; /* interference the hook saw (the file has them too) */
    char start[2048];
    char reach[1024];
    char taint[512]; /* the first one */
    /* version 2: GPU kernel launches (strict C3/C4's attribution), as of the stop */
    uint64_t launches_own;   /* from the entrypoint's code path */
    uint64_t launches_other; /* from anywhere else */
    char launch_other[512];  /* where the first other one came from */
    /* version 3: lineage, so that the host reads the run's descendants as the entrypoint's */
    int32_t parent;      /* the parent when the main program began (the kernel's getppid) */
    int32_t forked_from; /* a fork's: the process it is a copy of; 0: it began its own */
    uint32_t main;       /* REB_MAIN_* */
    uint32_t reserved;
};
/* A page of its own, read-only but while the witness writes it: a write from Python
 * (ctypes.memmove) faults, and the host checks at each stop that the page is read-only.
 * 64 KiB: a whole number of pages on 4 KiB and 64 KiB systems alike. */
#define REB_STATE_PAGE 65536
__attribute__((visibility("default"), used, aligned(REB_STATE_PAGE))) union {
    struct reb_witness_state s;
    char page[REB_STATE_PAGE];
} reb_witness_state = {{"reb-witness", REB_STATE_VERSION, sizeof(struct reb_witness_state), 0, 0,
                        0, 0, 0, 0, 0, 0, "", "", "", 0, 0, ""}};
#define S reb_witness_state.s
static int state_guarded;

/* The state page writable (``on``) or read-only again; a system whose pages are larger than
 * the state's is left unguarded, which the host sees in the mappings (and refuses). */
static void state_writable(int on) {
    if (state_guarded)
        mprotect(&reb_witness_state, REB_STATE_PAGE, on ? PROT_READ | PROT_WRITE : PROT_READ);
}
static int stop_at_reach, stop_at_finish, stop_at_prog;

/* ``src`` into a field of the state, cut to fit. */
static void keep(char *dst, size_t size, const char *src) {
    size_t n = strlen(src);
    n = n < size ? n : size - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}
/* The span of this library in memory: what ctypes must not be given the address of. */
static uintptr_t own_lo, own_hi;

static void record(const char *kind, const char *detail) {
    char line[PATH_MAX * 3];
    int fd, n;
    if (!record_path[0])
        return;
    n = snprintf(line, sizeof line, "%d %d %s %s\n", (int)getpid(), (int)getppid(), kind,
                 detail ? detail : "");
    if (n <= 0)
        return;
    if (n >= (int)sizeof line) {
        n = (int)sizeof line;
        line[n - 1] = '\n';
    }
    fd = open(record_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) < 0) {
        /* nothing to do: a missing line fails closed on the host */
    }
    close(fd);
}

/* The first argument of an audit event when it is a str, else NULL (the error cleared). */
static const char *first_str(PyObject *args) {
    PyObject *item;
    const char *text;
    if (!args || PyTuple_Size(args) < 1)
        return NULL;
    item = PyTuple_GetItem(args, 0);
    if (!item)
        return NULL;
    text = PyUnicode_AsUTF8(item); /* NULL, with a TypeError, for bytes, fds and None */
    if (!text)
        PyErr_Clear();
    return text;
}

/* The first argument as a path whatever its type: str, or bytes (os.open(b"...")). */
static const char *first_path(PyObject *args) {
    const char *text = first_str(args);
    PyObject *item;
    if (text || !PyBytes_AsString || !args || PyTuple_Size(args) < 1)
        return text;
    item = PyTuple_GetItem(args, 0);
    text = item ? PyBytes_AsString(item) : NULL;
    if (!text)
        PyErr_Clear();
    return text;
}

/* The file of the innermost Python frame (into ``out``), or 0 when there is none or this
 * thread cannot ask (no GIL: an _exit() from C). */
static int caller_file(char *out, size_t size) {
    PyObject *frame, *code, *file;
    const char *name;
    if (!PyGILState_Check || !PyGILState_Check() || !PyObject_GetAttrString || !Py_DecRef)
        return 0;
    frame = (PyObject *)PyEval_GetFrame();
    if (!frame)
        return 0;
    code = PyObject_GetAttrString(frame, "f_code");
    file = code ? PyObject_GetAttrString(code, "co_filename") : NULL;
    name = file ? PyUnicode_AsUTF8(file) : NULL;
    if (!name)
        PyErr_Clear();
    else
        snprintf(out, size, "%s", name);
    if (file)
        Py_DecRef(file);
    if (code)
        Py_DecRef(code);
    return name != NULL;
}

/* Raised by the interpreter's C code itself: no Python frame, main thread. */
static int from_interpreter(void) {
    return PyEval_GetFrame() == NULL && (pid_t)syscall(SYS_gettid) == getpid();
}

static void one_line(char *out, size_t size, const char *a, const char *b) {
    char *p;
    snprintf(out, size, "%s%s%s", a, b ? " " : "", b ? b : "");
    for (p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

static void taint(const char *event, const char *detail) {
    char text[PATH_MAX + 64];
    if (taints++ >= 20)
        return;
    one_line(text, sizeof text, event, detail);
    state_writable(1);
    if (S.taints++ == 0)
        keep(S.taint, sizeof S.taint, text);
    state_writable(0);
    record("taint", text);
}

/* Stop this process for the host to read the state (``why``: REB_STOP_*); the host continues
 * it.  Only the process that began the main program stops (a fork of it does not count). */
static void stop_for_host(uint32_t why) {
    state_writable(1);
    S.stop = why;
    S.stops++;
    launches_into_state();
    state_writable(0);
    __sync_synchronize();
    raise(SIGSTOP);
    state_writable(1);
    S.stop = 0;
    state_writable(0);
}

/* Whether this process stops for the host at its end: it runs a main program of the run (it
 * began one, or is a fork of one that did).  Every such process is read, not only the one that
 * reached the entrypoint: a launcher's child that runs the training is the run's work, and its
 * launches are read at its end; the host decides what each end and count is worth. */
static int end_counts(void) {
    return stop_at_finish && S.pid == (int32_t)getpid() && S.started;
}

/* An address given to ctypes that lies in this library (the state, its settings). */
static int is_own(PyObject *value) {
    uintptr_t a;
    if (!value || !PyLong_AsVoidPtr)
        return 0;
    a = (uintptr_t)PyLong_AsVoidPtr(value);
    if (!a && PyErr_Clear)
        PyErr_Clear(); /* not an int: no address */
    return a && a >= own_lo && a < own_hi;
}

/* Refuse an event (the operation raises PermissionError) after recording it as a taint. */
static int refuse(const char *event, const char *detail) {
    taint(event, detail);
    if (PyErr_SetString && PyExc_PermissionError)
        PyErr_SetString(PyExc_PermissionError, "reb witness: its memory is the host's");
    return -1;
}

/* Functions that would make the state page writable, or write or find it, from ctypes.
 * (Not ``syscall``: honest libraries call it through ctypes, filelock's renameat2 among them;
 * what that leaves open is in docs/threat-model.md.) */
static const char *const unsafe_symbols[] = {"mprotect", "pkey_mprotect", "process_vm_writev",
                                             "ptrace", "dl_iterate_phdr", NULL};

static int unsafe_symbol(const char *name) {
    if (!strncmp(name, "reb_witness", 11))
        return 1;
    for (int i = 0; unsafe_symbols[i]; i++)
        if (!strcmp(name, unsafe_symbols[i]))
            return 1;
    return 0;
}

/* ctypes' ways to this library's memory from Python that raise an event: loading it by
 * name, a symbol of ours or one that unprotects or finds pages, an object or a read at one of
 * our addresses, the rare foreign call that is audited.  (CPython audits no ordinary foreign
 * call: a ctypes.memmove into the state is met by the read-only page instead.) */
static int ctypes_guard(const char *event, PyObject *args) {
    PyObject *item, *value;
    const char *name;
    ssize_t n;
    if (!strcmp(event, "ctypes.dlopen")) {
        name = first_path(args);
        return name && strstr(name, "reb_witness") ? refuse(event, name) : 0;
    }
    if (!strcmp(event, "ctypes.dlsym") || !strcmp(event, "ctypes.dlsym/handle")) {
        item = PyTuple_Size(args) > 1 ? PyTuple_GetItem(args, 1) : NULL;
        name = item ? PyUnicode_AsUTF8(item) : NULL;
        if (!name)
            PyErr_Clear();
        return name && unsafe_symbol(name) ? refuse(event, name) : 0;
    }
    if (!strcmp(event, "ctypes.cdata") || !strcmp(event, "ctypes.string_at") ||
        !strcmp(event, "ctypes.wstring_at"))
        return PyTuple_Size(args) > 0 && is_own(PyTuple_GetItem(args, 0))
                   ? refuse(event, "an address of the witness") : 0;
    if (strcmp(event, "ctypes.call_function") || PyTuple_Size(args) < 2)
        return 0;
    item = PyTuple_GetItem(args, 1);
    n = item ? PyTuple_Size(item) : -1;
    if (n < 0) {
        PyErr_Clear();
        return 0;
    }
    for (ssize_t i = 0; i < n; i++) {
        PyObject *arg = PyTuple_GetItem(item, i);
        int own = is_own(arg);
        value = !own && arg && PyObject_GetAttrString ? PyObject_GetAttrString(arg, "value")
                                                      : NULL;
        if (!own && !value)
            PyErr_Clear();
        if (value) { /* c_void_p(address) */
            own = is_own(value);
            Py_DecRef(value);
        }
        if (own)
            return refuse(event, "an address of the witness");
    }
    return 0;
}

static int own_span(struct dl_phdr_info *info, size_t size, void *unused) {
    uintptr_t me = (uintptr_t)&reb_witness_state, lo = UINTPTR_MAX, hi = 0;
    (void)size;
    (void)unused;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (info->dlpi_addr + ph->p_vaddr < lo)
            lo = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
            hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    if (me < lo || me >= hi)
        return 0;
    own_lo = lo;
    own_hi = hi;
    return 1;
}

/* A resolved path that is a process's memory (any pid, task, thread-self), its map_files, or
 * this library's file. */
static int names_mem(const char *real) {
    const char *base = strrchr(real, '/');
    if (strstr(real, "libreb_witness"))
        return 1;
    return !strncmp(real, "/proc/", 6) &&
           ((base && !strcmp(base, "/mem")) || strstr(real, "/map_files"));
}

/* ``path`` resolved the way the kernel will (symlinks, /dev/fd/N of an open /proc folder,
 * /proc/self, /proc/thread-self, "." and ".."), or its folder resolved when it does not exist
 * yet, relative to the working folder. */
static int resolves_to_mem(const char *path) {
    char real[PATH_MAX], dir[PATH_MAX];
    const char *slash;
    if (realpath(path, real))
        return names_mem(real);
    slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) >= sizeof dir)
        return 0;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = 0;
    if (!realpath(dir[0] ? dir : "/", real) || strlen(real) + strlen(slash) >= sizeof real)
        return 0;
    strcat(real, slash);
    return names_mem(real);
}

/* /proc/<pid>/mem by any path that resolves to it (or "mem" relative to a folder's descriptor,
 * which the event does not name), a process's map_files, or this library's file (where the
 * state's offset is read): ways to the state from Python, refused at any time. */
static int is_proc_mem(const char *path) {
    const char *base = path ? strrchr(path, '/') : NULL;
    if (!path)
        return 0;
    if (resolves_to_mem(path))
        return 1;
    if (strstr(path, "libreb_witness") || (!strncmp(path, "/proc/", 6) && strstr(path,
                                                                            "/map_files")))
        return 1;
    base = base ? base + 1 : path;
    return !strcmp(base, "mem") && (path[0] != '/' || strncmp(path, "/proc/", 6) == 0);
}

static int is_proc_peek(const char *path) {
    /* /proc/<pid>/environ, mem, maps of any process: where a forger looks for our traces */
    return path && strncmp(path, "/proc/", 6) == 0 &&
           (strstr(path, "/environ") || strstr(path, "/mem"));
}

/* Whether ``path`` (resolved) is the entrypoint: equal to an absolute entry, or ending in
 * "/" + a relative one (a package installed elsewhere than the checkout). */
static int is_entry(const char *path) {
    char real[PATH_MAX];
    size_t len;
    if (!path || !*path || !realpath(path, real))
        return 0;
    len = strlen(real);
    for (int i = 0; i < n_entries; i++) {
        const char *e = entries[i];
        size_t n = strlen(e);
        if (e[0] == '/' ? !strcmp(real, e)
                        : (n < len && real[len - n - 1] == '/' && !strcmp(real + len - n, e)))
            return 1;
    }
    return 0;
}

static void reach(const char *path) {
    char text[PATH_MAX + 8];
    if (reached)
        return;
    reached = 1;
    one_line(text, sizeof text, path, NULL);
    record("reach", text);
    if (S.pid == (int32_t)getpid()) {
        state_writable(1);
        S.reached = 1;
        keep(S.reach, sizeof S.reach, text);
        state_writable(0);
        if (stop_at_reach)
            stop_for_host(REB_STOP_REACH);
    }
}

/* The entrypoint's code runs: the code an exec event runs is the checkout's own (what the
 * entrypoint file compiles to, reb_witness_identity.c) and its file is the entrypoint. */
static void exec_event(PyObject *args) {
    PyObject *file, *code;
    const char *name;
    if (!args || PyTuple_Size(args) < 1 || !PyObject_GetAttrString || !Py_DecRef)
        return;
    code = PyTuple_GetItem(args, 0);
    if (!code_is_own(code))
        return;
    file = PyObject_GetAttrString(code, "co_filename");
    if (!file) {
        PyErr_Clear();
        return;
    }
    name = PyUnicode_AsUTF8(file);
    if (!name)
        PyErr_Clear();
    else if (is_entry(name))
        reach(name);
    Py_DecRef(file);
}

/* A resolved path in the checkout, not in an environment kept inside it (a venv's packages). */
static int in_checkout(const char *real) {
    size_t n = strlen(root);
    return n && !strncmp(real, root, n) && real[n] == '/' && !strstr(real + n, "-packages/");
}

/* ``dir``/``name`` (a module's dotted name as a path) + ``tail``, resolved, in the checkout. */
static int module_in_checkout(const char *dir, const char *name, const char *tail) {
    char path[PATH_MAX], real[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s%s", dir, name, tail);
    if (n <= 0 || n >= (int)sizeof path)
        return 0;
    for (char *p = path + strlen(dir) + 1; *p && p < path + n - strlen(tail); p++)
        if (*p == '.')
            *p = '/';
    return realpath(path, real) && in_checkout(real);
}

/* Whose code a main program is: a checkout file run as a script or a module (from the working
 * folder, Python's first path entry for -m, or the checkout and its src/), multiprocessing's
 * own bootstrap commands (what a spawned or forkserver worker runs), another command, or
 * anything else.  The host reads it with the start; a bootstrap's work counts only where its
 * parent's does, a command's only where its text is the host's own. */
static uint32_t main_class(const char *how, const char *arg, const char *real) {
    static const char *const boot[] = {
        "from multiprocessing.spawn import spawn_main; spawn_main(",
        "from multiprocessing.forkserver import main; main(",
        "from multiprocessing.resource_tracker import main;main(", NULL};
    char cwd[PATH_MAX], src[PATH_MAX + 8];
    size_t n = arg ? strlen(arg) : 0;
    if (n && arg[n - 1] == '\n')
        n--; /* the interpreter runs a command with a newline added */
    if (!strcmp(how, "run_file"))
        return real[0] && in_checkout(real) ? REB_MAIN_CHECKOUT : REB_MAIN_OTHER;
    if (!strcmp(how, "run_command")) {
        for (int i = 0; arg && boot[i]; i++)
            if (!strncmp(arg, boot[i], strlen(boot[i])) && arg[n - 1] == ')' &&
                memchr(arg, '\n', n) == NULL && !strchr(arg + strlen(boot[i]), ';'))
                return REB_MAIN_BOOT;
        return REB_MAIN_COMMAND;
    }
    if (!arg || !*arg || strchr(arg, '/') || !root[0])
        return REB_MAIN_OTHER;
    snprintf(src, sizeof src, "%s/src", root);
    if (getcwd(cwd, sizeof cwd) &&
        (module_in_checkout(cwd, arg, ".py") || module_in_checkout(cwd, arg, "/__main__.py")))
        return REB_MAIN_CHECKOUT;
    return module_in_checkout(root, arg, ".py") || module_in_checkout(root, arg, "/__main__.py") ||
                   module_in_checkout(src, arg, ".py") ||
                   module_in_checkout(src, arg, "/__main__.py")
               ? REB_MAIN_CHECKOUT
               : REB_MAIN_OTHER;
}

/* In a forked child (fork(), not vfork: only fork runs these handlers): a copy of a process of
 * the run, with a state of its own from here on, read by the host at its own end. */
static void forked(void) {
    if (!S.started)
        return launches_forked();
    state_writable(1);
    S.forked_from = S.pid;
    S.pid = (int32_t)getpid();
    S.stop = 0;
    S.stops = 0;
    S.how = 0;
    S.status = 0;
    state_writable(0);
    finished = 0;
    launches_forked();
}

static int hook(const char *event, PyObject *args, void *unused) {
    char text[PATH_MAX * 2 + 8];
    char real[PATH_MAX];
    char cwd[PATH_MAX];
    const char *arg;
    (void)unused;
    if (verifying)
        return 0; /* the witness's own compile of a checkout file */
    if (event[0] == 'c' && strncmp(event, "cpython.", 8) == 0) {
        const char *what = event + 8;
        if (!strcmp(what, "_PySys_ClearAuditHooks")) {
            if (started && !finished && from_interpreter()) {
                char how[32];
                finished = 1;
                finish_at_finalisation(); /* reb_witness_finish.c: a finish only if it was one */
                if (S.how == REB_HOW_FINALISED)
                    record("finish", "");
                else if (S.how == REB_HOW_RAISED) {
                    snprintf(how, sizeof how, "%d", (int)S.status);
                    record("raised", how);
                }
            }
            return 0;
        }
        if (strcmp(what, "run_file") && strcmp(what, "run_module") && strcmp(what, "run_command"))
            return 0;
        if (!from_interpreter()) {
            taint("forged", event);
            return 0;
        }
        arg = first_str(args);
        if (!strcmp(what, "run_file")) {
            if (!getcwd(cwd, sizeof cwd))
                cwd[0] = 0;
            if (!arg || !realpath(arg, real))
                real[0] = 0;
            snprintf(text, sizeof text, "file\t%s\t%s\t%s", arg ? arg : "", cwd, real);
        } else {
            snprintf(text, sizeof text, "%s\t%s", what + 4, arg ? arg : "");
        }
        for (char *p = text; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
        started = 1;
        record("start", text);
        state_writable(1);
        S.pid = (int32_t)getpid();
        S.parent = (int32_t)getppid();
        S.started = 1;
        S.main = main_class(what, arg, strcmp(what, "run_file") ? "" : real);
        keep(S.start, sizeof S.start, text);
        state_writable(0);
        main_is_module = !strcmp(what, "run_module");
        attribution_start(what);
        return 0; /* the main file's code is admitted, and reached, at its exec event */
    }
    if (!strcmp(event, "sys.excepthook")) {
        finish_excepthook(from_interpreter());
        return 0;
    }
    if (!strcmp(event, "exec")) {
        identity_exec(args);
        finish_exec(args, from_interpreter());
        if (started && !reached)
            exec_event(args);
        attribution_event(event, args);
        return 0;
    }
    if (!strcmp(event, "compile") || !strcmp(event, "code.__new__")) {
        attribution_event(event, args);
        return 0;
    }
    if (event[0] == 'c' && strncmp(event, "ctypes.", 7) == 0 && ctypes_guard(event, args))
        return -1; /* refused; an allowed ctypes.dlopen before the start is still a taint */
    if (!strcmp(event, "open") || !strcmp(event, "os.open")) {
        arg = first_path(args);
        if (is_proc_mem(arg))
            return refuse(event, arg);
        if (arg && (strstr(arg, record_path) || strstr(arg, "reb-witness") ||
                    (!started && is_proc_peek(arg))))
            taint(event, arg);
        return 0;
    }
    if (started)
        return 0;
    if (!strcmp(event, "subprocess.Popen") || !strcmp(event, "os.system") ||
        !strcmp(event, "os.exec") || !strcmp(event, "os.posix_spawn") ||
        !strcmp(event, "os.spawn") || !strcmp(event, "os.fork") ||
        !strcmp(event, "ctypes.dlopen")) {
        arg = first_str(args);
        taint(event, arg);
    }
    return 0;
}

/* A program that is not Python: its command line (NULs as spaces), for shell drivers. */
static void prog_start(void) {
    char cmd[1024];
    ssize_t n;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    n = read(fd, cmd, sizeof cmd - 1);
    close(fd);
    if (n <= 0)
        return;
    for (ssize_t i = 0; i < n; i++)
        if (cmd[i] == 0 || cmd[i] == '\n')
            cmd[i] = ' ';
    cmd[n] = 0;
    is_prog = 1;
    record("prog", cmd);
    state_writable(1);
    S.pid = (int32_t)getpid();
    keep(S.start, sizeof S.start, cmd);
    state_writable(0);
}

/* Whether a program's end can count for the host: the run names no entrypoint, or its
 * command line holds an entry's file name (the host applies its own rule to what it reads). */
static int prog_counts(void) {
    if (!stop_at_prog || S.pid != (int32_t)getpid())
        return 0;
    for (int i = 0; i < n_entries; i++) {
        const char *name = strrchr(entries[i], '/');
        if (strstr(S.start, name ? name + 1 : entries[i]))
            return 1;
    }
    return n_entries == 0;
}

static void prog_end(int status) {
    char text[32];
    if (is_prog == 1) {
        is_prog = 2;
        snprintf(text, sizeof text, "%d", status);
        record("end", text);
        if (prog_counts()) {
            state_writable(1);
            S.how = REB_HOW_PROGRAM;
            S.status = status;
            state_writable(0);
            stop_for_host(REB_STOP_FINISH);
        }
    }
}

/* exit() of a program that is not Python; shells mostly leave through _exit(), below. */
__attribute__((destructor)) static void reb_witness_end(void) {
    prog_end(0);
    launches_end();
}

static void load_entries(const char *list) {
    char real[PATH_MAX];
    while (list && *list && n_entries < MAX_ENTRIES) {
        const char *end = strchr(list, ':');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n > 0 && n < PATH_MAX) {
            memcpy(entries[n_entries], list, n);
            entries[n_entries][n] = 0;
            /* an absolute entry is compared resolved, as the paths it is matched with */
            if (entries[n_entries][0] == '/' && realpath(entries[n_entries], real))
                strcpy(entries[n_entries], real);
            n_entries++;
        }
        list = end ? end + 1 : NULL;
    }
}

__attribute__((constructor)) static void reb_witness_init(void) {
    const char *path = getenv("REB_WITNESS");
    if (!path || !*path || strlen(path) >= sizeof record_path)
        return;
    strcpy(record_path, path);
    load_entries(getenv("REB_WITNESS_ENTRY"));
    if (!getenv("REB_WITNESS_ROOT") || !realpath(getenv("REB_WITNESS_ROOT"), root))
        root[0] = 0;
    path = getenv("REB_WITNESS_STOP");
    stop_at_reach = path && strstr(path, "reach") != NULL;
    stop_at_finish = path && strstr(path, "finish") != NULL;
    stop_at_prog = path && strstr(path, "prog") != NULL;
    dl_iterate_phdr(own_span, NULL);
    /* no other process of the target may open this one's memory (/proc/<pid>/mem, a `dd` of
     * the image, process_vm_writev): only a process with CAP_SYS_PTRACE, the host, may read
     * it; the process itself is met by the hook's refusals */
    if (getenv("REB_WITNESS_PRIVATE") && !strcmp(getenv("REB_WITNESS_PRIVATE"), "1"))
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    state_guarded = sysconf(_SC_PAGESIZE) > 0 && REB_STATE_PAGE % sysconf(_SC_PAGESIZE) == 0 &&
                    mprotect(&reb_witness_state, REB_STATE_PAGE, PROT_READ) == 0;
    if (!PySys_AddAuditHook || !PyEval_GetFrame || !PyTuple_Size || !PyTuple_GetItem ||
        !PyUnicode_AsUTF8 || !PyErr_Clear) {
        prog_start(); /* not a Python process: a shell, a launcher binary, coreutils */
        program_class(); /* a program of the checkout's launches as the checkout */
        return;
    }
    if (PySys_AddAuditHook(hook, NULL) == 0)
        record("py", "");
    pthread_atfork(NULL, NULL, forked);
    lookups_ready();
}

/* os._exit() at the end of a program is an honest way to finish when the checkout's own code
 * (a code object it compiles to, not one that names it) calls it; from anywhere else (an import hook in site-packages ending the run inside the
 * entrypoint's ``import torch``) it is recorded with the caller's file, and is no finish. */
void _exit(int status) {
    char text[PATH_MAX + 48];
    char file[PATH_MAX];
    if (S.pid != (int32_t)getpid()) {
        /* a child that did not begin the main program: a fork's copy of our memory, or a
         * vfork child that *shares* it (subprocess's child whose exec failed leaves by
         * _exit(255)): its end is not the program's, and it must not touch our state */
        syscall(SYS_exit_group, status);
        for (;;) {
        }
    }
    prog_end(status);
    launches_end();
    if (started && !finished) {
        int own = caller_is_own();
        finished = 1;
        if (!caller_file(file, sizeof file)) {
            snprintf(text, sizeof text, "%d from native code", status);
        } else if (own) {
            snprintf(text, sizeof text, "%d", status);
        } else {
            char head[32];
            snprintf(head, sizeof head, "%d from", status);
            one_line(text, sizeof text, head, file);
        }
        if (main_over()) {
            finish_decide(status); /* an exit handler's _exit: how the main program ended stands */
        } else {
            state_writable(1);
            S.how = own ? REB_HOW_EXIT : REB_HOW_EXIT_OTHER;
            S.status = status;
            state_writable(0);
        }
        record("exit", text);
        if (end_counts())
            stop_for_host(REB_STOP_FINISH);
    }
    syscall(SYS_exit_group, status);
    for (;;) {
    }
}

/* Which code is the checkout's, and GPU launch attribution: in this same compilation unit. */
#include "reb_witness_identity.c"
#include "reb_witness_gpu.c"
#include "reb_witness_finish.c"
