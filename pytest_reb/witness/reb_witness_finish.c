/*
 * reb_witness_finish.c: how the main program ended, part of reb_witness.c's one compilation
 * unit (included at its end, after reb_witness_identity.c and reb_witness_gpu.c, whose profile
 * function feeds it).  Not compiled on its own.
 *
 * Interpreter finalisation is not a finish by itself: it also follows an uncaught exception,
 * and a SystemExit(0) that an import hook raises inside the entrypoint's own ``import``.  So the
 * witness watches the main program's outermost frame (the code the interpreter itself ran for
 * the file or the command, or runpy's _run_module_as_main for -m) through the profile function:
 *   - it returned: a finish (status 0);
 *   - an exception left it: the interpreter's own "sys.excepthook" event (no frame, main
 *     thread) says it was not a SystemExit: no finish (status 1); otherwise it is a SystemExit,
 *     and it counts only when the code that raised it is the checkout's (the innermost frame of
 *     the unwinding, library frames taking their caller's class: sys.exit in click's standalone
 *     mode is the checkout's), or multiprocessing's own in a bootstrap worker; its status is the
 *     one the interpreter hands to exit(), which the witness interposes;
 *   - no end seen (the profile function replaced, sys.setprofile): no finish.
 * The host takes the state at that stop, before libc runs exit handlers, __cxa_atexit entries
 * (an _exit(0) registered through ctypes) and destructors: nothing after it changes the verdict.
 */
enum { MAIN_UNSEEN = 0, MAIN_RUNNING = 1, MAIN_RETURNED = 2, MAIN_UNWOUND = 3 };
static PyObject *main_code;        /* what the interpreter ran for the file or the command */
static int main_is_module;         /* -m: the main frame is runpy's _run_module_as_main */
static int main_end = MAIN_UNSEEN; /* MAIN_* */
static int main_frame = -1;        /* its depth on the main thread's stack */
static unsigned char main_origin;  /* the class of the code an exception left it from */
static int uncaught;               /* the interpreter printed an uncaught exception */
static int exit_pending;           /* a SystemExit of the checkout's: its status comes to exit() */
static __thread int unwinding;     /* frames are being left by an exception */
static __thread unsigned char unwind_origin;

/* The frameless exec event after the start: the code the interpreter runs as the program. */
static void finish_exec(PyObject *args, int frameless) {
    if (!started || main_code || !frameless || !args || PyTuple_Size(args) < 1 || !Py_IncRef)
        return;
    main_code = PyTuple_GetItem(args, 0);
    if (main_code)
        Py_IncRef(main_code);
}

static int is_main_thread(void) {
    return (pid_t)syscall(SYS_gettid) == getpid();
}

/* Whether ``code`` is runpy's _run_module_as_main (the frozen module's or the library's). */
static int is_runpy_main(PyObject *code) {
    char *file = code_file(code), *name = NULL;
    PyObject *co_name = PyObject_GetAttrString(code, "co_name");
    const char *text = co_name ? PyUnicode_AsUTF8(co_name) : NULL;
    int yes;
    if (text)
        name = strdup(text);
    if (co_name)
        Py_DecRef(co_name);
    PyErr_Clear();
    yes = file && name && !strcmp(name, "_run_module_as_main") &&
          (!strcmp(file, "<frozen runpy>") || (is_stdlib(file) && strstr(file, "/runpy.py")));
    free(file);
    free(name);
    return yes;
}

/* A frame entered (``at``: its depth) or left, from the profile function. */
static void finish_call(PyObject *code, int at) {
    unwinding = 0;
    if (main_end != MAIN_UNSEEN || at != 0 || !started || !is_main_thread())
        return;
    if (code == main_code || (main_is_module && is_runpy_main(code))) {
        main_end = MAIN_RUNNING;
        main_frame = at;
    }
}

static void finish_return(int at, int raised) {
    if (raised && !unwinding) { /* the frame an exception starts to leave: who raised it */
        unwinding = 1;
        unwind_origin = top()->cls;
    } else if (!raised) {
        unwinding = 0;
    }
    if (main_end != MAIN_RUNNING || at != main_frame || !is_main_thread())
        return;
    main_end = raised ? MAIN_UNWOUND : MAIN_RETURNED;
    main_origin = unwind_origin;
}

/* A C function called, returned or raised: an unwinding that follows starts afresh. */
static void finish_c_event(void) {
    unwinding = 0;
}

/* The interpreter's own "sys.excepthook" event for the main program's uncaught exception. */
static void finish_excepthook(int frameless) {
    if (started && frameless)
        uncaught = 1;
}

static void finish_state(uint32_t how, int32_t status) {
    state_writable(1);
    S.how = how;
    S.status = status;
    state_writable(0);
}

/* How the main program ended, once it has (``status``: known, as _exit() gives it, or -1: not
 * yet, at finalisation); 1 when the witness still waits for exit()'s status. */
static int finish_decide(int status) {
    int own_exit = main_origin == C_CHECKOUT || (S.main == REB_MAIN_BOOT && main_origin == C_LIB);
    if (main_end == MAIN_RETURNED && !uncaught) {
        finish_state(REB_HOW_FINALISED, 0);
    } else if (main_end == MAIN_UNWOUND && !uncaught && own_exit) {
        if (status < 0)
            return exit_pending = 1; /* its status is what the interpreter gives exit() */
        finish_state(status == 0 ? REB_HOW_FINALISED : REB_HOW_RAISED, status);
    } else {
        finish_state(REB_HOW_RAISED, uncaught ? 1 : main_end == MAIN_UNWOUND ? -2 : -1);
    }
    return 0;
}

/* Whether the main program has ended (an _exit() now comes after it: an exit handler). */
static int main_over(void) {
    return main_end == MAIN_RETURNED || main_end == MAIN_UNWOUND || uncaught;
}

/* At finalisation (no frame, main thread): how the main program ended, and the stop. */
static void finish_at_finalisation(void) {
    if (S.pid != (int32_t)getpid() || finish_decide(-1))
        return;
    if (end_counts())
        stop_for_host(REB_STOP_FINISH);
}

/* The interpreter's exit() after finalising (Py_Exit for a SystemExit), and every other
 * program's: the status of a pending SystemExit is taken here, before libc's exit handlers. */
__attribute__((noreturn)) void exit(int status) {
    static void *slot;
    void (*real_exit)(int) = (void (*)(int))real("exit", &slot);
    if (exit_pending && S.pid == (int32_t)getpid()) {
        exit_pending = 0;
        finish_state(status == 0 ? REB_HOW_FINALISED : REB_HOW_RAISED, status);
        if (end_counts())
            stop_for_host(REB_STOP_FINISH);
    }
    if (real_exit)
        real_exit(status);
    syscall(SYS_exit_group, status);
    for (;;) {
    }
}
