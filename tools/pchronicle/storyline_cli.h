/* Storyline verbs of the pchronicle CLI (docs/storyline.md §5): routing from the shared
** import/export/inspect verbs, and the get/sql verbs. */
#ifndef PCH_STORYLINE_CLI_H
#define PCH_STORYLINE_CLI_H

#include <stdbool.h>

typedef enum pch_sl_cli_verb { PCH_SL_CLI_IMPORT, PCH_SL_CLI_EXPORT, PCH_SL_CLI_INSPECT } pch_sl_cli_verb;

/* Does this command line belong to the Storyline side? (--input-format atif,
** --output-format storyline|atif, or a --from / positional path that is a Storyline root) */
bool pch_sl_cli_routes(int argc, char **argv, pch_sl_cli_verb verb);

int pch_cmd_storyline_import(int argc, char **argv);
int pch_cmd_storyline_export(int argc, char **argv);
int pch_cmd_storyline_inspect(int argc, char **argv);
int pch_cmd_get(int argc, char **argv);
int pch_cmd_sql(int argc, char **argv);

#endif
