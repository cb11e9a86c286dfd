// SPDX-License-Identifier: Apache-2.0
#include "app.hpp"

#include <cstddef>
#include <cstdint>

#include "dataset.hpp"
#include "filter.hpp"
#include "fixed_point.hpp"
#include "log.hpp"
#include "model.hpp"
#include "ring_buffer.hpp"
#include "stats.hpp"

namespace fw {

int run() noexcept {
  if (!model_init()) {
    log_text("the model does not fit its tape\n");
    return 1;
  }
  constexpr std::size_t kSteps = 4000U;
  Smoother smoother(0.01F);
  LossHistory history;
  for (std::size_t step = 0U; step < kSteps; ++step) {
    const Sample s = sample_at(step);
    const float loss = model_train_step(s.a, s.b, s.target);
    if (loss < 0.0F) {
      log_text("training failed\n");
      return 1;
    }
    static_cast<void>(smoother.add(loss));
    if ((step % 500U) == 0U) {
      history.push(smoother.average());
      log_value("step ", static_cast<double>(step));
      log_value(" loss ", static_cast<double>(smoother.average()));
      log_text("\n");
    }
  }
  const LossSummary summary = summarize(history);
  log_value("final loss ", static_cast<double>(smoother.average()));
  log_value(" lowest logged ", static_cast<double>(summary.lowest));
  log_value(" in Q15 ", static_cast<double>(to_q15(smoother.average())));
  log_value(" checksum ", static_cast<double>(model_checksum()));
  log_text("\n");
  return (from_q15(to_q15(smoother.average())) < 0.05F) ? 0 : 1;
}

}  // namespace fw
