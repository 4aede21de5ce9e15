/* placeholder until the subcommand lands (this session) */
#include <stdio.h>

#include "commands.h"

int pd_cli_docs(int argc, char** argv) {
    (void)argc;
    fprintf(stderr, "peridot %s: not available yet\n", argv[0]);
    return 2;
}
