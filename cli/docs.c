/* `peridot docs` and `peridot docs methods <measured.csv>`: the references the library
 * generates from its tables (peridot/docs.h). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "peridot/docs.h"

static int usage(int help) {
    fprintf(help ? stdout : stderr,
            "usage: peridot docs\n       peridot docs methods <measured.csv>\n\nPrints the "
            "scene-format reference (Markdown) generated from the parameter tables; "
            "docs/scene-format.md is its output. `docs methods` prints docs/methods.md: each "
            "method's capabilities and the numbers the cross-method physics tests measured "
            "(written to the CSV when PD_MEASURED names it).\n");
    return help ? 0 : 2;
}

static int is_help(const char* arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int pd_cli_docs(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "methods") == 0) {
        if (argc != 3 || argv[2][0] == '-')
            return usage(argc == 3 && is_help(argv[2]));
        return pd_docs_methods(argv[2]) == 0 ? 0 : 2;
    }
    if (argc > 1) {
        if (!is_help(argv[1]))
            fprintf(stderr,
                    "peridot docs: unexpected argument '%s': docs takes none, or `methods "
                    "<measured.csv>`\n\n",
                    argv[1]);
        return usage(is_help(argv[1]));
    }
    return pd_docs_scene_format();
}
