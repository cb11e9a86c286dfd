// SPDX-License-Identifier: Apache-2.0
/// @file
/// The out-of-line members of Tape<T>. lib/tape.cpp includes this header and
/// instantiates Tape<float> and Tape<double>; a program whose tape has
/// another scalar type (burtorch/lanes.hpp) includes it in one translation
/// unit and writes `template class burtorch::Tape<ThatType>;`.
#ifndef BURTORCH_DETAIL_TAPE_IMPL_HPP
#define BURTORCH_DETAIL_TAPE_IMPL_HPP

#include "burtorch/detail/tape_backward.hpp"
#include "burtorch/detail/tape_record.hpp"
#include "burtorch/detail/tape_replay.hpp"
#include "burtorch/detail/tape_state.hpp"

#endif  // BURTORCH_DETAIL_TAPE_IMPL_HPP
