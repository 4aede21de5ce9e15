/* Nothing lost, nothing mixed (issue 30, item 1 and the interrupt of item 4): a run holds its
 * output folder so that a second run into it is refused and cannot interleave its frames; a
 * lock left by a killed run is taken over; a write that fails (the disk full) stops the run with
 * exit 1 naming the file, and stats.csv keeps whole rows; the last frame is written whatever
 * output.every is; SIGINT and SIGTERM end the run between steps with the frames written whole
 * and a message saying which; a frame that takes long reports its steps on a terminal. */
#define _XOPEN_SOURCE 700 /* mkdtemp, posix_openpt */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_support.h"
#include "io/output.h"
#include "test.h"

/* A ball that takes as long as it is let run: 100000 frames of 2 steps, frame 0 written and
 * then only every 50000th, so that a test stops it well before its end. */
#define LONG_BALL  BALL_SCENE(100000, "")
#define LONG_EVERY "output.every=50000"

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts `peridot run SCENE -o OUT --set SET` with stderr into fd (closed here). With
 * fsize_limit > 0 the child may write no file beyond that many bytes, and SIGXFSZ is ignored,
 * so that a write past it fails with EFBIG as a full disk fails with ENOSPC. With setsid_tty
 * the child gets its own session with fd as its controlling terminal. */
