// The C API from C++: handles owned by std::unique_ptr, errors turned into exceptions, the
// built-in humanoid's left hand reaching for a moving target with a prepared limb7 task, then
// the full-body solver crouching it.
//
//   reach [FILE.bvh]   (with a BVH: its joint count and first frame's root height)
//
// Built and run by crates/ikarus-capi/tests/c_program.rs with g++, linked statically.
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ikarus.h"

namespace ik {

struct SkeletonFree {
    void operator()(IkarusSkeleton* s) const { ikarus_skeleton_free(s); }
};
struct PoseFree {
    void operator()(IkarusPose* p) const { ikarus_pose_free(p); }
};
struct PreparedFree {
    void operator()(IkarusPrepared* p) const { ikarus_prepared_free(p); }
};
using Skeleton = std::unique_ptr<IkarusSkeleton, SkeletonFree>;
using Pose = std::unique_ptr<IkarusPose, PoseFree>;
using Prepared = std::unique_ptr<IkarusPrepared, PreparedFree>;

// Throws the error's message (and frees the error) when `status` is not IKARUS_OK.
void check(IkarusStatus status, IkarusError* err) {
    if (status == IKARUS_OK) return;
    std::string message = ikarus_error_message(err);
    ikarus_error_free(err);
    throw std::runtime_error(message);
}

Skeleton open(const char* path) {
    IkarusError* err = nullptr;
    Skeleton skeleton(ikarus_skeleton_open(path, &err));
    check(skeleton ? IKARUS_OK : ikarus_error_code(err), err);
    return skeleton;
}

std::vector<double> world_positions(const IkarusSkeleton* s, const IkarusPose* p) {
    std::vector<double> xyz(3 * ikarus_skeleton_joint_count(s));
    IkarusError* err = nullptr;
    check(ikarus_pose_world_positions(s, p, xyz.data(), xyz.size(), &err), err);
    return xyz;
}

double distance(const double* a, const double* b) {
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                     (a[2] - b[2]) * (a[2] - b[2]));
}

}  // namespace ik

int main(int argc, char** argv) try {
    ik::Skeleton humanoid = ik::open("builtin:humanoid");
    const int32_t hand = ikarus_skeleton_joint_index(humanoid.get(), "leftHand");
    ik::Pose pose(ikarus_pose_rest(humanoid.get()));

    IkarusError* err = nullptr;
    ik::Prepared arm(ikarus_prepared_new(
        humanoid.get(),
        R"({"solver": {"kind": "limb7", "swivel": "keep_current"},
            "effectors": [{"joint": "leftHand", "position": [0.5, 1.2, 0.2]}]})",
        &err));
    ik::check(arm ? IKARUS_OK : ikarus_error_code(err), err);

    double worst = 0.0;
    for (int frame = 0; frame < 30; ++frame) {
        const double t = frame / 30.0;
        const double target[3] = {0.45 + 0.05 * std::cos(6.28 * t), 1.2 + 0.1 * std::sin(6.28 * t),
                                  0.25};
        ik::check(ikarus_prepared_set_goal(arm.get(), 0, target, nullptr, &err), err);
        IkarusReport report{};
        ik::check(ikarus_prepared_solve(arm.get(), pose.get(), &report, &err), err);
        const std::vector<double> xyz = ik::world_positions(humanoid.get(), pose.get());
        const double miss = ik::distance(&xyz[3 * hand], target);
        if (report.status != IKARUS_SOLVE_CONVERGED || miss > 1e-4) {
            std::fprintf(stderr, "frame %d: status %d, hand %.2e m from its target\n", frame,
                         report.status, miss);
            return 1;
        }
        worst = std::fmax(worst, miss);
    }
    std::printf("limb7: 30 frames converged, worst miss %.1e m\n", worst);

    // The full-body solver: hips down 10 cm, the hands and feet where they are.
    const std::vector<double> rest = ik::world_positions(humanoid.get(), pose.get());
    auto at = [&](const char* name) {
        const int32_t j = ikarus_skeleton_joint_index(humanoid.get(), name);
        char goal[160];
        const double dy = std::string(name) == "hips" ? -0.1 : 0.0;
        std::snprintf(goal, sizeof goal, R"({"joint": "%s", "position": [%.9f, %.9f, %.9f]})",
                      name, rest[3 * j], rest[3 * j + 1] + dy, rest[3 * j + 2]);
        return std::string(goal);
    };
    const std::string task = R"({"solver": {"kind": "body"}, "effectors": [)" + at("hips") +
                             "," + at("leftHand") + "," + at("rightHand") + "," +
                             at("leftFoot") + "," + at("rightFoot") + "]}";
    char* report_json = nullptr;
    ik::check(ikarus_solve_json(humanoid.get(), task.c_str(), pose.get(), &report_json, &err),
              err);
    const bool converged = std::string(report_json).find(R"("status":"converged")") !=
                           std::string::npos;
    ikarus_string_free(report_json);
    if (!converged) {
        std::fprintf(stderr, "the body solve did not converge\n");
        return 1;
    }
    const int32_t hips = ikarus_skeleton_joint_index(humanoid.get(), "hips");
    const std::vector<double> crouched = ik::world_positions(humanoid.get(), pose.get());
    std::printf("body: hips %.3f -> %.3f m\n", rest[3 * hips + 1], crouched[3 * hips + 1]);
    if (std::fabs(crouched[3 * hips + 1] - (rest[3 * hips + 1] - 0.1)) > 1e-3) return 1;

    if (argc > 1) {
        ik::Skeleton file = ik::open(argv[1]);
        ik::Pose first(ikarus_pose_frame(file.get(), 0, &err));
        ik::check(first ? IKARUS_OK : ikarus_error_code(err), err);
        const std::vector<double> xyz = ik::world_positions(file.get(), first.get());
        std::printf("%s: %zu joints, root at height %.3f in frame 0\n", argv[1],
                    ikarus_skeleton_joint_count(file.get()), xyz[1]);
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
}
