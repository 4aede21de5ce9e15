/* Subcommands of the peridot program; each returns the process exit code
 * (0 ok, 1 run failed, 2 bad input or usage). argv[0] is the subcommand's name. */
#ifndef PD_CLI_COMMANDS_H
#define PD_CLI_COMMANDS_H

int pd_cli_run(int argc, char** argv);
int pd_cli_info(int argc, char** argv);
int pd_cli_render(int argc, char** argv);
int pd_cli_docs(int argc, char** argv);
int pd_cli_surface(int argc, char** argv);
/* `peridot docs methods <measured.csv>` (docs_methods.c) */

#endif
