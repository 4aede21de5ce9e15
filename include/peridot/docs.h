/* The references generated from the library's own tables: they print Markdown to stdout
 * (`peridot docs` and `peridot docs methods`, whose outputs are docs/scene-format.md and
 * docs/methods.md). Each returns 0, or nonzero when writing or reading failed (said on
 * stderr). */
#ifndef PERIDOT_DOCS_H
#define PERIDOT_DOCS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Every scene key with its type, unit, default and range, the methods' own keys and blocks,
 * the outputs and stats.csv's columns. */
int pd_docs_scene_format(void);

/* One table of every method's capabilities beside the numbers the cross-method physics tests
 * measured (the CSV they write when PD_MEASURED names it: docs/measured.csv). */
int pd_docs_methods(const char* measured_csv);

#ifdef __cplusplus
}
#endif

#endif
