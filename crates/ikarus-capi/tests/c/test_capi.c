/*
 * The C API from C: a reach on the built-in humanoid checked by forward kinematics, a
 * prepared arm over several frames, a crowd, three VR trackers, grounding on the caller's
 * ground, error codes and messages for bad input, a BVH file.
 *
 *   test_capi [FILE.bvh]
 *
 * Exits 0 when every check holds; prints the failed check and exits 1 otherwise. Built and
 * run by tests/c_program.rs (gcc, against the generated ikarus.h and libikarus_capi).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ikarus.h"

static int failures = 0;

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                 \
            failures++;                                                     \
        }                                                                   \
    } while (0)

static double distance(const double *a, const double *b) {
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The world position of joint `joint` of `pose`, into `out`. */
static int world_position(const IkarusSkeleton *skel, const IkarusPose *pose, int32_t joint,
                          double out[3]) {
    size_t n = 3 * ikarus_skeleton_joint_count(skel);
    double *xyz = malloc(n * sizeof(double));
    IkarusError *err = NULL;
    IkarusStatus status = ikarus_pose_world_positions(skel, pose, xyz, n, &err);
    if (status != IKARUS_OK) {
        fprintf(stderr, "world positions: %s\n", ikarus_error_message(err));
        ikarus_error_free(err);
        free(xyz);
        return 0;
    }
    memcpy(out, xyz + 3 * joint, 3 * sizeof(double));
    free(xyz);
    return 1;
}

static void reach_with_json(void) {
    IkarusError *err = NULL;
    IkarusSkeleton *skel = ikarus_skeleton_open("builtin:humanoid", &err);
    CHECK(skel != NULL && err == NULL);
    CHECK(ikarus_skeleton_joint_count(skel) == 26);
    int32_t hand = ikarus_skeleton_joint_index(skel, "leftHand");
    CHECK(hand >= 0);
    CHECK(strcmp(ikarus_skeleton_joint_name(skel, (size_t)hand), "leftHand") == 0);
    CHECK(ikarus_skeleton_joint_index(skel, "noSuchBone") == -1);

    IkarusPose *pose = ikarus_pose_rest(skel);
    CHECK(pose != NULL);
    const double target[3] = {0.45, 1.15, 0.25};
    const char *task =
        "{\"solver\": {\"kind\": \"lm\"}, \"base\": \"hips\", \"effectors\": "
        "[{\"joint\": \"leftHand\", \"position\": [0.45, 1.15, 0.25]}]}";
    char *report = NULL;
    IkarusStatus status = ikarus_solve_json(skel, task, pose, &report, &err);
    CHECK(status == IKARUS_OK);
    if (status != IKARUS_OK) {
        fprintf(stderr, "solve: %s\n", ikarus_error_message(err));
        ikarus_error_free(err);
    }
    CHECK(report != NULL && strstr(report, "\"status\":\"converged\"") != NULL);
    ikarus_string_free(report);

    double hand_at[3];
    CHECK(world_position(skel, pose, hand, hand_at));
    CHECK(distance(hand_at, target) < 1e-4);

    /* Bad JSON: a parse error with line and column; the report pointer is NULL. */
    report = (char *)1;
    status = ikarus_solve_json(skel, "{\"effectors\": [}", pose, &report, &err);
    CHECK(status == IKARUS_ERR_PARSE);
    CHECK(report == NULL);
    CHECK(err != NULL && ikarus_error_code(err) == IKARUS_ERR_PARSE);
    CHECK(err != NULL && strstr(ikarus_error_message(err), "line 1 column") != NULL);
    ikarus_error_free(err);

    /* An unknown joint names it. */
    status = ikarus_solve_json(
        skel, "{\"effectors\": [{\"joint\": \"noSuchBone\", \"position\": [0, 1, 0]}]}", pose,
        NULL, &err);
    CHECK(status == IKARUS_ERR_INVALID);
    CHECK(err != NULL && strstr(ikarus_error_message(err), "noSuchBone") != NULL);
    ikarus_error_free(err);

    /* NULL handles are reported, also without an error pointer. */
    CHECK(ikarus_solve_json(NULL, task, pose, NULL, NULL) == IKARUS_ERR_NULL);
    CHECK(ikarus_solve_json(skel, NULL, pose, NULL, &err) == IKARUS_ERR_NULL);
    CHECK(err != NULL && strstr(ikarus_error_message(err), "task_json") != NULL);
    ikarus_error_free(err);

    /* A buffer too small. */
    double small[3];
    CHECK(ikarus_pose_world_positions(skel, pose, small, 3, NULL) == IKARUS_ERR_INVALID);

    ikarus_pose_free(pose);
    ikarus_skeleton_free(skel);
}

