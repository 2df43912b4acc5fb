/* uform.lib: Ctrl-C during a synchronous call.
 *
 * Python's own SIGINT handler only trips a flag that the main thread reads between bytecodes,
 * which a thread inside a long C call never reaches. For the duration of a synchronous call made
 * on the main thread, a handler of ours sits in front of Python's: it sets the call's cancel
 * flag (uform_call_t.cancel, which a signal handler may set), so no further task starts, and
 * then runs Python's handler, which raises KeyboardInterrupt once the call has returned. */
#include "binding.h"

#include <signal.h>

static unsigned long main_thread; /* PyThread_get_thread_ident() of the main thread, 0 if unknown */
static volatile int *volatile cancel_target; /* the innermost synchronous call's flag */
static struct sigaction chained;             /* the handler ours runs after setting the flag */
static int depth;                            /* synchronous calls on the main thread, nested */

static void on_interrupt(int signal, siginfo_t *info, void *context) {
    volatile int *target = cancel_target;
    if (target) *target = 1;
    if (chained.sa_flags & SA_SIGINFO)
        chained.sa_sigaction(signal, info, context);
    else if (chained.sa_handler != SIG_DFL && chained.sa_handler != SIG_IGN)
        chained.sa_handler(signal);
}

int interrupt_init(void) {
    PyObject *threading = PyImport_ImportModule("threading");
    if (!threading) return -1;
    PyObject *main = PyObject_CallMethod(threading, "main_thread", NULL);
    Py_DECREF(threading);
    if (!main) return -1;
    PyObject *ident = PyObject_GetAttrString(main, "ident");
    Py_DECREF(main);
    if (!ident) return -1;
    main_thread = PyLong_AsUnsignedLong(ident);
    Py_DECREF(ident);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        main_thread = 0;
    }
    return 0;
}

void interrupt_enter(interrupt_scope_t *scope) {
    scope->flag = 0;
    scope->installed = 0;
    scope->outer = NULL;
    if (!main_thread || PyThread_get_thread_ident() != main_thread) return; /* Ctrl-C reaches the main thread */
    if (depth == 0) {
        struct sigaction current;
        if (sigaction(SIGINT, NULL, &current) != 0) return;
        /* Default (the process ends anyway) or ignored: nothing to add. */
        if (!(current.sa_flags & SA_SIGINFO) && (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN))
            return;
        struct sigaction ours;
        memset(&ours, 0, sizeof ours);
        ours.sa_sigaction = on_interrupt;
        ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
        ours.sa_mask = current.sa_mask;
        chained = current;
        if (sigaction(SIGINT, &ours, NULL) != 0) return;
    }
    depth++;
    scope->installed = 1;
    scope->outer = (volatile int *)cancel_target;
    cancel_target = &scope->flag;
}

void interrupt_leave(interrupt_scope_t *scope) {
    if (!scope->installed) return;
    cancel_target = scope->outer;
    if (--depth > 0) return;
    /* Put Python's handler back, unless a callback installed another one meanwhile. */
    struct sigaction current;
    if (sigaction(SIGINT, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == on_interrupt)
        sigaction(SIGINT, &chained, NULL);
}

PyObject *interrupted(interrupt_scope_t *scope, uform_status_t status) {
    if (PyErr_CheckSignals() < 0) return NULL; /* KeyboardInterrupt, from Python's handler */
    return raise_status(status);
}
