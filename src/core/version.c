#include "uform.h"

const char *uform_version(void) { return UFORM_VERSION_STRING; }

int uform_version_number(void) { return UFORM_VERSION_NUMBER; }
