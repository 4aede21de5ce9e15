/* Messages a user reads when an argument or value is refused (issue 30, item 4): each says
 * where the bad value came from and why it is refused, with the range it must lie in. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_support.h"
#include "test.h"

typedef struct refusal {
    const char* args;    /* after "peridot", with %s the scene file */
    const char* want[3]; /* what the message must say */
    const char* never;   /* and must not */
} refusal;

static const refusal k_refusals[] = {
    {"run %s --frames 0", {"--frames expects an integer from 1 to 1000000000", "got '0'"}, NULL},
    {"docs extra", {"unexpected argument 'extra'", "docs takes no argument"}, NULL},
    /* a value an override wrote is reported at the override, not at line 1 of the file */
    {"info %s --set time.frames=abc",
     {"peridot info: --set time.frames=abc: time.frames: expected an integer"},
     "ball.json:1"},
    {"info %s --set nokey=3", {"--set nokey=3: nokey: unknown key"}, "ball.json"},
    /* an object refused for a value an override changed inside it names the override */
    {"info %s --set method=\\\"hyperelastic_pd\\\" --set materials.m.poisson_ratio=0.499",
     {"materials.m: hyperelastic_pd maps Poisson ratios in [0, 0.49]", "nears 1/2",
      "(with --set materials.m.poisson_ratio=0.499)"},
     "negative one"},
    {"info %s --set method=\\\"hyperelastic_pd\\\" --set materials.m.poisson_ratio=-0.1",
     {"a negative one gives lambda < 0"},
     "nears 1/2"},
};

PD_TEST(refusals_say_where_and_why) {
    char dir[] = "/tmp/pd_messages_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[256], args[1024];
    snprintf(scene, sizeof scene, "%s/ball.json", dir);
    write_file(scene, BALL_SCENE(4, ""));
    for (size_t k = 0; k < sizeof k_refusals / sizeof k_refusals[0]; ++k) {
        const refusal* r = &k_refusals[k];
        snprintf(args, sizeof args, r->args, scene);
        char* err = NULL;
        PD_CHECK(run_cli(dir, args, &err) == 2);
        for (int i = 0; i < 3 && r->want[i]; ++i)
            if (!err || !strstr(err, r->want[i])) {
                printf("  FAIL the message lacks \"%s\"\n", r->want[i]);
                pd_test_failures++;
            }
        if (r->never && err && strstr(err, r->never)) {
            printf("  FAIL the message says \"%s\"\n", r->never);
            pd_test_failures++;
        }
        free(err);
    }
    remove_tree(dir);
}