static void prepared_arm(void) {
    IkarusError *err = NULL;
    IkarusSkeleton *skel = ikarus_skeleton_open("builtin:humanoid", NULL);
    int32_t hand = ikarus_skeleton_joint_index(skel, "leftHand");
    IkarusPrepared *arm = ikarus_prepared_new(
        skel,
        "{\"solver\": {\"kind\": \"two_bone\"}, \"effectors\": "
        "[{\"joint\": \"leftHand\", \"position\": [0.4, 1.2, 0.2]}]}",
        &err);
    CHECK(arm != NULL && err == NULL);
    CHECK(ikarus_prepared_effector_count(arm) == 1);
    IkarusPose *pose = ikarus_pose_rest(skel);
    for (int frame = 0; frame < 5; frame++) {
        double target[3] = {0.4, 1.1 + 0.03 * frame, 0.25};
        CHECK(ikarus_prepared_set_goal(arm, 0, target, NULL, NULL) == IKARUS_OK);
        IkarusReport report;
        CHECK(ikarus_prepared_solve(arm, pose, &report, NULL) == IKARUS_OK);
        CHECK(report.status == IKARUS_SOLVE_CONVERGED);
        double hand_at[3];
        CHECK(world_position(skel, pose, hand, hand_at));
        CHECK(distance(hand_at, target) < 1e-4);
    }
    /* Local transforms out and back in. */
    size_t n = IKARUS_LOCAL_STRIDE * ikarus_pose_joint_count(pose);
    double *local = malloc(n * sizeof(double));
    CHECK(ikarus_pose_get_local(pose, local, n, NULL) == IKARUS_OK);
    IkarusPose *copy = ikarus_pose_rest(skel);
    CHECK(ikarus_pose_set_local(copy, local, n, NULL) == IKARUS_OK);
    double a[3], b[3];
    CHECK(world_position(skel, pose, hand, a) && world_position(skel, copy, hand, b));
    CHECK(distance(a, b) < 1e-12);
    free(local);
    ikarus_pose_free(copy);
    ikarus_pose_free(pose);
    ikarus_prepared_free(arm);
    ikarus_skeleton_free(skel);
}

/* Eight characters' left hands, one prepared task, flat arrays in and out. */
static void crowd_of_arms(void) {
    enum { COUNT = 8 };
    IkarusSkeleton *skel = ikarus_skeleton_open("builtin:humanoid", NULL);
    int32_t hand = ikarus_skeleton_joint_index(skel, "leftHand");
    size_t joints = ikarus_skeleton_joint_count(skel);
    IkarusPrepared *arm = ikarus_prepared_new(
        skel,
        "{\"solver\": {\"kind\": \"limb7\"}, \"effectors\": "
        "[{\"joint\": \"leftHand\", \"position\": [0.4, 1.2, 0.2]}]}",
        NULL);
    IkarusCrowd *crowd = ikarus_crowd_new(skel, COUNT, NULL);
    CHECK(arm != NULL && crowd != NULL && ikarus_crowd_count(crowd) == COUNT);
    double targets[3 * COUNT];
    for (int i = 0; i < COUNT; i++) {
        targets[3 * i] = 0.35 + 0.02 * i;
        targets[3 * i + 1] = 1.0 + 0.04 * i;
        targets[3 * i + 2] = 0.3 - 0.02 * i;
    }
    IkarusReport reports[COUNT];
    CHECK(ikarus_prepared_solve_crowd(arm, crowd, targets, 3 * COUNT, NULL, reports, NULL) ==
          IKARUS_OK);
    double *xyz = malloc(3 * COUNT * joints * sizeof(double));
    CHECK(ikarus_crowd_world_positions(crowd, xyz, 3 * COUNT * joints, NULL) == IKARUS_OK);
    for (int i = 0; i < COUNT; i++) {
        CHECK(reports[i].status == IKARUS_SOLVE_CONVERGED);
        CHECK(distance(xyz + 3 * (i * joints + (size_t)hand), targets + 3 * i) < 1e-4);
    }
    free(xyz);
    ikarus_crowd_free(crowd);
    ikarus_prepared_free(arm);
    ikarus_skeleton_free(skel);
}

