/* Helpers for the tests that run on a recorded or synthesized machine (tests/fixtures/). */
#ifndef UFORM_TEST_FIXTURE_H
#define UFORM_TEST_FIXTURE_H

#include "hardware/cpu_class.h"
#include "hardware/seam.h"
#include "hardware/topology.h"
#include "platform/platform.h"
#include "test.h"

/** Points the seam at tests/fixtures/<name>. */
static inline void use_fixture(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", UFORM_TEST_FIXTURES, name);
    CHECK_OK(uform__seam_use_fixture(path));
}

/** The derived class by name, so a failure prints both names. */
#define CHECK_CLASS(expected) CHECK_EQ_STR(uform_cpu_class_name(uform_cpu_class_derived()), expected)

/** `cpu_class` must be refused, the message naming `missing`. */
#define CHECK_MISSING(cpu_class, missing)                                                          \
    do {                                                                                           \
        CHECK_STATUS(uform__cpu_class_check(cpu_class), UFORM_STATUS_UNSUPPORTED);                  \
        if (!strstr(uform_last_error(), missing))                                                  \
            TEST_FAIL_("message \"%s\" does not name \"%s\"", uform_last_error(), missing);        \
    } while (0)

static inline const uform__topology_t *topology(void) {
    const uform__topology_t *t = NULL;
    CHECK_OK(uform__topology_get(&t));
    CHECK(t != NULL);
    return t;
}

/** Whether a comma-separated list holds `token` exactly. */
static inline int has_token(const char *list, const char *token) {
    size_t n = strlen(token);
    for (const char *p = list; (p = strstr(p, token)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

#endif