static pid_t spawn_run(const char* scene, const char* out, const char* set, int fd,
                       long fsize_limit, int quiet) {
    pid_t pid = fork();
    if (pid == 0) {
        if (fsize_limit > 0) {
            struct rlimit rl = {(rlim_t)fsize_limit, (rlim_t)fsize_limit};
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        dup2(fd, 2);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        setenv("OMP_NUM_THREADS", "1", 1);
        execl(PD_CLI_PATH, PD_CLI_PATH, "run", scene, "-o", out, "--set", set,
              quiet ? "--quiet" : (char*)NULL, (char*)NULL);
        _exit(127);
    }
    close(fd);
    return pid;
}

static int exit_code(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
}

/* Waits up to 20 s for path to exist (the run has taken its folder). */
static int wait_for_file(const char* path) {
    for (int i = 0; i < 2000; ++i, sleep_ms(10))
        if (exists(path))
            return 1;
    return 0;
}

/* Waits for a run's lock file to hold its pid: the run creates the file, then writes the pid,
 * and a run killed in between leaves an empty file (no pid to name). */
static int wait_for_lock_pid(const char* path) {
    for (int i = 0; i < 2000; ++i, sleep_ms(10)) {
        struct stat st;
        if (stat(path, &st) == 0 && st.st_size > 0)
            return 1;
    }
    return 0;
}

static int open_err_file(const char* path) {
    return open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

/* Lines of text, and whether each has the header's number of comma-separated fields. */
static int whole_csv_rows(const char* text, int* rows) {
    *rows = 0;
    if (!text || !*text || text[strlen(text) - 1] != '\n')
        return 0;
    int header_fields = -1;
    for (const char* line = text; *line;) {
        const char* end = strchr(line, '\n');
        int fields = 1;
        for (const char* c = line; c < end; ++c)
            fields += *c == ',';
        if (header_fields < 0)
            header_fields = fields;
        else if (fields != header_fields)
            return 0;
        ++*rows;
        line = end + 1;
    }
    return 1;
}

static int occurrences(const char* text, const char* needle) {
    int n = 0;
    for (const char* s = text; s && (s = strstr(s, needle)) != NULL; s += strlen(needle))
        ++n;
    return n;
}

typedef struct folder {
    char dir[64], scene[128], out[128], lock[160], err[160];
} folder;

static int make_folder(folder* f, const char* scene_text) {
    snprintf(f->dir, sizeof f->dir, "/tmp/pd_run_integrity_XXXXXX");
    if (!mkdtemp(f->dir))
        return 0;
    snprintf(f->scene, sizeof f->scene, "%s/ball.json", f->dir);
    snprintf(f->out, sizeof f->out, "%s/out", f->dir);
    snprintf(f->lock, sizeof f->lock, "%s/.peridot.lock", f->out);
    snprintf(f->err, sizeof f->err, "%s/first_stderr.txt", f->dir);
    write_file(f->scene, scene_text);
    return 1;
}

/* Two runs into one folder: the second is refused (exit 2) naming the first's pid, and
 * writes nothing: the folder keeps the first run's particles and rows only. */
PD_TEST(second_run_into_a_held_folder_is_refused) {
    folder f;
    PD_REQUIRE(make_folder(&f, LONG_BALL));
    pid_t first = spawn_run(f.scene, f.out, LONG_EVERY, open_err_file(f.err), 0, 1);
    PD_REQUIRE(wait_for_lock_pid(f.lock));
    char args[600], want[64];
    char* err = NULL;
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet --frames 3", f.scene, f.out);
    PD_CHECK(run_cli(f.dir, args, &err) == 2);
    snprintf(want, sizeof want, "pid %ld", (long)first);
    PD_CHECK(err && strstr(err, "in use by another peridot run") && strstr(err, want));
    free(err);
    kill(first, SIGTERM);
    PD_CHECK_NEAR(exit_code(first), 143, 0);
    char* first_err = read_text(f.err);
    printf("    first run's stderr: %s", first_err ? first_err : "(none)\n");
    PD_CHECK(first_err && strstr(first_err, "interrupted (SIGTERM)"));
    free(first_err);
    PD_CHECK(!exists(f.lock));                /* released on the way out */
    PD_CHECK_NEAR(count_frames(f.out), 1, 0); /* frame 0 only: the second run wrote none */
    remove_tree(f.dir);
}

/* A run killed with SIGKILL leaves its lock file but not its lock: the next run takes it over,
 * says so with the dead run's pid, and completes. */
PD_TEST(lock_of_a_killed_run_is_taken_over) {
    folder f;
    PD_REQUIRE(make_folder(&f, LONG_BALL));
    pid_t first = spawn_run(f.scene, f.out, LONG_EVERY, open_err_file(f.err), 0, 1);
    PD_REQUIRE(wait_for_lock_pid(f.lock));
    kill(first, SIGKILL);
    PD_CHECK_NEAR(exit_code(first), 1000 + SIGKILL, 0);
    PD_CHECK(exists(f.lock));
    char args[600], want[64];
    char* err = NULL;
    snprintf(args, sizeof args, "run '%s' -o '%s' --frames 3", f.scene, f.out);
    PD_CHECK(run_cli(f.dir, args, &err) == 0);
    snprintf(want, sizeof want, "left by pid %ld", (long)first);
    PD_CHECK(err && strstr(err, "taking over the lock") && strstr(err, want));
    free(err);
    PD_CHECK(!exists(f.lock));
    PD_CHECK_NEAR(count_frames(f.out), 4, 0);
    remove_tree(f.dir);
}

/* SIGINT between frames of a long run: exit 130, the message names the last complete frame,
 * every frame file is whole and stats.csv's rows are whole. */
PD_TEST(sigint_ends_the_run_keeping_whole_frames) {
    folder f;
    PD_REQUIRE(make_folder(&f, BALL_SCENE(100000, "")));
    pid_t run = spawn_run(f.scene, f.out, "output.every=1", open_err_file(f.err), 0, 1);
    char frame[200];
    snprintf(frame, sizeof frame, "%s/frame_00003.ply", f.out);
    PD_REQUIRE(wait_for_file(frame));
    kill(run, SIGINT);
    PD_CHECK_NEAR(exit_code(run), 130, 0);
    char* err = read_text(f.err);
    printf("    stderr: %s", err ? err : "(none)\n");
    int last = -1;
    const char* at = err ? strstr(err, "frames 0..") : NULL;
    if (at)
        last = atoi(at + 10);
    PD_CHECK(err && strstr(err, "interrupted (SIGINT) at frame") && strstr(err, "are complete"));
    PD_CHECK(last >= 3);
    free(err);
    PD_CHECK_NEAR(count_frames(f.out), last + 1, 0);
    int readable = 0;
    for (int k = 0; k <= last; ++k) {
        snprintf(frame, sizeof frame, "%s/frame_%05d.ply", f.out, k);
        pd_ply_data ply;
        pd_error perr = {0};
        if (pd_read_ply(frame, &ply, &perr) == PD_OK)
            readable++, pd_ply_free(&ply);
    }
    PD_CHECK_NEAR(readable, last + 1, 0);
    char stats_path[200];
    snprintf(stats_path, sizeof stats_path, "%s/stats.csv", f.out);
    char* stats = read_text(stats_path);
    int rows = 0;
    PD_CHECK(whole_csv_rows(stats, &rows));
    PD_CHECK_NEAR(rows, last + 2, 0); /* the header and frames 0..last */
    free(stats);
    remove_tree(f.dir);
}

/* Runs SCENE with files limited to `limit` bytes (a full disk), expecting exit 1 and a message
 * that names `file` once, as "<file>: cannot write: File too large". */
static void check_write_fails(folder* f, const char* set, long limit, const char* file) {
    pid_t run = spawn_run(f->scene, f->out, set, open_err_file(f->err), limit, 1);
    PD_CHECK_NEAR(exit_code(run), 1, 0);
    char* err = read_text(f->err);
    char want[128];
    snprintf(want, sizeof want, "%s: cannot write: File too large", file);
    printf("    stderr: %s", err ? err : "(none)\n");
    PD_CHECK(err && strstr(err, want));
    PD_CHECK_NEAR(occurrences(err, file), 1, 0);
    free(err);
}

/* The disk full after frame 0 (files limited to 4096 bytes: frame 0 of this ball is 3468
 * bytes, stats.csv reaches the limit after some 40 rows): exit 1 naming stats.csv once, and
 * the file ends after its last whole row. */
PD_TEST(failed_stats_write_stops_the_run_with_exit_1) {
    folder f;
    PD_REQUIRE(make_folder(&f, BALL_SCENE(200, "")));
    check_write_fails(&f, "output.every=200", 4096, "stats.csv");
    char stats_path[200];
    snprintf(stats_path, sizeof stats_path, "%s/stats.csv", f.out);
    char* stats = read_text(stats_path);
    int rows = 0;
    PD_CHECK(whole_csv_rows(stats, &rows));
    printf("    stats.csv: %d whole lines, %zu bytes\n", rows, stats ? strlen(stats) : 0);
    PD_CHECK(rows > 10 && rows < 200);
    free(stats);
    remove_tree(f.dir);
}

/* A failed frame write (the frame larger than the limit) names the frame once and leaves no
 * temporary file: 3468 bytes of frame 0 against a 2000-byte limit. */
PD_TEST(failed_frame_write_names_the_frame_once) {
    folder f;
    PD_REQUIRE(make_folder(&f, BALL_SCENE(4, "")));
    check_write_fails(&f, "output.every=1", 2000, "frame_00000.ply");
    PD_CHECK_NEAR(count_frames(f.out), 0, 0); /* neither the frame nor its .tmp */
    remove_tree(f.dir);
}

/* 10 frames, every 4th written: 0, 4, 8, and 10, the final state. */
PD_TEST(last_frame_is_written_whatever_output_every) {
    folder f;
    PD_REQUIRE(make_folder(&f, BALL_SCENE(10, "")));
    char args[600], path[200];
    char* err = NULL;
    snprintf(args, sizeof args, "run '%s' -o '%s' --quiet --set output.every=4", f.scene, f.out);
    PD_CHECK(run_cli(f.dir, args, &err) == 0);
    free(err);
    PD_CHECK_NEAR(count_frames(f.out), 4, 0);
    snprintf(path, sizeof path, "%s/frame_00010.ply", f.out);
    PD_CHECK(exists(path));
    snprintf(path, sizeof path, "%s/frame_00009.ply", f.out);
    PD_CHECK(!exists(path));
    remove_tree(f.dir);
}

/* Reads what arrived on the terminal's master side within ms milliseconds into buf. */
static size_t read_terminal(int master, char* buf, size_t cap, size_t used, int ms) {
    for (int waited = 0; waited < ms && used + 1 < cap; waited += 20) {
        ssize_t n = read(master, buf + used, cap - 1 - used);
        if (n > 0)
            used += (size_t)n;
        else
            sleep_ms(20);
    }
    buf[used] = '\0';
    return used;
}

/* One frame of a million steps, on a terminal: after 2 s the bar reports the steps within the
 * frame and an ETA in h/min/s, rather than nothing until the frame ends. */
PD_TEST(long_frame_reports_its_steps_on_a_terminal) {
    folder f;
    PD_REQUIRE(make_folder(&f, BALL_SCENE(2, "")));
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    PD_REQUIRE(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
    fcntl(master, F_SETFL, O_NONBLOCK);
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    PD_REQUIRE(slave >= 0);
    /* fps 0.01 and dt 1e-4 s: 1e6 steps a frame, some minutes at least */
    pid_t run =
        spawn_run(f.scene, f.out, "time={\"dt\":1e-4,\"fps\":0.01,\"frames\":2}", slave, 0, 0);
    static char screen[1 << 16];
    size_t used = 0;
    for (int waited = 0; waited < 20000 && !strstr(screen, "of frame 1)"); waited += 500)
        used = read_terminal(master, screen, sizeof screen, used, 500);
    used = read_terminal(master, screen, sizeof screen, used, 1200); /* a few more updates */
    kill(run, SIGINT);
    PD_CHECK_NEAR(exit_code(run), 130, 0);
    read_terminal(master, screen, sizeof screen, used, 200);
    close(master);
    size_t len = strlen(screen);
    printf("    the terminal's last 400 characters: %s\n", screen + (len > 400 ? len - 400 : 0));
    PD_CHECK(strstr(screen, "/1000000 of frame 1)") != NULL);
    PD_CHECK(strstr(screen, "ETA ") && strstr(screen, " min "));
    PD_CHECK(occurrences(screen, "of frame 1)") >= 2); /* the bar moves */
    PD_CHECK(strstr(screen, "interrupted (SIGINT) at frame 1") && strstr(screen, "frames 0..0"));
    remove_tree(f.dir);
}

/* The same long frame off a terminal (stderr a file, as under a batch system): the first
 * report of the steps within the frame comes after 2 s, the next only 10 s later, so that a
 * log is not flooded: one line in the 3 s after the first. */
PD_TEST(long_frame_reports_its_steps_in_a_log_every_10_s) {
    folder f;
    PD_REQUIRE(make_folder(&f, BALL_SCENE(2, "")));
    pid_t run = spawn_run(f.scene, f.out, "time={\"dt\":1e-4,\"fps\":0.01,\"frames\":2}",
                          open_err_file(f.err), 0, 0);
    char* log = NULL;
    for (int waited = 0; waited < 20000; waited += 100, sleep_ms(100)) {
        free(log);
        log = read_text(f.err);
        if (log && strstr(log, "of frame 1)"))
            break;
    }
    sleep_ms(3000);
    kill(run, SIGINT);
    PD_CHECK_NEAR(exit_code(run), 130, 0);
    free(log);
    log = read_text(f.err);
    printf("    log: %s", log ? log : "(none)\n");
    PD_CHECK(log && strstr(log, "/1000000 of frame 1)") && strstr(log, "ETA "));
    PD_CHECK_NEAR(occurrences(log, "of frame 1)"), 1, 0);
    free(log);
    remove_tree(f.dir);
}
