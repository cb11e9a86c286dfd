// SPDX-License-Identifier: Apache-2.0
// The memory plan counts every byte a program declares: for every model,
// example and firmware of the repository, on this target, the plan's
// `bytes` is sizeof(nn::TrainingMemory<T, plan>) (the tape object with its
// header and buffer, and the optimizer state), `tape_object_bytes` is
// sizeof(FixedTape<T, nodes, slots, parameters>), and a lane plan's `bytes`
// is sizeof(nn::LaneMemory<T, plan>). The plan computes them from
// sizeof(Tape<T>), the array alignment and bytes_required, without naming
// those types; the compiler's layout is the oracle. Each equality is a
// static_assert (a target where it fails does not build) and is checked
// again at run time, so the suite reports it.
//
// Covered: the trainers' models at their defaults and the paper's sizes
// (MakemoreMlp e = 4, 64, 1024; Gpt; SmallCnn; every optimizer; FP32 and
// FP64), their lane and checkpoint plans at kHardwareLanes and 4 lanes, the
// firmware of targets/firmware (plans.hpp: burtorch-train-mlp, -train-gpt,
// -train-kws, -finetune), the XOR network of examples/xor_nn and
// examples/xor_firmware (examples/common/xor_model.hpp), the GRU window of
// docs/training.md, and plans whose optimizer state needs padding. Only
// types are measured: nothing here takes RAM (the micro:bit runs it too).
// examples/firmware-start asserts the same of the object it declares and
// runs on every target (tests/CMakeLists.txt).
#include <burtorch/burtorch.hpp>
#include <burtorch/nn/nn.hpp>

#include <cstddef>

#include "harness.hpp"
#include "common/xor_model.hpp"
#include "plans.hpp"

namespace bt = burtorch;
namespace nn = burtorch::nn;

