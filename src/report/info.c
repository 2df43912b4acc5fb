/* uform_info_write: the report behind `uform info`, as text for people or one JSON object. It
 * sits above gpu/ and mesh/ and reads them all; nothing below it names the report. Both
 * formats write the same gathered facts (facts.c), so they can never disagree, and every fact
 * comes from the layers the API answers from. */
#include "core/error.h"
#include "report/info_format.h"
#include "uform.h"

uform_status_t uform_info_write(uform_info_format_t format, char *buffer, size_t capacity, size_t *length) {
    if (!length) return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_info_write: length is NULL");
    if (format != UFORM_INFO_TEXT && format != UFORM_INFO_JSON)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_info_write: %d is not a format", (int)format);
    if (!buffer && capacity)
        return uform__fail(UFORM_STATUS_INVALID_ARGUMENT, "uform_info_write: buffer is NULL with capacity %zu",
                           capacity);
    uform__facts_t facts;
    uform_status_t status = uform__facts_gather(&facts);
    if (status == UFORM_STATUS_OK) {
        uform__writer_t w = {buffer, capacity, 0};
        if (format == UFORM_INFO_TEXT)
            uform__info_write_text(&w, &facts);
        else
            uform__info_write_json(&w, &facts);
        *length = w.length;
    }
    uform__facts_free(&facts);
    return status;
}
