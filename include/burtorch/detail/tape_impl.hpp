// SPDX-License-Identifier: Apache-2.0
/// @file
/// Deprecated (libburtorch 0.2's path; removed in 0.4): include
/// <burtorch/lane_ops.hpp>, which brings a tape of Lanes every member it
/// needs, instead. `template class burtorch::Tape<L>;` after it still works.
#ifndef BURTORCH_DETAIL_TAPE_IMPL_HPP
#define BURTORCH_DETAIL_TAPE_IMPL_HPP

#include "burtorch/lane_ops.hpp"

#endif  // BURTORCH_DETAIL_TAPE_IMPL_HPP
