/* Internal to the report: the two formats of `uform info`, each writing the same facts. */
#ifndef UFORM_REPORT_INFO_FORMAT_H
#define UFORM_REPORT_INFO_FORMAT_H

#include "report/facts.h"
#include "report/writer.h"

void uform__info_write_text(uform__writer_t *w, const uform__facts_t *facts);

/** One JSON object; its schema is docs/info-json.md. */
void uform__info_write_json(uform__writer_t *w, const uform__facts_t *facts);

#endif