/* A headset and two controllers on the rest pose's bones calibrate; the left controller
 * moves forward and down over 30 frames and the avatar's hand follows. */
static void three_trackers(void) {
    const char *names[3] = {"head", "leftHand", "rightHand"};
    IkarusSkeleton *skel = ikarus_skeleton_open("builtin:humanoid", NULL);
    IkarusPose *rest = ikarus_pose_rest(skel);
    size_t joints = ikarus_skeleton_joint_count(skel);
    double *world = malloc(IKARUS_LOCAL_STRIDE * joints * sizeof(double));
    CHECK(ikarus_pose_world_transforms(skel, rest, world, IKARUS_LOCAL_STRIDE * joints, NULL) ==
          IKARUS_OK);
    double calibration[3 * IKARUS_TRACKER_STRIDE];
    for (int i = 0; i < 3; i++) {
        int32_t j = ikarus_skeleton_joint_index(skel, names[i]);
        memcpy(calibration + IKARUS_TRACKER_STRIDE * i, world + IKARUS_LOCAL_STRIDE * j,
               IKARUS_TRACKER_STRIDE * sizeof(double));
    }
    IkarusError *err = NULL;
    IkarusTracker *tracker = ikarus_tracker_new(skel, 3, 60.0, calibration,
                                                3 * IKARUS_TRACKER_STRIDE, 0.0, &err);
    CHECK(tracker != NULL);
    if (tracker == NULL) {
        fprintf(stderr, "tracker: %s\n", ikarus_error_message(err));
        ikarus_error_free(err);
        return;
    }
    IkarusPose *pose = ikarus_tracker_start_pose(tracker);
    double samples[3 * IKARUS_TRACKER_STRIDE];
    memcpy(samples, calibration, sizeof samples);
    IkarusReport report;
    for (int frame = 1; frame <= 30; frame++) {
        double t = frame / 30.0;
        samples[7] = calibration[7] - 0.15 * t;
        samples[8] = calibration[8] - 0.25 * t;
        samples[9] = calibration[9] + 0.3 * t;
        size_t held = 99;
        CHECK(ikarus_tracker_solve_frame(tracker, samples, 3 * IKARUS_TRACKER_STRIDE, pose,
                                         &report, &held, NULL) == IKARUS_OK);
        CHECK(held == 0);
    }
    int32_t hand = ikarus_skeleton_joint_index(skel, "leftHand");
    double at[3];
    CHECK(world_position(skel, pose, hand, at));
    CHECK(report.position_error < 1e-3);
    CHECK(distance(at, samples + 7) < 0.03);
    CHECK(distance(at, world + IKARUS_LOCAL_STRIDE * hand) > 0.35);
    free(world);
    ikarus_pose_free(pose);
    ikarus_pose_free(rest);
    ikarus_tracker_free(tracker);
    ikarus_skeleton_free(skel);
}

/* The ground at the height `*user`, flat: the engine's ray cast in a game. */
static bool flat_ground(void *user, double x, double z, double *height, double *normal) {
    (void)x;
    (void)z;
    *height = *(const double *)user;
    normal[0] = 0.0;
    normal[1] = 1.0;
    normal[2] = 0.0;
    return true;
}

