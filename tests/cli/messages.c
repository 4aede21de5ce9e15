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
    {"docs extra", {"unexpected argument 'extra'", "docs takes none"}, NULL},
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

/* The sum of stats.csv's column `name` over its rows, or -1 when the file or column is missing. */
static long column_sum(const char* stats_path, const char* name) {
    char* text = read_text(stats_path);
    if (!text)
        return -1;
    long sum = -1;
    int col = -1, k = 0;
    char* save = NULL;
    for (char* line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), ++k) {
        int c = 0; /* fields split by hand: strtok would skip the empty ones */
        for (char* f = line; f; ++c) {
            char* comma = strchr(f, ',');
            if (comma)
                *comma = '\0';
            if (k == 0 && strcmp(f, name) == 0)
                col = c, sum = 0;
            else if (k > 0 && c == col)
                sum += atol(f);
            f = comma ? comma + 1 : NULL;
        }
    }
    free(text);
    return sum;
}

/* A spinning ball with one iteration a step cannot converge (its bonds turn each step): every
 * step stops at the cap far above the tolerance, under both implicit methods; the run says so
 * at its end and stats.csv counts them per frame. With 100 iterations none is counted and
 * nothing is said. */
PD_TEST(unconverged_steps_are_counted_and_reported) {
    char dir[] = "/tmp/pd_messages_XXXXXX";
    PD_REQUIRE(mkdtemp(dir));
    char scene[256], out[256], stats[300], args[1024];
    snprintf(scene, sizeof scene, "%s/spin.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(stats, sizeof stats, "%s/stats.csv", out);
    write_file(scene, BALL_SCENE(5, ",\"angular_velocity\":[0,0,20]"));
    const char* methods[] = {"projective_pd", "hyperelastic_pd"};
    for (int m = 0; m < 2; ++m)
        for (int iterations = 1; iterations <= 100; iterations += 99) {
            snprintf(args, sizeof args,
                     "run %s -o %s --set method=\\\"%s\\\" --set solver.iterations=%d", scene, out,
                     methods[m], iterations);
            char* err = NULL;
            PD_CHECK(run_cli(dir, args, &err) == 0);
            long counted = column_sum(stats, "unconverged_steps");
            int said = err && strstr(err, "10 of 10 steps ended above tolerance") != NULL;
            int silent = err && strstr(err, "above tolerance") == NULL;
            printf("    %s, %d iterations: %ld steps counted unconverged\n", methods[m], iterations,
                   counted);
            PD_CHECK_NEAR(counted, iterations == 1 ? 10 : 0, 0);
            PD_CHECK(iterations == 1 ? said : silent);
            free(err);
        }
    remove_tree(dir);
}