namespace {

constexpr nn::OptimizerKind kSgd = nn::OptimizerKind::kSgd;
constexpr nn::OptimizerKind kMomentum = nn::OptimizerKind::kMomentum;
constexpr nn::OptimizerKind kAdam = nn::OptimizerKind::kAdam;

template <class T>
constexpr std::size_t round_up(std::size_t bytes) {
  return ((bytes + bt::Tape<T>::kArrayAlign) - 1U) / bt::Tape<T>::kArrayAlign * bt::Tape<T>::kArrayAlign;
}

// What a program declares for a plan, measured by the compiler. `trained`:
// the parameters with optimizer state (all but a fine-tuning plan's).
template <class T, const nn::MemoryPlan& kPlan>
void check_plan(bt_test::Context& t, std::size_t trained = kPlan.parameters) {
  using Tape = bt::FixedTape<T, kPlan.nodes, kPlan.slots, kPlan.parameters>;
  static_assert(sizeof(nn::TrainingMemory<T, kPlan>) == kPlan.bytes, "plan.bytes is the TrainingMemory");
  static_assert(sizeof(nn::PlanTape<T, kPlan>) == kPlan.tape_object_bytes, "tape_object_bytes is the PlanTape");
  static_assert(sizeof(Tape) == kPlan.tape_object_bytes, "tape_object_bytes is the FixedTape");
  BT_CHECK(t, sizeof(nn::TrainingMemory<T, kPlan>) == kPlan.bytes);
  BT_CHECK(t, sizeof(Tape) == kPlan.tape_object_bytes);
  // The buffer is the tape's own bytes_required; the header is what the
  // tape object adds to it.
  BT_CHECK(t, Tape::kBytes == kPlan.tape_bytes);
  BT_CHECK(t, (kPlan.tape_object_bytes - kPlan.tape_bytes) == round_up<T>(sizeof(bt::Tape<T>)));
  // The optimizer state is the rule's scalars per parameter; declared as
  // a separate array beside a FixedTape it is never more than plan.bytes.
  BT_CHECK(t, kPlan.optimizer_scalars == (nn::state_per_parameter(kPlan.optimizer) * trained));
  BT_CHECK(t, kPlan.optimizer_bytes == (kPlan.optimizer_scalars * sizeof(T)));
  BT_CHECK(t, (sizeof(Tape) + kPlan.optimizer_bytes) <= kPlan.bytes);
  BT_CHECK(t, kPlan.bytes < (sizeof(Tape) + kPlan.optimizer_bytes + bt::Tape<T>::kArrayAlign));
}

template <class T, const nn::LanePlan& kPlan>
void check_lane_plan(bt_test::Context& t) {
  using Lanes = bt::FixedTape<bt::Lanes<T, kPlan.lanes>, kPlan.sample_nodes, kPlan.slots>;
  static_assert(sizeof(nn::LaneMemory<T, kPlan>) == kPlan.bytes, "lane plan.bytes is the LaneMemory");
  static_assert(sizeof(Lanes) == kPlan.lane_tape_object_bytes, "lane_tape_object_bytes is the lane FixedTape");
  BT_CHECK(t, sizeof(nn::LaneMemory<T, kPlan>) == kPlan.bytes);
  BT_CHECK(t, sizeof(Lanes) == kPlan.lane_tape_object_bytes);
  BT_CHECK(t, Lanes::kBytes == kPlan.lane_tape_bytes);
  BT_CHECK(t, kPlan.bytes == (kPlan.params.bytes + kPlan.lane_tape_object_bytes));
}

// --- the trainers' models (targets/host) and the paper's sizes -------------

constexpr nn::MlpOptions kMlp4{27U, 16U, 64U, 4U};
constexpr nn::MlpOptions kMlp64{};  // burtorch-makemore's default
constexpr nn::MlpOptions kMlp1024{27U, 16U, 64U, 1024U};
constexpr nn::GptOptions kGpt{};  // burtorch-gpt's default: the paper's model
constexpr nn::CnnOptions kCnn{};  // burtorch-cnn's default (--hidden 8)

constexpr nn::MemoryPlan kMlp4Sgd32 = nn::MakemoreMlp<float>::plan(kMlp4, kSgd);
constexpr nn::MemoryPlan kMlp4Adam64 = nn::MakemoreMlp<double>::plan(kMlp4, kAdam);
constexpr nn::MemoryPlan kMlp64Momentum32 = nn::MakemoreMlp<float>::plan(kMlp64, kMomentum);
constexpr nn::MemoryPlan kMlp64Adam64 = nn::MakemoreMlp<double>::plan(kMlp64, kAdam);
constexpr nn::MemoryPlan kMlp1024Sgd64 = nn::MakemoreMlp<double>::plan(kMlp1024, kSgd);
constexpr nn::MemoryPlan kGptSgd32 = nn::Gpt<float>::plan(kGpt, kSgd);
constexpr nn::MemoryPlan kGptAdam64 = nn::Gpt<double>::plan(kGpt, kAdam);
constexpr nn::MemoryPlan kCnnAdam32 = nn::SmallCnn<float>::plan(kCnn, kAdam);
constexpr nn::MemoryPlan kCnnMomentum64 = nn::SmallCnn<double>::plan(kCnn, kMomentum);

constexpr nn::LanePlan kMlpLanes32 = nn::MakemoreMlp<float>::lane_plan<bt::kHardwareLanes>(kMlp64, kAdam);
constexpr nn::LanePlan kMlpLanes64 = nn::MakemoreMlp<double>::lane_plan<4U>(kMlp4, kSgd);
constexpr nn::LanePlan kGptLanes32 = nn::Gpt<float>::lane_plan<bt::kHardwareLanes>(kGpt, kAdam);
constexpr nn::LanePlan kGptCheckpoint32 = nn::Gpt<float>::checkpoint_plan<bt::kHardwareLanes>(kGpt, kSgd);
constexpr nn::LanePlan kGptCheckpoint64 = nn::Gpt<double>::checkpoint_plan<4U>(kGpt, kMomentum);

void trainers_models(bt_test::Context& t) {
  check_plan<float, kMlp4Sgd32>(t);
  check_plan<double, kMlp4Adam64>(t);
  check_plan<float, kMlp64Momentum32>(t);
  check_plan<double, kMlp64Adam64>(t);
  check_plan<double, kMlp1024Sgd64>(t);
  check_plan<float, kGptSgd32>(t);
  check_plan<double, kGptAdam64>(t);
  check_plan<float, kCnnAdam32>(t);
  check_plan<double, kCnnMomentum64>(t);
}

void lane_plans(bt_test::Context& t) {
  check_lane_plan<float, kMlpLanes32>(t);
  check_lane_plan<double, kMlpLanes64>(t);
  check_lane_plan<float, kGptLanes32>(t);
  check_lane_plan<float, kGptCheckpoint32>(t);
  check_lane_plan<double, kGptCheckpoint64>(t);
}

// --- the firmware (targets/firmware/plans.hpp) ------------------------------

void firmware_plans(bt_test::Context& t) {
  check_plan<float, firmware::mlp::kPlan>(t);
  check_plan<float, firmware::gpt::kPlan>(t);
  check_plan<float, firmware::kws::kPlan>(t);
  check_plan<float, firmware::finetune::kPlan>(t, firmware::finetune::kParameters);
  // What the firmware print and budget: the models they are.
  BT_CHECK(t, firmware::mlp::kPlan.parameters == 5963U);
  BT_CHECK(t, firmware::gpt::kPlan.parameters == 46337U);
  BT_CHECK(t, firmware::kws::kPlan.parameters == 484U);
  BT_CHECK(t, firmware::kws::kPlan.optimizer_scalars == (2U * 484U));
  BT_CHECK(t, firmware::finetune::kPlan.parameters == 36U);
}

// --- the examples and docs/training.md ---------------------------------------

constexpr nn::MemoryPlan kXor32 = xor_example::XorNet<float>::plan();   // examples/xor_firmware
constexpr nn::MemoryPlan kXor64 = xor_example::XorNet<double>::plan();  // examples/xor_nn

// docs/training.md's GRU(4, 8) with a Linear(8, 1) head, windows of 6 steps.
constexpr nn::GruOptions gru_options() {
  nn::GruOptions o{};
  o.input = 4U;
  o.hidden = 8U;
  return o;
}
constexpr nn::LinearOptions gru_head() {
  nn::LinearOptions o{};
  o.in = 8U;
  o.out = 1U;
  return o;
}
constexpr std::size_t kWindow = 6U;
constexpr nn::MemoryPlan kGruWindow = nn::make_plan<float>(
    nn::Gru<float>::parameters(gru_options()) + nn::Linear<float>::parameters(gru_head()),
    nn::Gru<float>::window_nodes(gru_options(), kWindow) + (kWindow * gru_options().input) +
        (kWindow * nn::Linear<float>::nodes(gru_head())) + kWindow + 1U,
    nn::Gru<float>::window_slots(gru_options(), kWindow) + (kWindow * nn::Linear<float>::view_slots(gru_head())),
    kAdam);

void examples(bt_test::Context& t) {
  check_plan<float, kXor32>(t);
  check_plan<double, kXor64>(t);
  check_plan<float, kGruWindow>(t);
  BT_CHECK(t, kGruWindow.parameters == 345U);
}

// --- odd sizes: the optimizer state padded to the tape's alignment ----------

// 3 parameters with momentum: 3 scalars of state, padded up to
// kArrayAlign; one with SGD: no state at all, the memory is the tape alone.
constexpr nn::MemoryPlan kOddMomentum32 = nn::make_plan<float>(3U, 5U, 7U, kMomentum);
constexpr nn::MemoryPlan kOddMomentum64 = nn::make_plan<double>(3U, 5U, 7U, kMomentum);
constexpr nn::MemoryPlan kOneSgd = nn::make_plan<float>(1U, 1U, 0U, kSgd);
// A fine-tuning plan: state for 5 of the 11 parameters.
constexpr nn::MemoryPlan kFinetune = nn::make_finetune_plan<double>(11U, 5U, 9U, 4U, kAdam);

void padding(bt_test::Context& t) {
  check_plan<float, kOddMomentum32>(t);
  check_plan<double, kOddMomentum64>(t);
  check_plan<float, kOneSgd>(t);
  check_plan<double, kFinetune>(t, 5U);
  BT_CHECK(t, kOddMomentum32.bytes == (kOddMomentum32.tape_object_bytes + round_up<float>(3U * sizeof(float))));
  BT_CHECK(t, kOneSgd.bytes == kOneSgd.tape_object_bytes);
  BT_CHECK(t, kFinetune.optimizer_scalars == 10U);
  // The tape object is more than its buffer: the plan of 0.2, tape_bytes +
  // optimizer_bytes, was short by at least the Tape<T> header.
  BT_CHECK(t, kOneSgd.bytes >= (kOneSgd.tape_bytes + sizeof(bt::Tape<float>)));
}

// The optimizer TrainingMemory::optimizer() binds holds the plan's
// parameters, and a rule that needs more state than the plan holds fewer.
nn::TrainingMemory<float, kOddMomentum32> g_memory;

void optimizer_binding(bt_test::Context& t) {
  nn::OptimizerOptions<float> options;
  options.kind = kMomentum;
  nn::Optimizer<float> momentum = g_memory.optimizer(options);
  BT_CHECK(t, momentum.max_parameters() == 3U);
  BT_CHECK(t, momentum.state() == g_memory.optimizer_state());
  options.kind = kAdam;
  nn::Optimizer<float> adam = g_memory.optimizer(options);
  BT_CHECK(t, adam.max_parameters() == 1U);
  // The tape has the plan's capacities.
  const bt::TapeUsage u = g_memory.tape.usage();
  BT_CHECK(t, (u.node_capacity == kOddMomentum32.nodes) && (u.slot_capacity == kOddMomentum32.slots));
}

// A layer wider than the plan's parameter region: create() refuses it
// (kCapacityExceeded, no parameter made past the region) instead of taking
// the nodes a sample needs and failing at the first sample. The plan of a
// 4-8-1 MLP (49 parameters; small enough for a 16 KB board); a hidden
// layer of 10 (50 parameters) does not fit the region, though it fits the
// tape's nodes: only the region tells.
constexpr nn::LinearOptions kHidden8{4U, 8U, nn::Activation::kTanh};
constexpr nn::LinearOptions kHidden10{4U, 10U, nn::Activation::kTanh};  // one parameter past the region
constexpr nn::LinearOptions kOut8{8U, 1U, nn::Activation::kSigmoid};
constexpr nn::MemoryPlan kMlp481 = nn::make_plan<float>(
    nn::Linear<float>::parameters(kHidden8) + nn::Linear<float>::parameters(kOut8),
    4U + nn::Linear<float>::nodes(kHidden8) + nn::Linear<float>::nodes(kOut8) + 2U,
    nn::Linear<float>::view_slots(kHidden8) + nn::Linear<float>::view_slots(kOut8), nn::OptimizerKind::kSgd);
static_assert(nn::Linear<float>::parameters(kHidden10) < kMlp481.nodes, "the wide layer fits the tape's nodes");
nn::TrainingMemory<float, kMlp481> g_mlp_memory;

void wider_than_plan_refused(bt_test::Context& t) {
  nn::Rng rng(7U);
  nn::Linear<float> wide;
  g_mlp_memory.tape.reset();
  BT_CHECK(t, !wide.create(g_mlp_memory.tape, kHidden10, rng));
  BT_CHECK(t, g_mlp_memory.tape.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, g_mlp_memory.tape.size() == 0U);
  BT_CHECK(t, wide.params().count == 0U);
  // With initial values given: the same.
  static float values[(4U * 10U) + 10U] = {};
  g_mlp_memory.tape.reset();
  BT_CHECK(t, !wide.create(g_mlp_memory.tape, kHidden10, values));
  BT_CHECK(t, g_mlp_memory.tape.status() == bt::Status::kCapacityExceeded);
  // The planned model fits, and its parameters fill the region exactly.
  g_mlp_memory.tape.reset();
  nn::Linear<float> hidden;
  nn::Linear<float> out;
  BT_CHECK(t, hidden.create(g_mlp_memory.tape, kHidden8, rng) && out.create(g_mlp_memory.tape, kOut8, rng));
  BT_CHECK(t, (g_mlp_memory.tape.status() == bt::Status::kOk) && (g_mlp_memory.tape.size() == kMlp481.parameters));
  // A second output layer past the region: refused as well.
  nn::Linear<float> extra;
  BT_CHECK(t, !extra.create(g_mlp_memory.tape, kOut8, rng));
  BT_CHECK(t, g_mlp_memory.tape.status() == bt::Status::kCapacityExceeded);
  BT_CHECK(t, g_mlp_memory.tape.size() == kMlp481.parameters);
}

const bt_test::TestCase kCases[] = {
    {"wider_than_plan_refused", wider_than_plan_refused},
    {"trainers_models", trainers_models}, {"lane_plans", lane_plans},      {"firmware_plans", firmware_plans},
    {"examples", examples},               {"padding", padding},            {"optimizer_binding", optimizer_binding},
};

}  // namespace

BT_TEST_MAIN("nn_memory", kCases)
