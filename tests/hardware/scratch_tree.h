/* A machine written file by file into a scratch directory, for the tests that break one file of
 * it (test_*_malformed.c). Each test file that includes this has its own `root`, which it names
 * before the first put. */
#ifndef UFORM_TEST_SCRATCH_TREE_H
#define UFORM_TEST_SCRATCH_TREE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

static char root[256]; /* the tree's directory */

/** Writes `text` to root/`path`, making the directories on the way. */
static inline void put(const char *path, const char *text) {
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", root, path);
    for (char *p = full + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(full, 0755);
            *p = '/';
        }
    FILE *f = fopen(full, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/** Removes the whole tree (nothing there is fine). */
static inline void remove_tree(void) {
    char command[512];
    snprintf(command, sizeof command, "rm -rf '%s'", root);
    CHECK_EQ_INT(system(command), 0);
}

#endif