/* The left foot's height in frame 5 of a standing clip grounded on a floor at `floor`. */
static double grounded_foot(const IkarusSkeleton *skel, double floor) {
    enum { FRAMES = 10 };
    size_t per = IKARUS_LOCAL_STRIDE * ikarus_skeleton_joint_count(skel);
    double *clip = malloc(FRAMES * per * sizeof(double));
    IkarusPose *pose = ikarus_pose_rest(skel);
    for (int f = 0; f < FRAMES; f++) ikarus_pose_get_local(pose, clip + f * per, per, NULL);
    size_t unreached = 99;
    IkarusError *err = NULL;
    IkarusStatus status = ikarus_ground_clip(skel, 30.0, FRAMES, clip, FRAMES * per, NULL,
                                             flat_ground, &floor, clip, &unreached, &err);
    CHECK(status == IKARUS_OK && unreached == 0);
    if (status != IKARUS_OK) {
        fprintf(stderr, "ground: %s\n", ikarus_error_message(err));
        ikarus_error_free(err);
    }
    CHECK(ikarus_pose_set_local(pose, clip + 5 * per, per, NULL) == IKARUS_OK);
    double foot[3];
    CHECK(world_position(skel, pose, ikarus_skeleton_joint_index(skel, "leftFoot"), foot));
    ikarus_pose_free(pose);
    free(clip);
    return foot[1];
}

static void grounding(void) {
    IkarusSkeleton *skel = ikarus_skeleton_open("builtin:humanoid", NULL);
    double raised = grounded_foot(skel, 0.1), level = grounded_foot(skel, 0.0);
    CHECK(fabs(raised - level - 0.1) < 1e-3);
    ikarus_skeleton_free(skel);
}

static void missing_file(void) {
    IkarusError *err = NULL;
    IkarusSkeleton *skel = ikarus_skeleton_open("/nonexistent/walk.bvh", &err);
    CHECK(skel == NULL);
    CHECK(err != NULL && ikarus_error_code(err) == IKARUS_ERR_IO);
    CHECK(err != NULL && strstr(ikarus_error_message(err), "/nonexistent/walk.bvh") != NULL);
    ikarus_error_free(err);
}

static void bvh_file(const char *path) {
    IkarusError *err = NULL;
    IkarusSkeleton *skel = ikarus_skeleton_open(path, &err);
    if (skel == NULL) {
        fprintf(stderr, "%s: %s\n", path, ikarus_error_message(err));
        ikarus_error_free(err);
        failures++;
        return;
    }
    size_t joints = ikarus_skeleton_joint_count(skel);
    size_t frames = ikarus_skeleton_frame_count(skel);
    CHECK(joints > 1);
    CHECK(frames > 1);
    CHECK(ikarus_skeleton_joint_parent(skel, 0) == -1);
    for (size_t j = 1; j < joints; j++) {
        int32_t parent = ikarus_skeleton_joint_parent(skel, j);
        CHECK(parent >= 0 && (size_t)parent < j);
    }
    IkarusPose *pose = ikarus_pose_frame(skel, frames - 1, &err);
    CHECK(pose != NULL);
    double *xyz = malloc(3 * joints * sizeof(double));
    CHECK(ikarus_pose_world_positions(skel, pose, xyz, 3 * joints, NULL) == IKARUS_OK);
    for (size_t i = 0; i < 3 * joints; i++) CHECK(isfinite(xyz[i]));
    CHECK(ikarus_pose_frame(skel, frames, &err) == NULL);
    CHECK(err != NULL && ikarus_error_code(err) == IKARUS_ERR_INVALID);
    ikarus_error_free(err);
    printf("%s: %zu joints, %zu frames\n", path, joints, frames);
    free(xyz);
    ikarus_pose_free(pose);
    ikarus_skeleton_free(skel);
}

int main(int argc, char **argv) {
    printf("ikarus %s\n", ikarus_version());
    reach_with_json();
    prepared_arm();
    crowd_of_arms();
    three_trackers();
    grounding();
    missing_file();
    if (argc > 1) bvh_file(argv[1]);
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
