/* Every scene the project ships (scenes/ and bench/scenes/) loads: the scene format is a
 * contract (SCENE.md: scenes written against it keep running as the project grows), and a
 * change to a method's keys or a block's rules must not break the paper scenes. Reference:
 * the contract. */
#include "test.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "peridot/peridot.h"

/* Loads every *.json of dir; returns how many, or -1 after printing the first that fails. */
static int load_all(const char* dir) {
    DIR* d = opendir(dir);
    if (!d)
        return -1;
    int count = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        pd_scene scene;
        pd_error err = {0};
        if (pd_scene_load(path, NULL, 0, &scene, &err) != PD_OK) {
            printf("  %s: %s: %s\n", path, err.path, err.message);
            closedir(d);
            return -1;
        }
        pd_scene_free(&scene);
        ++count;
    }
    closedir(d);
    return count;
}

PD_TEST(every_shipped_scene_loads) {
    int paper = load_all(PD_SOURCE_DIR "/scenes");
    int bench = load_all(PD_SOURCE_DIR "/bench/scenes");
    printf("  %d scenes in scenes/, %d in bench/scenes/\n", paper, bench);
    PD_CHECK(paper >= 14);
    PD_CHECK(bench >= 3);
}
